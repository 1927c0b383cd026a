/* crowd target: `crowd N SECONDS`. N threads, named "c0".."cN-1", each blocked for the whole
 * run in one of three places chosen by its index (i % 3): crowd_cond() in pthread_cond_wait,
 * crowd_pipe() in read() on a pipe nobody writes, crowd_sleep() in nanosleep, plus the main
 * thread, which prints "ready PID" once every thread is in place and then sleeps until
 * SECONDS have passed. A thread's place is the target's own design: a tester knows where
 * each thread must be from its name alone. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t placed;
static int pipe_fd[2];

static __attribute__((noinline)) void crowd_cond(void)
{
	pthread_barrier_wait(&placed);
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&cond, &lock);
}

static __attribute__((noinline)) void crowd_pipe(void)
{
	char c;

	pthread_barrier_wait(&placed);
	for (;;)
		if (read(pipe_fd[0], &c, 1) <= 0)
			pause();
}

static __attribute__((noinline)) void crowd_sleep(void)
{
	struct timespec ts = {3600, 0};

	pthread_barrier_wait(&placed);
	for (;;)
		nanosleep(&ts, NULL);
}

static void *crowd(void *arg)
{
	long i = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "c%ld", i);
	pthread_setname_np(pthread_self(), name);
	if (i % 3 == 0)
		crowd_cond();
	else if (i % 3 == 1)
		crowd_pipe();
	else
		crowd_sleep();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = (long)target_arg(argc, argv, 1, 2000);
	double seconds = target_arg(argc, argv, 2, 30);
	pthread_attr_t attr;

	target_allow_ptrace();
	if (n < 1 || pipe(pipe_fd) < 0)
		return 1;
	pthread_barrier_init(&placed, NULL, (unsigned)n + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, crowd, (void *)i)) {
			fprintf(stderr, "crowd: thread %ld: cannot create\n", i);
			return 1;
		}
	}
	pthread_barrier_wait(&placed);
	/* (a thread past the barrier is a few instructions from its blocking call) */
	usleep(200000);
	target_ready();
	for (double end = target_now() + seconds; target_now() < end;)
		usleep(100000);
	return 0;
}
