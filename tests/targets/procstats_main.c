/* procstats target: known CPU, memory and blocking behaviour for the timeline and stall tests.
 *   procstats duty SECONDS     thread "duty" burns 50 ms of its own CPU time, then sleeps
 *                              until its CPU time is half the time since it started (a 50%
 *                              duty cycle in 100 ms steps, catching up after waits for a CPU)
 *   procstats alloc SECONDS    after "go" on stdin: malloc(200 MB), touch every page, print
 *                              "allocated"; then wait
 *   procstats stall SECONDS    the main thread works 1.5 s, then blocks 500 ms in nanosleep,
 *                              over and over (the first block starts right after ready)
 *   procstats maps N SECONDS   N separate anonymous mappings, touched; then wait
 * Each exits after SECONDS. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static double seconds;

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts))
		;
}

static void __attribute__((noinline)) burn_cpu(double s)
{
	double until = target_thread_cpu() + s;
	volatile double x = 0;

	while (target_thread_cpu() < until)
		for (int i = 0; i < 10000; i++)
			x += 1;
}

/* 50 ms of CPU, then sleep until CPU time is half the time since the start: a waiting for a
 * busy CPU is made up for, so the thread stays at 50% as long as it can get that much. */
static void *duty(void *arg)
{
	double start = target_now(), cpu0 = target_thread_cpu();

	for (;;) {
		double wake;

		burn_cpu(0.050);
		wake = start + 2 * (target_thread_cpu() - cpu0);
		if (wake > target_now())
			sleep_s(wake - target_now());
	}
	return arg;
}

static int run_duty(double end)
{
	pthread_t t;

	pthread_create(&t, NULL, duty, NULL);
	pthread_setname_np(t, "duty");
	target_ready();
	while (target_now() < end)
		sleep_s(0.05);
	return 0;
}

static int run_alloc(double end)
{
	size_t size = 200u << 20;
	char line[64];
	char *p;

	target_ready();
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	p = malloc(size);
	if (!p)
		return 1;
	memset(p, 0x5a, size);
	printf("allocated %p\n", (void *)p);
	fflush(stdout);
	while (target_now() < end)
		sleep_s(0.05);
	free(p);
	return 0;
}

static void __attribute__((noinline)) block_500ms(void)
{
	sleep_s(0.5);
}

/* Work in small, changing steps (no single stack for long). */
static void __attribute__((noinline)) step_a(void)
{
	burn_cpu(0.002);
}

static void __attribute__((noinline)) step_b(void)
{
	burn_cpu(0.002);
}

static void __attribute__((noinline)) work_wall(double s)
{
	double until = target_now() + s;

	while (target_now() < until) {
		step_a();
		step_b();
	}
}

/* Awake 100 times a second for a moment, as a UI or event loop's main thread: off-CPU at
 * nearly every tick of a profiler, yet never stalled. */
static void __attribute__((noinline)) tick_10ms(double s)
{
	double until = target_now() + s;

	while (target_now() < until) {
		burn_cpu(0.0001);
		usleep(10000);
	}
}

/* Blocked 500 ms, then busy for 1.5 s (@ticking: waking every 10 ms instead), and again. */
static int run_stall(double end, int ticking)
{
	target_ready();
	while (target_now() < end) {
		block_500ms();
		if (ticking)
			tick_10ms(1.5);
		else
			work_wall(1.5);
	}
	return 0;
}

static int run_maps(long n, double end)
{
	long page = sysconf(_SC_PAGESIZE);

	for (long i = 0; i < n; i++) {
		/* alternating protections keep neighbours from merging into one mapping */
		char *p = mmap(NULL, (size_t)page, PROT_READ | (i & 1 ? PROT_WRITE : 0),
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		if (i & 1)
			p[0] = 1;
	}
	target_ready();
	while (target_now() < end)
		sleep_s(0.05);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	target_allow_ptrace();
	if (!strcmp(mode, "maps")) {
		long n = (long)target_arg(argc, argv, 2, 1000);

		seconds = target_arg(argc, argv, 3, 10);
		return run_maps(n, target_now() + seconds);
	}
	seconds = target_arg(argc, argv, 2, 10);
	if (!strcmp(mode, "duty"))
		return run_duty(target_now() + seconds);
	if (!strcmp(mode, "alloc"))
		return run_alloc(target_now() + seconds);
	if (!strcmp(mode, "stall") || !strcmp(mode, "stall-ticks"))
		return run_stall(target_now() + seconds, !strcmp(mode, "stall-ticks"));
	fprintf(stderr, "usage: procstats duty|alloc|stall SECONDS | maps N SECONDS\n");
	return 64;
}
