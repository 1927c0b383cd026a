/* idlewake target: what perch's idle gate (src/sample/sampler-gate.c) must keep right,
 * measured by the target itself.
 *
 *   idlewake SECONDS NAP_MS BURST_MS
 *
 * Thread "idler" waits on a condition variable in idle_wait() for the whole run: it never
 * runs. Thread "waker" alternates: asleep in nap_a() for NAP_MS, busy in burst() for
 * BURST_MS, asleep in nap_b() for NAP_MS, busy in burst() again, and so on. After each short
 * burst it sleeps at the other place, so a profiler that missed a wakeup would go on counting
 * the old one. At the end each thread prints
 *   truth NAME TID wall_s T a_pct A b_pct B burst_pct U r_sched_pct K wakes N
 * A, B and U are the shares of its wall time spent in nap_a(), nap_b() and burst() (from
 * entering each to entering the next, CLOCK_MONOTONIC: a nap lasts until the thread is back
 * from clock_nanosleep); K is 100 * (CPU time + run-queue wait) / wall from
 * /proc/self/task/TID/schedstat, the share of time it was running or runnable; N is the
 * number of bursts. The idler's A is the share of its time in idle_wait(). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static double secs, nap_ms, burst_ms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;
static pthread_barrier_t start;

/* CPU time plus run-queue wait of this thread, in seconds (-1 when unreadable). */
static double sched_s(void)
{
	double run, wait;

	return target_schedstat(&run, &wait) < 0 ? -1 : run + wait;
}

static void report(const char *name, double wall, double a, double b, double u, double k, int wakes)
{
	pthread_mutex_lock(&lock);
	printf("truth %s %d wall_s %.6f a_pct %.2f b_pct %.2f burst_pct %.2f r_sched_pct %.2f "
	       "wakes %d\n",
	       name, (int)gettid(), wall, 100 * a / wall, 100 * b / wall, 100 * u / wall,
	       100 * k / wall, wakes);
	fflush(stdout);
	pthread_mutex_unlock(&lock);
}

static __attribute__((noinline)) void idle_wait(void)
{
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void *idler(void *arg)
{
	double k0, t0;

	pthread_setname_np(pthread_self(), "idler");
	pthread_barrier_wait(&start);
	k0 = sched_s();
	t0 = target_now();
	idle_wait();
	{
		double wall = target_now() - t0;

		report("idler", wall, wall, 0, 0, sched_s() - k0, 0);
	}
	return arg;
}

static __attribute__((noinline)) void nap_a(uint64_t until)
{
	target_sleep_until_ns(until);
}

/* A bigger frame than nap_a()'s: the system call then has another user SP. perch tells
 * blocked places apart by the SP and PC of their system call alone (sampler_blocked_site() in
 * src/sample/sampler-thread.c), so with equal frames the two naps would be one place to it, a known
 * limit that this target does not test. */
static __attribute__((noinline)) void nap_b(uint64_t until)
{
	volatile char pad[256];

	pad[0] = 1;
	target_sleep_until_ns(until + (uint64_t)pad[0] - 1);
}

static __attribute__((noinline)) uint64_t burst(uint64_t until, uint64_t x)
{
	do {
		for (int i = 0; i < 100; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	} while (target_now_ns() < until);
	return x;
}

static void *waker(void *arg)
{
	uint64_t end, t, a = 0, b = 0, u = 0, x = 1;
	double k0, t0;
	int wakes = 0;

	pthread_setname_np(pthread_self(), "waker");
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_barrier_wait(&start);
	k0 = sched_s();
	t0 = target_now();
	t = target_now_ns();
	end = t + (uint64_t)(secs * 1e9);
	for (int which = 0; t < end; which ^= 1) {
		uint64_t wake = t + (uint64_t)(nap_ms * 1e6), stop;

		if (wake > end)
			wake = end;
		if (which)
			nap_b(wake);
		else
			nap_a(wake);
		stop = target_now_ns();
		*(which ? &b : &a) += stop - t;
		if (stop >= end)
			break;
		x = burst(stop + (uint64_t)(burst_ms * 1e6), x);
		t = target_now_ns();
		u += t - stop;
		wakes++;
	}
	report("waker", target_now() - t0, (double)a / 1e9, (double)b / 1e9, (double)u / 1e9,
	       sched_s() - k0, wakes);
	return arg ? arg : (void *)(uintptr_t)x;
}

int main(int argc, char **argv)
{
	pthread_t ti, tw;

	secs = target_arg(argc, argv, 1, 5);
	nap_ms = target_arg(argc, argv, 2, 300);
	burst_ms = target_arg(argc, argv, 3, 2);
	if (secs <= 0 || nap_ms <= 0 || burst_ms <= 0) {
		fprintf(stderr, "usage: idlewake SECONDS NAP_MS BURST_MS\n");
		return 64;
	}
	target_allow_ptrace();
	pthread_barrier_init(&start, NULL, 3);
	pthread_create(&ti, NULL, idler, NULL);
	pthread_create(&tw, NULL, waker, NULL);
	pthread_barrier_wait(&start);
	target_ready();
	pthread_join(tw, NULL);
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(ti, NULL);
	return 0;
}
