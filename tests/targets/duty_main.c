/* duty target: threads that alternate running and sleeping, and measure their own truth.
 *
 *   duty SECONDS SPEC...
 *
 * One thread per SPEC, named d0, d1, ...:
 *   pON/OFF      periodic: busy ON ms, then asleep until the next period of ON+OFF ms (an
 *                absolute schedule, so the period stays exact)
 *   rMIN-MAX/P   random bursts: busy for a uniform MIN..MAX ms, then asleep long enough for a
 *                P% duty cycle on average (the sleep is also random, 0.5..1.5 x its mean)
 *   busy         always running (a competitor inside the process)
 * Busy means spinning on the CPU until a wall-clock deadline: the thread is runnable for the
 * whole burst even when it has to wait for a CPU. After SECONDS every thread prints
 *   truth NAME TID cpu_s C wait_s W wall_s T busy_s B r_pct R r_sched_pct K
 * where C is its CPU time (CLOCK_THREAD_CPUTIME_ID), W its run-queue wait (the second field of
 * /proc/self/task/TID/schedstat), T its wall time, B the time from each wakeup it asked for
 * (the timer's expiry; timer slack 1 ns) to the end of the burst that follows, R = 100 * B / T
 * and K = 100 * (C + W) / T. Both are the share of time the thread was running or runnable,
 * which is what a profiler's 'R' state share should show: K from the kernel's accounting, R
 * from the thread's own clock, which also counts the time a profiler kept it stopped during
 * a burst (ptrace-stopped is neither running nor queued; untraced, R and K agree). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

#define DUTY_MAX 16

struct duty {
	char name[16];
	char kind;	    /* 'p', 'r', 'b' */
	double on, off;	    /* ms (periodic) */
	double min, max, p; /* ms, ms, percent (random) */
	double end;	    /* CLOCK_MONOTONIC seconds */
	pthread_barrier_t *start;
};

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((noinline)) uint64_t spin_until(uint64_t end, uint64_t x)
{
	do {
		for (int i = 0; i < 200; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	} while (target_now_ns() < end);
	return x;
}

static double run_delay_s(void)
{
	double run, wait;

	return target_schedstat(&run, &wait) < 0 ? -1 : wait;
}

static double rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (double)(*s >> 11) / 9007199254740992.0;
}

static void *duty_thread(void *arg)
{
	struct duty *d = arg;
	uint64_t x = 1, rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)gettid() * 0x2545f4914f6cdd1dULL;
	uint64_t end, t, busy = 0, last = 0; /* last: when the previous burst ended */
	double c0, w0, t0;

	pthread_setname_np(pthread_self(), d->name);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_barrier_wait(d->start);
	end = (uint64_t)(d->end * 1e9);
	c0 = target_thread_cpu();
	w0 = run_delay_s();
	t0 = target_now();
	/* t: when the thread asked to wake last (it is runnable from then on, or from the end of
	 * the previous burst when it fell behind its schedule) */
	for (t = target_now_ns(); t < end;) {
		uint64_t from = t > last ? t : last;

		if (d->kind == 'b') {
			x = spin_until(end, x);
			busy += target_now_ns() - from;
			break;
		}
		if (d->kind == 'p') {
			uint64_t stop = t + (uint64_t)(d->on * 1e6);

			x = spin_until(stop < end ? stop : end, x);
			last = target_now_ns();
			t += (uint64_t)((d->on + d->off) * 1e6); /* an absolute schedule */
		} else {
			double burst = d->min + (d->max - d->min) * rnd(&rng);
			double sleep = burst * (100.0 - d->p) / d->p * (0.5 + rnd(&rng));
			uint64_t stop = target_now_ns() + (uint64_t)(burst * 1e6);

			x = spin_until(stop < end ? stop : end, x);
			last = target_now_ns();
			t = last + (uint64_t)(sleep * 1e6);
		}
		busy += last - from;
		target_sleep_until_ns(t < end ? t : end);
	}
	{
		double c = target_thread_cpu() - c0, w = run_delay_s() - w0,
		       wall = target_now() - t0;

		pthread_mutex_lock(&out_lock);
		printf("truth %s %d cpu_s %.6f wait_s %.6f wall_s %.6f busy_s %.6f r_pct %.2f "
		       "r_sched_pct %.2f\n",
		       d->name, (int)gettid(), c, w, wall, (double)busy / 1e9,
		       100.0 * (double)busy / 1e9 / wall, 100.0 * (c + w) / wall);
		fflush(stdout);
		pthread_mutex_unlock(&out_lock);
	}
	return (void *)(uintptr_t)x;
}

static int parse(const char *s, struct duty *d)
{
	if (!strcmp(s, "busy")) {
		d->kind = 'b';
		return 0;
	}
	if (s[0] == 'p' && sscanf(s + 1, "%lf/%lf", &d->on, &d->off) == 2 && d->on > 0 &&
	    d->off > 0) {
		d->kind = 'p';
		return 0;
	}
	if (s[0] == 'r' && sscanf(s + 1, "%lf-%lf/%lf", &d->min, &d->max, &d->p) == 3 &&
	    d->min > 0 && d->max >= d->min && d->p > 0 && d->p < 100) {
		d->kind = 'r';
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	static struct duty duties[DUTY_MAX];
	pthread_t threads[DUTY_MAX];
	pthread_barrier_t start;
	double secs = target_arg(argc, argv, 1, 10);
	int n = argc - 2;

	if (n < 1 || n > DUTY_MAX) {
		fprintf(stderr, "usage: duty SECONDS pON/OFF|rMIN-MAX/PCT|busy... (1 to %d)\n",
			DUTY_MAX);
		return 64;
	}
	target_allow_ptrace();
	pthread_barrier_init(&start, NULL, (unsigned int)n + 1);
	for (int i = 0; i < n; i++) {
		if (parse(argv[i + 2], &duties[i]) < 0) {
			fprintf(stderr, "duty: bad spec '%s'\n", argv[i + 2]);
			return 64;
		}
		snprintf(duties[i].name, sizeof(duties[i].name), "d%d", i);
		duties[i].start = &start;
		duties[i].end = target_now() + secs;
		pthread_create(&threads[i], NULL, duty_thread, &duties[i]);
	}
	pthread_barrier_wait(&start);
	target_ready();
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
