/* faults-victim target: `faults-victim SECONDS`. Three threads ("victim-0".."victim-2") repeat a
 * fixed computation and count rounds whose result differs from the first (a tracer that
 * corrupts registers or memory makes bad rounds); main also creates and joins a short thread
 * every 5 ms, so a tracer is often in the middle of a clone. Runs until SECONDS have passed or
 * SIGTERM, then prints "victim rounds R0 R1 R2 bad B spawned S" and exits 0. Used by the kill,
 * crash and full-disk scenarios: perch ends around it while it keeps running. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "target_common.h"

#define VICTIM_THREADS 3

static volatile uint64_t victim_seed = 1469598103934665603ULL;
static volatile sig_atomic_t stop;
static double end_time;
static pthread_barrier_t start_barrier;
static long rounds[VICTIM_THREADS], bad[VICTIM_THREADS];

static __attribute__((noinline)) uint64_t victim_round(void)
{
	uint64_t h = victim_seed;

	for (uint32_t i = 0; i < 20000; i++)
		h = (h ^ i) * 1099511628211ULL;
	return h;
}

static void *victim_worker(void *arg)
{
	long i = (long)arg;
	char name[16];
	uint64_t first;

	snprintf(name, sizeof(name), "victim-%ld", i);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&start_barrier);
	first = victim_round();
	while (!stop && target_now() < end_time) {
		if (victim_round() != first)
			bad[i]++;
		rounds[i]++;
	}
	return NULL;
}

static void *victim_short(void *arg)
{
	return arg;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	pthread_t th[VICTIM_THREADS], s;
	long spawned = 0, total_bad = 0;
	struct sigaction sa;

	end_time = target_now() + target_arg(argc, argv, 1, 10);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	target_allow_ptrace();
	pthread_barrier_init(&start_barrier, NULL, VICTIM_THREADS + 1);
	for (long i = 0; i < VICTIM_THREADS; i++)
		pthread_create(&th[i], NULL, victim_worker, (void *)i);
	pthread_barrier_wait(&start_barrier);
	target_ready();
	while (!stop && target_now() < end_time) {
		struct timespec ts = {0, 5 * 1000 * 1000};

		if (!pthread_create(&s, NULL, victim_short, NULL)) {
			pthread_join(s, NULL);
			spawned++;
		}
		nanosleep(&ts, NULL);
	}
	stop = 1;
	for (int i = 0; i < VICTIM_THREADS; i++) {
		pthread_join(th[i], NULL);
		total_bad += bad[i];
	}
	printf("victim rounds %ld %ld %ld bad %ld spawned %ld\n", rounds[0], rounds[1], rounds[2],
	       total_bad, spawned);
	return 0;
}
