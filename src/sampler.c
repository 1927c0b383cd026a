/* The sampling loop; see include/perch/sampler.h and ../shared/spec/perf-baseline.md
 * (design lessons 1, 3, 4: copy only in the stop window, interrupt all threads then collect,
 * handle stops as soon as SIGCHLD arrives). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perch/arch.h"
#include "perch/log.h"
#include "perch/sampler.h"
#include "perch/tracee.h"
#include "perch/unwind.h"
#include "perch/xalloc.h"

struct slot {
	struct unwind_snapshot snap;
	int full; /* taken, not yet handed to ops->sample */
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

static struct slot *slot_of(struct tracee_thread *th, size_t stack_size)
{
	struct slot *s = th->user;

	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->snap.stack = xmalloc(stack_size ? stack_size : 1);
		s->snap.stack_cap = stack_size;
		th->user = s;
	}
	return s;
}

static void slot_free(struct tracee_thread *th)
{
	struct slot *s = th->user;

	if (s) {
		free(s->snap.stack);
		free(s);
		th->user = NULL;
	}
}

int sampler_snapshot(struct tracee *t, const struct perch_arch *arch, struct tracee_thread *th,
		     struct unwind_snapshot *snap)
{
	snap->time_ns = tracee_now_ns();
	return unwind_snapshot_take(t->pid, th->tid, arch, snap);
}

static void deliver(const struct sampler_ops *ops, void *arg, struct tracee_thread *th)
{
	struct slot *s = th->user;

	if (s && s->full) {
		s->full = 0;
		ops->sample(arg, th, &s->snap);
	}
}

/* Our interrupt-stop: copy, resume, account. */
static void on_stopped(struct tracee *t, const struct perch_arch *arch, const struct sampler_opts *o,
		       struct tracee_thread *th, struct sampler_stats *st)
{
	struct slot *s = slot_of(th, o->stack_size);
	int ret = sampler_snapshot(t, arch, th, &s->snap);
	uint64_t us;

	tracee_resume(t, th);
	us = (tracee_now_ns() - th->interrupt_ns) / 1000;
	st->stop_hist[us < SAMPLER_HIST_US ? us : SAMPLER_HIST_US]++;
	if (ret == -ESRCH) {
		st->races++;
	} else if (ret < 0 && s->snap.stack_len == 0 && !(s->snap.regs.valid)) {
		st->err_regs++;
	} else {
		if (ret < 0)
			st->err_stack++;
		st->samples++;
		s->full = 1;
	}
}

static int handle_events(struct tracee *t, const struct perch_arch *arch,
			 const struct sampler_opts *o, const struct sampler_ops *ops, void *arg,
			 struct sampler_stats *st)
{
	struct tracee_event ev;
	int ret;

	while ((ret = tracee_poll(t, &ev)) > 0) {
		switch (ev.kind) {
		case TRACEE_EV_STOPPED:
			on_stopped(t, arch, o, ev.thread, st);
			break;
		case TRACEE_EV_THREAD_GONE:
			deliver(ops, arg, ev.thread);
			if (ops->event)
				ops->event(arg, &ev);
			slot_free(ev.thread);
			break;
		case TRACEE_EV_EXIT:
			if (ev.thread)
				deliver(ops, arg, ev.thread);
			st->stop_reason = SAMPLER_STOP_EXIT;
			return 0;
		default:
			if (ops->event)
				ops->event(arg, &ev);
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

int sampler_run(struct tracee *t, const struct perch_arch *arch, const struct sampler_opts *o,
		const struct sampler_ops *ops, void *arg, struct sampler_stats *st)
{
	uint64_t period = (uint64_t)(1e9 / o->hz), start = tracee_now_ns();
	uint64_t end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : UINT64_MAX;
	uint64_t base = start, fire = start;
	sigset_t set;
	int ret = 0;

	wait_set(&set);
	srandom((unsigned int)start);
	t->on_free = slot_free;
	while (!st->stop_reason) {
		uint64_t now = tracee_now_ns();
		int pending = 0;

		if (now >= end) {
			st->stop_reason = SAMPLER_STOP_DURATION;
			break;
		}
		if (now >= fire) {
			uint64_t behind = (now - base) / period;

			if (behind > 1)
				st->missed_ticks += behind - 1; /* skipped, never replayed */
			base += (behind ? behind : 1) * period;
			fire = base + jitter_ns(period);
			st->ticks++;
			for (size_t i = 0; i < t->nr_threads; i++) {
				struct tracee_thread *th = t->threads[i];

				if (th->state == TRACEE_INTERRUPTING) {
					st->late++;
					continue;
				}
				if (th->state != TRACEE_RUNNING || th->new_stop_pending)
					continue;
				deliver(ops, arg, th);
				if (tracee_interrupt(t, th, tracee_now_ns()) == -ESRCH)
					st->races++;
			}
		}
		ret = handle_events(t, arch, o, ops, arg, st);
		if (ret < 0) {
			st->stop_reason = SAMPLER_STOP_ERROR;
			break;
		}
		if (st->stop_reason)
			break;
		/* unwind one waiting snapshot, then look for events again */
		for (size_t i = 0; i < t->nr_threads; i++) {
			struct slot *s = t->threads[i]->user;

			if (s && s->full) {
				deliver(ops, arg, t->threads[i]);
				pending = 1;
				break;
			}
		}
		if (pending)
			continue;
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
	/* hand over what was taken; stops still pending are collected by the detach */
	for (size_t i = 0; i < t->nr_threads; i++)
		deliver(ops, arg, t->threads[i]);
	st->elapsed_s = (double)(tracee_now_ns() - start) / 1e9;
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
