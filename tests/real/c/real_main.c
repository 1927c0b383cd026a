/* The C oracle program: main starts one thread per blocking call, each at the end of a known
 * call chain (real_chain.c), prints "ready", then waits in pthread_join. The driver
 * (tests/real/oracle.py) waits until every thread sleeps in a system call, then compares
 * `perch dump` with gdb. Argument: the depth of the "deep" thread's recursion (0: no such
 * thread). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "real.h"

int real_pipe_rd[2];
sem_t real_sem;
pthread_mutex_t real_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t real_cv = PTHREAD_COND_INITIALIZER;
volatile int real_sink;
static int deep_depth;

static void on_usr1(int sig)
{
	sg_h(real_pipe_rd[0] + sig - SIGUSR1);
}

static void *thr_reader(void *arg)
{
	rd_a(real_pipe_rd[0]);
	return arg;
}

static void *thr_sleeper(void *arg)
{
	sl_a();
	return arg;
}

static void *thr_sem(void *arg)
{
	sm_a();
	return arg;
}

static void *thr_cond(void *arg)
{
	cv_a();
	return arg;
}

static void *thr_deep(void *arg)
{
	real_sink += rec(deep_depth, real_pipe_rd[0]);
	return arg;
}

static void *thr_tail(void *arg)
{
	tail_a(real_pipe_rd[0]);
	return arg;
}

static void *thr_sig(void *arg)
{
	sg_a();
	return arg;
}

static void *thr_poll(void *arg)
{
	pl_a(real_pipe_rd[0]);
	return arg;
}

static pthread_t start(void *(*fn)(void *), const char *name)
{
	pthread_t t;
	pthread_attr_t a;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 8 << 20);
	if (pthread_create(&t, &a, fn, NULL)) {
		perror("pthread_create");
		exit(1);
	}
	pthread_setname_np(t, name);
	pthread_attr_destroy(&a);
	return t;
}

NOINLINE static void main_wait(pthread_t t)
{
	pthread_join(t, NULL);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t first;

	deep_depth = argc > 1 ? atoi(argv[1]) : 0;
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (pipe(real_pipe_rd) || sem_init(&real_sem, 0, 0)) {
		perror("setup");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	first = start(thr_reader, "reader");
	start(thr_sleeper, "sleeper");
	start(thr_sem, "sem");
	start(thr_cond, "cond");
	start(thr_tail, "tail");
	start(thr_sig, "sig");
	start(thr_poll, "poll");
	if (deep_depth > 0)
		start(thr_deep, "deep");
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	main_wait(first);
	return 0;
}
