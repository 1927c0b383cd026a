/* bench-idle: -i N threads blocked in pthread_cond_wait for the whole run (idle) and -b M busy
 * threads that each run -n units of the 28-level chain after -d MS. Prints "work_s W cpu_s C"
 * (W: wall time until every busy thread is done, measured by itself), then wakes the idle
 * threads and exits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define IDLE_MAX 16384

static long units = 30000;
static int done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t start;

static void *idle_thread(void *arg)
{
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return arg;
}

static void *busy_thread(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL | 1;

	pthread_barrier_wait(&start);
	for (long i = 0; i < units; i++)
		x = bench_chain(x, 0);
	bench_sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t idle[IDLE_MAX], busy[64];
	double delay_ms = 300, t0, c0;
	int nidle = 200, nbusy = 2;
	pthread_attr_t small;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-i"))
			nidle = (int)bench_num("-i", argv[++i]);
		else if (!strcmp(argv[i], "-b"))
			nbusy = (int)bench_num("-b", argv[++i]);
		else if (!strcmp(argv[i], "-n"))
			units = (long)bench_num("-n", argv[++i]);
		else if (!strcmp(argv[i], "-d"))
			delay_ms = bench_num("-d", argv[++i]);
		else {
			fprintf(stderr,
				"usage: bench-idle [-i IDLE] [-b BUSY] [-n UNITS] [-d MS]\n");
			return 64;
		}
	}
	if (nidle < 0 || nidle > IDLE_MAX || nbusy < 1 || nbusy > 64)
		return 64;
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 64 * 1024);
	for (int i = 0; i < nidle; i++)
		if (pthread_create(&idle[i], &small, idle_thread, NULL))
			return 70;
	pthread_barrier_init(&start, NULL, (unsigned int)nbusy + 1);
	for (int i = 0; i < nbusy; i++)
		pthread_create(&busy[i], NULL, busy_thread, (void *)(uintptr_t)(i + 1));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	bench_sleep_ms(delay_ms);
	c0 = bench_process_cpu();
	t0 = bench_now();
	pthread_barrier_wait(&start);
	for (int i = 0; i < nbusy; i++)
		pthread_join(busy[i], NULL);
	printf("work_s %.6f cpu_s %.6f\n", bench_now() - t0, bench_process_cpu() - c0);
	fflush(stdout);
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < nidle; i++)
		pthread_join(idle[i], NULL);
	return 0;
}
