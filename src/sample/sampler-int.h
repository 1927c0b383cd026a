/* The sampler's own parts (not a contract: included by src/sample/sampler*.c alone).
 *   sampler.c         the ptrace thread's loop: the tick timer, signals, job control, joins
 *   sampler-tick.c    one tick: each thread's state, who to stop, interrupts, the stops
 *   sampler-gate.c    the run-time gate: threads blocked for long cost nothing per tick
 *   sampler-thread.c  what the sampler reads and keeps of a thread (/proc, schedstat, sites)
 *   sampler-cpu.c     cpu mode: was a runnable thread on a CPU at the tick, and its weight
 *   sampler-queue.c   the queue of snapshots and events and the worker thread behind it
 *   sampler-stats.c   the histograms behind the stop-window and tick percentiles */
#ifndef PERCH_SAMPLER_INT_H
#define PERCH_SAMPLER_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "perch/arch.h"
#include "perch/sample/sampler-hold.h"
#include "perch/sample/sampler.h"
#include "perch/sample/tracee.h"
#include "perch/unwind/unwind.h"

struct sampler_hold;
struct unwind_ptrace;

#define SAMPLER_NICE	(-10)
#define SAMPLER_RT_PRIO 1 /* the ptrace thread's SCHED_FIFO priority, when allowed */
/* Ctrl-Z: how long perch waits for the programs of its process group to stop */
#define SAMPLER_JOB_STOP_NS (300 * 1000000ULL)
/* ... and before it passes a stop sent to it alone on to the program */
#define SAMPLER_JOB_FORWARD_NS (30 * 1000000ULL)

#define SAMPLER_MAX_BATCH 1024 /* threads interrupted after the CPU move; more: at once */
#define SAMPLER_MAX_CPUS  256  /* CPUs follow_cpu() counts threads on */
#define SAMPLER_COMM	  64   /* thread names are at most 15 bytes; room for longer kernels */
/* descriptors kept open per thread (stat, syscall, schedstat), and room for the others */
#define SAMPLER_FDS_PER_THREAD 3
#define SAMPLER_FDS_SPARE      256
#define SAMPLER_PPM	       1000000
#define SAMPLER_OWN_CPU_PPM    20000 /* cpu_weight(): waited under 2% of its runnable time */
#define SAMPLER_WAIT_PPM       2000  /* idle_check(): 0.2% of the time waiting for a CPU */
/* gate_tick(): a thread blocked at one site for this long goes behind its process's run-time
 * gate (the first time a thread is found at a site, at once: tick_thread()), and gated
 * threads are read one by one at least this often */
#define SAMPLER_QUIET_NS  (200 * 1000000ULL)
#define SAMPLER_RESCAN_NS (1000 * 1000000ULL)
/* ... and its ticks are queued as one reused sample per thread at most this often (the
 * worker's cost per item, 200 threads at 1000 Hz, was 10% of a CPU) */
#define SAMPLER_GATE_FLUSH_NS (20 * 1000000ULL)
/* ... and a gated thread's ticks, counted on its process's gate epoch, at most this often (and
 * when it leaves the gate): a blocked thread costs a queue item a second, not one a tick */
/* threads visited for the first time per tick, at most (tick_pass()) */
#define SAMPLER_MEET_MAX 256
/* the gate reads a process's CPU clock at most so often that the reads take 1/this of the
 * sampling period (gate_due()): 200 threads, 20 us a read, at 1000 Hz: every 7 ticks */
#define SAMPLER_CLOCK_SHARE    300
#define SAMPLER_GATED_FLUSH_NS (1000 * 1000000ULL)
/* bytes of .../sched read for its se.exec_start line (the third; the file is ~1.8 KB) */
#define SAMPLER_SCHED_TEXT 512
/* cpu mode: a CPU is taken at each tick while a thread was runnable on it at one of the last
 * this many ticks */
#define SAMPLER_CPU_HOLD_TICKS 32
#define ITEM_SAMPLE	       0
#define ITEM_REUSE	       (-1)

/* One queued item: a snapshot (ITEM_SAMPLE), a reused stack (ITEM_REUSE) or a thread event
 * (a TRACEE_EV_* kind). */
struct item {
	int kind;
	pid_t pid, tid;
	const struct perch_arch *arch;
	uint32_t weight;
	char state;
	signed char ran; /* see sampler_info.ran */
	int has_syscall;
	char syscall[SAMPLER_SYSCALL_TEXT];
	char comm[SAMPLER_COMM];
	uint64_t site_sp, site_pc; /* ITEM_REUSE: where the reused snapshot was taken */
	struct unwind_snapshot snap;
	uint64_t *verify; /* --verify: libunwind-ptrace's pcs, SAMPLER_VERIFY_MAX */
	int nr_verify;
};

/* Items move free -> ring (ptrace thread) -> worker -> free. */
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_cond_t freed; /* the worker gave an item back (post_event() waits for one) */
	struct item *items;
	struct item **ring, **free;
	unsigned char *stacks; /* every item's stack buffer, one block */
	size_t head, len, nr_free, cap;
	int done;
};

/* How long the ptrace thread polls for the stops of the running threads it interrupted on
 * other CPUs (await_stops()). */
#define SAMPLER_AWAIT_NS (200 * 1000ULL)

/* How long a SIGCHLD may wait for its waitpid(-1) when the last one found nothing new: each
 * walks every traced thread in the kernel (wait_consider_task()), and every tick's own stops
 * raise a SIGCHLD that has nothing left to tell once their own waits took them, late ones
 * included (2.3 such walks per tick at 1000 Hz, most of the cost of 200 blocked threads). A
 * walk that finds something other than a stop of ours makes the next SIGCHLD's walk
 * immediate (a program that keeps creating threads, signals). */
#define SAMPLER_POLL_IDLE_NS (4 * 1000 * 1000ULL)

/* Items the worker takes from the queue at once (worker_main()). */
#define SAMPLER_WORKER_BATCH 16
struct worker {
	struct queue q;
	uint64_t awaited_stops;	      /* stops of threads that await_stops() waited for */
	struct unwind_ptrace *verify; /* --verify: the reference unwinder, else NULL */
	pthread_t thread;
	const struct sampler_ops *ops;
	void *arg;
	int cpu_mode;	    /* count only the threads on a CPU at the tick (sampler-cpu.c) */
	uint64_t period_ns; /* the sampling period */
	/* cpu mode: the task clock when the ptrace thread took its CPU for tick @self_fire, on
	 * CPU @self_cpu (sampler_cpu_stamp_self()); @stamps: such clocks can be read
	 * (/proc/.../sched), else cpu mode weighs stops by run time (sampler_cpu_weight()) */
	int stamps;
	int self_sched_fd;
	int self_cpu;
	uint64_t self_fire, self_taken;
	/* the threads not behind a gate, the only ones a tick visits; with the processes' gated
	 * lists (struct sproc) they hold every thread of the tracee (sampler-gate.c) */
	struct tracee_thread **active;
	size_t nr_active, alloc_active;
	size_t nr_gated;      /* in all processes' gated lists */
	size_t met_this_tick; /* threads visited for the first time at this tick */
	int chld;	      /* SIGCHLD was taken: tracee_poll() has work */
	pid_t chld_pid;	      /* the child it named */
	/* a SIGCHLD not polled for yet (SAMPLER_POLL_IDLE_NS); when tracee_poll() last ran
	 * (sampler_handle_events()), and whether it found events then */
	int events_held, events_found;
	uint64_t events_polled;
	uint64_t state_gen; /* tracee.state_gen when the gated threads were last looked at */
};

/* /proc/PID/task/TID/schedstat: "RUN_NS WAIT_NS SLICES": time on a CPU, time waiting on a
 * run queue, times switched in. Updated by the scheduler when the thread is switched in or
 * out (and at its ticks), so a thread waiting to run after a wakeup changes nothing here. */
struct schedstat {
	uint64_t run_ns, wait_ns, slices;
};

/* What the sampler keeps per thread (tracee_thread.user). */
/* sthread.ran (0 = unknown, what a new thread starts with) */
enum { SAMPLER_RAN_UNKNOWN, SAMPLER_RAN_YES, SAMPLER_RAN_NO };

struct sthread {
	uint32_t late_ticks;	      /* ticks to credit to the next sample */
	int stat_fd;		      /* kept open /proc/PID/task/TID/stat; -1 not yet, -2 failed */
	int syscall_fd;		      /* the same for .../syscall */
	char state;		      /* state letter read at the last tick */
	unsigned char ran;	      /* SAMPLER_RAN_*: ran since its previous sample? (the next
				       * item's; reset once it is filled) */
	unsigned char ran_since_idle; /* switched in since it was last found blocked */
	int cpu;		      /* CPU it last ran on, from the same read (-1 unknown) */
	char comm[SAMPLER_COMM];      /* name read at the last tick */
	int has_syscall;	      /* @syscall holds the text read at the last tick */
	char syscall[SAMPLER_SYSCALL_TEXT];
	/* places (user SP, PC) where samples of this thread were taken, newest first */
	struct {
		uint64_t sp, pc;
	} sites[SAMPLER_SITES];
	int nr_sites;
	/* while the thread stays blocked at one site: that site, and its .../schedstat when it
	 * was found there (idle_check()) */
	int schedstat_fd;
	int idle_known;
	uint64_t idle_sp, idle_pc;
	struct schedstat idle_ss;
	uint64_t idle_ns;  /* CLOCK_MONOTONIC of idle_ss */
	uint64_t quiet_ns; /* counted as blocked at its site since then (gate_fits()) */
	int quiet_once;	   /* was counted as blocked for SAMPLER_QUIET_NS when first found */
	uint32_t wait_ppm; /* share of time it recently spent waiting for a CPU (ppm) */
	int woken;	   /* found woken (runnable, not yet run) at this tick */
	uint64_t tick;	   /* the last tick that visited it (tick_pass()) */
	uint64_t run_ns;   /* its schedstat run time, read at tick @run_tick */
	uint64_t run_tick;
	int gated;  /* behind its process's run-time gate (gate_tick()) */
	int met;    /* visited by a tick once */
	int listed; /* in @w's active list (1), in its process's gated list (2), or not */
	struct worker *w;
	size_t list_pos;     /* its place there */
	uint64_t gate_epoch; /* its process's gate epoch up to which its ticks were counted */
	uint32_t credit;     /* ticks it was found at its site without a stop, not queued yet */
	char credit_state;   /* its state then */
	uint64_t credit_ns;  /* CLOCK_MONOTONIC of the first of them */
	/* group-stopped and sampled once: where (its stack is counted again until SIGCONT) */
	int stopped_known;
	uint64_t stopped_sp, stopped_pc;
	/* stopped while running (state 'R'): where, and schedstat's switch-in count during that
	 * stop; the same count at a later tick means it has not run since (runnable_unmoved()) */
	int ran_known;
	uint64_t ran_sp, ran_pc, ran_slices;
	/* cpu mode (sampler-cpu.c): the ticks it was seen on a CPU that its pending stop is to
	 * count (@cpu_ticks); an interrupt sent while perch could not see whether it ran (no
	 * holder on its CPU): the ticks since, counted only when the stop finds it switched in
	 * no more since then (schedstat @cpu_unseen_slices); the ticks this visit stands for */
	int sched_fd; /* kept .../sched (its task clock at its last switch) */
	uint32_t cpu_ticks;
	int cpu_unseen;
	uint32_t cpu_unseen_ticks;
	uint64_t cpu_unseen_slices;
	uint32_t tick_weight;
	int hold_cpu; /* the CPU it was runnable on at tick @hold_tick (cpu_want_holds()) */
	uint64_t hold_tick;
	/* cpu mode: schedstat's run (and, without task clocks, run-queue wait) time at its last
	 * counted stop, and the samples due to it not counted yet, in millionths
	 * (ran_weight(), sampler_cpu_weight()) */
	int cpu_known;
	uint64_t cpu_run, cpu_wait;
	int64_t cpu_due;
	/* its running stops in a row that came in user code (SAMPLER_HOLD_QUIET) */
	uint32_t user_stops;
	/* interrupted while running on another CPU than the ptrace thread's (a thread that never
	 * stops keeps it: its late stop may end a later await_stops() early, no more) */
	int awaited;
};

/* What the sampler keeps per process (tracee_proc.user): its run-time gate (gate_tick()). */
struct sproc {
	clockid_t clock; /* its CPU clock (clock_getcpuclockid()) */
	int clock_state; /* 0 not tried yet, 1 usable, -1 not */
	int ref_valid;
	uint64_t ref;	    /* its clock less its ungated threads' run time at the last rescan */
	uint64_t rescan_ns; /* CLOCK_MONOTONIC of the last rescan */
	int pass;	    /* this tick: its gated threads have not run */
	size_t nr_gated, nr_cand;
	/* its gated threads; @epoch grows by the ticks the gate held (each gated thread is owed
	 * @epoch - its gate_epoch), and @flush_pos walks the list to count them out now and then */
	struct tracee_thread **gated;
	size_t alloc_gated;
	uint64_t epoch;
	size_t flush_pos;
	size_t check_pos;	/* the next of them to read one by one (gate_spot_check()) */
	uint64_t clock_cost_ns; /* what the last read of its CPU clock took */
	uint64_t clock_tick;	/* the tick of that read (gate_due()) */
	uint64_t clock_every;	/* ticks between its last two reads */
	/* gated threads owed a count (gate_count()) and a read (gate_spot_check()), in
	 * thread-nanoseconds: one each per SAMPLER_GATED_FLUSH_NS / SAMPLER_RESCAN_NS */
	uint64_t flush_due, check_due;
};

/* sampler_cpu_seen(): a runnable thread was on a CPU when perch took it at this tick, was
 * waiting for one, or perch could not see (no holder there: decided at its stop). */
enum { CPU_OFF, CPU_ON, CPU_UNSEEN };

/* sampler_idle_check(): a thread found blocked at a site at an earlier tick is gone from it,
 * still there, or woken and waiting for a CPU. */
enum { IDLE_GONE, IDLE_STILL, IDLE_WOKEN };

/* The CPU holders of one tick (sampler-hold.h): NULL @h when they are off. */
struct tick_hold {
	struct sampler_hold *h;
	uint64_t fire;	   /* the tick being served */
	uint64_t deadline; /* wait for a holder until then, then interrupt from afar */
	int self;	   /* the ptrace thread's CPU */
	int released;	   /* the holders were let go: no more waiting for them */
	struct worker *w;
	unsigned char running[SAMPLER_HOLD_MAX_CPUS]; /* CPUs with running threads */
	size_t awaited; /* running threads interrupted on other CPUs (await_stops()) */
	/* every thread interrupted (the first SAMPLER_MAX_BATCH; @nr_sent counts them all):
	 * their stops are asked for one by one (sampler_take_stops()) */
	struct sent_stops *sent;
};

/* The threads one tick interrupted: their stops are taken by waits for each alone, and a
 * SIGCHLD they explain does not call for a wait for any child (SAMPLER_POLL_IDLE_NS). */
struct sent_stops {
	pid_t tid[SAMPLER_MAX_BATCH];
	size_t n;	/* in @tid */
	size_t nr_sent; /* interrupts sent, more than @n when they did not fit */
	uint64_t want;	/* worker.awaited_stops when the awaited ones have all stopped */
};

/* What the gate passes on to the rest of a tick. */
struct gate_ctx {
	struct tracee *t;
	const struct perch_arch *arch;
	struct worker *w;
	const struct sampler_opts *o;
	uint64_t missed, now;
	struct tick_hold *hd;
	struct tracee_thread **stop;
	size_t *nr_stop;
	struct sampler_stats *st;
};

/* sampler-thread.c: a thread's reads and state */
int sampler_take_snapshot(struct tracee *t, const struct perch_arch *arch,
			  const struct tracee_thread *th, struct unwind_snapshot *snap);
void sampler_note_broken_call(struct tracee_thread *th, const struct perch_arch *arch,
			      const struct perch_regs *regs);
int sampler_snapshot_blocked(const struct perch_arch *arch, pid_t tid, const char *syscall,
			     struct unwind_snapshot *snap);
struct sthread *sampler_thread_of(struct tracee_thread *th);
struct sproc *sampler_proc_of(struct tracee_proc *p);
void sampler_proc_free(struct tracee_proc *p);
void sampler_thread_free(struct tracee_thread *th);
/* The sampler keeps at most @n /proc files open (the rest are opened for each read), and how
 * many it keeps now; closing one it kept. */
void sampler_fd_close(int *fd);
ssize_t sampler_read_task_file(struct tracee *t, struct tracee_thread *th, int *fd,
			       const char *name, char *buf, size_t len);
int sampler_peek_schedstat(struct tracee *t, struct tracee_thread *th, struct sthread *s,
			   struct schedstat *ss);
int sampler_read_schedstat(struct tracee *t, struct tracee_thread *th, struct sthread *s,
			   struct schedstat *ss);
char sampler_read_state(struct tracee *t, struct tracee_thread *th, struct sthread *s);
void sampler_remember_site(struct sthread *s, uint64_t sp, uint64_t pc);
int sampler_idle_check(struct tracee *t, struct tracee_thread *th, struct sthread *s, uint64_t now);
int sampler_blocked_site(const struct sthread *s);
void sampler_fill_item(struct item *it, int kind, struct tracee_thread *th, struct sthread *s);
void sampler_note_stopped(struct sthread *s, struct item *it, uint64_t sp, uint64_t pc,
			  struct sampler_stats *st);
const struct perch_arch *sampler_arch_of(const struct tracee_thread *th,
					 const struct perch_arch *arch);

/* sampler-queue.c: the queue and the worker */
void sampler_queue_init(struct queue *q, size_t cap, size_t stack_size, int verify);
void sampler_queue_release(struct queue *q);
struct item *sampler_queue_get_free(struct queue *q);
void sampler_queue_push(struct queue *q, struct item *it);
void sampler_queue_push_nowake(struct queue *q, struct item *it);
void sampler_queue_wake(struct queue *q);
void *sampler_worker_main(void *p);
void sampler_queue_push_free(struct queue *q, struct item *it);
struct item *sampler_queue_get_free_wait(struct queue *q);
void sampler_queue_wait_free(struct queue *q);

/* sampler-tick.c: one tick and the stops */
void sampler_post_event(struct worker *w, const struct tracee_event *ev);
int sampler_handle_events(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			  struct sampler_stats *st);
int sampler_credit_flush(struct worker *w, struct tracee_thread *th, struct sthread *s,
			 struct sampler_stats *st, int wait);
void sampler_credit(struct worker *w, struct tracee_thread *th, struct sthread *s, uint32_t n,
		    uint64_t now, struct sampler_stats *st);
int sampler_tick_thread(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			const struct sampler_opts *o, struct tracee_thread *th, uint64_t missed,
			uint64_t now, struct sampler_stats *st);
void sampler_interrupt(struct tracee *t, struct tracee_thread *th, struct tick_hold *hd,
		       struct sampler_stats *st);
void sampler_tick(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		  const struct sampler_opts *o, struct sampler_hold *h, uint64_t fire,
		  uint64_t next, uint64_t lead, uint64_t missed, struct sent_stops *sent,
		  struct sampler_stats *st);
int sampler_await_stops(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			const struct sent_stops *sent, struct sampler_stats *st);
int sampler_take_thread(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			pid_t tid, struct sampler_stats *st);
int sampler_take_stops(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       const struct sent_stops *sent, struct sampler_stats *st);

/* A thread blocked where no stop can reach it ('D'; or in cpu mode, one that blocked just as
 * perch took its CPU): a sample in @state from /proc/PID/task/TID/syscall (its SP and PC,
 * @s->syscall) and its stack read without a stop (sampler_snapshot_blocked()). 0, or -errno
 * when it could not be read. */
int sampler_sample_blocked(struct worker *w, struct tracee_thread *th, struct sthread *s,
			   const struct perch_arch *arch, char state, struct sampler_stats *st);
/* sampler-gate.c: the run-time gate and the thread lists */
/* A thread the tracee has (new, or not seen yet) into the active list; out of any list
 * (gone). */
void sampler_list_add(struct worker *w, struct tracee_thread *th);
void sampler_list_remove(struct tracee_thread *th);
/* Every thread of @t in a list, each once (rebuilt when the counts say otherwise: a thread
 * that came or went without an event). */
void sampler_lists_check(struct tracee *t, struct worker *w, struct sampler_stats *st);
/* The end: every gated thread's ticks queued, the lists freed. */
void sampler_gate_finish(struct tracee *t, struct worker *w, struct sampler_stats *st);

void sampler_gate_tick(struct gate_ctx *g);
void sampler_gate_credit(struct gate_ctx *g);

/* sampler-cpu.c: cpu mode */
void sampler_cpu_init(struct worker *w);
void sampler_cpu_release(struct worker *w);
/* Keep the calling (ptrace) thread on the CPU it runs on for the whole recording, so that the
 * holders know which CPU it takes at each tick itself (a holder never holds the ptrace thread's
 * CPU, and one that moved between ticks left a CPU taken by nobody). 1 when pinned. */
int sampler_cpu_pin_self(void);
/* The ptrace thread woke for tick @fire: note its task clock (it took its CPU just now). */
void sampler_cpu_stamp_self(struct worker *w, uint64_t fire);
/* CPU_ON, CPU_OFF or CPU_UNSEEN for runnable @th at the tick of @hd (waits for its CPU's
 * holder). */
int sampler_cpu_seen(struct tracee *t, struct tracee_thread *th, struct sthread *s,
		     struct tick_hold *hd);
/* A runnable thread (or one whose stop is pending) at the tick of @hd: notes what it is owed;
 * 1 when it is to be interrupted now. */
int sampler_cpu_visit(struct tracee *t, struct tracee_thread *th, struct tick_hold *hd,
		      struct sampler_stats *st);
/* A blocked thread at a tick: did it run since the previous one (its schedstat run time
 * moved)? Only such a thread can have been on its CPU when perch took it, on its way to block. */
int sampler_cpu_ran_since(struct tracee *t, struct tracee_thread *th, struct sthread *s);
/* What the stop of a running thread counts for, @ss its schedstat read in the stop (NULL when
 * it could not be read); 0: nothing, the sample is dropped. */
uint32_t sampler_cpu_stop_weight(struct worker *w, struct sthread *s, const struct schedstat *ss,
				 struct sampler_stats *st);

/* sampler-stats.c */
void sampler_hist_add(uint64_t *hist, uint64_t max, uint32_t *top, uint64_t us);

#endif
