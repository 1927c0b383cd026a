/* The sampling loop; see include/perch/sample/sampler.h and docs/design/perf-baseline.md
 * (design lessons 1, 3, 4: copy only in the stop window, interrupt all threads then collect,
 * handle stops as soon as SIGCHLD arrives). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/base/fdlimit.h"
#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "perch/proc/waitreason.h"
#include "perch/sample/sampler-hold.h"
#include "perch/sample/sampler.h"
#include "perch/sample/tracee.h"
#include "perch/unwind/unwind-ptrace.h"
#include "perch/unwind/unwind.h"

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
#define ITEM_SAMPLE	      0
#define ITEM_REUSE	      (-1)

/* One queued item: a snapshot (ITEM_SAMPLE), a reused stack (ITEM_REUSE) or a thread event
 * (a TRACEE_EV_* kind). */
struct item {
	int kind;
	pid_t pid, tid;
	const struct perch_arch *arch;
	uint32_t weight;
	char state;
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

/* Items the worker takes from the queue at once (worker_main()). */
#define SAMPLER_WORKER_BATCH 16

struct worker {
	struct queue q;
	uint64_t awaited_stops;	      /* stops of threads that await_stops() waited for */
	struct unwind_ptrace *verify; /* --verify: the reference unwinder, else NULL */
	pthread_t thread;
	const struct sampler_ops *ops;
	void *arg;
	int cpu_mode; /* samples of running threads weigh their time on a CPU (cpu_weight()) */
	uint64_t period_ns; /* the sampling period */
};

static void wait_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGTSTP);
	sigaddset(set, SIGTTIN);
	sigaddset(set, SIGTTOU);
}

static int is_job_stop(int sig)
{
	return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

void sampler_block_signals(sigset_t *old)
{
	sigset_t set;

	wait_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* Registers and stack of @th, stopped: 0 or -errno. */
static int take_snapshot(struct tracee *t, const struct perch_arch *arch,
			 const struct tracee_thread *th, struct unwind_snapshot *snap)
{
	snap->time_ns = monotime_ns();
	snap->regs.valid = 0; /* (a reused item's, if the read fails) */
	snap->regs.broken_call = 0;
	return unwind_snapshot_take(t->pid, th->tid, arch, snap);
}

/* Note the blocking call a stop of @th broke off (@regs, read in that stop), for the thread's
 * syscall file to name it again (it names restart_syscall until the call returns). */
static void note_broken_call(struct tracee_thread *th, const struct perch_arch *arch,
			     const struct perch_regs *regs)
{
	if (regs->broken_call && !waitreason_is_restart(arch->e_machine, regs->broken_call - 1)) {
		th->broken_call = regs->broken_call;
		th->broken_sp = perch_regs_sp(arch, regs);
		th->broken_pc = perch_regs_pc(arch, regs);
	}
}

int sampler_snapshot(struct tracee *t, const struct perch_arch *arch, struct tracee_thread *th,
		     struct unwind_snapshot *snap)
{
	int ret = take_snapshot(t, arch, th, snap);

	note_broken_call(th, arch, &snap->regs);
	return ret;
}

int sampler_snapshot_blocked(const struct perch_arch *arch, pid_t tid, const char *syscall,
			     struct unwind_snapshot *snap)
{
	struct waitreason_syscall sc;

	snap->time_ns = monotime_ns();
	snap->tid = tid;
	snap->pac_mask = 0;
	memset(&snap->regs, 0, sizeof(snap->regs));
	if (!syscall || waitreason_syscall_parse(syscall, &sc) < 0 ||
	    sc.what != WAITREASON_SC_SYSCALL || !sc.sp || !sc.pc)
		return -EAGAIN;
	/* (a table without the list has six zeros) */
	for (int i = 0; i < 6 && arch->dw_sysargs[0] != arch->dw_sysargs[1]; i++) {
		int r = arch->dw_sysargs[i];

		if (r >= 0 && r < PERCH_MAX_DWREGS) {
			snap->regs.r[r] = sc.args[i];
			snap->regs.valid |= 1ULL << r;
		}
	}
	snap->regs.r[arch->dw_sp] = sc.sp;
	snap->regs.r[arch->dw_pc] = sc.pc;
	snap->regs.valid |= 1ULL << arch->dw_sp | 1ULL << arch->dw_pc;
	return unwind_snapshot_read_stack(tid, sc.sp, snap);
}

/* ---- the queue ---- */

static void queue_init(struct queue *q, size_t cap, size_t stack_size, int verify)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->wake, NULL);
	pthread_cond_init(&q->freed, NULL);
	q->cap = cap;
	q->items = xcalloc(cap, sizeof(*q->items));
	q->ring = xcalloc(cap, sizeof(*q->ring));
	q->free = xcalloc(cap, sizeof(*q->free));
	/* one block (a mapping whose pages come as they are used): 512 separate buffers grow
	 * the heap a brk at a time, tens of ms before the first tick on a busy host */
	size_t bytes = stack_size ? stack_size : 1;

	q->stacks = xmalloc(cap * bytes);
	for (size_t i = 0; i < cap; i++) {
		q->items[i].snap.stack = q->stacks + i * bytes;
		q->items[i].snap.stack_cap = stack_size;
		if (verify)
			q->items[i].verify = xcalloc(SAMPLER_VERIFY_MAX, sizeof(uint64_t));
		q->free[q->nr_free++] = &q->items[i];
	}
}

static void queue_release(struct queue *q)
{
	for (size_t i = 0; i < q->cap; i++)
		free(q->items[i].verify);
	free(q->stacks);
	free(q->items);
	free(q->ring);
	free(q->free);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->wake);
	pthread_cond_destroy(&q->freed);
}

/* A free item, or NULL when the worker is a whole queue behind. */
static struct item *queue_get_free(struct queue *q)
{
	struct item *it = NULL;

	pthread_mutex_lock(&q->lock);
	if (q->nr_free)
		it = q->free[--q->nr_free];
	pthread_mutex_unlock(&q->lock);
	return it;
}

static void queue_push(struct queue *q, struct item *it)
{
	pthread_mutex_lock(&q->lock);
	q->ring[(q->head + q->len) % q->cap] = it;
	q->len++;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

/* The same without waking the worker: reused stacks (one per blocked thread) and snapshots
 * come many per tick, and each wakeup costs the ptrace thread two system calls and a switch
 * (with every thread stopped at every tick, --no-idle-reuse, a wakeup per snapshot doubled
 * the target's slowdown); queue_wake() once per tick and once per pass of the main loop. */
static void queue_push_nowake(struct queue *q, struct item *it)
{
	pthread_mutex_lock(&q->lock);
	q->ring[(q->head + q->len) % q->cap] = it;
	q->len++;
	pthread_mutex_unlock(&q->lock);
}

static void queue_wake(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	if (q->len)
		pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

/* Hand one item to the caller's ops. */
static void worker_do(struct worker *w, struct item *it)
{
	if (it->kind == ITEM_SAMPLE || it->kind == ITEM_REUSE) {
		struct sampler_info info = {
		    .pid = it->pid,
		    .arch = it->arch,
		    .tid = it->tid,
		    .weight = it->weight,
		    .state = it->state,
		    .syscall = it->has_syscall ? it->syscall : NULL,
		    .comm = it->comm,
		    .time_ns = it->snap.time_ns,
		    .verify_pcs = it->verify,
		    .nr_verify = it->verify ? it->nr_verify : -1,
		};

		if (it->kind == ITEM_SAMPLE)
			w->ops->sample(w->arg, &info, &it->snap);
		else
			w->ops->reuse(w->arg, &info, it->site_sp, it->site_pc);
	} else if (w->ops->event) {
		struct sampler_event ev = {
		    .kind = it->kind, .pid = it->pid, .tid = it->tid, .arch = it->arch};

		w->ops->event(w->arg, &ev);
	}
}

/* The worker: takes the queued items a few at a time (each lock the ptrace thread finds
 * taken costs it a sleep), hands them on in order, gives them back together. */
static void *worker_main(void *p)
{
	struct worker *w = p;
	struct queue *q = &w->q;
	struct item *batch[SAMPLER_WORKER_BATCH];

	pthread_mutex_lock(&q->lock);
	for (;;) {
		size_t n = 0;

		while (!q->len && !q->done)
			pthread_cond_wait(&q->wake, &q->lock);
		if (!q->len)
			break;
		while (q->len && n < SAMPLER_WORKER_BATCH) {
			batch[n++] = q->ring[q->head];
			q->head = (q->head + 1) % q->cap;
			q->len--;
		}
		pthread_mutex_unlock(&q->lock);
		for (size_t i = 0; i < n; i++)
			worker_do(w, batch[i]);
		pthread_mutex_lock(&q->lock);
		for (size_t i = 0; i < n; i++)
			q->free[q->nr_free++] = batch[i];
		pthread_cond_signal(&q->freed);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void queue_push_free(struct queue *q, struct item *it)
{
	pthread_mutex_lock(&q->lock);
	q->free[q->nr_free++] = it;
	pthread_mutex_unlock(&q->lock);
}

/* Wait (@q locked) until the worker gives an item back. Items pushed without a wakeup
 * (queue_push_nowake()) may fill the whole queue before the worker is woken: it is woken
 * here, or both threads would wait for each other for ever. */
static void wait_freed(struct queue *q)
{
	if (q->len)
		pthread_cond_signal(&q->wake);
	pthread_cond_wait(&q->freed, &q->lock);
}

/* A free item for an event: unlike a sample, an event is never dropped (the worker's view of
 * the processes, their programs and architectures depends on every one): when the worker is
 * a whole queue behind, wait for it to give one back (it does, one sample at a time). */
static struct item *queue_get_free_wait(struct queue *q)
{
	struct item *it;

	pthread_mutex_lock(&q->lock);
	while (!q->nr_free)
		wait_freed(q);
	it = q->free[--q->nr_free];
	pthread_mutex_unlock(&q->lock);
	return it;
}

/* Wait until the worker gave an item back (only the ptrace thread takes free ones). */
static void queue_wait_free(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	while (!q->nr_free)
		wait_freed(q);
	pthread_mutex_unlock(&q->lock);
}

/* ---- the ptrace thread ---- */

/* /proc/PID/task/TID/schedstat: "RUN_NS WAIT_NS SLICES": time on a CPU, time waiting on a
 * run queue, times switched in. Updated by the scheduler when the thread is switched in or
 * out (and at its ticks), so a thread waiting to run after a wakeup changes nothing here. */
struct schedstat {
	uint64_t run_ns, wait_ns, slices;
};

/* What the sampler keeps per thread (tracee_thread.user). */
struct sthread {
	uint32_t late_ticks;	 /* ticks to credit to the next sample */
	int stat_fd;		 /* kept open /proc/PID/task/TID/stat; -1 not yet, -2 failed */
	int syscall_fd;		 /* the same for .../syscall */
	char state;		 /* state letter read at the last tick */
	int cpu;		 /* CPU it last ran on, from the same read (-1 unknown) */
	char comm[SAMPLER_COMM]; /* name read at the last tick */
	int has_syscall;	 /* @syscall holds the text read at the last tick */
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
	int gated;	    /* behind its process's run-time gate (gate_tick()) */
	uint32_t credit;    /* ticks it was found at its site without a stop, not queued yet */
	char credit_state;  /* its state then */
	uint64_t credit_ns; /* CLOCK_MONOTONIC of the first of them */
	/* group-stopped and sampled once: where (its stack is counted again until SIGCONT) */
	int stopped_known;
	uint64_t stopped_sp, stopped_pc;
	/* stopped while running (state 'R'): where, and schedstat's switch-in count during that
	 * stop; the same count at a later tick means it has not run since (runnable_unmoved()) */
	int ran_known;
	uint64_t ran_sp, ran_pc, ran_slices;
	/* cpu mode: schedstat's run and run-queue wait times at its last stop, the ticks that
	 * found it runnable since (this one's included), and the samples due to it not counted
	 * yet, in millionths (cpu_weight()) */
	int cpu_known;
	uint64_t cpu_run, cpu_wait;
	uint32_t cpu_ticks;
	int64_t cpu_due;
	/* its running stops in a row that came in user code (SAMPLER_HOLD_QUIET) */
	uint32_t user_stops;
	/* interrupted while running on another CPU than the ptrace thread's (a thread that never
	 * stops keeps it: its late stop may end a later await_stops() early, no more) */
	int awaited;
};

static struct sthread *sthread_of(struct tracee_thread *th)
{
	struct sthread *s = th->user;

	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->stat_fd = s->syscall_fd = s->schedstat_fd = -1;
		th->user = s;
	}
	return s;
}

/* What the sampler keeps per process (tracee_proc.user): its run-time gate (gate_tick()). */
struct sproc {
	clockid_t clock; /* its CPU clock (clock_getcpuclockid()) */
	int clock_state; /* 0 not tried yet, 1 usable, -1 not */
	int ref_valid;
	uint64_t ref;	    /* its clock less its ungated threads' run time at the last rescan */
	uint64_t rescan_ns; /* CLOCK_MONOTONIC of the last rescan */
	int pass;	    /* this tick: its gated threads have not run */
	size_t nr_gated, nr_cand;
};

static struct sproc *sproc_of(struct tracee_proc *p)
{
	if (!p->user)
		p->user = xcalloc(1, sizeof(struct sproc));
	return p->user;
}

static void sproc_free(struct tracee_proc *p)
{
	free(p->user);
	p->user = NULL;
}

static void sthread_free(struct tracee_thread *th)
{
	struct sthread *s = th->user;

	if (!s)
		return;
	if (s->stat_fd >= 0)
		close(s->stat_fd);
	if (s->syscall_fd >= 0)
		close(s->syscall_fd);
	if (s->schedstat_fd >= 0)
		close(s->schedstat_fd);
	free(s);
	th->user = NULL;
}

/* Read a small /proc/PID/task/TID/NAME file through a kept descriptor (pread: 1-2 us instead
 * of 3 for open+read+close). Returns its length, or -1. */
static ssize_t read_task_file(struct tracee *t, struct tracee_thread *th, int *fd, const char *name,
			      char *buf, size_t len)
{
	ssize_t n;

	(void)t;
	if (*fd == -1) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", th->proc->pid, th->tid, name);
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0 && errno != EMFILE && errno != ENFILE)
			*fd = -2; /* (out of descriptors: tried again at the next read) */
	}
	if (*fd < 0)
		return -1;
	n = pread(*fd, buf, len - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The thread's .../schedstat alone (the gate's run times untouched). 0 or -1 (unreadable:
 * kernels without CONFIG_SCHED_INFO). */
static int peek_schedstat(struct tracee *t, struct tracee_thread *th, struct sthread *s,
			  struct schedstat *ss)
{
	char buf[128], *p, *end;

	if (read_task_file(t, th, &s->schedstat_fd, "schedstat", buf, sizeof(buf)) < 0)
		return -1;
	ss->run_ns = strtoull(buf, &p, 10);
	ss->wait_ns = strtoull(p, &end, 10);
	if (end == p)
		return -1;
	ss->slices = strtoull(end, &p, 10);
	if (p == end)
		return -1;
	return 0;
}

/* The thread's .../schedstat, its run time also kept in @s (@s->run_tick: the tick that
 * visited it last). 0 or -1 (unreadable: kernels without CONFIG_SCHED_INFO). */
static int read_schedstat(struct tracee *t, struct tracee_thread *th, struct sthread *s,
			  struct schedstat *ss)
{
	if (peek_schedstat(t, th, s, ss) < 0)
		return -1;
	s->run_ns = ss->run_ns;
	s->run_tick = s->tick;
	return 0;
}

/* The state letter, name and last CPU from .../stat ("1234 (comm) S ..."; comm may hold
 * ')'; the CPU is field 39): the state or 0 when unknown; @s->comm is left as it was when the
 * line cannot be read, @s->cpu is -1 when it has no CPU field. */
static char read_state(struct tracee *t, struct tracee_thread *th, struct sthread *s)
{
	char buf[512], *open, *close, *p;
	int field = 3;

	s->cpu = -1;
	if (read_task_file(t, th, &s->stat_fd, "stat", buf, sizeof(buf)) < 0)
		return 0;
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open || close[1] != ' ')
		return 0;
	snprintf(s->comm, sizeof(s->comm), "%.*s", (int)(close - open - 1), open + 1);
	for (p = close + 2; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	if (field == 39 && *p >= '0' && *p <= '9')
		s->cpu = (int)strtol(p, NULL, 10);
	return close[2];
}

/* Newest first; a known site moves to the front, a new one pushes out the oldest. */
static void remember_site(struct sthread *s, uint64_t sp, uint64_t pc)
{
	int i;

	for (i = 0; i < s->nr_sites; i++)
		if (s->sites[i].sp == sp && s->sites[i].pc == pc)
			break;
	if (i == s->nr_sites) {
		if (s->nr_sites < SAMPLER_SITES)
			s->nr_sites++;
		i = s->nr_sites - 1;
	}
	memmove(s->sites + 1, s->sites, (size_t)i * sizeof(s->sites[0]));
	s->sites[0].sp = sp;
	s->sites[0].pc = pc;
}

enum { IDLE_GONE, IDLE_STILL, IDLE_WOKEN };

/* A thread found blocked at a site at an earlier tick: is it still there? Not switched in
 * since (schedstat's slice count unchanged) means it has not run, so its stack is the same:
 * but it may be blocked, or woken and waiting for a CPU, which schedstat cannot tell apart (a
 * woken thread changes nothing there until it runs). Where the thread's CPU is contended
 * (its schedstat shows it waited for a CPU more than SAMPLER_WAIT_PPM of the time since it
 * was last found blocked) its state is read as well, so a woken thread counts as running
 * ('R'); elsewhere a wakeup is followed by running within microseconds, and the one cheap
 * read per tick suffices. IDLE_STILL: still blocked there; IDLE_WOKEN: runnable, @s->state
 * read; IDLE_GONE: it ran since (or schedstat cannot be read). */
static int idle_check(struct tracee *t, struct tracee_thread *th, struct sthread *s, uint64_t now)
{
	struct schedstat ss;
	char state;

	if (read_schedstat(t, th, s, &ss) < 0)
		return IDLE_GONE;
	if (ss.slices != s->idle_ss.slices) {
		uint64_t dt = now > s->idle_ns ? now - s->idle_ns : 0;

		if (dt && ss.wait_ns >= s->idle_ss.wait_ns) {
			uint64_t ppm = (ss.wait_ns - s->idle_ss.wait_ns) / (dt / 1000000 + 1);

			/* a moving average over the thread's recent wakeups */
			s->wait_ppm =
			    (uint32_t)((s->wait_ppm + (ppm < 1000000 ? ppm : 1000000)) / 2);
		}
		return IDLE_GONE;
	}
	if (s->wait_ppm < SAMPLER_WAIT_PPM)
		return IDLE_STILL;
	state = read_state(t, th, s);
	if (state == 'R') {
		s->state = state;
		return IDLE_WOKEN;
	}
	if (state)
		s->state = state;
	return IDLE_STILL;
}

/* Is the thread blocked in a system call at the SP and PC of one of its earlier samples?
 * @s->syscall holds /proc/PID/task/TID/syscall ("NR ARG1..ARG6 SP PC", "-1 SP PC" or
 * "running"). Returns the site's index, or -1. */
static int blocked_site(const struct sthread *s)
{
	struct waitreason_syscall sc;

	if (!s->nr_sites || !s->has_syscall)
		return -1;
	/* "running", or blocked outside a system call: interrupt it */
	if (waitreason_syscall_parse(s->syscall, &sc) < 0 || sc.what != WAITREASON_SC_SYSCALL)
		return -1;
	for (int i = 0; i < s->nr_sites; i++)
		if (s->sites[i].sp == sc.sp && s->sites[i].pc == sc.pc)
			return i;
	return -1;
}

/* Fill a sample or reuse item from what the last tick read of the thread. */
static void fill_item(struct item *it, int kind, struct tracee_thread *th, struct sthread *s)
{
	it->kind = kind;
	it->pid = th->proc->pid;
	it->arch = th->proc->arch;
	it->tid = th->tid;
	it->weight = 1 + s->late_ticks;
	it->state = s->state;
	memcpy(it->comm, s->comm, sizeof(it->comm));
	it->has_syscall = s->has_syscall;
	if (s->has_syscall)
		memcpy(it->syscall, s->syscall, sizeof(it->syscall));
	s->late_ticks = 0;
}

/* A sample of a group-stopped thread: its state is 'T' (/proc reads 't' while perch traces
 * it), and it stays where it is until SIGCONT, so later ticks count this stack again without
 * stopping it (tick_stopped()). */
static void note_stopped(struct sthread *s, struct item *it, uint64_t sp, uint64_t pc,
			 struct sampler_stats *st)
{
	it->state = 'T';
	it->has_syscall = 0;
	s->stopped_known = 1;
	s->stopped_sp = sp;
	s->stopped_pc = pc;
	st->stopped++;
}

/* The architecture of @th's process (@arch when it is not known). */
static const struct perch_arch *arch_of(const struct tracee_thread *th,
					const struct perch_arch *arch)
{
	return th->proc->arch ? th->proc->arch : arch;
}

/* cpu mode: what a stop of a running thread counts for. Found runnable ('R') at a tick, a
 * thread that shares its CPU may be running or waiting for it, and perf's cpu-clock counts only
 * its time on a CPU. So each stop counts the thread's run time since its previous stop
 * (schedstat, read in the stop: exact, the stop switched it out), in periods, summed over its
 * stops and counted in whole samples: rounded, at least 1 whenever anything is due, the rest
 * (either way) carried to its next stop. Its samples then add up to its CPU time. A thread
 * that waited for a CPU less than SAMPLER_OWN_CPU_PPM of its runnable time since its previous
 * stop had its CPU to itself: it counts the ticks that found it runnable since then, as in
 * wall mode (the same in expectation, without the noise of run times between ticks 0-2
 * periods apart: a busy thread alone got weights 0, 1 and 2, an eighth of its stops not
 * counted). Counting 1 per tick found runnable whatever the waits gave node's main thread 13%
 * more samples than its CPU time and its short-lived helper threads twice theirs; four threads
 * of 100/70/40/10% duty pinned to one CPU 2.2-4.1x theirs. (Weighing each tick by the thread's
 * share of runnable time on a CPU, a ratio, still gave them 4-18% too many.) 0: nothing is
 * due, this stop is not counted; a thread's first stop counts 1. */
static uint32_t cpu_weight(struct sthread *s, const struct schedstat *ss, uint64_t period_ns)
{
	uint64_t run, wait, n;
	uint32_t ticks = s->cpu_ticks ? s->cpu_ticks : 1;

	s->cpu_ticks = 0;
	if (!s->cpu_known || ss->run_ns < s->cpu_run || ss->wait_ns < s->cpu_wait) {
		s->cpu_due += SAMPLER_PPM;
	} else {
		run = ss->run_ns - s->cpu_run;
		wait = ss->wait_ns - s->cpu_wait;
		if (wait * SAMPLER_PPM < (run + wait) * SAMPLER_OWN_CPU_PPM)
			s->cpu_due += (int64_t)ticks * SAMPLER_PPM;
		else
			s->cpu_due += (int64_t)((double)run / (double)period_ns * SAMPLER_PPM);
	}
	s->cpu_known = 1;
	s->cpu_run = ss->run_ns;
	s->cpu_wait = ss->wait_ns;
	if (s->cpu_due <= 0)
		return 0;
	n = ((uint64_t)s->cpu_due + SAMPLER_PPM / 2) / SAMPLER_PPM;
	if (!n)
		n = 1;
	s->cpu_due -= (int64_t)(n * SAMPLER_PPM);
	return n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

/* Count @us in @hist (1-us buckets, the last one for @max and over) and keep *@top, the highest
 * bucket used: the percentiles read no further (sampler_stop_percentile()). */
static void hist_add(uint64_t *hist, uint64_t max, uint32_t *top, uint64_t us)
{
	if (us > max)
		us = max;
	hist[us]++;
	if (us > *top)
		*top = (uint32_t)us;
}

/* Our interrupt-stop: copy, resume, queue. */
static void on_stopped(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       struct tracee_thread *th, struct sampler_stats *st)
{
	struct sthread *s = sthread_of(th);
	struct item *it = queue_get_free(&w->q);
	int ret = 0, group_stop = th->in_group_stop, ran;
	struct schedstat ss;
	uint64_t us;

	if (!it && s->state != 'R') {
		/* a blocked thread waits in its stop for the worker to make room: resumed
		 * without a snapshot, it would be interrupted again at the next tick, and the
		 * wakeups of thousands of such threads kept the worker off the CPU for seconds
		 * (2000 threads beside two busy processes on 2 CPUs: a whole queue dropped at
		 * every tick, and three quarters of the threads never sampled) */
		it = queue_get_free_wait(&w->q);
		st->waited++;
	}
	arch = arch_of(th, arch);
	if (it)
		ret = take_snapshot(t, arch, th, &it->snap);
	if (it && w->verify && ret == 0)
		it->nr_verify = unwind_ptrace_pcs(w->verify, th->tid, it->snap.pac_mask, it->verify,
						  SAMPLER_VERIFY_MAX);
	/* a running thread: its switch-in count while it is still stopped (read after the
	 * resume it could already include its next run) */
	ran = s->state == 'R' && !group_stop && peek_schedstat(t, th, s, &ss) == 0;
	s->ran_known = 0;
	tracee_resume(t, th);
	if (it)
		note_broken_call(th, arch, &it->snap.regs); /* (out of the stop window) */
	w->awaited_stops += s->awaited;
	s->awaited = 0;
	us = (monotime_ns() - th->interrupt_ns) / 1000;
	hist_add(st->stop_hist, SAMPLER_HIST_US, &st->stop_hist_top, us);
	if (!it) {
		/* the worker is a whole queue behind: the snapshot is lost, not the tick (its
		 * next sample stands for it; a stopped thread is one that was running) */
		sthread_of(th)->late_ticks++;
		st->dropped++;
		return;
	}
	if (ret == -ESRCH) {
		st->races++;
	} else if (ret < 0 && !it->snap.regs.valid) {
		st->err_regs++;
	} else {
		uint64_t sp = perch_regs_sp(arch, &it->snap.regs);
		uint64_t pc = perch_regs_pc(arch, &it->snap.regs);

		if (ret < 0)
			st->err_stack++;
		st->samples++;
		fill_item(it, ITEM_SAMPLE, th, s);
		if (group_stop)
			note_stopped(s, it, sp, pc, st);
		/* where it was found blocked: where it may be found blocked again (running
		 * samples would only push those places out) */
		if (it->state && it->state != 'R')
			remember_site(s, sp, pc);
		if (it->state == 'R' && !group_stop) {
			if (it->snap.regs.from_kernel < 0)
				s->user_stops += s->user_stops < UINT32_MAX;
			else
				s->user_stops = 0;
		}
		if (ran && ret == 0) {
			s->ran_known = 1;
			s->ran_sp = sp;
			s->ran_pc = pc;
			s->ran_slices = ss.slices;
		}
		if (ran && w->cpu_mode && !(it->weight = cpu_weight(s, &ss, w->period_ns))) {
			st->unrun++;
			queue_push_free(&w->q, it);
			return;
		}
		queue_push_nowake(&w->q, it); /* the main loop wakes the worker */
		return;
	}
	queue_push_free(&w->q, it);
}

static void post_event(struct worker *w, const struct tracee_event *ev)
{
	struct item *it = queue_get_free_wait(&w->q);

	it->kind = ev->kind;
	it->pid = ev->proc ? ev->proc->pid : 0;
	it->arch = ev->proc ? ev->proc->arch : NULL;
	it->tid = ev->thread ? ev->thread->tid : it->pid;
	queue_push(&w->q, it);
}

/* A process's last thread stopped on its way out: hand its maps to the caller now, while
 * they can be read (the worker may still have its samples queued), then let it go on. */
static void on_exiting(struct tracee *t, struct worker *w, const struct tracee_event *ev)
{
	if (w->ops->exiting) {
		char path[64], *text;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", ev->proc->pid,
			 ev->thread->tid);
		text = proc_read_file(path, NULL);
		w->ops->exiting(w->arg, ev->proc->pid, ev->proc->execs, text);
		free(text);
	}
	tracee_resume(t, ev->thread);
}

static int credit_flush(struct worker *w, struct tracee_thread *th, struct sthread *s,
			struct sampler_stats *st, int wait);

/* Act on one event of the tracee. */
static void on_event(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		     struct tracee_event *ev, struct sampler_stats *st)
{
	switch (ev->kind) {
	case TRACEE_EV_STOPPED:
		on_stopped(t, arch, w, ev->thread, st);
		break;
	case TRACEE_EV_EXIT:
		st->stop_reason = SAMPLER_STOP_EXIT;
		break;
	case TRACEE_EV_PROC_EXITING:
		on_exiting(t, w, ev);
		break;
	default:
		/* the process's set of threads changed: its gate's reference is stale */
		if (ev->proc)
			sproc_of(ev->proc)->ref_valid = 0;
		if (ev->kind == TRACEE_EV_THREAD_GONE && ev->thread && ev->thread->user)
			credit_flush(w, ev->thread, ev->thread->user, st, 0);
		post_event(w, ev);
		break;
	}
}

static int handle_events(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			 struct sampler_stats *st)
{
	struct tracee_event ev;
	int ret;

	while ((ret = tracee_poll(t, &ev)) > 0) {
		on_event(t, arch, w, &ev, st);
		if (ev.kind == TRACEE_EV_EXIT)
			return 0;
	}
	return ret;
}

/* Tell the worker of process @p, just attached: it, then each of its other threads. */
static void post_proc(struct tracee *t, struct worker *w, struct tracee_proc *p)
{
	struct tracee_event ev = {TRACEE_EV_PROC_NEW, tracee_find(t, p->pid), p};

	post_event(w, &ev);
	ev.kind = TRACEE_EV_THREAD_NEW;
	for (size_t i = 0; i < t->nr_threads; i++) {
		ev.thread = t->threads[i];
		if (ev.thread->proc == p && ev.thread->tid != p->pid)
			post_event(w, &ev);
	}
}

/* Attach to the processes the caller's hook names (sampler_opts.join), each into the set and
 * the worker's view. A failure is the process's alone: the recording goes on. */
static void join_procs(struct tracee *t, const struct sampler_opts *o, struct worker *w,
		       uint64_t now, struct sampler_stats *st)
{
	pid_t pid;

	while (o->join(o->join_arg, now, &pid) == 1) {
		struct tracee_proc *p;
		int ret;

		if (tracee_proc_find(t, pid))
			continue;
		/* gone already (a short-lived process): not worth tracee's error message */
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			log_debug("process %d exited before perch attached", pid);
			continue;
		}
		ret = tracee_add_pid(t, pid);
		p = tracee_proc_find(t, pid);
		if (ret < 0 || !p) {
			/* (tracee said why) */
			log_info("process %d not joined: %s", pid,
				 strerror(ret < 0 ? -ret : ESRCH));
			continue;
		}
		if (!p->arch) {
			log_info("process %d not joined: perch cannot profile its program", pid);
			tracee_detach_proc(t, p);
			continue;
		}
		log_info("process %d joined the recording (%zu threads)", pid, p->nr_threads);
		st->joined++;
		post_proc(t, w, p);
	}
}

/* Where in its period a tick fires: anywhere, uniformly. A tick at a fixed phase aliases with
 * any target whose own period is a multiple of it (a thread that runs 5 ms of every 20 would
 * be seen running at every other 100 Hz tick, or at none, depending on the phase alone: 50% or
 * 0% instead of 25%); one uniformly random moment in each period (stratified sampling) sees
 * every phase alike, so each share is estimated without bias whatever the target's rhythm.
 * Ticks are then 0 to 2 periods apart, 1 on average. */
static uint64_t jitter_ns(uint64_t period)
{
	return period > 1 ? ((uint64_t)random() << 31 ^ (uint64_t)random()) % period : 0;
}

/* Count a thread again in @state at site (@sp, @pc) without stopping it, adding one to
 * @count (the statistic of the rule that chose it): the worker looks the site up among the
 * thread's blocked ones, or, for 'R', its last running one. 0, or -ENOSPC when the worker is
 * a whole queue behind. */
static int reuse(struct worker *w, struct tracee_thread *th, struct sthread *s, char state,
		 uint64_t sp, uint64_t pc, uint64_t *count)
{
	struct item *it = queue_get_free(&w->q);

	if (!it)
		return -ENOSPC;
	fill_item(it, ITEM_REUSE, th, s);
	it->state = state;
	it->snap.time_ns = monotime_ns();
	it->site_sp = sp;
	it->site_pc = pc;
	(*count)++;
	queue_push_nowake(&w->q, it); /* (tick() wakes the worker) */
	return 0;
}

/* Queue the ticks a thread was found blocked at its site (@s->idle_sp, @s->idle_pc) without a
 * stop as one reused sample (with its late ticks, as any sample): one queue item per thread
 * every SAMPLER_GATE_FLUSH_NS, not one per tick (with 2000 blocked threads, items per tick
 * filled the queue and the snapshots of the stops that followed were dropped). When the
 * worker is a whole queue behind they stay credited to that site for a later try (to the next
 * sample, wherever it is, they would be misplaced), or with @wait (the thread leaves its
 * site) wait for room. 0 or -ENOSPC. */
static int credit_flush(struct worker *w, struct tracee_thread *th, struct sthread *s,
			struct sampler_stats *st, int wait)
{
	uint32_t n = s->credit, late = s->late_ticks;

	if (!n)
		return 0;
	if (wait)
		queue_wait_free(&w->q);
	s->late_ticks += n - 1;
	if (reuse(w, th, s, s->credit_state, s->idle_sp, s->idle_pc, &st->reused) < 0) {
		s->late_ticks = late;
		return -ENOSPC;
	}
	s->credit = 0;
	st->reused += n - 1;
	return 0;
}

/* @n more ticks where the thread was found blocked at its site (queued when the oldest of
 * them is SAMPLER_GATE_FLUSH_NS old). */
static void credit(struct worker *w, struct tracee_thread *th, struct sthread *s, uint32_t n,
		   uint64_t now, struct sampler_stats *st)
{
	if (!s->credit) {
		s->credit_ns = now;
		s->credit_state = s->state; /* (a later read may find it woken: 'R') */
	}
	s->credit += n;
	if (now - s->credit_ns >= SAMPLER_GATE_FLUSH_NS)
		credit_flush(w, th, s, st, 0);
}

/* A group-stopped thread at a tick (wall mode): counted again where its first sample in this
 * stop was taken, or interrupted once (the interrupt re-reports its group-stop; it listens
 * again after the snapshot, so job control is untouched). Returns 1 when it is to be
 * interrupted. */
static int tick_stopped(struct worker *w, struct tracee_thread *th, struct sthread *s,
			uint64_t missed, struct sampler_stats *st)
{
	credit_flush(w, th, s, st, 1); /* (its ticks where it was blocked come first) */
	s->state = 'T';
	s->has_syscall = 0;
	s->late_ticks += (uint32_t)missed;
	if (!s->stopped_known)
		return 1;
	if (reuse(w, th, s, 'T', s->stopped_sp, s->stopped_pc, &st->reused) < 0) {
		s->late_ticks++; /* the worker is a whole queue behind (as in tick_thread()) */
		st->dropped++;
	}
	return 0;
}

/* A thread in uninterruptible sleep ('D') at a tick: a PTRACE_INTERRUPT would take effect
 * only when it wakes up (a vfork parent sleeps until its child execs), so it is sampled from
 * /proc without a stop. 0, or -errno when it could not be (then it is interrupted as usual). */
static int tick_blocked(struct worker *w, struct tracee_thread *th, struct sthread *s,
			const struct perch_arch *arch, struct sampler_stats *st)
{
	struct item *it;
	int ret;

	if (!s->has_syscall)
		return -EAGAIN;
	it = queue_get_free(&w->q);
	if (!it)
		return -ENOSPC;
	ret = sampler_snapshot_blocked(arch, th->tid, s->syscall, &it->snap);
	if (ret < 0 && !it->snap.stack_len && !(it->snap.regs.valid & (1ULL << arch->dw_pc))) {
		queue_push_free(&w->q, it);
		return ret;
	}
	it->nr_verify = 0;
	fill_item(it, ITEM_SAMPLE, th, s);
	remember_site(s, perch_regs_sp(arch, &it->snap.regs), perch_regs_pc(arch, &it->snap.regs));
	st->samples++;
	st->blocked++;
	queue_push(&w->q, it);
	return 0;
}

/* Move the ptrace thread to the CPU where most of the running threads about to be
 * interrupted last ran. A stop reported to a tracer on the same CPU costs about 5 us; on
 * another CPU about 65 us on these VMs, since waking the other, idle CPU takes an IPI (a VM
 * exit): docs/design/perf-baseline.md, design lesson 2. Ties keep the current CPU, so threads
 * spread over the CPUs do not make perch migrate at every tick. Off by default (--follow-cpu):
 * measured on these VMs with one CPU-bound thread at 1000 Hz, the stop window stayed at p50 37-51
 * us (42-56 us without), and under CFS two ticks in three found the interrupt still pending: the
 * woken ptrace thread waits for the target's slice on a shared CPU (with SCHED_FIFO no tick was
 * late, but the window was no shorter). */
static void follow_cpu(struct tracee_thread *const *stop, size_t n, struct sampler_stats *st)
{
	int count[SAMPLER_MAX_CPUS] = {0}, best = -1, here = sched_getcpu();
	cpu_set_t set;

	for (size_t i = 0; i < n; i++) {
		const struct sthread *s = stop[i]->user;

		if (s->state == 'R' && s->cpu >= 0 && s->cpu < SAMPLER_MAX_CPUS)
			count[s->cpu]++;
	}
	for (int c = 0; c < SAMPLER_MAX_CPUS; c++)
		if (count[c] && (best < 0 || count[c] > count[best]))
			best = c;
	if (best < 0 || best == here ||
	    (here >= 0 && here < SAMPLER_MAX_CPUS && count[here] == count[best]))
		return;
	CPU_ZERO(&set);
	CPU_SET(best, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0)
		st->migrations++;
}

/* A runnable thread ('R') stopped while running at an earlier tick and not switched in since
 * (schedstat's count unchanged): it has waited for a CPU ever since, where it was stopped, so
 * in wall mode that sample is its sample now, without a stop (which would only take effect
 * once it gets a CPU, and cost it one more switch); in cpu mode it has no run time to count. */
static int runnable_unmoved(struct tracee *t, struct tracee_thread *th, struct sthread *s,
			    const struct sampler_opts *o)
{
	struct schedstat ss;

	if (!s->ran_known || o->no_idle_reuse)
		return 0;
	return peek_schedstat(t, th, s, &ss) == 0 && ss.slices == s->ran_slices;
}

/* One thread at a tick: read its state first (a thread we stop reads as 't'); a thread not
 * running is skipped in cpu mode, counted again without a stop when it is blocked where an
 * earlier sample was taken (or group-stopped where it was sampled in this stop), sampled from
 * /proc when in uninterruptible sleep. Returns 1 when it is to be interrupted. */
static int tick_thread(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       const struct sampler_opts *o, struct tracee_thread *th, uint64_t missed,
		       uint64_t now, struct sampler_stats *st)
{
	struct sthread *s = sthread_of(th);
	int site, idle = IDLE_GONE;

	if (!th->in_group_stop)
		s->stopped_known = 0;
	/* ticks a thread could not be sampled at are credited to its next sample, in wall
	 * mode only: in cpu mode, a thread waiting for a CPU does not count */
	if (th->state == TRACEE_INTERRUPTING) {
		st->late++;
		if (!o->cpu_mode)
			s->late_ticks += 1 + (uint32_t)missed;
		else if (s->state == 'R')
			s->cpu_ticks += 1 + (uint32_t)missed; /* counted at its stop */
		return 0;
	}
	if (!th->proc->arch || th->detaching || th->new_stop_pending)
		return 0; /* being let go, or not started yet */
	if (th->state == TRACEE_GROUP_STOPPED) {
		if (!o->cpu_mode)
			return tick_stopped(w, th, s, missed, st);
		st->skipped_idle++;
		return 0;
	}
	if (th->state != TRACEE_RUNNING)
		return 0;
	/* found blocked at a site before and not switched in since: still there (one
	 * read instead of stat + syscall: hundreds of idle threads stay cheap) */
	s->woken = 0;
	if (s->idle_known && !o->cpu_mode && !o->no_idle_reuse) {
		idle = idle_check(t, th, s, now);
		if (idle == IDLE_STILL) {
			credit(w, th, s, 1 + (uint32_t)missed, now, st);
			return 0;
		}
		credit_flush(w, th, s, st, 1); /* (its ticks where it was come first) */
		s->idle_known = 0;
		s->woken = idle == IDLE_WOKEN;
	}
	if (idle != IDLE_WOKEN)
		s->state = read_state(t, th, s);
	if (o->cpu_mode && s->state && s->state != 'R') {
		s->late_ticks = 0;
		st->skipped_idle++;
		return 0;
	}
	if (!o->cpu_mode)
		s->late_ticks += (uint32_t)missed;
	if (s->state == 'R' && !s->woken && runnable_unmoved(t, th, s, o)) {
		if (o->cpu_mode) { /* no run time since its last stop: nothing is due */
			s->cpu_ticks += 1 + (uint32_t)missed;
			st->waiting++;
			return 0;
		}
		if (reuse(w, th, s, 'R', s->ran_sp, s->ran_pc, &st->unmoved) < 0) {
			s->late_ticks++; /* the worker is a whole queue behind (as above) */
			st->dropped++;
		}
		return 0;
	}
	s->has_syscall =
	    s->state && s->state != 'R' &&
	    read_task_file(t, th, &s->syscall_fd, "syscall", s->syscall, sizeof(s->syscall)) > 0;
	if (s->has_syscall && th->broken_call)
		waitreason_unrestart(arch_of(th, arch)->e_machine, s->syscall, sizeof(s->syscall),
				     (long)th->broken_call - 1, th->broken_sp, th->broken_pc);
	site = o->no_idle_reuse ? -1 : blocked_site(s);
	if (site >= 0 &&
	    reuse(w, th, s, s->state, s->sites[site].sp, s->sites[site].pc, &st->reused) < 0) {
		s->late_ticks++; /* as above */
		st->dropped++;
		return 0;
	}
	if (site >= 0) {
		s->idle_sp = s->sites[site].sp;
		s->idle_pc = s->sites[site].pc;
		s->idle_known = read_schedstat(t, th, s, &s->idle_ss) == 0;
		s->idle_ns = s->quiet_ns = now;
		/* the first time, it goes behind the gate at once: until then every tick reads
		 * it (hundreds of threads found blocked at attach cost the target that for 200
		 * ms), and a wakeup costs one rescan, once per thread */
		if (!s->quiet_once && now >= SAMPLER_QUIET_NS) {
			s->quiet_once = 1;
			s->quiet_ns = now - SAMPLER_QUIET_NS;
		}
		return 0;
	}
	if (s->state == 'D' && tick_blocked(w, th, s, arch_of(th, arch), st) == 0)
		return 0;
	if (o->cpu_mode)
		s->cpu_ticks += 1 + (uint32_t)missed;
	return 1;
}

/* The CPU holders of one tick (sampler-hold.h): NULL @h when they are off. */
struct tick_hold {
	struct sampler_hold *h;
	uint64_t fire;	   /* the tick being served */
	uint64_t deadline; /* wait for a holder until then, then interrupt from afar */
	int self;	   /* the ptrace thread's CPU */
	int released;	   /* the holders were let go: no more waiting for them */
	unsigned char running[SAMPLER_HOLD_MAX_CPUS]; /* CPUs with running threads */
	size_t awaited;	    /* running threads interrupted on other CPUs (await_stops()) */
	pid_t *awaited_tid; /* their first SAMPLER_MAX_BATCH thread ids */
};

/* Interrupt @th; a running thread only once its CPU is held (or the wait for that ran out),
 * unless it has been quiet (SAMPLER_HOLD_QUIET). */
static void interrupt(struct tracee *t, struct tracee_thread *th, struct tick_hold *hd,
		      struct sampler_stats *st)
{
	struct sthread *s = sthread_of(th);

	if (!hd->h || s->state != 'R' || s->woken) {
		/* not running: no hold */
	} else if (s->user_stops >= SAMPLER_HOLD_QUIET) {
		st->quiet++;
	} else {
		if (s->cpu >= 0 && s->cpu < SAMPLER_HOLD_MAX_CPUS)
			hd->running[s->cpu] = 1;
		if (hd->released
			? s->cpu == hd->self
			: sampler_hold_wait(hd->h, s->cpu, hd->self, hd->fire, hd->deadline))
			st->held++;
		else
			st->unheld++;
	}
	if (tracee_interrupt(t, th, monotime_ns()) == -ESRCH) {
		st->races++;
	} else if (s->state == 'R' && s->cpu >= 0 && s->cpu != hd->self) {
		s->awaited = 1;
		if (hd->awaited < SAMPLER_MAX_BATCH)
			hd->awaited_tid[hd->awaited] = th->tid;
		hd->awaited++;
	}
}

/* Visit the threads that ran at the last tick (@running 1) or the others (0), and add the
 * ones tick_thread() picks to @stop (interrupted at once when it is full). */
static void tick_pass(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		      const struct sampler_opts *o, uint64_t missed, struct tick_hold *hd,
		      int running, struct tracee_thread **stop, size_t *nr_stop,
		      struct sampler_stats *st)
{
	uint64_t now = monotime_ns();

	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct sthread *s = sthread_of(th);

		/* once per tick: a thread read as blocked in the first pass is not seen again;
		 * gated threads are gate_tick()'s */
		if (s->gated || s->tick == st->ticks || (s->state == 'R' || !s->state) != running)
			continue;
		s->tick = st->ticks;
		if (!tick_thread(t, arch, w, o, th, missed, now, st))
			continue;
		if (*nr_stop < SAMPLER_MAX_BATCH)
			stop[(*nr_stop)++] = th;
		else
			interrupt(t, th, hd, st);
	}
}

/* ---- the run-time gate: threads blocked for long cost nothing per tick ----
 *
 * A process's CPU clock (CLOCK_PROCESS_CPUTIME_ID of another process, one system call) is the
 * sum of its threads' run times (se.sum_exec_runtime, what .../schedstat prints first) plus
 * that of its exited threads. A thread blocked at one site for SAMPLER_QUIET_NS goes behind
 * the gate: at each tick the clock is read after the run times of the process's other
 * threads, so (clock - their sum) can only have grown if a gated thread ran since the last
 * rescan (or a thread came or went, which invalidates the reference). Unchanged: every gated
 * thread is counted again where it was found, without a read. Changed, or every
 * SAMPLER_RESCAN_NS: the rescan reads the clock first, then every thread one by one (gated
 * ones with idle_check(), which catches a switch-in the moment it happens), and the new
 * reference is the clock less the ungated threads' run times read after it: smaller than or
 * equal to the gated threads' true sum then, so a later equality proves none of them ran.
 * What the gate cannot see: a thread's run time grows when it leaves the CPU and at each
 * scheduler tick while it runs (1/CONFIG_HZ: 4 ms at 250 Hz), so a gated thread that woke
 * less than that before a tick and still runs is counted blocked at that tick; it is caught
 * at the next one after its run time moved. At most that much per wakeup of a thread that
 * had slept SAMPLER_QUIET_NS: measured in docs/how-it-works.md. */

/* The process's CPU clock now. 0 or -1 (no such clock for it). */
static int proc_clock(struct tracee_proc *p, struct sproc *sp, uint64_t *ns)
{
	struct timespec ts;

	if (!sp->clock_state)
		sp->clock_state = clock_getcpuclockid(p->pid, &sp->clock) == 0 ? 1 : -1;
	if (sp->clock_state < 0 || clock_gettime(sp->clock, &ts) < 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return 0;
}

/* May @th go (or stay) behind its process's gate? Found blocked at its site at this tick,
 * since SAMPLER_QUIET_NS, where a wakeup is followed by running at once (idle_check()). */
static int gate_fits(const struct tracee_thread *th, const struct sthread *s, uint64_t now)
{
	return s->idle_known && s->wait_ppm < SAMPLER_WAIT_PPM && now >= s->quiet_ns &&
	       now - s->quiet_ns >= SAMPLER_QUIET_NS && th->state == TRACEE_RUNNING &&
	       !th->in_group_stop && !th->detaching && !th->new_stop_pending && th->proc->arch;
}

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

/* A gated thread at this tick: counted again where it was found blocked (queued every
 * SAMPLER_GATE_FLUSH_NS, or when it leaves the gate). */
static void gate_reuse(struct gate_ctx *g, struct tracee_thread *th, struct sthread *s)
{
	s->tick = g->st->ticks;
	g->st->gated += 1 + g->missed;
	credit(g->w, th, s, 1 + (uint32_t)g->missed, g->now, g->st);
}

/* A thread that leaves the gate at this tick, not visited yet: as any other thread. */
static void gate_visit(struct gate_ctx *g, struct tracee_thread *th, struct sthread *s)
{
	credit_flush(g->w, th, s, g->st, 1);
	s->gated = 0;
	s->tick = g->st->ticks;
	if (!tick_thread(g->t, g->arch, g->w, g->o, th, g->missed, g->now, g->st))
		return;
	if (*g->nr_stop < SAMPLER_MAX_BATCH)
		g->stop[(*g->nr_stop)++] = th;
	else
		interrupt(g->t, th, g->hd, g->st);
}

/* Read every thread of @p one by one (its clock first) and set the gate's new reference;
 * threads that fit join the gate, gated ones that ran leave it. */
static void gate_rescan(struct gate_ctx *g, struct tracee_proc *p, struct sproc *sp)
{
	struct tracee *t = g->t;
	uint64_t clk = 0, sum = 0;
	int ok = proc_clock(p, sp, &clk) == 0;

	g->st->rescans++;
	log_debug("gate: rescan of %d at tick %llu (ref_valid %d, since %llu ms)", p->pid,
		  (unsigned long long)g->st->ticks, sp->ref_valid,
		  (unsigned long long)((g->now - sp->rescan_ns) / 1000000));
	/* first the threads outside the gate, right after the clock: the ones that run move
	 * on, and the reference is only as exact as that wait is short */
	for (size_t i = 0; i < t->nr_threads && ok; i++) {
		struct tracee_thread *th = t->threads[i];
		struct sthread *s = th->user;
		struct schedstat ss;

		if (th->proc != p || s->gated || gate_fits(th, s, g->now))
			continue;
		if (read_schedstat(t, th, s, &ss) < 0)
			ok = 0;
		else
			sum += ss.run_ns;
	}
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct sthread *s = th->user;
		int was = s->gated, idle;

		if (th->proc != p || (!was && !gate_fits(th, s, g->now)))
			continue;
		if (!ok) {
			if (was)
				gate_visit(g, th, s); /* as before the gate: idle_check() */
			else
				s->gated = 0;
			continue;
		}
		s->run_tick = 0;
		idle = idle_check(t, th, s, g->now);
		if (idle == IDLE_STILL && gate_fits(th, s, g->now)) {
			s->gated = 1;
			if (was)
				gate_reuse(g, th, s);
			continue;
		}
		/* it ran (or woke) since it was found blocked there */
		log_debug("gate: %d left (%s)", th->tid,
			  idle == IDLE_STILL ? "no longer fits" : "ran");
		if (s->run_tick == s->tick)
			sum += s->run_ns;
		else
			ok = 0;
		credit_flush(g->w, th, s, g->st, 1); /* (before its site is forgotten) */
		s->idle_known = 0;
		if (was)
			gate_visit(g, th, s);
		else
			s->gated = 0;
	}
	sp->ref = clk - sum;
	sp->ref_valid = ok;
	sp->rescan_ns = g->now;
}

/* @p's clock less the run time of its threads outside the gate, read before it (this tick's
 * reads, or @fresh ones): no smaller than its gated threads' true sum (with the exited
 * threads'). 0, or -1 when a thread or the clock cannot be read. */
static int gate_measure(struct gate_ctx *g, struct tracee_proc *p, struct sproc *sp, int fresh,
			uint64_t *out)
{
	struct tracee *t = g->t;
	uint64_t sum = 0, clk;

	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct sthread *s = th->user;
		struct schedstat ss;

		if (th->proc != p || s->gated)
			continue;
		if ((fresh || s->run_tick != g->st->ticks) && read_schedstat(t, th, s, &ss) < 0)
			return -1;
		sum += s->run_ns;
	}
	if (proc_clock(p, sp, &clk) < 0)
		return -1;
	*out = clk - sum;
	return 0;
}

/* The gate at a tick, after every ungated thread was visited and before any is interrupted:
 * per process with gated threads (or threads ready to join), the run times of the others,
 * then its clock; a process whose gate did not hold is rescanned (gate_credit() counts the
 * others' gated threads later). Threads to interrupt go to @g->stop. */
static void gate_tick(struct gate_ctx *g)
{
	struct tracee *t = g->t;
	uint64_t tick = g->st->ticks;

	if (g->o->cpu_mode || g->o->no_idle_reuse)
		return;
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct sproc *sp = sproc_of(t->procs[i]);

		sp->nr_gated = sp->nr_cand = 0;
		sp->pass = 0;
	}
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct sthread *s = sthread_of(th);
		struct sproc *sp = sproc_of(th->proc);

		if (s->gated && !gate_fits(th, s, g->now)) {
			/* no longer blocked as it was (a state only running can bring) */
			sp->ref_valid = 0;
			s->idle_known = 0;
			gate_visit(g, th, s);
		}
		if (s->gated)
			sp->nr_gated++;
		else if (s->tick == tick && gate_fits(th, s, g->now))
			sp->nr_cand++;
	}
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct tracee_proc *p = t->procs[i];
		struct sproc *sp = p->user;
		uint64_t u;

		if (!sp->nr_gated || !sp->ref_valid || g->now - sp->rescan_ns >= SAMPLER_RESCAN_NS)
			continue;
		/* once more with fresh reads when it differs: a running thread's run time moves
		 * at its CPU's scheduler tick, which may fall between its read and the clock */
		sp->pass = (gate_measure(g, p, sp, 0, &u) == 0 && u == sp->ref) ||
			   (gate_measure(g, p, sp, 1, &u) == 0 && u == sp->ref);
	}
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct sproc *sp = t->procs[i]->user;

		if ((sp->nr_gated || sp->nr_cand) && !sp->pass)
			gate_rescan(g, t->procs[i], sp);
	}
}

/* The rest of the gate's tick, once the threads to stop were interrupted (nothing here reads
 * the process, so the CPU holders need not wait for it): where the gate held, gated threads
 * are counted again and threads that fit join, their run time (this tick's read, before the
 * clock) moving into the reference. */
static void gate_credit(struct gate_ctx *g)
{
	struct tracee *t = g->t;
	uint64_t tick = g->st->ticks;
	int any = 0;

	if (g->o->cpu_mode || g->o->no_idle_reuse)
		return;
	for (size_t i = 0; i < t->nr_procs && !any; i++)
		any = sproc_of(t->procs[i])->pass;
	for (size_t i = 0; i < t->nr_threads && any; i++) {
		struct tracee_thread *th = t->threads[i];
		struct sthread *s = th->user;
		struct sproc *sp = th->proc->user;

		if (!sp->pass)
			continue;
		if (s->gated) {
			gate_reuse(g, th, s);
		} else if (s->tick == tick && s->run_tick == tick && gate_fits(th, s, g->now) &&
			   s->run_ns == s->idle_ss.run_ns) { /* (not run since: the read used) */
			s->gated = 1;
			sp->ref += s->run_ns;
		}
	}
}

static int is_running(const struct tracee_thread *th)
{
	return ((const struct sthread *)th->user)->state == 'R';
}

/* One tick (scheduled at @fire) that stands for 1 + @missed ticks of the schedule (perch fell
 * behind). Every thread's state is read first, before any interrupt or wait for a CPU holder:
 * a state read later than the tick describes a later moment, and perch's own activity then
 * (holders spinning, the ptrace thread running) keeps threads runnable that would have gone
 * to sleep. The threads that were running go first, then the others; the running ones are
 * interrupted next, so that the CPU holders, which keep them where they were at @fire, are
 * released soon, then the others. @next: the following tick, for which the holders are to
 * wake @lead early. */
static size_t tick(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		   const struct sampler_opts *o, struct sampler_hold *h, uint64_t fire,
		   uint64_t next, uint64_t lead, uint64_t missed, pid_t *awaited,
		   struct sampler_stats *st)
{
	struct tick_hold hd = {
	    .h = h, .fire = fire, .self = sched_getcpu(), .awaited_tid = awaited};
	struct tracee_thread *stop[SAMPLER_MAX_BATCH];
	size_t nr_stop = 0;
	struct gate_ctx g = {.t = t,
			     .arch = arch,
			     .w = w,
			     .o = o,
			     .missed = missed,
			     .hd = &hd,
			     .stop = stop,
			     .nr_stop = &nr_stop,
			     .st = st};

	hist_add(st->tick_hist, SAMPLER_TICK_HIST_US, &st->tick_hist_top,
		 (monotime_ns() - fire) / 1000);
	st->ticks++;
	if (h) {
		uint64_t period =
		    (uint64_t)(1e9 / o->hz); /* ticks themselves are 0-2 periods apart */

		sampler_hold_publish(h, next, lead);
		hd.deadline =
		    monotime_ns() +
		    (period / 8 < SAMPLER_HOLD_WAIT_NS ? period / 8 : SAMPLER_HOLD_WAIT_NS);
	}
	tick_pass(t, arch, w, o, missed, &hd, 1, stop, &nr_stop, st);
	tick_pass(t, arch, w, o, missed, &hd, 0, stop, &nr_stop, st);
	/* the gate before any interrupt: a thread leaving its stop, or entering ours, changes
	 * its run time (a stop is a switch out) between the reads the gate compares */
	g.now = monotime_ns();
	gate_tick(&g);
	if (o->follow_cpu)
		follow_cpu(stop, nr_stop, st);
	for (size_t i = 0; i < nr_stop; i++)
		if (is_running(stop[i]))
			interrupt(t, stop[i], &hd, st);
	if (h)
		sampler_hold_release(h, fire);
	hd.released = 1;
	for (size_t i = 0; i < nr_stop; i++)
		if (!is_running(stop[i]))
			interrupt(t, stop[i], &hd, st);
	gate_credit(&g);
	if (h)
		sampler_hold_arm(h, hd.running, SAMPLER_HOLD_MAX_CPUS);
	queue_wake(&w->q); /* for the reused stacks */
	return hd.awaited;
}

/* Wait for the stops of the @n running threads the tick just interrupted, all on other CPUs
 * than this thread's, by polling for up to SAMPLER_AWAIT_NS instead of sleeping. Each thread
 * is asked for alone: a wait for any child would look at every traced thread each time. */
static int await_stops(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       const pid_t *awaited, size_t n, struct sampler_stats *st)
{
	uint64_t want = w->awaited_stops + n, end = monotime_ns() + SAMPLER_AWAIT_NS;
	struct tracee_event ev;

	if (n > SAMPLER_MAX_BATCH)
		n = SAMPLER_MAX_BATCH;
	while (w->awaited_stops < want && !st->stop_reason && monotime_ns() < end) {
		for (size_t i = 0; i < n && !st->stop_reason; i++) {
			const struct tracee_thread *th = tracee_find(t, awaited[i]);
			int ret;

			if (!th || th->state != TRACEE_INTERRUPTING)
				continue; /* its stop came (or it is gone) */
			ret = tracee_poll_thread(t, awaited[i], &ev);
			if (ret < 0)
				return -1;
			if (ret > 0)
				on_event(t, arch, w, &ev, st);
		}
	}
	return 0;
}

/* Is @th going to stop by itself because of a stop signal of perch's process group (a thread
 * of ours that must not be left in a stop while perch is stopped)? */
static int settling(const struct tracee_thread *th)
{
	if (th->state == TRACEE_INTERRUPTING || th->state == TRACEE_STOPPED)
		return 1;
	return th->state == TRACEE_RUNNING && !th->detaching && getpgid(th->proc->pid) == getpgrp();
}

/* perch got SIGTSTP, SIGTTIN or SIGTTOU (Ctrl-Z: the terminal sends it to perch and to the
 * program it launched, which share perch's process group). Without care the program would
 * sit in a signal-delivery-stop until perch runs again, and only then stop, after the shell's
 * SIGCONT. So: pass a stop sent to perch alone on to the program it launched, let the traced
 * threads of perch's process group reach their group-stop (listened, as usual) and no stop of
 * ours stay pending, then stop perch itself with the same signal; the shell sees the job
 * stopped. After SIGCONT, a program still stopped is sent SIGCONT too (when the shell
 * continued perch alone). */
static void job_stop(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		     const siginfo_t *si, struct sampler_stats *st)
{
	uint64_t start = monotime_ns(), deadline = start + SAMPLER_JOB_STOP_NS, now;
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
	int sig = si->si_signo, still, forwarded = 0;
	sigset_t one;

	for (;;) {
		size_t busy = 0;

		if (handle_events(t, arch, w, st) < 0 || st->stop_reason)
			break;
		for (size_t i = 0; i < t->nr_threads; i++)
			busy += settling(t->threads[i]);
		now = monotime_ns();
		if (!busy || now >= deadline)
			break;
		/* sent to perch alone (kill, not the terminal or killpg, which reach the program
		 * too): pass it on once the program has shown it did not get its own */
		if (!forwarded && si->si_code == SI_USER && now - start > SAMPLER_JOB_FORWARD_NS &&
		    t->launched && t->nr_procs && t->procs[0]->alive) {
			kill(t->pid, sig);
			forwarded = 1;
		}
		usleep(100);
	}
	st->job_stops++;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigaction(sig, &dfl, &old);
	raise(sig); /* pending while blocked: delivered, and perch stops, when unblocked */
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	sigaction(sig, &old, NULL);
	/* continued: give the shell's SIGCONT time to reach the program too */
	deadline = monotime_ns() + SAMPLER_JOB_STOP_NS;
	do {
		still = 0;
		if (handle_events(t, arch, w, st) < 0 || st->stop_reason)
			return;
		for (size_t i = 0; i < t->nr_threads; i++)
			still += t->threads[i]->in_group_stop &&
				 getpgid(t->threads[i]->proc->pid) == getpgrp();
		if (still)
			usleep(100);
	} while (still && monotime_ns() < deadline);
	for (size_t i = 0; i < t->nr_procs && still; i++)
		if (t->procs[i]->alive && getpgid(t->procs[i]->pid) == getpgrp())
			kill(t->procs[i]->pid, SIGCONT);
}

/* ---- waking on time for a tick ----
 *
 * The ptrace thread's timer wakes it tens of microseconds late even as SCHED_FIFO with no
 * timer slack (p10 46, p50 50, p90 76 us on this project's 2-vCPU VM; a few on bare metal),
 * and the states a tick reads describe the moment they are read: a thread that woke in between
 * reads R although it slept at the tick (while the threads running then are kept R by the CPU
 * holders, sampler-hold.h). The timer is set @lead before the tick instead and the thread
 * spins the rest of the way; @lead starts at the first wake latency measured and follows their
 * median (one SAMPLER_LEAD_STEP_NS step towards each), so about half the ticks are served on
 * time after a spin of a few microseconds and the others a few microseconds late. The holders
 * are woken as early (sampler_hold_publish()). */
struct early {
	uint64_t lead; /* set the timer this long before the tick */
	uint64_t cap;  /* never more than this (a quarter of the period, SAMPLER_LEAD_MAX_NS) */
	int known;     /* a latency was measured (the first one sets @lead) */
};

static void early_learn(struct early *e, uint64_t alarm, uint64_t woke)
{
	uint64_t late = woke > alarm ? woke - alarm : 0;

	if (!e->known) {
		e->known = 1;
		e->lead = late < e->cap ? late : e->cap;
	} else if (late > e->lead)
		e->lead = e->lead + SAMPLER_LEAD_STEP_NS < e->cap ? e->lead + SAMPLER_LEAD_STEP_NS
								  : e->cap;
	else
		e->lead = e->lead > SAMPLER_LEAD_STEP_NS ? e->lead - SAMPLER_LEAD_STEP_NS : 0;
}

/* Sleep until @until (CLOCK_MONOTONIC ns) or a signal of @set: a stop signal ends the
 * recording (@st), a job-control stop stops perch. @e: @until is a tick, to be woken for early
 * and spun to (above). 1 after a job-control stop (the ticks perch was stopped for are not
 * owed to anyone), else 0. */
static int sleep_until(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       const sigset_t *set, uint64_t until, struct early *e,
		       struct sampler_stats *st)
{
	uint64_t alarm = e && until > e->lead ? until - e->lead : until;
	uint64_t now = monotime_ns(), wait = alarm > now ? alarm - now : 0;
	struct timespec ts = {(time_t)(wait / 1000000000ULL), (long)(wait % 1000000000ULL)};
	siginfo_t si;
	int sig = sigtimedwait(set, &si, &ts);

	if (sig < 0 && e && wait) { /* the timer, not a signal */
		early_learn(e, alarm, monotime_ns());
		sampler_spin_until(until);
	}
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		st->stop_reason = SAMPLER_STOP_SIGNAL;
		st->signal = sig;
		st->signal_code = si.si_code;
	} else if (is_job_stop(sig)) {
		job_stop(t, arch, w, &si, st);
		return 1;
	}
	return 0;
}

/* The time of the next tick after one that began at @began (now over), with the sampling
 * @period: when the tick cost more than half a period (thousands of threads; a loaded
 * machine), no sooner than it took, so that the real-time ptrace thread leaves at least half
 * of its CPU to the others; cheaper ticks keep their random phase untouched. Spinning from
 * tick to tick, it left the target's threads, interrupted and runnable, and the worker the
 * other CPU shared with the busy ones: stops came late, snapshots were dropped for want of
 * room, and up to 1100 of 2000 blocked threads had no sample in 2 s. The ticks skipped are
 * owed as any missed tick (their threads' next samples stand for them), like perf's own cap
 * on the CPU time its sampling may take (kernel.perf_cpu_time_max_percent). */
static uint64_t duty_cap(uint64_t fire, uint64_t began, uint64_t period, struct sampler_stats *st)
{
	uint64_t now = monotime_ns(), took = now - began, earliest = now + took;

	if (took <= period / 2 || fire >= earliest)
		return fire;
	st->capped++;
	return earliest;
}

/* Raise the calling (ptrace) thread's priority: SCHED_FIFO at SAMPLER_RT_PRIO when allowed,
 * else nice SAMPLER_NICE. A tick is a sample of the moment it fires only if the states are read
 * then: under CFS the ptrace thread woke 0.2-0.9 ms late (p50-p90, 1000 Hz) whenever the
 * target's threads kept the CPUs busy (autogroups make its nice count only against its own
 * session), and got a CPU just as a target thread went to sleep, so it read that thread as
 * sleeping: R shares 5-20 points under the target's own truth, and 9-24% of ticks missed. As
 * SCHED_FIFO it wakes 45-100 us after its timer, whatever the load (measured 2026-11-25,
 * docs-pending/ticks.md), and the timer is set that much early ("waking on time for a tick").
 * Threads it creates get the default policy back
 * (SCHED_RESET_ON_FORK). Returns 1 when the policy changed (restore_priority() undoes it). */
static int raise_priority(void)
{
	struct sched_param sp = {.sched_priority = SAMPLER_RT_PRIO};

	if (setpriority(PRIO_PROCESS, (id_t)gettid(), SAMPLER_NICE) < 0)
		log_debug("cannot raise the sampler's priority: %s", strerror(errno));
	if (sched_setscheduler((pid_t)gettid(), SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
		return 1;
	log_debug("sampling without real-time priority: %s", strerror(errno));
	return 0;
}

static void restore_priority(int rt)
{
	struct sched_param sp = {.sched_priority = 0};

	if (rt)
		sched_setscheduler((pid_t)gettid(), SCHED_OTHER, &sp);
}

int sampler_run(struct tracee *t, const struct perch_arch *arch, const struct sampler_opts *o,
		const struct sampler_ops *ops, void *arg, struct sampler_stats *st)
{
	uint64_t period = (uint64_t)(1e9 / o->hz), start, end, base, fire, join_at, until;
	struct early early = {.cap = period / 4 < SAMPLER_LEAD_MAX_NS ? period / 4
								      : SAMPLER_LEAD_MAX_NS};
	struct worker w = {.ops = ops, .arg = arg, .cpu_mode = o->cpu_mode, .period_ns = period};
	struct sampler_hold *hold = NULL;
	pid_t awaited[SAMPLER_MAX_BATCH]; /* the running threads a tick interrupted afar */
	sigset_t set;
	int ret = 0, rt;

	cpu_set_t old_cpus;
	int have_old_cpus = sched_getaffinity(0, sizeof(old_cpus), &old_cpus) == 0;

	wait_set(&set);
	if (o->no_signals) {
		sigdelset(&set, SIGINT);
		sigdelset(&set, SIGTERM);
		sigdelset(&set, SIGHUP);
		sigdelset(&set, SIGTSTP);
		sigdelset(&set, SIGTTIN);
		sigdelset(&set, SIGTTOU);
	}
	t->on_free = sthread_free;
	t->on_proc_free = sproc_free;
	fdlimit_reserve(SAMPLER_FDS_PER_THREAD * t->nr_threads + SAMPLER_FDS_SPARE);
	queue_init(&w.q, SAMPLER_QUEUE, o->stack_size, o->verify);
	if (o->verify)
		w.verify = unwind_ptrace_new();
	ret = pthread_create(&w.thread, NULL, worker_main, &w);
	/* the ptrace thread's few microseconds per tick should not wait behind a busy target:
	 * raise its priority when allowed (the worker keeps the default) */
	rt = raise_priority();
	if (!o->no_hold && !o->follow_cpu)
		hold = sampler_hold_new(SAMPLER_RT_PRIO, SAMPLER_NICE / 2, period);
	/* the clock starts once everything is set up: a short -d still gets its ticks */
	start = base = fire = join_at = monotime_ns();
	end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : UINT64_MAX;
	srandom((unsigned int)start);
	if (ret) {
		restore_priority(rt);
		sampler_hold_free(hold);
		queue_release(&w.q);
		return log_errno(-ret, "cannot start the worker thread");
	}
	/* (-v; tests wait for this line: the first tick follows at once) */
	log_info("sampling %zu threads of %zu processes at %g Hz", t->nr_threads, t->nr_alive,
		 o->hz);
	while (!st->stop_reason) {
		uint64_t now = monotime_ns();

		if (now >= end) {
			st->stop_reason = SAMPLER_STOP_DURATION;
			break;
		}
		if (o->stop && *o->stop) {
			st->stop_reason = SAMPLER_STOP_REQUEST;
			break;
		}
		if (now >= fire) {
			uint64_t this_fire = fire;

			/* ticks perch could not serve on time are not replayed in a burst: the
			 * next sample of each thread stands for them (perch falls behind when the
			 * CPUs are saturated, i.e. when the target is busiest: dropping them would
			 * under-count busy code) */
			uint64_t behind = (now - base) / period;
			uint64_t missed = behind > 1 ? behind - 1 : 0;

			st->missed_ticks += missed;
			base += (behind ? behind : 1) * period;
			fire = base + jitter_ns(period);
			size_t n = tick(t, arch, &w, o, hold, this_fire, fire, early.lead, missed,
					awaited, st);

			ret = await_stops(t, arch, &w, awaited, n, st);
			if (ret >= 0)
				ret = handle_events(t, arch, &w, st);
			fire = duty_cap(fire, now, period, st);
		} else if (ret >= 0) {
			ret = handle_events(t, arch, &w, st);
		}
		queue_wake(&w.q); /* once for the tick's and the events' snapshots */
		if (ret < 0) {
			st->stop_reason = SAMPLER_STOP_ERROR;
			break;
		}
		if (st->stop_reason)
			break;
		now = monotime_ns();
		if (o->join && now >= join_at) {
			join_procs(t, o, &w, now, st);
			join_at = now + SAMPLER_JOIN_MS * 1000000ULL;
		}
		until = fire < end ? fire : end;
		if (o->join && join_at < until)
			until = join_at; /* (a long tick period: the hook is still asked on time) */
		/* (behind, too: the signals are read if not waited for) */
		if (sleep_until(t, arch, &w, &set, until, until == fire ? &early : NULL, st))
			base = fire = monotime_ns();
	}
	st->elapsed_s = (double)(monotime_ns() - start) / 1e9;
	st->lead_ns = early.lead;
	restore_priority(rt);
	sampler_hold_free(hold);
	if (have_old_cpus && st->migrations)
		sched_setaffinity(0, sizeof(old_cpus), &old_cpus);
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct sthread *s = t->threads[i]->user;

		/* the ticks found blocked not queued yet (waiting for room: the worker runs) */
		if (s && s->credit)
			credit_flush(&w, t->threads[i], s, st, 1);
		sthread_free(t->threads[i]);
	}
	for (size_t i = 0; i < t->nr_procs; i++)
		sproc_free(t->procs[i]);
	/* the worker finishes what was queued */
	pthread_mutex_lock(&w.q.lock);
	w.q.done = 1;
	pthread_cond_signal(&w.q.wake);
	pthread_mutex_unlock(&w.q.lock);
	pthread_join(w.thread, NULL);
	queue_release(&w.q);
	unwind_ptrace_free(w.verify);
	return ret < 0 ? ret : 0;
}

static uint64_t hist_percentile(const uint64_t *hist, size_t last, double pct)
{
	uint64_t total = 0, acc = 0, want;

	for (size_t i = 0; i <= last; i++)
		total += hist[i];
	if (!total)
		return 0;
	want = (uint64_t)((double)total * pct / 100.0);
	if (want >= total)
		want = total - 1;
	for (size_t i = 0; i <= last; i++) {
		acc += hist[i];
		if (acc > want)
			return i;
	}
	return last;
}

uint64_t sampler_stop_percentile(const struct sampler_stats *st, double pct)
{
	return hist_percentile(st->stop_hist, st->stop_hist_top, pct);
}

uint64_t sampler_tick_percentile(const struct sampler_stats *st, double pct)
{
	return hist_percentile(st->tick_hist, st->tick_hist_top, pct);
}
