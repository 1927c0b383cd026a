/* The sampling loop's ptrace thread: the tick timer (a random moment in each period, woken
 * early and spun to), signals, job control (Ctrl-Z), processes that join, and sampler_run()
 * that ties the parts together; see include/perch/sample/sampler.h, src/sample/sampler-int.h
 * for the parts and docs/design/perf-baseline.md (design lessons 1, 3, 4: copy only in the
 * stop window, interrupt all threads then collect, handle stops as soon as SIGCHLD arrives). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perch/base/fdlimit.h"
#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/unwind/unwind-ptrace.h"
#include "sampler-int.h"

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

/* Tell the worker of process @p, just attached: it, then each of its other threads. */
static void post_proc(struct tracee *t, struct worker *w, struct tracee_proc *p)
{
	struct tracee_event ev = {TRACEE_EV_PROC_NEW, tracee_find(t, p->pid), p};

	sampler_post_event(w, &ev);
	ev.kind = TRACEE_EV_THREAD_NEW;
	for (size_t i = 0; i < t->nr_threads; i++) {
		ev.thread = t->threads[i];
		if (ev.thread->proc == p && ev.thread->tid != p->pid)
			sampler_post_event(w, &ev);
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

		if (sampler_handle_events(t, arch, w, st) < 0 || st->stop_reason)
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
		if (sampler_handle_events(t, arch, w, st) < 0 || st->stop_reason)
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
 * reads R although it slept at the tick (while the threads running then are kept R by the
 * CPU holders, sampler-hold.h). The timer is set @lead before the tick instead and the thread spins
 * the rest of the way; @lead starts at the first wake latency measured and follows their median
 * (one SAMPLER_LEAD_STEP_NS step towards each), so about half the ticks are served on time after a
 * spin of a few microseconds and the others a few microseconds late. The holders are woken as early
 * (sampler_hold_publish()). */
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

	if (sig == SIGCHLD) {
		w->chld = 1;
		w->chld_pid = si.si_pid;
	}
	if (sig < 0 && e && wait) { /* the timer, not a signal */
		/* (first: it took its CPU from whatever ran there just now) */
		sampler_cpu_stamp_self(w, until);
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

/* Did SIGCHLD come (or is it pending: taken now)? @pid: the child it named (the first whose
 * state changed since the last one was taken), or 0. */
static int take_sigchld(struct worker *w, pid_t *pid)
{
	static const struct timespec zero = {0, 0};
	sigset_t pending, chld;
	siginfo_t si;

	*pid = 0;
	if (w->chld) {
		w->chld = 0;
		*pid = w->chld_pid;
		return 1;
	}
	if (sigpending(&pending) < 0 || sigismember(&pending, SIGCHLD) != 1)
		return 0;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigtimedwait(&chld, &si, &zero) == SIGCHLD)
		*pid = si.si_pid;
	return 1;
}

/* Is it time for tracee_poll() (at @now)? Every waitpid(-1) walks all the tracer's tracees in
 * the kernel (wait_consider_task()): with 10,000 traced threads, polling at every pass of the
 * loop was a third of perch's CPU. So only after a SIGCHLD, and no sooner than
 * SAMPLER_POLL_IDLE_NS after a poll that found nothing (events_wake() says when). */
static int events_due(struct worker *w, uint64_t now)
{
	if (!w->events_held || (!w->events_found && now < w->events_polled + SAMPLER_POLL_IDLE_NS))
		return 0;
	w->events_held = 0;
	return 1;
}

/* What a SIGCHLD calls for: the child it names and the tick's interrupted threads are asked
 * for alone (the tick's own stops raise one each: they are the common case), then, when it
 * is due, a wait for any child, which finds what a SIGCHLD did not name (the ones raised
 * while one is pending are merged into it). It is due at once when the child named did
 * something else than stop for perch: a thread's clone event and its new thread's first stop,
 * or an exit and the next, come together (3000 threads created one after the other took 4x
 * as long with their polls held back). */
static int take_events(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       const struct sent_stops *sent, struct sampler_stats *st)
{
	int other = 0;
	pid_t pid;

	if (take_sigchld(w, &pid)) {
		w->events_held = 1;
		if ((pid > 0 && (other = sampler_take_thread(t, arch, w, pid, st)) < 0) ||
		    sampler_take_stops(t, arch, w, sent, st) < 0)
			return -1;
		if (other)
			w->events_found = 1;
	}
	if (st->stop_reason || !events_due(w, monotime_ns()))
		return 0;
	return sampler_handle_events(t, arch, w, st);
}

/* The time to wake for a SIGCHLD held back, if before @until. */
static uint64_t events_wake(const struct worker *w, uint64_t until)
{
	uint64_t at = w->events_polled + SAMPLER_POLL_IDLE_NS;

	return w->events_held && at < until ? at : until;
}

int sampler_run(struct tracee *t, const struct perch_arch *arch, const struct sampler_opts *o,
		const struct sampler_ops *ops, void *arg, struct sampler_stats *st)
{
	uint64_t period = (uint64_t)(1e9 / o->hz), start, end, base, fire, join_at, until;
	struct early early = {.cap = period / 4 < SAMPLER_LEAD_MAX_NS ? period / 4
								      : SAMPLER_LEAD_MAX_NS};
	struct worker w = {.ops = ops, .arg = arg, .cpu_mode = o->cpu_mode, .period_ns = period};
	struct sampler_hold *hold = NULL;
	struct sent_stops sent = {0}; /* the threads the last tick interrupted */
	sigset_t set;
	int ret = 0, rt;

	cpu_set_t old_cpus;
	int have_old_cpus = sched_getaffinity(0, sizeof(old_cpus), &old_cpus) == 0, pinned;

	wait_set(&set);
	if (o->no_signals) {
		sigdelset(&set, SIGINT);
		sigdelset(&set, SIGTERM);
		sigdelset(&set, SIGHUP);
		sigdelset(&set, SIGTSTP);
		sigdelset(&set, SIGTTIN);
		sigdelset(&set, SIGTTOU);
	}
	t->on_free = sampler_thread_free;
	t->on_proc_free = sampler_proc_free;
	fdlimit_keep_budget(); /* (the descriptors open now, the target's threads attached) */
	fdlimit_reserve(SAMPLER_FDS_PER_THREAD * t->nr_threads + SAMPLER_FDS_SPARE);
	sampler_queue_init(&w.q, SAMPLER_QUEUE, o->stack_size, o->verify);
	sampler_cpu_init(&w);
	st->cpu_clocks = w.stamps;
	pinned = w.stamps && sampler_cpu_pin_self();
	if (o->verify)
		w.verify = unwind_ptrace_new();
	ret = pthread_create(&w.thread, NULL, sampler_worker_main, &w);
	/* the ptrace thread's few microseconds per tick should not wait behind a busy target:
	 * raise its priority when allowed (the worker keeps the default) */
	rt = raise_priority();
	if (!o->no_hold && !o->follow_cpu)
		hold = sampler_hold_new(SAMPLER_RT_PRIO, SAMPLER_NICE / 2, period, w.stamps);
	/* the clock starts once everything is set up: a short -d still gets its ticks */
	start = base = fire = join_at = monotime_ns();
	end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : UINT64_MAX;
	srandom((unsigned int)start);
	if (ret) {
		restore_priority(rt);
		sampler_hold_free(hold);
		sampler_queue_release(&w.q);
		sampler_cpu_release(&w);
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
			sampler_tick(t, arch, &w, o, hold, this_fire, fire, early.lead, missed,
				     &sent, st);
			ret = sampler_await_stops(t, arch, &w, &sent, st);
			if (ret >= 0)
				ret = take_events(t, arch, &w, &sent, st);
			fire = duty_cap(fire, now, period, st);
		} else if (ret >= 0) {
			ret = take_events(t, arch, &w, &sent, st);
		}
		sampler_queue_wake(&w.q); /* once for the tick's and the events' snapshots */
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
		until = events_wake(&w, until);
		/* (behind, too: the signals are read if not waited for) */
		if (sleep_until(t, arch, &w, &set, until, until == fire ? &early : NULL, st))
			base = fire = monotime_ns();
	}
	st->elapsed_s = (double)(monotime_ns() - start) / 1e9;
	st->lead_ns = early.lead;
	restore_priority(rt);
	sampler_hold_free(hold);
	if (have_old_cpus && (st->migrations || pinned))
		sched_setaffinity(0, sizeof(old_cpus), &old_cpus);
	sampler_gate_finish(t, &w, st);
	/* (a thread that left last is still listed: taken off the lists while they exist) */
	tracee_free_removed();
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct sthread *s = t->threads[i]->user;

		/* the ticks found blocked not queued yet (waiting for room: the worker runs) */
		if (s && s->credit)
			sampler_credit_flush(&w, t->threads[i], s, st, 1);
		sampler_thread_free(t->threads[i]);
	}
	for (size_t i = 0; i < t->nr_procs; i++)
		sampler_proc_free(t->procs[i]);
	/* the worker finishes what was queued */
	pthread_mutex_lock(&w.q.lock);
	w.q.done = 1;
	pthread_cond_signal(&w.q.wake);
	pthread_mutex_unlock(&w.q.lock);
	pthread_join(w.thread, NULL);
	sampler_queue_release(&w.q);
	sampler_cpu_release(&w);
	unwind_ptrace_free(w.verify);
	return ret < 0 ? ret : 0;
}
