/* The sampler's run-time gate: threads blocked at one site for long are counted again at each
 * tick without a read while their process's CPU clock, less its other threads' run times, does
 * not move. */
#include <stdint.h>
#include <stdlib.h>

#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/base/xalloc.h"
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
	uint64_t t0 = monotime_ns();

	if (!sp->clock_state)
		sp->clock_state = clock_getcpuclockid(p->pid, &sp->clock) == 0 ? 1 : -1;
	if (sp->clock_state < 0 || clock_gettime(sp->clock, &ts) < 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	sp->clock_cost_ns = monotime_ns() - t0;
	return 0;
}

/* Is the gate of @sp to be measured at this tick? The kernel sums every thread's run time to
 * read a process's clock (thread_group_cputime()): 10,000 threads made each read cost about a
 * millisecond, most of perch's CPU at 100 Hz. So the clock is read at most every so many ticks
 * that it takes SAMPLER_CLOCK_SHARE of perch's period; in between, the gated threads are
 * counted as they were (one that wakes is seen that many ticks late: only where the process
 * has thousands of threads). */
static int gate_due(struct gate_ctx *g, struct sproc *sp)
{
	uint64_t every = sp->clock_cost_ns * SAMPLER_CLOCK_SHARE / g->w->period_ns + 1;

	if (g->st->ticks - sp->clock_tick < every)
		return 0;
	sp->clock_every = g->st->ticks - sp->clock_tick;
	sp->clock_tick = g->st->ticks;
	return 1;
}

/* May @th go (or stay) behind its process's gate? Found blocked at its site at this tick,
 * since SAMPLER_QUIET_NS, where a wakeup is followed by running at once (sampler_idle_check()). */
static int gate_fits(const struct tracee_thread *th, const struct sthread *s, uint64_t now)
{
	return s->idle_known && s->wait_ppm < SAMPLER_WAIT_PPM && now >= s->quiet_ns &&
	       now - s->quiet_ns >= SAMPLER_QUIET_NS && th->state == TRACEE_RUNNING &&
	       !th->in_group_stop && !th->detaching && !th->new_stop_pending && th->proc->arch;
}

/* ---- the lists: active threads, and each process's gated ones ---- */

static void push(struct tracee_thread ***arr, size_t *nr, size_t *alloc, struct tracee_thread *th,
		 int listed)
{
	struct sthread *s = th->user;

	ALLOC_GROW(*arr, *nr + 1, *alloc);
	s->listed = listed;
	s->list_pos = *nr;
	(*arr)[(*nr)++] = th;
}

static void del(struct tracee_thread **arr, size_t *nr, size_t pos)
{
	if (pos >= *nr)
		return;
	arr[pos] = arr[--*nr];
	if (pos < *nr)
		((struct sthread *)arr[pos]->user)->list_pos = pos;
}

void sampler_list_add(struct worker *w, struct tracee_thread *th)
{
	struct sthread *s = sampler_thread_of(th);

	if (s->listed)
		return;
	s->w = w;
	push(&w->active, &w->nr_active, &w->alloc_active, th, 1);
}

void sampler_list_remove(struct tracee_thread *th)
{
	struct sthread *s = th->user;
	struct sproc *sp;

	if (!s || !s->listed)
		return;
	if (s->listed == 1) {
		del(s->w->active, &s->w->nr_active, s->list_pos);
	} else if ((sp = th->proc->user)) {
		del(sp->gated, &sp->nr_gated, s->list_pos);
		s->w->nr_gated--;
	}
	s->listed = 0;
}

void sampler_lists_check(struct tracee *t, struct worker *w, struct sampler_stats *st)
{
	uint64_t now;

	if (w->nr_active + w->nr_gated == t->nr_threads)
		return;
	now = monotime_ns();
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct sthread *s = th->user;
		struct sproc *sp = th->proc->user;

		/* a gated thread's ticks on its process's epoch first: they are nowhere else */
		if (s && s->gated && sp && sp->epoch != s->gate_epoch)
			sampler_credit(w, th, s, (uint32_t)(sp->epoch - s->gate_epoch), now, st);
		if (s)
			s->gate_epoch = sp ? sp->epoch : 0;
		sampler_list_remove(th);
	}
	w->nr_active = w->nr_gated = 0;
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct sproc *sp = sampler_proc_of(t->procs[i]);

		sp->nr_gated = 0;
		sp->ref_valid = 0;
	}
	/* (gated ones out of the gate: a rescan puts them back, their ticks counted first) */
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct sthread *s = sampler_thread_of(t->threads[i]);

		s->listed = 0;
		s->gated = 0;
		sampler_list_add(w, t->threads[i]);
	}
}

/* The ticks @th was counted blocked on its process's gate since its last count, queued as one
 * sample at its site (or kept for later when the worker is a whole queue behind). */
static void gated_flush(struct worker *w, struct tracee_thread *th, struct sthread *s,
			struct sproc *sp, uint64_t now, struct sampler_stats *st, int wait)
{
	uint64_t n = sp->epoch - s->gate_epoch;

	s->gate_epoch = sp->epoch;
	if (n)
		sampler_credit(w, th, s, n < UINT32_MAX ? (uint32_t)n : UINT32_MAX, now, st);
	sampler_credit_flush(w, th, s, st, wait);
}

static void gate_join(struct gate_ctx *g, struct tracee_thread *th, struct sthread *s,
		      struct sproc *sp)
{
	del(g->w->active, &g->w->nr_active, s->list_pos);
	push(&sp->gated, &sp->nr_gated, &sp->alloc_gated, th, 2);
	g->w->nr_gated++;
	s->gated = 1;
	s->gate_epoch = sp->epoch;
	/* its files are read about once a second now: their descriptors go to active threads */
	sampler_fd_close(&s->stat_fd);
	sampler_fd_close(&s->syscall_fd);
	sampler_fd_close(&s->schedstat_fd);
}

static void gate_leave(struct gate_ctx *g, struct tracee_thread *th, struct sthread *s,
		       struct sproc *sp)
{
	gated_flush(g->w, th, s, sp, g->now, g->st, 1);
	del(sp->gated, &sp->nr_gated, s->list_pos);
	g->w->nr_gated--;
	push(&g->w->active, &g->w->nr_active, &g->w->alloc_active, th, 1);
	s->gated = 0;
}

/* A thread that leaves the gate at this tick, not visited yet: as any other thread. */
static void gate_visit(struct gate_ctx *g, struct tracee_thread *th, struct sthread *s)
{
	if (s->gated)
		gate_leave(g, th, s, th->proc->user);
	sampler_credit_flush(g->w, th, s, g->st, 1);
	s->tick = g->st->ticks;
	if (!sampler_tick_thread(g->t, g->arch, g->w, g->o, th, g->missed, g->now, g->st))
		return;
	if (*g->nr_stop < SAMPLER_MAX_BATCH)
		g->stop[(*g->nr_stop)++] = th;
	else
		sampler_interrupt(g->t, th, g->hd, g->st);
}

/* The threads of @p to look at in a rescan: its gated ones and its active ones that fit the
 * gate, copied (the rescan moves them between lists). */
static size_t rescan_set(struct gate_ctx *g, struct tracee_proc *p, struct sproc *sp,
			 struct tracee_thread ***out)
{
	struct tracee_thread **v = xmalloc((sp->nr_gated + g->w->nr_active + 1) * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < sp->nr_gated; i++)
		v[n++] = sp->gated[i];
	for (size_t i = 0; i < g->w->nr_active; i++) {
		struct tracee_thread *th = g->w->active[i];

		if (th->proc == p && gate_fits(th, th->user, g->now))
			v[n++] = th;
	}
	*out = v;
	return n;
}

/* Read every thread of @p one by one (its clock first) and set the gate's new reference;
 * threads that fit join the gate, gated ones that ran leave it. */
static void gate_rescan(struct gate_ctx *g, struct tracee_proc *p, struct sproc *sp)
{
	struct tracee *t = g->t;
	struct tracee_thread **set;
	uint64_t clk = 0, sum = 0;
	int ok = proc_clock(p, sp, &clk) == 0;
	size_t n;

	g->st->rescans++;
	log_debug("gate: rescan of %d at tick %llu (ref_valid %d, since %llu ms)", p->pid,
		  (unsigned long long)g->st->ticks, sp->ref_valid,
		  (unsigned long long)((g->now - sp->rescan_ns) / 1000000));
	/* first the threads outside the gate, right after the clock: the ones that run move
	 * on, and the reference is only as exact as that wait is short */
	for (size_t i = 0; i < g->w->nr_active && ok; i++) {
		struct tracee_thread *th = g->w->active[i];
		struct sthread *s = th->user;
		struct schedstat ss;

		if (th->proc != p || gate_fits(th, s, g->now))
			continue;
		if (sampler_read_schedstat(t, th, s, &ss) < 0)
			ok = 0;
		else
			sum += ss.run_ns;
	}
	n = rescan_set(g, p, sp, &set);
	for (size_t i = 0; i < n; i++) {
		struct tracee_thread *th = set[i];
		struct sthread *s = th->user;
		int was = s->gated, idle;

		if (!ok) {
			if (was)
				gate_visit(g, th, s); /* as before the gate: sampler_idle_check() */
			continue;
		}
		s->run_tick = 0;
		idle = sampler_idle_check(t, th, s, g->now);
		if (idle == IDLE_STILL && gate_fits(th, s, g->now)) {
			if (!was) {
				gate_join(g, th, s, sp); /* (visited at this tick already) */
			} else { /* this tick's count: the process's epoch does not move at a rescan
				  */
				sampler_credit(g->w, th, s, (uint32_t)(1 + g->missed), g->now,
					       g->st);
				g->st->gated += 1 + g->missed;
			}
			continue;
		}
		/* it ran (or woke) since it was found blocked there */
		log_debug("gate: %d left (%s)", th->tid,
			  idle == IDLE_STILL ? "no longer fits" : "ran");
		if (s->run_tick == s->tick)
			sum += s->run_ns;
		else
			ok = 0;
		if (was)
			gate_leave(g, th, s,
				   sp); /* (its ticks counted before its site is forgotten) */
		sampler_credit_flush(g->w, th, s, g->st, 1);
		s->idle_known = 0;
		if (was)
			gate_visit(g, th, s);
	}
	free(set);
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

	for (size_t i = 0; i < g->w->nr_active; i++) {
		struct tracee_thread *th = g->w->active[i];
		struct sthread *s = th->user;
		struct schedstat ss;

		if (th->proc != p)
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

/* A thread entered or left a group-stop, or is being let go, since the last look (the tracee
 * counts such changes): gated threads that no longer fit leave the gate. */
static void gate_recheck(struct gate_ctx *g)
{
	struct tracee *t = g->t;

	if (g->w->state_gen == t->state_gen)
		return;
	g->w->state_gen = t->state_gen;
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct sproc *sp = sampler_proc_of(t->procs[i]);

		for (size_t j = sp->nr_gated; j-- > 0;) {
			struct tracee_thread *th = sp->gated[j];
			struct sthread *s = th->user;

			if (j >= sp->nr_gated || gate_fits(th, s, g->now))
				continue;
			/* no longer blocked as it was (a state only running can bring) */
			sp->ref_valid = 0;
			s->idle_known = 0;
			gate_visit(g, th, s);
		}
	}
}

/* A few of @sp's gated threads read one by one at each tick, so that each is read about every
 * SAMPLER_RESCAN_NS (what the gate cannot see: one that woke less than a scheduler tick ago
 * and runs still, its run time not moved yet). 1 when they are still where they were, 0 when
 * one ran (the process is rescanned). */
static int gate_spot_check(struct gate_ctx *g, struct sproc *sp)
{
	size_t k;

	sp->check_due += (uint64_t)sp->nr_gated * g->w->period_ns * sp->clock_every;
	k = (size_t)(sp->check_due / SAMPLER_RESCAN_NS);
	sp->check_due %= SAMPLER_RESCAN_NS;
	for (size_t i = 0; i < k && i < sp->nr_gated; i++) {
		struct tracee_thread *th;

		if (sp->check_pos >= sp->nr_gated)
			sp->check_pos = 0;
		th = sp->gated[sp->check_pos++];
		if (sampler_idle_check(g->t, th, th->user, g->now) != IDLE_STILL) {
			sp->ref_valid = 0;
			return 0;
		}
	}
	return 1;
}

/* The gate at a tick, after every active thread was visited and before any is interrupted:
 * per process with gated threads (or threads ready to join), the run times of the others,
 * then its clock; a process whose gate did not hold is rescanned (sampler_gate_credit() counts
 * the others' gated threads later). Threads to interrupt go to @g->stop. The work is in the
 * active threads, not the gated ones, but for a rescan. */
void sampler_gate_tick(struct gate_ctx *g)
{
	struct tracee *t = g->t;
	uint64_t tick = g->st->ticks;

	if (g->o->cpu_mode || g->o->no_idle_reuse)
		return;
	gate_recheck(g);
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct sproc *sp = sampler_proc_of(t->procs[i]);

		sp->nr_cand = 0;
		sp->pass = 0;
	}
	for (size_t i = 0; i < g->w->nr_active; i++) {
		struct tracee_thread *th = g->w->active[i];
		struct sthread *s = th->user;

		if (s->tick == tick && gate_fits(th, s, g->now))
			sampler_proc_of(th->proc)->nr_cand++;
	}
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct tracee_proc *p = t->procs[i];
		struct sproc *sp = p->user;
		uint64_t u;

		if (!sp->nr_gated || !sp->ref_valid)
			continue;
		if (!gate_due(g, sp)) {
			sp->pass = 1;
			continue;
		}
		if (!gate_spot_check(g, sp))
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

/* Where the gate held: its gated threads' ticks counted at a stroke (the epoch), a slice of
 * them queued (each about every SAMPLER_GATED_FLUSH_NS). */
static void gate_count(struct gate_ctx *g, struct sproc *sp)
{
	size_t slice;

	sp->epoch += 1 + g->missed;
	g->st->gated += (1 + g->missed) * sp->nr_gated;
	if (!sp->nr_gated)
		return;
	sp->flush_due += (uint64_t)sp->nr_gated * g->w->period_ns * (1 + g->missed);
	slice = (size_t)(sp->flush_due / SAMPLER_GATED_FLUSH_NS);
	sp->flush_due %= SAMPLER_GATED_FLUSH_NS;
	for (size_t i = 0; i < slice && i < sp->nr_gated; i++) {
		struct tracee_thread *th;

		if (sp->flush_pos >= sp->nr_gated)
			sp->flush_pos = 0;
		th = sp->gated[sp->flush_pos++];
		gated_flush(g->w, th, th->user, sp, g->now, g->st, 0);
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
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct sproc *sp = sampler_proc_of(t->procs[i]);

		if (sp->pass) {
			gate_count(g, sp);
			any = 1;
		}
	}
	for (size_t i = g->w->nr_active; any && i-- > 0;) {
		struct tracee_thread *th;
		struct sthread *s;
		struct sproc *sp;

		if (i >= g->w->nr_active)
			continue;
		th = g->w->active[i];
		s = th->user;
		sp = th->proc->user;
		if (sp->pass && s->tick == tick && s->run_tick == tick &&
		    gate_fits(th, s, g->now) &&
		    s->run_ns == s->idle_ss.run_ns) { /* (not run since: the read used) */
			gate_join(g, th, s, sp);
			sp->ref += s->run_ns;
		}
	}
}

void sampler_gate_finish(struct tracee *t, struct worker *w, struct sampler_stats *st)
{
	uint64_t now = monotime_ns();

	for (size_t i = 0; i < t->nr_procs; i++) {
		struct sproc *sp = t->procs[i]->user;

		for (size_t j = 0; sp && j < sp->nr_gated; j++)
			gated_flush(w, sp->gated[j], sp->gated[j]->user, sp, now, st, 1);
	}
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct sthread *s = t->threads[i]->user;

		if (s)
			s->listed = 0;
	}
	free(w->active);
	w->active = NULL;
	w->nr_active = w->alloc_active = w->nr_gated = 0;
}
