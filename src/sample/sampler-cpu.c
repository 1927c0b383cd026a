/* cpu mode: which runnable threads were on a CPU at a tick, and what their stops count for.
 *
 * A thread that reads 'R' at a tick is either running or waiting for a CPU (woken from a
 * blocking call, or preempted), and perf's cpu-clock counts only the first: its timer fires
 * on the CPU, so a sample is always the thread that ran there. Interrupting every runnable
 * thread and weighing its stop by its run time since its previous stop (what perch did before,
 * still its rule where the clocks below cannot be read: sampler_cpu_weight()) gets each
 * thread's total right but not the places: a server thread woken from epoll_wait() and
 * waiting for a CPU at the tick stops at that call's exit, and all it ran before it slept
 * counted there (redis under redis-benchmark on one CPU: epoll_wait 58% against perf's 36%).
 *
 * At a tick perch takes every CPU a target thread ran on: a holder there (sampler-hold.h), or
 * the ptrace thread itself on its own CPU, preempts whatever runs. The scheduler accounts the
 * switch with one read of the run queue's task clock: the preempted thread's se.exec_start and
 * the taker's become the same value (__schedule(): update_curr() of the one going out, then
 * set_next_task() of the one coming in). Each taker reads its own exec_start from
 * /proc/thread-self/sched as it takes the CPU; a runnable thread whose exec_start
 * (/proc/PID/task/TID/sched) equals its CPU's taker's was on that CPU at the tick (CPU_ON,
 * counted 1 tick where its stop shows it was), any other was waiting (CPU_OFF: no sample and
 * no stop at all). A thread on a CPU perch did not take (no holder armed there, or it came
 * too late) is interrupted all the same (CPU_UNSEEN), and its stop counts only if it was not
 * switched in between (schedstat's switch-in count unchanged: it ran from the tick to its
 * stop).
 *
 * The ticks say where a thread ran; its own run time says how much (ran_weight()). Counting
 * one per tick that found it on a CPU is biased where perch shares the CPU: perch works right
 * after a tick, never at it, so the target is found running at more ticks than its share of
 * the CPU, and the threads perch just stopped run in a different order than they would (four
 * threads pinned to one CPU with 94% of it: 98% of the ticks found one of them, 1970 samples
 * for 1899 periods of CPU time, the 10%-duty thread -7..-20% and the others up to +16%). So a
 * counted stop weighs the thread's run time since its previous counted stop (schedstat), as in
 * sampler_cpu_weight(), and lands where the tick found it running: its samples add up to its
 * CPU time and their places are those of the ticks. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/proc/proc-task.h"
#include "sampler-int.h"

void sampler_cpu_init(struct worker *w)
{
	w->self_sched_fd = -1;
	if (!w->cpu_mode)
		return;
	w->self_sched_fd = proc_sched_open_self();
	w->stamps = w->self_sched_fd >= 0;
	if (!w->stamps)
		log_info(
		    "cpu mode: the task clocks (/proc/PID/task/TID/sched) cannot be read here: "
		    "samples weigh their thread's run time since its previous stop, and threads "
		    "that wait for a CPU after a wakeup show at the call they woke from");
}

int sampler_cpu_pin_self(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

void sampler_cpu_release(struct worker *w)
{
	if (w->self_sched_fd >= 0)
		close(w->self_sched_fd);
	w->self_sched_fd = -1;
}

void sampler_cpu_stamp_self(struct worker *w, uint64_t fire)
{
	if (!w->stamps)
		return;
	w->self_cpu = sched_getcpu();
	w->self_taken = proc_sched_read_exec_start(w->self_sched_fd);
	w->self_fire = fire;
}

/* The task clock of @th's last switch. 0 when it cannot be read. */
static uint64_t thread_exec_start(struct tracee *t, struct tracee_thread *th, struct sthread *s)
{
	char buf[SAMPLER_SCHED_TEXT];
	uint64_t ns;

	if (sampler_read_task_file(t, th, &s->sched_fd, "sched", buf, sizeof(buf)) < 0 ||
	    proc_sched_exec_start(buf, &ns) < 0)
		return 0;
	return ns;
}

int sampler_cpu_seen(struct tracee *t, struct tracee_thread *th, struct sthread *s,
		     struct tick_hold *hd)
{
	struct worker *w = hd->w;
	uint64_t taken = 0, mine;

	if (!w->stamps || s->cpu < 0)
		return CPU_UNSEEN;
	if (s->cpu == hd->self) {
		/* the ptrace thread runs there: a target thread ran there at the tick only if
		 * the ptrace thread woke for it and took the CPU from that thread */
		if (w->self_fire != hd->fire || w->self_cpu != hd->self || !w->self_taken)
			return CPU_OFF;
		taken = w->self_taken;
	} else if (!hd->h || hd->released ||
		   !sampler_hold_wait(hd->h, s->cpu, hd->self, hd->fire, hd->deadline, &taken) ||
		   !taken) {
		return CPU_UNSEEN;
	}
	mine = thread_exec_start(t, th, s);
	if (!mine)
		return CPU_UNSEEN;
	return mine == taken ? CPU_ON : CPU_OFF;
}

int sampler_cpu_ran_since(struct tracee *t, struct tracee_thread *th, struct sthread *s)
{
	uint64_t before = s->run_ns;
	int known = s->run_tick != 0;
	struct schedstat ss;

	s->run_tick = s->tick ? s->tick : 1;
	if (sampler_peek_schedstat(t, th, s, &ss) < 0)
		return 0;
	s->run_ns = ss.run_ns;
	return !known || ss.run_ns != before;
}

/* The weight of a counted stop (or blocked visit) of @s that the ticks found on a CPU @ticks
 * times: its run time since its previous counted one (@ss: its schedstat now, NULL when it
 * cannot be read: then @ticks), in periods, rounded with the rest carried to the next, 0 when
 * nothing is due yet. Its first counts @ticks (its run time before is not known). */
static uint32_t ran_weight(struct sthread *s, const struct schedstat *ss, uint32_t ticks,
			   uint64_t period_ns)
{
	uint64_t n;

	if (!ss || !s->cpu_known || ss->run_ns < s->cpu_run)
		s->cpu_due += (int64_t)ticks * SAMPLER_PPM;
	else
		s->cpu_due +=
		    (int64_t)((double)(ss->run_ns - s->cpu_run) / (double)period_ns * SAMPLER_PPM);
	if (ss) {
		s->cpu_known = 1;
		s->cpu_run = ss->run_ns;
	}
	if (s->cpu_due < SAMPLER_PPM / 2)
		return 0;
	n = ((uint64_t)s->cpu_due + SAMPLER_PPM / 2) / SAMPLER_PPM;
	s->cpu_due -= (int64_t)(n * SAMPLER_PPM);
	return n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

/* A thread found blocked that ran since the previous tick: if it was on its CPU when perch
 * took it (it blocked right then, in the kernel on its way to sleep: the time perf counts in
 * that call), one sample where it blocks, read from /proc without a stop. */
static void blocked_visit(struct tracee *t, struct tracee_thread *th, struct sthread *s,
			  struct tick_hold *hd, int seen, struct sampler_stats *st)
{
	struct worker *w = hd->w;
	uint32_t late = s->late_ticks, n;
	/* (its run time as sampler_cpu_ran_since() read it at this tick, which made it a
	 * candidate) */
	struct schedstat ss = {.run_ns = s->run_ns};

	if (seen != CPU_ON)
		return;
	n = ran_weight(s, s->run_tick == s->tick ? &ss : NULL, s->tick_weight, w->period_ns);
	if (!n)
		return;
	s->has_syscall = sampler_read_task_file(t, th, &s->syscall_fd, "syscall", s->syscall,
						sizeof(s->syscall)) > 0;
	s->late_ticks = n - 1;
	if (sampler_sample_blocked(w, th, s, sampler_arch_of(th, NULL), 'R', st) == 0) {
		st->oncpu_blocking++;
		st->cpu_weight += n;
	}
	s->late_ticks = late;
}

int sampler_cpu_visit(struct tracee *t, struct tracee_thread *th, struct tick_hold *hd,
		      struct sampler_stats *st)
{
	struct sthread *s = sampler_thread_of(th);
	int seen = sampler_cpu_seen(t, th, s, hd);
	struct schedstat ss;

	if (s->state != 'R') {
		blocked_visit(t, th, s, hd, seen, st);
		return 0;
	}
	if (th->state == TRACEE_INTERRUPTING) {
		/* its stop is still pending (a long system call, or waiting for a CPU) */
		if (seen == CPU_ON)
			s->cpu_ticks += s->tick_weight;
		else if (seen == CPU_UNSEEN && s->cpu_unseen)
			s->cpu_unseen_ticks += s->tick_weight;
		return 0;
	}
	if (seen == CPU_OFF) {
		st->waiting++;
		return 0;
	}
	if (seen == CPU_ON) {
		s->cpu_ticks += s->tick_weight;
		st->oncpu++;
		return 1;
	}
	/* not seen: counted at its stop if it runs on until then (its switch-in count now) */
	if (!s->cpu_unseen) {
		if (sampler_peek_schedstat(t, th, s, &ss) < 0)
			return 0;
		s->cpu_unseen = 1;
		s->cpu_unseen_slices = ss.slices;
		s->cpu_unseen_ticks = 0;
	}
	s->cpu_unseen_ticks += s->tick_weight;
	st->unseen++;
	return 1;
}

/* cpu mode where the task clocks cannot be read (no /proc/PID/task/TID/sched: kernels before
 * 6.16 without CONFIG_SCHED_DEBUG): what a stop of a running thread counts for, the rule perch
 * used before it could see who was on a CPU at a tick. Its places are biased where threads
 * share CPUs or sleep between ticks (the run time before a sleep counts at the stop that ends
 * the next wait, at the blocking call's exit), which the summary says. Found runnable ('R') at a
 * tick, a thread that shares its CPU may be running or waiting for it, and perf's cpu-clock counts
 * only its time on a CPU. So each stop counts the thread's run time since its previous stop
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
static uint32_t sampler_cpu_weight(struct sthread *s, const struct schedstat *ss,
				   uint64_t period_ns)
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

uint32_t sampler_cpu_stop_weight(struct worker *w, struct sthread *s, const struct schedstat *ss,
				 struct sampler_stats *st)
{
	uint32_t n;

	if (!w->stamps)
		return ss ? sampler_cpu_weight(s, ss, w->period_ns) : 1;
	n = s->cpu_ticks;
	if (s->cpu_unseen && ss && ss->slices == s->cpu_unseen_slices) {
		n += s->cpu_unseen_ticks;
		st->unseen_counted++;
	}
	s->cpu_ticks = 0;
	s->cpu_unseen = 0;
	s->cpu_unseen_ticks = 0;
	return n ? ran_weight(s, ss, n, w->period_ns) : 0;
}
