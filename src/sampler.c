/* The sampling loop; see include/perch/sampler.h and ../shared/spec/perf-baseline.md
 * (design lessons 1, 3, 4: copy only in the stop window, interrupt all threads then collect,
 * handle stops as soon as SIGCHLD arrives). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/log.h"
#include "perch/sampler.h"
#include "perch/tracee.h"
#include "perch/unwind.h"
#include "perch/waitreason.h"
#include "perch/xalloc.h"

#define SAMPLER_NICE (-10)

#define ITEM_SAMPLE 0
#define ITEM_REUSE (-1)

/* One queued item: a snapshot (ITEM_SAMPLE), a reused stack (ITEM_REUSE) or a thread event
 * (a TRACEE_EV_* kind). */
struct item {
	int kind;
	pid_t tid;
	uint32_t weight;
	uint64_t site_sp, site_pc; /* ITEM_REUSE: where the reused snapshot was taken */
	struct unwind_snapshot snap;
};

/* Items move free -> ring (ptrace thread) -> worker -> free. */
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct item *items;
	struct item **ring, **free;
	size_t head, len, nr_free, cap;
	int done;
};

struct worker {
	struct queue q;
	pthread_t thread;
	const struct sampler_ops *ops;
	void *arg;
};

static void wait_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

void sampler_block_signals(sigset_t *old)
{
	sigset_t set;

	wait_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
}

int sampler_snapshot(struct tracee *t, const struct perch_arch *arch, struct tracee_thread *th,
		     struct unwind_snapshot *snap)
{
	snap->time_ns = tracee_now_ns();
	return unwind_snapshot_take(t->pid, th->tid, arch, snap);
}

/* ---- the queue ---- */

static void queue_init(struct queue *q, size_t cap, size_t stack_size)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->wake, NULL);
	q->cap = cap;
	q->items = xcalloc(cap, sizeof(*q->items));
	q->ring = xcalloc(cap, sizeof(*q->ring));
	q->free = xcalloc(cap, sizeof(*q->free));
	for (size_t i = 0; i < cap; i++) {
		q->items[i].snap.stack = xmalloc(stack_size ? stack_size : 1);
		q->items[i].snap.stack_cap = stack_size;
		q->free[q->nr_free++] = &q->items[i];
	}
}

static void queue_release(struct queue *q)
{
	for (size_t i = 0; i < q->cap; i++)
		free(q->items[i].snap.stack);
	free(q->items);
	free(q->ring);
	free(q->free);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->wake);
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

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct queue *q = &w->q;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct item *it;

		while (!q->len && !q->done)
			pthread_cond_wait(&q->wake, &q->lock);
		if (!q->len)
			break;
		it = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->len--;
		pthread_mutex_unlock(&q->lock);
		if (it->kind == ITEM_SAMPLE)
			w->ops->sample(w->arg, it->tid, &it->snap, it->weight);
		else if (it->kind == ITEM_REUSE)
			w->ops->reuse(w->arg, it->tid, it->site_sp, it->site_pc, it->snap.time_ns,
				      it->weight);
		else if (w->ops->event)
			w->ops->event(w->arg, it->kind, it->tid);
		pthread_mutex_lock(&q->lock);
		q->free[q->nr_free++] = it;
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

/* ---- the ptrace thread ---- */

/* Newest first; a known site moves to the front, a new one pushes out the oldest. */
static void remember_site(struct tracee_thread *th, uint64_t sp, uint64_t pc)
{
	int i;

	for (i = 0; i < th->nr_sites; i++)
		if (th->sites[i].sp == sp && th->sites[i].pc == pc)
			break;
	if (i == th->nr_sites) {
		if (th->nr_sites < TRACEE_SITES)
			th->nr_sites++;
		i = th->nr_sites - 1;
	}
	memmove(th->sites + 1, th->sites, (size_t)i * sizeof(th->sites[0]));
	th->sites[0].sp = sp;
	th->sites[0].pc = pc;
}


/* Our interrupt-stop: copy, resume, queue. */
static void on_stopped(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       struct tracee_thread *th, struct sampler_stats *st)
{
	struct item *it = queue_get_free(&w->q);
	int ret = 0;
	uint64_t us;

	if (it)
		ret = sampler_snapshot(t, arch, th, &it->snap);
	tracee_resume(t, th);
	us = (tracee_now_ns() - th->interrupt_ns) / 1000;
	st->stop_hist[us < SAMPLER_HIST_US ? us : SAMPLER_HIST_US]++;
	if (!it) {
		st->dropped++;
		return;
	}
	if (ret == -ESRCH) {
		st->races++;
	} else if (ret < 0 && !it->snap.regs.valid) {
		st->err_regs++;
	} else {
		if (ret < 0)
			st->err_stack++;
		st->samples++;
		it->kind = ITEM_SAMPLE;
		it->tid = th->tid;
		it->weight = 1 + th->late_ticks;
		th->late_ticks = 0;
		remember_site(th, perch_regs_sp(arch, &it->snap.regs),
			      perch_regs_pc(arch, &it->snap.regs));
		queue_push(&w->q, it);
		return;
	}
	queue_push_free(&w->q, it);
}

static void post_event(struct worker *w, int kind, pid_t tid)
{
	struct item *it = queue_get_free(&w->q);

	if (!it)
		return; /* the worker is far behind; it re-reads names on its own */
	it->kind = kind;
	it->tid = tid;
	queue_push(&w->q, it);
}

static int handle_events(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			 struct sampler_stats *st)
{
	struct tracee_event ev;
	int ret;

	while ((ret = tracee_poll(t, &ev)) > 0) {
		switch (ev.kind) {
		case TRACEE_EV_STOPPED:
			on_stopped(t, arch, w, ev.thread, st);
			break;
		case TRACEE_EV_EXIT:
			st->stop_reason = SAMPLER_STOP_EXIT;
			return 0;
		case TRACEE_EV_EXEC:
			post_event(w, ev.kind, t->pid);
			break;
		default:
			post_event(w, ev.kind, ev.thread->tid);
			break;
		}
	}
	return ret;
}

static uint64_t jitter_ns(uint64_t period)
{
	/* up to 1/16 of the period, so a periodic target cannot stay phase-locked */
	return period >= 16 ? (uint64_t)random() % (period / 16) : 0;
}

/* Is @th blocked in a system call at the SP and PC of one of its earlier samples? Reads
 * /proc/PID/task/TID/syscall: "NR ARG1..ARG6 SP PC", "-1 SP PC" or "running". Returns the
 * site's index, or -1. */
static int blocked_site(struct tracee *t, struct tracee_thread *th)
{
	struct waitreason_syscall sc;
	char buf[256];
	ssize_t n;

	if (!th->nr_sites)
		return -1;
	if (th->syscall_fd == -1) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", t->pid, th->tid);
		th->syscall_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (th->syscall_fd < 0)
			th->syscall_fd = -2;
	}
	if (th->syscall_fd < 0)
		return -1;
	n = pread(th->syscall_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "running", or blocked outside a system call: interrupt it */
	if (waitreason_syscall_parse(buf, &sc) < 0 || sc.what != WAITREASON_SC_SYSCALL)
		return -1;
	for (int i = 0; i < th->nr_sites; i++)
		if (th->sites[i].sp == sc.sp && th->sites[i].pc == sc.pc)
			return i;
	return -1;
}

static void close_syscall_fd(struct tracee_thread *th)
{
	if (th->syscall_fd >= 0)
		close(th->syscall_fd);
	th->syscall_fd = -2;
}

/* One tick that stands for 1 + @missed ticks of the schedule (perch fell behind). */
static void tick(struct tracee *t, struct worker *w, uint64_t missed, struct sampler_stats *st)
{
	st->ticks++;
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		int site;

		if (th->state == TRACEE_INTERRUPTING) {
			st->late++;
			th->late_ticks += 1 + (uint32_t)missed;
			continue;
		}
		if (th->state != TRACEE_RUNNING || th->new_stop_pending)
			continue;
		th->late_ticks += (uint32_t)missed;
		site = blocked_site(t, th);
		if (site >= 0) {
			struct item *it = queue_get_free(&w->q);

			if (it) {
				it->kind = ITEM_REUSE;
				it->tid = th->tid;
				it->weight = 1 + th->late_ticks;
				it->snap.time_ns = tracee_now_ns();
				it->site_sp = th->sites[site].sp;
				it->site_pc = th->sites[site].pc;
				th->late_ticks = 0;
				st->reused++;
				queue_push(&w->q, it);
				continue;
			}
		}
		if (tracee_interrupt(t, th, tracee_now_ns()) == -ESRCH)
			st->races++;
	}
}

int sampler_run(struct tracee *t, const struct perch_arch *arch, const struct sampler_opts *o,
		const struct sampler_ops *ops, void *arg, struct sampler_stats *st)
{
	uint64_t period = (uint64_t)(1e9 / o->hz), start = tracee_now_ns();
	uint64_t end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : UINT64_MAX;
	uint64_t base = start, fire = start;
	struct worker w = { .ops = ops, .arg = arg };
	sigset_t set;
	int ret = 0;

	wait_set(&set);
	srandom((unsigned int)start);
	t->on_free = close_syscall_fd;
	queue_init(&w.q, SAMPLER_QUEUE, o->stack_size);
	ret = pthread_create(&w.thread, NULL, worker_main, &w);
	/* the ptrace thread's few microseconds per tick should not wait behind a busy target:
	 * raise its priority when allowed (the worker keeps the default) */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), SAMPLER_NICE) < 0)
		log_debug("cannot raise the sampler's priority: %s", strerror(errno));
	if (ret) {
		queue_release(&w.q);
		return log_errno(-ret, "cannot start the worker thread");
	}
	while (!st->stop_reason) {
		uint64_t now = tracee_now_ns();

		if (now >= end) {
			st->stop_reason = SAMPLER_STOP_DURATION;
			break;
		}
		if (now >= fire) {
			/* ticks perch could not serve on time are not replayed in a burst: the
			 * next sample of each thread stands for them (perch falls behind when the
			 * CPUs are saturated, i.e. when the target is busiest: dropping them would
			 * under-count busy code) */
			uint64_t behind = (now - base) / period;
			uint64_t missed = behind > 1 ? behind - 1 : 0;

			st->missed_ticks += missed;
			base += (behind ? behind : 1) * period;
			fire = base + jitter_ns(period);
			tick(t, &w, missed, st);
		}
		ret = handle_events(t, arch, &w, st);
		if (ret < 0) {
			st->stop_reason = SAMPLER_STOP_ERROR;
			break;
		}
		if (st->stop_reason)
			break;
		now = tracee_now_ns();
		if (now < fire && now < end) {
			uint64_t wait = (fire < end ? fire : end) - now;
			struct timespec ts = { (time_t)(wait / 1000000000ULL),
					       (long)(wait % 1000000000ULL) };
			siginfo_t si;
			int sig = sigtimedwait(&set, &si, &ts);

			if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
				st->stop_reason = SAMPLER_STOP_SIGNAL;
				st->signal = sig;
				st->signal_code = si.si_code;
			}
		}
	}
	st->elapsed_s = (double)(tracee_now_ns() - start) / 1e9;
	for (size_t i = 0; i < t->nr_threads; i++)
		close_syscall_fd(t->threads[i]);
	/* the worker finishes what was queued */
	pthread_mutex_lock(&w.q.lock);
	w.q.done = 1;
	pthread_cond_signal(&w.q.wake);
	pthread_mutex_unlock(&w.q.lock);
	pthread_join(w.thread, NULL);
	queue_release(&w.q);
	return ret < 0 ? ret : 0;
}

uint64_t sampler_stop_percentile(const struct sampler_stats *st, double pct)
{
	uint64_t total = 0, acc = 0, want;

	for (size_t i = 0; i <= SAMPLER_HIST_US; i++)
		total += st->stop_hist[i];
	if (!total)
		return 0;
	want = (uint64_t)((double)total * pct / 100.0);
	if (want >= total)
		want = total - 1;
	for (size_t i = 0; i <= SAMPLER_HIST_US; i++) {
		acc += st->stop_hist[i];
		if (acc > want)
			return i;
	}
	return SAMPLER_HIST_US;
}
