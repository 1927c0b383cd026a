/* The recording core shared by `perch record` and the REPL's `record` / `top`: the record
 * options (parsed the same way in both), and one recording of an attached tracee: the profile,
 * resolver and symbolizer, the sampler callbacks (blocked-thread site reuse with its remembered
 * wait reason, wait frames, --verify), the CPU/memory timeline, stall detection, the .perch
 * recording streamed while sampling, the summary and the outputs. The callers own attaching,
 * sampler_run() and detaching; the core never touches the tracee's threads itself.
 *
 * Order of calls: record_core_init(); record_opts_parse() (or record_opts_set()) on
 * core.o; record_core_open() (creates a -o FILE.perch, before attaching); attach;
 * record_core_setup(); record_core_sampler_opts(); record_core_start(); sampler_run(...,
 * &record_core_ops, core, core->st); record_core_stop(); record_core_finish();
 * record_core_write_outputs(); record_core_release(). */
#ifndef PERCH_RECORD_CORE_H
#define PERCH_RECORD_CORE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "perch/record/record-opts.h"
#include "perch/sample/sampler.h"
#include "perch/unwind/resolve.h"

struct output_format;
struct perch_arch;
struct profile;
struct record_ring;
struct recording_writer;
struct resolver;
struct stall_detector;
struct symbolizer;
struct timeline;
struct tracee;
struct tracee_stats;

/* Where a thread's recent samples were taken (user SP, PC) and their stacks, so the sampler
 * can count a blocked thread again without stopping it (see sampler_ops.reuse). */
struct record_sites {
	struct record_site {
		uint64_t sp, pc;
		uint32_t stack; /* stack id + 1, without a wait frame */
		uint64_t used;	/* when it was last sampled or reused (record_sites.clock) */
	} s[2 * SAMPLER_SITES];
	uint64_t clock; /* counts the thread's samples and reuses: the least recently used site
			 * goes first (the sampler keeps its sites most recently used first: a
			 * site it reuses all the time must not be pushed out here by others) */
	struct record_site ran; /* the last sample taken while running, for a runnable thread
				 * that has not run since (sampler_stats.unmoved) */
};

/* A process of the recording: its own maps, modules and unwinder (the resolver) and its
 * architecture (a child may exec a 32-bit program). */
struct record_proc {
	pid_t pid;
	uint64_t execs; /* execs of the process before the program resolved here */
	unsigned int
	    final_seen; /* record_core.final_gen when its final maps were last looked for */
	pid_t task;	/* a live thread its memory and /proc files are read through (the
			 * pid, unless its main thread had exited) */
	const struct perch_arch *arch;
	struct resolver *r; /* NULL once the process is gone */
};

struct record_core {
	struct record_opts o;

	pid_t pid;		       /* the first process */
	size_t nr_attached;	       /* processes attached before sampling (-p LIST, --app) */
	const struct perch_arch *arch; /* its architecture */
	struct record_proc *procs;     /* every process sampled (followed children too) */
	size_t nr_procs, alloc_procs;
	struct resolve_stats gone_stats; /* what the resolvers of gone processes counted */
	/* the maps of processes as they exited (sampler_ops.exiting, on the ptrace thread),
	 * for their samples still queued to the worker */
	pthread_mutex_t final_lock;
	struct record_final {
		pid_t pid;
		uint64_t execs;
		char *maps;
	} * finals;
	size_t nr_finals, alloc_finals;
	volatile unsigned int final_gen; /* bumped under final_lock by every new entry */
	struct profile *p;		 /* the live profile */
	struct profile *back; /* after record_core_write_outputs() with a .perch output: the
			       * recording read back (every sample; the live profile dropped
			       * those it streamed), or NULL */
	struct symbolizer *sym;
	struct resolver *r;	    /* the first process's while it lives (procs[] has them all) */
	struct record_sites *sites; /* per profile thread */
	size_t nr_sites;
	struct sampler_stats *st; /* zeroed by record_core_init(); pass it to sampler_run() */
	uint64_t verified, verify_differ; /* --verify: samples compared, and differing */
	struct timeline *tl;
	struct stall_detector *stall;
	uint64_t mono_start;	     /* CLOCK_MONOTONIC when sampling began */
	uint64_t start_realtime_ns;  /* CLOCK_REALTIME at record_core_setup() */
	struct recording_writer *rw; /* the -o FILE.perch streamed while sampling, or NULL */
	const char *rw_path;
	uint64_t first_sample_ns; /* CLOCK_MONOTONIC of the first sample (0: none yet) */
	/* no .perch asked for but an output needs every sample: rw streams to an unlinked
	 * temporary file instead, read back through /proc/self/fd/tmp_fd (-1: none) */
	int tmp_fd;
	char tmp_path[40];
	uint64_t drained_ns; /* when the timeline and stalls were last drained into rw */
	int no_points;	     /* no rw and no output draws timelines or stalls: not kept */
	int keep_samples;    /* set before record_core_setup(): keep every sample (the REPL, whose
			      * recording can be saved in any format later) */
	/* --ring / --chunk: the windows written while sampling (record-ring.h), or NULL */
	struct record_ring *ring;
	int stall_save;		   /* the ring save of the stall still going (-1: none) */
	uint64_t stall_fired;	   /* the start of the last stall that triggered a save */
	unsigned int signals_seen; /* --trigger signal: the signals already turned into saves */
};

/* The sampler callbacks; their argument is the struct record_core. */
extern const struct sampler_ops record_core_ops;

void record_core_init(struct record_core *rc);
/* Frees everything (an open recording is closed as it is). */
void record_core_release(struct record_core *rc);
/* Check the outputs and create the -o FILE.perch (at most one, not '-'): it is written while
 * sampling. 0, -EINVAL (usage, message printed) or -errno (message printed). */
int record_core_open(struct record_core *rc);
/* Nothing was recorded (attach failed): close and remove the recording file. */
void record_core_discard(struct record_core *rc);
/* After attaching @t: the target's architecture, profile, symbolizer, resolver, thread names,
 * meta. 0, or -ENOEXEC (message printed) for a target perch cannot profile (then only
 * record_core_discard() and record_core_release()). */
int record_core_setup(struct record_core *rc, const struct tracee *t);
/* The sampler options from the record options (the caller adds .stop/.no_signals). */
void record_core_sampler_opts(const struct record_core *rc, struct sampler_opts *so);
/* Just before / just after sampler_run(): the timeline thread and the stall detector. */
void record_core_start(struct record_core *rc);
void record_core_stop(struct record_core *rc);
/* The summary (samples, stops, unwinding, errors, verify; then CPU/memory and stalls) on @f,
 * every line prefixed with @prefix; @headline 0 leaves out the first line. @ts: the
 * statistics of the tracee that was sampled. */
void record_core_print_summary(const struct record_core *rc, const struct tracee_stats *ts,
			       const char *prefix, int headline, FILE *f);
/* Why a recording holds no sample, from the sampler's figures: a sentence into @buf ("the
 * target exited after 3.2 ms, before the first tick ..."). */
/* The head of the summary: what was recorded, how many samples of how many threads. */
void record_core_print_brief(const struct record_core *rc, const char *prefix, FILE *f);
/* The warnings that matter, whatever the summary's length: ticks perch missed (under
 * RECORD_SERVED_WARN_PCT served), dropped samples, register and stack errors, stacks that
 * stopped early, blocking calls broken off. */
#define RECORD_SERVED_WARN_PCT 90.0
void record_core_print_warnings(const struct record_core *rc, FILE *f);
/* The share of its ticks perch served (the others it missed, credited to later samples). */
double record_core_served_pct(const struct record_core *rc);
void record_core_why_empty(const struct record_core *rc, char *buf, size_t size);
/* After sampling: duration meta, timelines as counters, stalls as meta. */
void record_core_finish(struct record_core *rc);
/* Close the streamed recording, then write every other -o (from the recording read back when
 * there is one). Messages "perch: wrote ..." go to @msgs (NULL: none). 0 or -1 (an output
 * failed; messages printed). */
int record_core_write_outputs(struct record_core *rc, FILE *msgs);
/* Write the recording's profile (record_core_profile()) to @path as @fmt: 0 or -errno
 * (message printed). */
int record_core_write(const struct record_core *rc, const char *path,
		      const struct output_format *fmt);
/* The unwinding and naming figures of every process of the recording, summed into @out
 * (returned). */
const struct resolve_stats *record_core_resolve_stats(const struct record_core *rc,
						      struct resolve_stats *out);
/* The profile to render: the one read back, else the live one. */
const struct profile *record_core_profile(const struct record_core *rc);

#endif
