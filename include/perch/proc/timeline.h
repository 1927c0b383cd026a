/* CPU and memory timelines of a process while perch records it: process and per-thread CPU
 * use (/proc/PID/stat, /proc/PID/task/TID/stat), system CPU (/proc/stat) every cpu interval;
 * RSS/PSS/USS/swap (/proc/PID/smaps_rollup, or the sum of /proc/PID/smaps where there is no
 * rollup) and the meminfo App Summary categories (/proc/PID/smaps, meminfo.h) every memory
 * interval. A collector thread of its own reads /proc (no ptrace: the sampler's threads are
 * not involved and never wait for it); the points stay in the timeline's buffers until
 * timeline_store() turns them into profile counters (writers.h "counters").
 *
 * Threads: timeline_start/stop/store/print/free from the owning thread; the collector owns
 * the CPU and memory series while it runs; timeline_note_state() is for one other thread
 * (record's sampler worker) and its table is read only after timeline_stop(). */
#ifndef PERCH_TIMELINE_H
#define PERCH_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "perch/proc/cpustat.h"
#include "perch/proc/meminfo.h"
#include "perch/proc/proc-smaps.h"
#include "perch/proc/proc-task.h"

struct profile;

#define TIMELINE_DEFAULT_CPU_MS 100
#define TIMELINE_DEFAULT_MEM_MS 1000

/* One reading of the CPU counters. */
struct timeline_reading {
	uint64_t time_ns;	  /* CLOCK_MONOTONIC, just before the reads */
	struct proc_stat proc;	  /* /proc/PID/stat (whole process, exited threads included) */
	struct cpustat_times sys; /* /proc/stat "cpu " line */
	int has_sys;
	struct proc_stat *tasks; /* /proc/PID/task/TID/stat, sorted by tid (pid = tid) */
	size_t nr_tasks, alloc_tasks;
	int has_tasks; /* the threads were read (not every reading reads them) */
};

/* Read the CPU counters of @pid now, with @with_tasks its threads' too, through @files (their
 * stat files kept open across reads: one pread each) or, when NULL, opened each time. 0, or
 * -errno from /proc/PID/stat (-ENOENT/-ESRCH: the process is gone); a thread that exits
 * meanwhile is left out. Release with timeline_reading_release(). */
int timeline_read(pid_t pid, struct proc_stat_files *files, int with_tasks,
		  struct timeline_reading *r);
void timeline_reading_release(struct timeline_reading *r);

/* One memory reading, bytes. */
struct timeline_mem {
	uint64_t time_ns;
	uint64_t rss, pss, uss, swap;
	int has_summary; /* the categories below were read (smaps) */
	/* App Summary Pss, as meminfo.h: java heap, native heap, code, stack, graphics, private
	 * other, system */
	uint64_t cat[7];
};

#define TIMELINE_NR_CATS 7
/* "java_heap", "native_heap", "code", "stack", "graphics", "private_other", "system" */
const char *timeline_cat_key(int cat);
/* "Java Heap", "Native Heap", ... (dumpsys's App Summary labels) */
const char *timeline_cat_label(int cat);

/* How many memory readings go by for one whole read of smaps (the categories), given the mean
 * time one took: 1 while it is cheap (up to 5 ms); where it is slower, as many as keep it
 * within 0.5% of one CPU at @interval_ms, at most 60. The first and the last readings of a
 * recording always read it. On this project's VM a process with 200 threads (430 mappings)
 * took 20 ms a read, 2% of a CPU at the default interval; 80 mappings 0.6 ms. */
unsigned int timeline_smaps_every(uint64_t mean_ns, unsigned int interval_ms);

/* Read memory of @pid now: rollup (or smaps sum) always, categories when @with_smaps (the
 * rules are detected on the first smaps read and kept in *@rules). *@smaps_ns gets the time
 * the smaps read and classification took. 0 or -errno. */
int timeline_read_mem(pid_t pid, int with_smaps, enum meminfo_rules *rules,
		      struct timeline_mem *out, uint64_t *smaps_ns);
/* Fill @out from a rollup (may be NULL: then from @s's total) and a meminfo (may be NULL). */
void timeline_mem_from(const struct proc_smaps_usage *rollup, const struct proc_smaps *s,
		       const struct meminfo *mi, uint64_t time_ns, struct timeline_mem *out);

/* What becomes of the points of the series (timeline_store() makes them counters). */
enum timeline_points {
	TIMELINE_POINTS_KEEP = 0, /* kept until timeline_store() (the whole recording) */
	TIMELINE_POINTS_DRAIN,	  /* kept until timeline_drain() hands them on (a recording
				   * streams them to disk: memory stays flat on long runs) */
	TIMELINE_POINTS_NONE,	  /* not kept: no output wants them (the summary's figures
				   * are kept either way) */
};

struct timeline_opts {
	pid_t pid;
	enum timeline_points points;
	unsigned int cpu_interval_ms; /* 0: no CPU timeline */
	unsigned int mem_interval_ms; /* 0: no memory timeline */
	long clk_tck;		      /* 0: cpustat_clk_tck() */
	unsigned int ncpus;	      /* 0: cpustat_ncpus() */
	int launched; /* @pid was just started and has not run yet (stopped at its exec, its
		       * memory a few pages of arguments): the first memory reading waits one
		       * interval, so a chart does not start at a false 0 */
};

struct timeline;

struct timeline *timeline_new(const struct timeline_opts *o);
/* Free @tl (stops the collector first). NULL is fine. */
void timeline_free(struct timeline *tl);

/* Start the collector thread (all signals blocked in it); its first readings are taken at
 * once. 0 or -errno (then there is no timeline, recording goes on). */
int timeline_start(struct timeline *tl);
/* Take a last memory reading, stop the collector and wait for it. Idempotent. */
void timeline_stop(struct timeline *tl);

/* What the collector does with each reading; public so the arithmetic can be tested on
 * fixtures. @r is copied as the previous reading; the first one gives no point. */
void timeline_add_cpu(struct timeline *tl, const struct timeline_reading *r);
void timeline_add_mem(struct timeline *tl, const struct timeline_mem *m);
/* Count one sample of thread @tid in /proc state @state ('R', 'S', ...; 0 unknown), standing
 * for @weight ticks. */
void timeline_note_state(struct timeline *tl, pid_t tid, char state, uint32_t weight);

/* Hand the points gathered since the last call to @fn, as the text to append to meta @key
 * ("counter:NAME", text "T=V T=V ..." with a leading space after the first piece: the pieces
 * of a key put end to end are its value), and forget them. A series that may yet be left out
 * (a thread that has not run, a category still 0) waits. From the owning thread, any time
 * (the collector may be running); with TIMELINE_POINTS_DRAIN, once more after
 * timeline_stop() and before timeline_store(). A thread's counter keeps the name the thread
 * had when its first points were handed on. */
typedef void timeline_drain_fn(void *arg, const char *key, const char *text);
void timeline_drain(struct timeline *tl, timeline_drain_fn *fn, void *arg);
/* The series as profile counters (appended to meta "counters"; the points of the series
 * already drained are not set again, only named there): cpu_usage (process, % of
 * one core), cpu_usage_all_cores (% of all cores), system_cpu_usage (% of all cores busy,
 * any process), thread_cpu_usage.TID.NAME (% of one core; points only where the value
 * changes; threads that never ran are left out), rss_bytes, pss_bytes, uss_bytes,
 * swap_bytes, and <category>_bytes for the categories above (e.g. native_heap_bytes) that
 * were not 0 all along.
 * Meta "cpu_interval_ms" and "mem_interval_ms" too. */
void timeline_store(const struct timeline *tl, struct profile *p);

/* Summary lines on @f, each starting with @prefix: CPU average and peak, memory start/end/
 * peak per line and category, the smaps read cost, and the per-thread table (tid, name,
 * CPU %, share of samples per state) of at most @max_threads threads by CPU. */
void timeline_print_summary(const struct timeline *tl, const char *prefix, size_t max_threads,
			    FILE *f);

/* Figures for summaries and tests. */
struct timeline_cpu_figures {
	size_t points;
	double avg, peak;	  /* process, % of one core */
	double avg_all;		  /* process, % of all cores */
	double sys_avg, sys_peak; /* system busy %, NaN without /proc/stat */
};
void timeline_cpu_figures(const struct timeline *tl, struct timeline_cpu_figures *out);
/* Average CPU % (of one core) of thread @tid over the readings it was in; -1 when unknown. */
double timeline_thread_cpu(const struct timeline *tl, pid_t tid);
/* The memory points, in time order (none unless TIMELINE_POINTS_KEEP). Borrowed. */
const struct timeline_mem *timeline_mem_points(const struct timeline *tl, size_t *n);

#endif
