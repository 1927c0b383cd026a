/* CPU usage: /proc/stat parsed into per-CPU tick counters, and the arithmetic between two
 * readings, for the system, one CPU, or a process/thread (from two struct proc_stat).
 * Pure functions on parsed structs plus small load helpers. */
#ifndef PERCH_CPUSTAT_H
#define PERCH_CPUSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "perch/proc/proc-task.h"

/* One "cpu" line of /proc/stat, in clock ticks (USER_HZ):
 *   cpu0 22713 0 5456 60882 84 0 21 39 0 0
 *        user nice system idle iowait irq softirq steal guest guest_nice
 * Older kernels print fewer columns (at least 4); missing ones are 0. guest and guest_nice
 * are already included in user and nice. */
struct cpustat_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice;
};

struct cpustat_cpu {
	int id; /* N of "cpuN"; offline CPUs have no line, so ids may have gaps */
	struct cpustat_times t;
};

struct cpustat {
	struct cpustat_times all; /* the "cpu " line */
	struct cpustat_cpu *cpus; /* sorted by id as the kernel prints them; owned */
	size_t nr_cpus;
	size_t bad_lines; /* malformed cpu lines (other lines are ignored) */
};

#define CPUSTAT_MAX_CPUS 8192

/* Parse /proc/stat text. 0, or -EINVAL when there is no valid "cpu " line. On success the
 * caller releases @out with cpustat_release(). */
int cpustat_parse(const char *text, struct cpustat *out);
/* Read /proc/stat (or a saved copy). 0 or -errno. */
int cpustat_load(struct cpustat *out);
int cpustat_load_file(const char *path, struct cpustat *out);
void cpustat_release(struct cpustat *st);
/* The CPU with id @id, or NULL. Borrowed; valid until cpustat_release(). */
const struct cpustat_cpu *cpustat_find(const struct cpustat *st, int id);

/* Usage between two readings of the same counters, in percent of the elapsed ticks. Each
 * counter's delta is clamped at 0 (iowait may go backwards on tickless kernels). */
struct cpustat_usage {
	uint64_t ticks; /* elapsed ticks (sum of deltas, guest excluded) */
	double busy;	/* 100 - idle - iowait */
	double user, nice, system, idle, iowait, irq, softirq, steal;
};

/* 0, or -EAGAIN when no tick elapsed between @a and @b (nothing to divide by). */
int cpustat_usage(const struct cpustat_times *a, const struct cpustat_times *b,
		  struct cpustat_usage *out);

/* CPU used by one process or thread between two proc_stat readings taken @wall_ns apart. */
struct cpustat_task_usage {
	uint64_t ticks;	     /* (utime + stime) delta */
	double user, system; /* percent of one core */
	double one_core;     /* user + system: 100 = one core busy all the time (can exceed 100
			      * for a process) */
	double all_cores;    /* one_core / @ncpus */
};

/* 0; -EINVAL for @wall_ns == 0, @clk_tck <= 0 or @ncpus == 0; -ESRCH when @a and @b are not
 * the same task (pid or starttime differ: the pid was reused); -ERANGE when a counter went
 * backwards. */
int cpustat_task_usage(const struct proc_stat *a, const struct proc_stat *b, uint64_t wall_ns,
		       long clk_tck, unsigned int ncpus, struct cpustat_task_usage *out);

/* sysconf(_SC_CLK_TCK) (100 when it fails) and the number of online CPUs (>= 1). */
long cpustat_clk_tck(void);
unsigned int cpustat_ncpus(void);

#endif
