/* bench-long: the memory target. -t N threads (default 50) for -s SEC, each entering the
 * 28-level chain at a random level and ending in one of four leaves (112 distinct stacks per
 * thread), and sleeping 0-2 ms after about one unit in eight, so the mix of stacks keeps
 * changing for the whole run. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static double stop_at;

static void *worker(void *arg)
{
	uint64_t rng = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL | 1, x = 1;

	while (bench_now() < stop_at) {
		uint64_t r = bench_rand(&rng);

		x = bench_chain_from((int)(r % BENCH_LEVELS), x, (int)(r >> 8) & 3);
		if ((r >> 16) % 8 == 0)
			bench_sleep_ms((double)((r >> 24) % 2000) / 1000.0);
	}
	bench_sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = 60;
	int threads = 50;
	pthread_t tids[1024];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t"))
			threads = (int)bench_num("-t", argv[++i]);
		else if (!strcmp(argv[i], "-s"))
			secs = bench_num("-s", argv[++i]);
		else if (!strcmp(argv[i], "-i"))
			bench_leaf_iters = (unsigned int)bench_num("-i", argv[++i]);
		else {
			fprintf(stderr, "usage: bench-long [-t THREADS] [-s SEC] [-i ITERS]\n");
			return 64;
		}
	}
	if (threads < 1 || threads > 1024)
		return 64;
	stop_at = bench_now() + secs;
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
