/* The sampler's run-time gate: threads blocked at one site for long are counted again at each
 * tick without a read while their process's CPU clock, less its other threads' run times, does
 * not move. */
#include <stdint.h>

#include "perch/base/log.h"
#include "sampler-int.h"

/* How the gate works.
 *
 * A process's CPU clock (CLOCK_PROCESS_CPUTIME_ID of another process, one system call) is the
 * sum of its threads' run times (se.sum_exec_runtime, what .../schedstat prints first) plus
 * that of its exited threads. A thread blocked at one site for SAMPLER_QUIET_NS goes behind
 * the gate: at each tick the clock is read after the run times of the process's other
 * threads, so (clock - their sum) can only have grown if a gated thread ran since the last
 * rescan (or a thread came or went, which invalidates the reference). Unchanged: every gated
 * thread is counted again where it was found, without a read. Changed, or every
 * SAMPLER_RESCAN_NS: the rescan reads the clock first, then every thread one by one (gated
 * ones with sampler_idle_check(), which catches a switch-in the moment it happens), and the new
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
 * since SAMPLER_QUIET_NS, where a wakeup is followed by running at once (sampler_idle_check()). */
static int gate_fits(const struct tracee_thread *th, const struct sthread *s, uint64_t now)
{
	return s->idle_known && s->wait_ppm < SAMPLER_WAIT_PPM && now >= s->quiet_ns &&
	       now - s->quiet_ns >= SAMPLER_QUIET_NS && th->state == TRACEE_RUNNING &&
	       !th->in_group_stop && !th->detaching && !th->new_stop_pending && th->proc->arch;
}

/* A gated thread at this tick: counted again where it was found blocked (queued every
 * SAMPLER_GATE_FLUSH_NS, or when it leaves the gate). */
static void gate_reuse(struct gate_ctx *g, struct tracee_thread *th, struct sthread *s)
{
	s->tick = g->st->ticks;
	g->st->gated += 1 + g->missed;
	sampler_credit(g->w, th, s, 1 + (uint32_t)g->missed, g->now, g->st);
}

/* A thread that leaves the gate at this tick, not visited yet: as any other thread. */
static void gate_visit(struct gate_ctx *g, struct tracee_thread *th, struct sthread *s)
{
	sampler_credit_flush(g->w, th, s, g->st, 1);
	s->gated = 0;
	s->tick = g->st->ticks;
	if (!sampler_tick_thread(g->t, g->arch, g->w, g->o, th, g->missed, g->now, g->st))
		return;
	if (*g->nr_stop < SAMPLER_MAX_BATCH)
		g->stop[(*g->nr_stop)++] = th;
	else
		sampler_interrupt(g->t, th, g->hd, g->st);
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
		if (sampler_read_schedstat(t, th, s, &ss) < 0)
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
				gate_visit(g, th, s); /* as before the gate: sampler_idle_check() */
			else
				s->gated = 0;
			continue;
		}
		s->run_tick = 0;
		idle = sampler_idle_check(t, th, s, g->now);
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
		sampler_credit_flush(g->w, th, s, g->st, 1); /* (before its site is forgotten) */
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
		if ((fresh || s->run_tick != g->st->ticks) &&
		    sampler_read_schedstat(t, th, s, &ss) < 0)
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
 * then its clock; a process whose gate did not hold is rescanned (sampler_gate_credit() counts the
 * others' gated threads later). Threads to interrupt go to @g->stop. */
void sampler_gate_tick(struct gate_ctx *g)
{
	struct tracee *t = g->t;
	uint64_t tick = g->st->ticks;

	if (g->o->cpu_mode || g->o->no_idle_reuse)
		return;
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct sproc *sp = sampler_proc_of(t->procs[i]);

		sp->nr_gated = sp->nr_cand = 0;
		sp->pass = 0;
	}
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct sthread *s = sampler_thread_of(th);
		struct sproc *sp = sampler_proc_of(th->proc);

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
void sampler_gate_credit(struct gate_ctx *g)
{
	struct tracee *t = g->t;
	uint64_t tick = g->st->ticks;
	int any = 0;

	if (g->o->cpu_mode || g->o->no_idle_reuse)
		return;
	for (size_t i = 0; i < t->nr_procs && !any; i++)
		any = sampler_proc_of(t->procs[i])->pass;
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
