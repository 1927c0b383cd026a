/* threads4 target: `threads4 SECONDS`. Each thread repeats cycles of random length (5-15 ms, so
 * no sampling rate aliases with them): burn for its share of the cycle's wall time, then
 * clock_nanosleep to the cycle's end. At the end each thread prints
 *   share wA <cpu_seconds> <burn_wall_seconds> <window_seconds>
 * cpu = CLOCK_THREAD_CPUTIME_ID over the window, burn_wall = wall time spent inside burn_X
 * (running or waiting for a CPU), window = the thread's measuring window. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "target_common.h"
#include "threads4.h"

struct worker {
	const char *name;
	void (*burn)(double until, unsigned long *state);
	double share;
	double seconds;
	double cpu, burn_wall, window;
	pthread_t thread;
};

static pthread_barrier_t start_barrier;

static void sleep_until(double t)
{
	struct timespec ts = {.tv_sec = (time_t)t};

	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int seed = (unsigned int)(w->share * 1000) + 1;
	unsigned long state = seed;
	double start, end, cpu0, now;

	pthread_setname_np(pthread_self(), w->name);
	pthread_barrier_wait(&start_barrier);
	start = target_now();
	cpu0 = target_thread_cpu();
	end = start + w->seconds;
	for (now = start; now < end; now = target_now()) {
		double cycle = 0.005 + 0.010 * ((double)rand_r(&seed) / RAND_MAX);
		double burn_end = now + cycle * w->share;
		double t0;

		if (w->share > 0) {
			t0 = target_now();
			w->burn(burn_end, &state);
			w->burn_wall += target_now() - t0;
		}
		if (w->share < 1)
			sleep_until(now + cycle);
	}
	w->cpu = target_thread_cpu() - cpu0;
	w->window = target_now() - start;
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker workers[] = {
	    {.name = "wA", .burn = burn_a, .share = 1.0},
	    {.name = "wB", .burn = burn_b, .share = 0.7},
	    {.name = "wC", .burn = burn_c, .share = 0.4},
	    {.name = "wD", .burn = burn_d, .share = 0.1},
	};
	double seconds = target_arg(argc, argv, 1, 3.0);
	size_t i, n = sizeof(workers) / sizeof(workers[0]);

	target_allow_ptrace();
	pthread_barrier_init(&start_barrier, NULL, (unsigned int)n + 1);
	for (i = 0; i < n; i++) {
		workers[i].seconds = seconds;
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	pthread_barrier_wait(&start_barrier);
	target_ready();
	for (i = 0; i < n; i++)
		pthread_join(workers[i].thread, NULL);
	for (i = 0; i < n; i++)
		printf("share %s %.6f %.6f %.6f\n", workers[i].name, workers[i].cpu,
		       workers[i].burn_wall, workers[i].window);
	return 0;
}
