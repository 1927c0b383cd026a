/* The sampling loop: one tick per period at a random moment of it (CLOCK_MONOTONIC; see
 * jitter_ns() in sampler.c for why the whole period), hold the CPUs the running threads use
 * (sampler-hold.h: so that a stop shows where a thread was at the tick, not the exit of a
 * system call it entered after it), interrupt every running
 * thread, collect stops as they arrive, copy registers and stack in the stop window, resume at
 * once. A thread blocked in a system call at the same user SP and PC as one of its last
 * TRACEE_SITES samples (from /proc/PID/task/TID/syscall) is not interrupted at all: that
 * sample's stack is counted again. That keeps idle threads cheap and, above all, does not wake
 * them: waking a sleeper with PTRACE_INTERRUPT delays its wakeup until just after the sample, which
 * would phase-lock short bursts of work between ticks. A thread blocked at one site for 200 ms goes
 * behind its process's run-time gate: while the process's CPU clock less its other threads'
 * run times does not move, no gated thread ran, and they are counted again without any read
 * (src/sample/sampler-gate.c). The ptrace thread does nothing else, so signal-delivery-stops are
 * restarted at once; snapshots and thread events go through a queue to a worker thread that calls
 * the caller's ops (unwinding, naming, profile), in order. Stops on the duration, the exit of every
 * traced process, or SIGINT/SIGTERM/SIGHUP (which it blocks and waits for).
 *
 * Every process of the tracee set is sampled, each with its own architecture. A group-stopped
 * thread (SIGSTOP & co) is sampled as 'T' in wall mode (stopped once, then its stack counted
 * again until SIGCONT); a thread in uninterruptible sleep ('D') is never interrupted (the stop
 * would only come when it wakes up) but read from /proc (sampler_snapshot_blocked()). On
 * SIGTSTP/SIGTTIN/SIGTTOU (Ctrl-Z) perch lets the programs of its process group reach their
 * own stop, then stops itself with the same signal, so the shell's job control works. */
#ifndef PERCH_SAMPLER_H
#define PERCH_SAMPLER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracee;
struct tracee_thread;
struct tracee_event;
struct unwind_snapshot;
struct perch_arch;

struct sampler_opts {
	double hz;	   /* samples per second per thread */
	double duration;   /* seconds; 0 = until the target exits or a signal */
	size_t stack_size; /* bytes of stack copied from SP */
	int cpu_mode;	   /* sample only threads that are running ('R'), not waiting ones */
	/* Optional: stop (SAMPLER_STOP_REQUEST) once *@stop is non-zero; checked every tick,
	 * so a signal handler or another thread may set it. */
	const volatile sig_atomic_t *stop;
	int no_signals;	   /* leave SIGINT/SIGTERM/SIGHUP to the caller: wait for SIGCHLD only */
	int follow_cpu;	   /* move the ptrace thread to the CPU the running threads use
			    * (experimental, off by default: see follow_cpu() in sampler-tick.c) */
	int verify;	   /* also unwind in the stop with libunwind-ptrace (slow): see
			    * sampler_info.verify_pcs */
	int no_idle_reuse; /* interrupt blocked threads at every tick, as if nothing were known
			    * of them (to measure what reuse saves) */
	int no_hold;	   /* interrupt running threads from perch's CPU, without holding theirs
			    * first (sampler-hold.h; to measure the syscall bias it removes) */
	/* Optional: processes that join the recording (`perch record --app`). Called on the
	 * ptrace thread between ticks, every SAMPLER_JOIN_MS or so, and again at once while it
	 * returns 1 with *@pid a process to attach to and sample from then on (one already
	 * traced is skipped); 0 when there is none now. @now: CLOCK_MONOTONIC ns. */
	int (*join)(void *arg, uint64_t now, pid_t *pid);
	void *join_arg;
};

#define SAMPLER_JOIN_MS 5 /* how often sampler_opts.join is asked */

#define SAMPLER_VERIFY_MAX 128 /* frames the --verify reference unwind keeps */

#define SAMPLER_SITES	     4	 /* recent sample sites remembered per thread */
#define SAMPLER_SYSCALL_TEXT 256 /* /proc/PID/task/TID/syscall is shorter than this */

/* What the sampler knew of a thread when it sampled it. */
struct sampler_info {
	pid_t pid;		       /* its process */
	const struct perch_arch *arch; /* the process's architecture */
	pid_t tid;
	uint32_t weight;     /* ticks this sample stands for (see sampler_ops.sample) */
	char state;	     /* /proc state letter read just before the sample ('R', 'S', ...),
			      * 'T' for a group-stopped thread, 0 when unknown */
	const char *syscall; /* its /proc/PID/task/TID/syscall text when it was not running,
			      * else NULL */
	const char *comm;    /* its name from the same stat read ("" when unknown) */
	int ran;	     /* did it run since its previous sample (its switch-in count
			      * moved)? 1, 0 (counted again where it was blocked), -1 unknown */
	uint64_t time_ns;    /* CLOCK_MONOTONIC of the sample */
	/* --verify: the pcs libunwind-ptrace found in the stop window, innermost first
	 * (nr_verify of them, at most SAMPLER_VERIFY_MAX); nr_verify -1 when not verifying */
	const uint64_t *verify_pcs;
	int nr_verify;
};

#define SAMPLER_HIST_US	     100000 /* stop-window histogram: 1 us buckets up to 100 ms */
#define SAMPLER_TICK_HIST_US 2000   /* tick-lateness histogram: 1 us buckets up to 2 ms */
/* waking for a tick early (sampler.c, "waking on time for a tick") */
#define SAMPLER_LEAD_STEP_NS 1000ULL   /* the lead moves this much towards each wake latency */
#define SAMPLER_LEAD_MAX_NS  200000ULL /* and stays under this (and a quarter of the period) */
#define SAMPLER_QUEUE	     512 /* snapshots in flight between the ptrace and worker threads */

enum sampler_stop {
	SAMPLER_STOP_DURATION = 1,
	SAMPLER_STOP_EXIT,   /* the target exited */
	SAMPLER_STOP_SIGNAL, /* perch got SIGINT/SIGTERM/SIGHUP */
	SAMPLER_STOP_ERROR,
	SAMPLER_STOP_REQUEST, /* sampler_opts.stop was set */
};

struct sampler_stats {
	uint64_t ticks;
	uint64_t missed_ticks; /* ticks skipped because perch fell behind (credited to the
				* next sample of each thread as extra weight) */
	uint64_t capped;       /* ticks put off because the previous one took longer than
				* the time to the next (perch gave its CPU back as long) */
	uint64_t samples;      /* snapshots taken */
	uint64_t late;	       /* a thread's previous interrupt was still pending at a tick
				* (credited to its next sample as extra weight) */
	uint64_t err_regs;     /* registers could not be read */
	uint64_t err_stack;    /* stack could not be copied */
	uint64_t dropped;      /* snapshots dropped: the worker was SAMPLER_QUEUE items behind
				* (the tick is credited to the thread's next sample) */
	uint64_t waited;       /* stops of blocked threads kept until the worker had room for
				* their snapshot (instead of dropped) */
	uint64_t reused;       /* samples of blocked threads that were not interrupted */
	uint64_t unmoved;      /* samples of runnable threads that had not run since their
				* last stop (not interrupted: runnable_unmoved()) */
	uint64_t gated;	       /* ... of which counted on the process run-time gate, without
				* reading the thread at all (see src/sample/sampler-gate.c) */
	uint64_t rescans;      /* gated threads read one by one (the gate tripped, its
				* reference was stale, or the periodic check) */
	uint64_t skipped_idle; /* cpu mode: threads not sampled because they were not running */
	uint64_t waiting;      /* cpu mode: runnable threads not interrupted because they were
				* waiting for a CPU at the tick (not run since their last stop,
				* or not the one on their CPU when perch took it) */
	uint64_t unrun;	 /* cpu mode: stops that counted for nothing (src/sample/sampler-cpu.c:
			  * not seen on a CPU at the tick and switched in before the stop,
			  * or, without task clocks, no run time due) */
	int cpu_clocks;	 /* cpu mode saw who was on a CPU at each tick (task clocks) */
	uint64_t oncpu;	 /* cpu mode: runnable threads seen on a CPU when perch took it */
	uint64_t unseen; /* ... interrupted on a CPU perch did not take, decided at the
			  * stop (counted when not switched in since the tick) */
	uint64_t unseen_counted;
	uint64_t oncpu_blocking; /* ... of which found blocked: they blocked as perch took their CPU
				  * (sampled from /proc, no stop) */
	uint64_t cpu_weight;	 /* cpu mode: the samples' weight in all */
	uint64_t cpu_weight_kernel;	   /* ... of which at a system call's (or fault's) exit */
	uint64_t cpu_weight_kernel_unseen; /* ... of which not seen on a CPU at the tick: only
					    * their stops said they ran on (such a stop may land at
					    * a later system call's exit) */
	uint64_t stopped;    /* samples of group-stopped threads (SIGSTOP & co), state 'T' */
	uint64_t blocked;    /* samples of threads in uninterruptible sleep read from /proc
			      * without a stop (sampler_snapshot_blocked()) */
	uint64_t eintr;	     /* stops that came at the exit of a call that a stop makes fail
			      * with EINTR in the program (waitreason_stop_breaks()): a thread
			      * perch interrupted as it went to block in one */
	uint64_t job_stops;  /* times perch stopped itself on SIGTSTP/SIGTTIN/SIGTTOU */
	uint64_t races;	     /* threads that exited under us (expected, not errors) */
	uint64_t migrations; /* CPU changes of the ptrace thread (follow_cpu) */
	uint64_t joined;     /* processes attached during the recording (sampler_opts.join) */
	uint64_t held;	     /* running threads interrupted while their CPU was held at the
			      * tick (they stop where they were then: sampler-hold.h) */
	uint64_t unheld;     /* running threads interrupted from another CPU (no holder there
			      * in time): such a stop may land at a later system call's exit */
	uint64_t quiet;	     /* running threads interrupted without a hold: their last
			      * SAMPLER_HOLD_QUIET stops all came in user code */
	uint64_t stop_hist[SAMPLER_HIST_US + 1];
	/* the highest bucket used in each histogram: percentiles read no further (800 KB read
	 * whole is 200 page faults of untouched memory at the end of every recording) */
	uint32_t stop_hist_top, tick_hist_top;
	/* how long after its time each tick began to read the threads' states (sampler.c,
	 * "Waking on time for a tick") */
	uint64_t tick_hist[SAMPLER_TICK_HIST_US + 1];
	/* how early the ptrace thread's timer was set before a tick, at the end */
	uint64_t lead_ns;
	double elapsed_s;
	enum sampler_stop stop_reason;
	int signal;	 /* the signal that stopped sampling */
	int signal_code; /* its si_code: SI_USER when sent with kill(2) */
};

/* A change to the set of processes and threads, for sampler_ops.event. */
struct sampler_event {
	int kind;  /* TRACEE_EV_THREAD_NEW, _THREAD_GONE, _EXEC, _PROC_NEW or _PROC_GONE */
	pid_t pid; /* the process */
	pid_t tid; /* the thread (the process id for process events) */
	const struct perch_arch *arch; /* the process's (after _EXEC: its new program's) */
};

/* Called on the worker thread, one at a time, in the order things happened. */
struct sampler_ops {
	/* A snapshot of a thread, taken while it was stopped; it runs again now. It stands for
	 * @info->weight ticks: 1, plus the ticks at which the thread had not yet reached the
	 * previous stop (a runnable thread waiting for a CPU stops late; skipping those ticks
	 * would under-count busy threads in a wall-clock profile) and ticks perch missed. */
	void (*sample)(void *arg, const struct sampler_info *info,
		       const struct unwind_snapshot *snap);
	/* The thread is blocked in a system call exactly where one of its earlier snapshots
	 * was taken (user @sp and @pc): count that snapshot's stack again. */
	void (*reuse)(void *arg, const struct sampler_info *info, uint64_t sp, uint64_t pc);
	/* A thread or process appeared, exited, or a process exec'd. */
	void (*event)(void *arg, const struct sampler_event *ev);
	/* Optional, for a tracee made with TRACEE_EXIT_STOPS: process @pid (after @execs
	 * execs) is about to exit, and @maps is its /proc/PID/maps text now (NULL when it could
	 * not be read): the worker may name its queued samples after it is gone. Called on
	 * the ptrace thread, at once (the process waits): be quick and thread-safe. */
	void (*exiting)(void *arg, pid_t pid, uint64_t execs, const char *maps);
};

/* Block the signals the sampler waits for (call before attaching, so none is lost): SIGCHLD,
 * SIGINT, SIGTERM, SIGHUP and the job-control stops. */
void sampler_block_signals(sigset_t *old);

/* Run until a stop condition. Threads are left attached (the caller detaches). Returns 0,
 * or -errno on a fatal wait error. @st must be zeroed by the caller. */
int sampler_run(struct tracee *t, const struct perch_arch *arch, const struct sampler_opts *o,
		const struct sampler_ops *ops, void *arg, struct sampler_stats *st);

/* Stop-window percentile (0..100) in microseconds from the histogram. */
uint64_t sampler_stop_percentile(const struct sampler_stats *st, double pct);
/* Percentile (0..100) of how late the ticks were served, in microseconds. */
uint64_t sampler_tick_percentile(const struct sampler_stats *st, double pct);

/* Snapshot one stopped thread now (for perch dump): registers + stack. 0 or -errno. */
int sampler_snapshot(struct tracee *t, const struct perch_arch *arch, struct tracee_thread *th,
		     struct unwind_snapshot *snap);
/* Snapshot a thread that is not stopped and cannot be (uninterruptible sleep, 'D': a ptrace
 * interrupt takes effect only when it leaves the kernel) from @syscall, the text of its
 * /proc/PID/task/TID/syscall: user SP, PC and the system call's argument registers, and a
 * copy of its stack; no other register is known, so unwinding goes as far as CFI that needs
 * only those. 0, -EAGAIN when it is not blocked in a system call, or -errno. */
int sampler_snapshot_blocked(const struct perch_arch *arch, pid_t tid, const char *syscall,
			     struct unwind_snapshot *snap);

#endif
