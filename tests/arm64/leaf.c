/* leaf target: `leaf SECONDS` spins in main -> leaf_outer -> leaf_middle -> leaf_spin, where
 * leaf_spin calls nothing: built with -momit-leaf-frame-pointer it has no frame record and its
 * return address stays in x30 (LR), so an unwinder must take the caller from LR, not x29.
 * Prints "ready <pid>" and, at the end, "result N". */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "../targets/target_common.h"

#define LEAF_NOINLINE __attribute__((noinline, noclone))

static volatile sig_atomic_t leaf_stop;
volatile long leaf_sink;

static void on_alarm(int sig)
{
	(void)sig;
	leaf_stop = 1;
}

/* No calls, no stack use: the clock is the SIGALRM that sets leaf_stop. */
LEAF_NOINLINE long leaf_spin(unsigned long x)
{
	long n = 0;

	while (!leaf_stop) {
		for (int i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		n++;
	}
	return n + (long)(x & 1);
}

LEAF_NOINLINE long leaf_middle(unsigned long x)
{
	long r = leaf_spin(x);

	leaf_sink += r;
	return r + 1;
}

LEAF_NOINLINE long leaf_outer(unsigned long x)
{
	long r = leaf_middle(x);

	leaf_sink += r;
	return r + 2;
}

int main(int argc, char **argv)
{
	double seconds = target_arg(argc, argv, 1, 2.0);
	long r;

	target_allow_ptrace();
	signal(SIGALRM, on_alarm);
	alarm(seconds < 1 ? 1 : (unsigned int)(seconds + 0.5));
	target_ready();
	r = leaf_outer(88172645463325252UL);
	leaf_sink += r;
	printf("result %ld\n", r);
	return 0;
}
