/* bench-chain: the CPU-bound slowdown target. Sleeps -d MS (so a profiler can attach), then
 * runs -n units of the 28-level chain on the main thread (-t 0) or on each of -t N workers,
 * and prints "work_s W cpu_s C units U" (W: wall time of the work, measured by itself).
 * -f: run until killed (the dump target). -i ITERS: leaf iterations per unit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static long units = 60000;
static int forever;
static pthread_barrier_t start;

static void run_units(uint64_t seed)
{
	uint64_t x = seed | 1;

	for (long i = 0; forever || i < units; i++)
		x = bench_chain(x, 0);
	bench_sink += x;
}

static void *worker(void *arg)
{
	pthread_barrier_wait(&start);
	run_units((uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL);
	return NULL;
}

int main(int argc, char **argv)
{
	double delay_ms = 300, t0, t1, c0;
	int threads = 0;
	pthread_t tids[256];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n"))
			units = (long)bench_num("-n", argv[++i]);
		else if (!strcmp(argv[i], "-t"))
			threads = (int)bench_num("-t", argv[++i]);
		else if (!strcmp(argv[i], "-d"))
			delay_ms = bench_num("-d", argv[++i]);
		else if (!strcmp(argv[i], "-i"))
			bench_leaf_iters = (unsigned int)bench_num("-i", argv[++i]);
		else if (!strcmp(argv[i], "-f"))
			forever = 1;
		else {
			fprintf(
			    stderr,
			    "usage: bench-chain [-n UNITS] [-t THREADS] [-d MS] [-i ITERS] [-f]\n");
			return 64;
		}
	}
	if (threads < 0 || threads > 256)
		return 64;
	pthread_barrier_init(&start, NULL, (unsigned int)threads + 1);
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	bench_sleep_ms(delay_ms);
	c0 = bench_process_cpu();
	t0 = bench_now();
	if (threads) {
		pthread_barrier_wait(&start);
		for (int i = 0; i < threads; i++)
			pthread_join(tids[i], NULL);
	} else {
		run_units(0x2545f4914f6cdd1dULL);
	}
	t1 = bench_now();
	printf("work_s %.6f cpu_s %.6f units %ld\n", t1 - t0, bench_process_cpu() - c0,
	       units * (threads ? threads : 1));
	return 0;
}
