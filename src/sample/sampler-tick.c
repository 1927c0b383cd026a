/* One tick of the sampler: every thread's state read first, then who is counted again without
 * a stop (blocked at a known site, group-stopped, runnable and not run since), who is read from
 * /proc ('D'), who is interrupted (the running ones first, under their CPU holders), and the
 * stops that follow: copy, resume, queue. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/proc/proc-task.h"
#include "perch/proc/waitreason.h"
#include "perch/unwind/unwind-ptrace.h"
#include "sampler-int.h"

/* cpu mode: the weight of the stop of a running thread (@ss: its schedstat in the stop, or
 * NULL), and where it landed; 0 when it counts for nothing (then it is not queued). */
static uint32_t cpu_count(struct worker *w, struct sthread *s, struct item *it,
			  const struct schedstat *ss, struct sampler_stats *st)
{
	int seen = !w->stamps || !s->cpu_unseen; /* (not when only its stop could tell) */

	it->weight = sampler_cpu_stop_weight(w, s, ss, st);
	if (!it->weight) {
		st->unrun++;
		return 0;
	}
	st->cpu_weight += it->weight;
	if (it->snap.regs.from_kernel > 0) {
		st->cpu_weight_kernel += it->weight;
		if (!seen)
			st->cpu_weight_kernel_unseen += it->weight;
	}
	return it->weight;
}

/* Our interrupt-stop: copy, resume, queue. */
static void on_stopped(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       struct tracee_thread *th, struct sampler_stats *st)
{
	struct sthread *s = sampler_thread_of(th);
	struct item *it = sampler_queue_get_free(&w->q);
	int ret = 0, group_stop = th->in_group_stop, ran;
	struct schedstat ss;
	uint64_t us;

	if (!it && s->state != 'R') {
		/* a blocked thread waits in its stop for the worker to make room: resumed
		 * without a snapshot, it would be interrupted again at the next tick, and the
		 * wakeups of thousands of such threads kept the worker off the CPU for seconds
		 * (2000 threads beside two busy processes on 2 CPUs: a whole queue dropped at
		 * every tick, and three quarters of the threads never sampled) */
		it = sampler_queue_get_free_wait(&w->q);
		st->waited++;
	}
	arch = sampler_arch_of(th, arch);
	if (it)
		ret = sampler_take_snapshot(t, arch, th, &it->snap);
	if (it && w->verify && ret == 0)
		it->nr_verify = unwind_ptrace_pcs(w->verify, th->tid, it->snap.pac_mask, it->verify,
						  SAMPLER_VERIFY_MAX);
	/* a running thread: its switch-in count while it is still stopped (read after the
	 * resume it could already include its next run) */
	ran = s->state == 'R' && !group_stop && sampler_peek_schedstat(t, th, s, &ss) == 0;
	s->ran_known = 0;
	tracee_resume(t, th);
	if (it) {
		sampler_note_broken_call(th, arch, &it->snap.regs); /* (out of the stop window) */
		if (it->snap.regs.eintr_call &&
		    waitreason_stop_breaks(arch->e_machine, (long)it->snap.regs.eintr_call - 1))
			st->eintr++;
	}
	w->awaited_stops += s->awaited;
	s->awaited = 0;
	us = (monotime_ns() - th->interrupt_ns) / 1000;
	sampler_hist_add(st->stop_hist, SAMPLER_HIST_US, &st->stop_hist_top, us);
	if (!it) {
		/* the worker is a whole queue behind: the snapshot is lost, not the tick
		 * (its next sample stands for it; a stopped thread is one that was running) */
		sampler_thread_of(th)->late_ticks++;
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
		sampler_fill_item(it, ITEM_SAMPLE, th, s);
		if (group_stop)
			sampler_note_stopped(s, it, sp, pc, st);
		/* where it was found blocked: where it may be found blocked again (running
		 * samples would only push those places out) */
		if (it->state && it->state != 'R')
			sampler_remember_site(s, sp, pc);
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
		if (w->cpu_mode && it->state == 'R' && !group_stop &&
		    !cpu_count(w, s, it, ran ? &ss : NULL, st)) {
			sampler_queue_push_free(&w->q, it);
			return;
		}
		sampler_queue_push_nowake(&w->q, it); /* the main loop wakes the worker */
		return;
	}
	sampler_queue_push_free(&w->q, it);
}

void sampler_post_event(struct worker *w, const struct tracee_event *ev)
{
	struct item *it = sampler_queue_get_free_wait(&w->q);

	it->kind = ev->kind;
	it->pid = ev->proc ? ev->proc->pid : 0;
	it->arch = ev->proc ? ev->proc->arch : NULL;
	it->tid = ev->thread ? ev->thread->tid : it->pid;
	sampler_queue_push(&w->q, it);
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
			sampler_proc_of(ev->proc)->ref_valid = 0;
		/* (a process's last thread leaves with PROC_GONE: out of the lists as well) */
		if ((ev->kind == TRACEE_EV_THREAD_GONE || ev->kind == TRACEE_EV_PROC_GONE) &&
		    ev->thread && ev->thread->user) {
			struct sthread *s = ev->thread->user;

			if (s->gated && ev->thread->proc->user) {
				struct sproc *sp = ev->thread->proc->user;

				sampler_credit(w, ev->thread, s,
					       (uint32_t)(sp->epoch - s->gate_epoch), monotime_ns(),
					       st);
			}
			sampler_credit_flush(w, ev->thread, s, st, 0);
			sampler_list_remove(ev->thread);
			s->gated = 0;
		} else if ((ev->kind == TRACEE_EV_THREAD_NEW || ev->kind == TRACEE_EV_PROC_NEW) &&
			   ev->thread) {
			sampler_list_add(w, ev->thread);
		}
		sampler_post_event(w, ev);
		break;
	}
}

int sampler_handle_events(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			  struct sampler_stats *st)
{
	struct tracee_event ev;
	int ret;

	w->events_polled = monotime_ns();
	w->events_found = 0;
	while ((ret = tracee_poll(t, &ev)) > 0) {
		/* (a stop of ours that came late says nothing of what else may come) */
		w->events_found |= ev.kind != TRACEE_EV_STOPPED;
		on_event(t, arch, w, &ev, st);
		if (ev.kind == TRACEE_EV_EXIT)
			return 0;
	}
	return ret;
}

/* Count a thread again in @state at site (@sp, @pc) without stopping it, adding one to
 * @count (the statistic of the rule that chose it): the worker looks the site up among the
 * thread's blocked ones, or, for 'R', its last running one. 0, or -ENOSPC when the worker is
 * a whole queue behind. */
static int reuse(struct worker *w, struct tracee_thread *th, struct sthread *s, char state,
		 uint64_t sp, uint64_t pc, uint64_t *count)
{
	struct item *it = sampler_queue_get_free(&w->q);

	if (!it)
		return -ENOSPC;
	sampler_fill_item(it, ITEM_REUSE, th, s);
	it->state = state;
	it->snap.time_ns = monotime_ns();
	it->site_sp = sp;
	it->site_pc = pc;
	(*count)++;
	sampler_queue_push_nowake(&w->q, it); /* (sampler_tick() wakes the worker) */
	return 0;
}

/* Queue the ticks a thread was found blocked at its site (@s->idle_sp, @s->idle_pc) without a
 * stop as one reused sample (with its late ticks, as any sample): one queue item per thread
 * every SAMPLER_GATE_FLUSH_NS, not one per tick (with 2000 blocked threads, items per tick
 * filled the queue and the snapshots of the stops that followed were dropped). When the
 * worker is a whole queue behind they stay credited to that site for a later try (to the next
 * sample, wherever it is, they would be misplaced), or with @wait (the thread leaves its
 * site) wait for room. 0 or -ENOSPC. */
int sampler_credit_flush(struct worker *w, struct tracee_thread *th, struct sthread *s,
			 struct sampler_stats *st, int wait)
{
	uint32_t n = s->credit, late = s->late_ticks;

	if (!n)
		return 0;
	if (wait)
		sampler_queue_wait_free(&w->q);
	s->late_ticks += n - 1;
	s->ran = SAMPLER_RAN_NO; /* not switched in since it was found there */
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
void sampler_credit(struct worker *w, struct tracee_thread *th, struct sthread *s, uint32_t n,
		    uint64_t now, struct sampler_stats *st)
{
	if (!s->credit) {
		s->credit_ns = now;
		s->credit_state = s->state; /* (a later read may find it woken: 'R') */
	}
	s->credit += n;
	if (now - s->credit_ns >= SAMPLER_GATE_FLUSH_NS)
		sampler_credit_flush(w, th, s, st, 0);
}

/* A group-stopped thread at a tick (wall mode): counted again where its first sample in
 * this stop was taken, or interrupted once (the interrupt re-reports its group-stop; it listens
 * again after the snapshot, so job control is untouched). Returns 1 when it is to be
 * interrupted. */
static int tick_stopped(struct worker *w, struct tracee_thread *th, struct sthread *s,
			uint64_t missed, struct sampler_stats *st)
{
	sampler_credit_flush(w, th, s, st, 1); /* (its ticks where it was blocked come first) */
	s->state = 'T';
	s->has_syscall = 0;
	s->late_ticks += (uint32_t)missed;
	if (!s->stopped_known)
		return 1;
	if (reuse(w, th, s, 'T', s->stopped_sp, s->stopped_pc, &st->reused) < 0) {
		s->late_ticks++; /* the worker is a whole queue behind (as in sampler_tick_thread())
				  */
		st->dropped++;
	}
	return 0;
}

/* A thread in uninterruptible sleep ('D') at a tick: a PTRACE_INTERRUPT would take effect
 * only when it wakes up (a vfork parent sleeps until its child execs), so it is sampled from
 * /proc without a stop. 0, or -errno when it could not be (then it is interrupted as usual). */
int sampler_sample_blocked(struct worker *w, struct tracee_thread *th, struct sthread *s,
			   const struct perch_arch *arch, char state, struct sampler_stats *st)
{
	struct item *it;
	int ret;

	if (!s->has_syscall)
		return -EAGAIN;
	it = sampler_queue_get_free(&w->q);
	if (!it)
		return -ENOSPC;
	ret = sampler_snapshot_blocked(arch, th->tid, s->syscall, &it->snap);
	if (ret < 0 && !it->snap.stack_len && !(it->snap.regs.valid & (1ULL << arch->dw_pc))) {
		sampler_queue_push_free(&w->q, it);
		return ret;
	}
	it->nr_verify = 0;
	if (s->ran == SAMPLER_RAN_UNKNOWN && s->nr_sites)
		s->ran = SAMPLER_RAN_YES; /* blocked at a place new to it: it moved there */
	sampler_fill_item(it, ITEM_SAMPLE, th, s);
	it->state = state;
	sampler_remember_site(s, perch_regs_sp(arch, &it->snap.regs),
			      perch_regs_pc(arch, &it->snap.regs));
	st->samples++;
	st->blocked++;
	sampler_queue_push(&w->q, it);
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
	return sampler_peek_schedstat(t, th, s, &ss) == 0 && ss.slices == s->ran_slices;
}

/* @th was found blocked at site (@sp, @pc): it stays there, counted without a read while it
 * has not run (sampler_idle_check(), the gate). */
static void idle_at(struct tracee *t, struct tracee_thread *th, struct sthread *s, uint64_t sp,
		    uint64_t pc, uint64_t now)
{
	s->idle_sp = sp;
	s->idle_pc = pc;
	s->idle_known = sampler_read_schedstat(t, th, s, &s->idle_ss) == 0;
	s->idle_ns = s->quiet_ns = now;
	/* the first time, it goes behind the gate at once: until then every tick reads it
	 * (hundreds of threads found blocked at attach cost the target that for 200 ms), and a
	 * wakeup costs one rescan, once per thread */
	if (!s->quiet_once && now >= SAMPLER_QUIET_NS) {
		s->quiet_once = 1;
		s->quiet_ns = now - SAMPLER_QUIET_NS;
	}
}

/* cpu mode with task clocks: a runnable thread goes to the interrupt pass, where
 * sampler_cpu_visit() sees whether it was on a CPU (for 1 + @missed ticks). */
/* A thread found in restart_syscall that no stop of this run broke off (an earlier run or
 * another tracer did): its call site tells which call it goes on with, kept as if this run had
 * broken it off, so that it reads as that call from now on. */
static void note_restarted_call(struct tracee_thread *th, const struct perch_arch *arch,
				const char *text)
{
	uint64_t sp, pc;
	long nr = waitreason_restarted_call(arch->e_machine, th->tid, text, &sp, &pc);

	if (nr < 0)
		return;
	th->broken_call = (uint32_t)nr + 1;
	th->broken_sp = sp;
	th->broken_pc = pc;
}

static int cpu_candidate(struct sthread *s, uint64_t missed)
{
	s->tick_weight = 1 + (uint32_t)missed;
	return 1;
}

/* One thread at a tick: read its state first (a thread we stop reads as 't'); a thread not
 * running is skipped in cpu mode, counted again without a stop when it is blocked where an
 * earlier sample was taken (or group-stopped where it was sampled in this stop), sampled from
 * /proc when in uninterruptible sleep. Returns 1 when it is to be interrupted. */
int sampler_tick_thread(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			const struct sampler_opts *o, struct tracee_thread *th, uint64_t missed,
			uint64_t now, struct sampler_stats *st)
{
	struct sthread *s = sampler_thread_of(th);
	int site, idle = IDLE_GONE;

	if (!th->in_group_stop)
		s->stopped_known = 0;
	/* ticks a thread could not be sampled at are credited to its next sample, in wall
	 * mode only: in cpu mode, a thread waiting for a CPU does not count */
	if (th->state == TRACEE_INTERRUPTING) {
		st->late++;
		if (!o->cpu_mode)
			s->late_ticks += 1 + (uint32_t)missed;
		else if (s->state == 'R' && w->stamps)
			return cpu_candidate(s, missed); /* was it on a CPU at this tick? */
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
		idle = sampler_idle_check(t, th, s, now);
		if (idle == IDLE_STILL) {
			sampler_credit(w, th, s, 1 + (uint32_t)missed, now, st);
			return 0;
		}
		sampler_credit_flush(w, th, s, st, 1); /* (its ticks where it was come first) */
		s->idle_known = 0;
		s->woken = idle == IDLE_WOKEN;
		if (s->ran_since_idle)
			s->ran = SAMPLER_RAN_YES; /* (this tick's sample: back at its site, or
						     elsewhere) */
		s->ran_since_idle = 0;
	}
	if (idle != IDLE_WOKEN)
		s->state = sampler_read_state(t, th, s);
	if (o->cpu_mode && s->state && s->state != 'R') {
		s->late_ticks = 0;
		/* (it may have been on a CPU at the tick, in the kernel on its way to block) */
		if (w->stamps && sampler_cpu_ran_since(t, th, s))
			return cpu_candidate(s, missed);
		st->skipped_idle++;
		return 0;
	}
	if (!o->cpu_mode)
		s->late_ticks += (uint32_t)missed;
	if (s->state == 'R' && !s->woken && runnable_unmoved(t, th, s, o)) {
		if (o->cpu_mode) { /* not run since its last stop: nothing is due */
			if (!w->stamps)
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
	s->has_syscall = s->state && s->state != 'R' &&
			 sampler_read_task_file(t, th, &s->syscall_fd, "syscall", s->syscall,
						sizeof(s->syscall)) > 0;
	if (s->has_syscall && !th->broken_call)
		note_restarted_call(th, sampler_arch_of(th, arch), s->syscall);
	if (s->has_syscall && th->broken_call)
		waitreason_unrestart(sampler_arch_of(th, arch)->e_machine, s->syscall,
				     sizeof(s->syscall), (long)th->broken_call - 1, th->broken_sp,
				     th->broken_pc);
	site = o->no_idle_reuse ? -1 : sampler_blocked_site(s);
	if (site >= 0 &&
	    reuse(w, th, s, s->state, s->sites[site].sp, s->sites[site].pc, &st->reused) < 0) {
		s->late_ticks++; /* as above */
		st->dropped++;
		return 0;
	}
	if (site >= 0) {
		idle_at(t, th, s, s->sites[site].sp, s->sites[site].pc, now);
		return 0;
	}
	/* blocked at a place not seen before: read from /proc, not stopped (a stop would make
	 * epoll_wait() and its kin fail with EINTR in the program, and would wake the thread
	 * for nothing) */
	if (s->state && s->state != 'R' && (!o->no_idle_reuse || s->state == 'D')) {
		int ret = sampler_sample_blocked(w, th, s, sampler_arch_of(th, arch), s->state, st);

		if (ret == 0 && s->state != 'D' && s->nr_sites)
			idle_at(t, th, s, s->sites[0].sp, s->sites[0].pc, now);
		if (ret == -ENOSPC) { /* the worker is a whole queue behind: a later tick */
			s->late_ticks++;
			st->dropped++;
		}
		if (ret == 0 || ret == -ENOSPC)
			return 0;
	}
	if (o->cpu_mode && w->stamps)
		return cpu_candidate(s, missed);
	if (o->cpu_mode)
		s->cpu_ticks += 1 + (uint32_t)missed;
	return 1;
}

/* Interrupt @th; a running thread only once its CPU is held (or the wait for that ran out),
 * unless it has been quiet (SAMPLER_HOLD_QUIET). */
void sampler_interrupt(struct tracee *t, struct tracee_thread *th, struct tick_hold *hd,
		       struct sampler_stats *st)
{
	struct sthread *s = sampler_thread_of(th);

	if (hd->w->stamps) {
		/* cpu mode: only a thread that was on a CPU at the tick, or may have been */
		if (!sampler_cpu_visit(t, th, hd, st))
			return;
	} else if (!hd->h || s->state != 'R' || s->woken) {
		/* not running: no hold */
	} else if (s->user_stops >= SAMPLER_HOLD_QUIET) {
		st->quiet++;
	} else {
		if (s->cpu >= 0 && s->cpu < SAMPLER_HOLD_MAX_CPUS)
			hd->running[s->cpu] = 1;
		if (hd->released
			? s->cpu == hd->self
			: sampler_hold_wait(hd->h, s->cpu, hd->self, hd->fire, hd->deadline, NULL))
			st->held++;
		else
			st->unheld++;
	}
	if (tracee_interrupt(t, th, monotime_ns()) == -ESRCH) {
		st->races++;
		return;
	}
	if (hd->sent->n < SAMPLER_MAX_BATCH)
		hd->sent->tid[hd->sent->n++] = th->tid;
	hd->sent->nr_sent++;
	if (s->state == 'R' && s->cpu >= 0 && s->cpu != hd->self) {
		s->awaited = 1;
		hd->awaited++;
	}
}

/* Visit the threads that ran at the last tick (@running 1) or the others (0), and add the
 * ones sampler_tick_thread() picks to @stop (interrupted at once when it is full). */
static void tick_pass(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		      const struct sampler_opts *o, uint64_t missed, struct tick_hold *hd,
		      int running, struct tracee_thread **stop, size_t *nr_stop,
		      struct sampler_stats *st)
{
	uint64_t now = monotime_ns();

	/* (the active threads: gated ones are sampler_gate_tick()'s) */
	for (size_t i = 0; i < w->nr_active; i++) {
		struct tracee_thread *th = w->active[i];
		struct sthread *s = th->user;

		/* once per tick: a thread read as blocked in the first pass is not seen again */
		if (s->tick == st->ticks || (s->state == 'R' || !s->state) != running)
			continue;
		/* threads not met yet, a few hundred a tick and no more than a third of a
		 * period's work: thousands found at attach would make the first ticks last
		 * seconds (their first samples wait for the queue anyway); the rest stand for
		 * this tick at their first sample */
		if (!s->met &&
		    (w->met_this_tick >= SAMPLER_MEET_MAX ||
		     (w->met_this_tick % 16 == 15 && monotime_ns() - now > w->period_ns / 3))) {
			if (!o->cpu_mode)
				s->late_ticks += 1 + (uint32_t)missed;
			continue;
		}
		w->met_this_tick += !s->met;
		s->met = 1;
		s->tick = st->ticks;
		if (!sampler_tick_thread(t, arch, w, o, th, missed, now, st))
			continue;
		if (*nr_stop < SAMPLER_MAX_BATCH)
			stop[(*nr_stop)++] = th;
		else
			sampler_interrupt(t, th, hd, st);
	}
}

/* cpu mode: take at the next tick every CPU a runnable thread of the target was on at one of
 * the last SAMPLER_CPU_HOLD_TICKS ticks, whether it ran or waited (a server thread that sleeps
 * between requests is runnable at only some ticks, and a tick it runs at on a CPU nobody takes
 * is seen only from its stop), but for threads whose stops all came in user code: their stops
 * need no hold to be where they ran (SAMPLER_HOLD_QUIET). */
static void cpu_want_holds(const struct tracee *t, struct tick_hold *hd, uint64_t tick)
{
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct sthread *s = t->threads[i]->user;

		if (!s)
			continue;
		if (s->state == 'R' && s->cpu >= 0 && s->cpu < SAMPLER_HOLD_MAX_CPUS) {
			s->hold_cpu = s->cpu;
			s->hold_tick = tick;
		}
		if (s->hold_tick && tick - s->hold_tick < SAMPLER_CPU_HOLD_TICKS &&
		    s->user_stops < SAMPLER_HOLD_QUIET)
			hd->running[s->hold_cpu] = 1;
	}
}

static int is_running(const struct tracee_thread *th)
{
	return ((const struct sthread *)th->user)->state == 'R';
}

/* One tick (scheduled at @fire) that stands for 1 + @missed ticks of the schedule (perch
 * fell behind). Every thread's state is read first, before any interrupt or wait for a CPU holder:
 * a state read later than the tick describes a later moment, and perch's own activity then
 * (holders spinning, the ptrace thread running) keeps threads runnable that would have gone
 * to sleep. The threads that were running go first, then the others; the running ones are
 * interrupted next, so that the CPU holders, which keep them where they were at @fire, are
 * released soon, then the others. @next: the following tick, for which the holders are to
 * wake @lead early. */
void sampler_tick(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		  const struct sampler_opts *o, struct sampler_hold *h, uint64_t fire,
		  uint64_t next, uint64_t lead, uint64_t missed, struct sent_stops *sent,
		  struct sampler_stats *st)
{
	struct tick_hold hd = {.h = h, .fire = fire, .self = sched_getcpu(), .sent = sent, .w = w};
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

	sampler_hist_add(st->tick_hist, SAMPLER_TICK_HIST_US, &st->tick_hist_top,
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
	sampler_lists_check(t, w, st);
	w->met_this_tick = 0;
	sent->n = sent->nr_sent = 0;
	tick_pass(t, arch, w, o, missed, &hd, 1, stop, &nr_stop, st);
	tick_pass(t, arch, w, o, missed, &hd, 0, stop, &nr_stop, st);
	/* the gate before any interrupt: a thread leaving its stop, or entering ours, changes
	 * its run time (a stop is a switch out) between the reads the gate compares */
	g.now = monotime_ns();
	sampler_gate_tick(&g);
	if (o->follow_cpu)
		follow_cpu(stop, nr_stop, st);
	/* (cpu mode's candidates are all looked at while their CPUs are held) */
	for (size_t i = 0; i < nr_stop; i++)
		if (w->stamps || is_running(stop[i]))
			sampler_interrupt(t, stop[i], &hd, st);
	if (h)
		sampler_hold_release(h, fire);
	hd.released = 1;
	for (size_t i = 0; i < nr_stop; i++)
		if (!w->stamps && !is_running(stop[i]))
			sampler_interrupt(t, stop[i], &hd, st);
	sampler_gate_credit(&g);
	if (w->stamps)
		cpu_want_holds(t, &hd, st->ticks);
	if (h)
		sampler_hold_arm(h, hd.running, SAMPLER_HOLD_MAX_CPUS);
	sampler_queue_wake(&w->q); /* for the reused stacks */
	sent->want = w->awaited_stops + hd.awaited;
}

/* The events of thread @tid, asked for alone (what it did while the worker slept, or a stop
 * of ours). The number of them that were not stops of ours, or -1. */
int sampler_take_thread(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			pid_t tid, struct sampler_stats *st)
{
	struct tracee_event ev;
	int ret = 0, other = 0;

	while (!st->stop_reason && (ret = tracee_poll_thread(t, tid, &ev)) > 0) {
		other += ev.kind != TRACEE_EV_STOPPED;
		on_event(t, arch, w, &ev, st);
		if (ev.kind == TRACEE_EV_EXIT)
			break;
	}
	return ret < 0 ? -1 : other;
}

/* One look at each of the threads a tick interrupted whose stop has not come yet, asked for
 * alone: a wait for any child would look at every traced thread each time. The number of
 * stops taken, or -1. */
int sampler_take_stops(struct tracee *t, const struct perch_arch *arch, struct worker *w,
		       const struct sent_stops *sent, struct sampler_stats *st)
{
	struct tracee_event ev;
	int taken = 0;

	for (size_t i = 0; i < sent->n && !st->stop_reason; i++) {
		const struct tracee_thread *th = tracee_find(t, sent->tid[i]);
		int ret;

		if (!th || th->state != TRACEE_INTERRUPTING)
			continue; /* its stop came (or it is gone) */
		ret = tracee_poll_thread(t, sent->tid[i], &ev);
		if (ret < 0)
			return -1;
		if (ret > 0) {
			on_event(t, arch, w, &ev, st);
			taken++;
		}
	}
	return taken;
}

/* Wait for the stops of the running threads the tick just interrupted on other CPUs than
 * this thread's, by polling for up to SAMPLER_AWAIT_NS instead of sleeping. */
int sampler_await_stops(struct tracee *t, const struct perch_arch *arch, struct worker *w,
			const struct sent_stops *sent, struct sampler_stats *st)
{
	uint64_t end = monotime_ns() + SAMPLER_AWAIT_NS;

	while (w->awaited_stops < sent->want && !st->stop_reason && monotime_ns() < end)
		if (sampler_take_stops(t, arch, w, sent, st) < 0)
			return -1;
	return 0;
}
