/* toolchain target: `tc-VARIANT [THREADS]` (toolchains.mk builds one per linker and unwind
 * table layout): main -> f1 -> ... -> f12 -> pause(), THREADS threads (default 2) in
 * t1 -> t2 -> t3 -> read() on a pipe nobody writes to, and one more such thread that a signal
 * interrupted in that read(): its handler waits in pause(). Every function keeps a frame of
 * its own (a local array), so code built without frame pointers needs its CFI to be walked. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "target_common.h"

#define TC_NOINLINE __attribute__((noinline, noclone))

volatile int tc_sink;
static int tc_pipe[2];
static volatile sig_atomic_t tc_in_handler;

/* f@n calls @next and works on the result afterwards: no tail call */
#define STEP(n, next)                                                                              \
	TC_NOINLINE void f##n(void)                                                                \
	{                                                                                          \
		volatile char pad[16 + 8 * n];                                                     \
		pad[0] = (char)n;                                                                  \
		next();                                                                            \
		tc_sink += pad[0];                                                                 \
	}

TC_NOINLINE void f12(void)
{
	volatile char pad[40];

	pad[0] = 1;
	target_ready();
	pause();
	tc_sink += pad[0];
}

STEP(11, f12)
STEP(10, f11)
STEP(9, f10)
STEP(8, f9)
STEP(7, f8)
STEP(6, f7)
STEP(5, f6)
STEP(4, f5)
STEP(3, f4)
STEP(2, f3)
STEP(1, f2)

TC_NOINLINE void t3(void)
{
	volatile char pad[24];
	char c;

	pad[0] = 3;
	if (read(tc_pipe[0], &c, 1) > 0)
		tc_sink += c;
	tc_sink += pad[0];
}

#define TSTEP(n, next)                                                                             \
	TC_NOINLINE void t##n(void)                                                                \
	{                                                                                          \
		volatile char pad[32 + 8 * n];                                                     \
		pad[0] = (char)n;                                                                  \
		next();                                                                            \
		tc_sink += pad[0];                                                                 \
	}

TSTEP(2, t3)
TSTEP(1, t2)

static void *thread_main(void *arg)
{
	(void)arg;
	t1();
	return NULL;
}

TC_NOINLINE void on_usr1(int sig)
{
	volatile char pad[48];

	pad[0] = (char)sig;
	tc_in_handler = 1;
	pause();
	tc_sink += pad[0];
}

int main(int argc, char **argv)
{
	int threads = (int)target_arg(argc, argv, 1, 2);
	struct sigaction sa = {.sa_handler = on_usr1};
	pthread_t th;

	target_allow_ptrace();
	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(tc_pipe) < 0) {
		perror("pipe");
		return 1;
	}
	for (int i = 0; i <= threads; i++) {
		if (pthread_create(&th, NULL, thread_main, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	/* the last thread: interrupted in read() by a signal whose handler waits */
	while (!tc_in_handler) {
		pthread_kill(th, SIGUSR1);
		usleep(1000);
	}
	f1();
	return 0;
}
