/* difflib target: `difflib SECONDS LIBRARY FIRST`, for the diff suite's pairing across runs
 * (tests/e2e/check_diffpair.c). It dlopen()s LIBRARY, a build of difflib_lib.c under a
 * versioned file name (libdifflib.so.1.2 or libdifflib.so.1.3, diffwork.mk), starts three pool
 * threads named "worker-FIRST" to "worker-FIRST+2" (numbered differently in each run, as pools
 * are) that call its lib_work() the whole time, prints "ready" and lets the main thread run
 * main_work() for SECONDS. Every thread only computes. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "target_common.h"

#define NOINLINE __attribute__((noinline))
#define WORKERS	 3

static void (*lib_work)(void);
static volatile int stop;
volatile unsigned long difflib_sink;

NOINLINE void main_work(void)
{
	for (long i = 0; i < 400000L; i++)
		difflib_sink += (unsigned long)i * 7;
}

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	while (!stop)
		lib_work();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = target_arg(argc, argv, 1, 2.0), end;
	int first = (int)target_arg(argc, argv, 3, 1);
	pthread_t t[WORKERS];
	void *h;

	if (argc < 3) {
		fprintf(stderr, "usage: difflib SECONDS LIBRARY FIRST\n");
		return 64;
	}
	h = dlopen(argv[2], RTLD_NOW);
	if (!h || !(lib_work = (void (*)(void))dlsym(h, "lib_work"))) {
		fprintf(stderr, "difflib: %s\n", dlerror());
		return 1;
	}
	target_allow_ptrace();
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)(first + i)))
			return 1;
	target_ready();
	for (end = target_now() + seconds; target_now() < end;)
		main_work();
	stop = 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
