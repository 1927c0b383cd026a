/* vdso target: `vdso SECONDS` spins in main -> vdso_outer -> vdso_loop -> clock_gettime, so
 * most samples land in the kernel's vDSO (__kernel_clock_gettime). The arm64 vDSO of a kernel
 * with pointer authentication signs its return addresses (paciasp) on CPUs that have it, so the
 * unwinder must strip PAC bits from x30 and from saved return addresses to get back out.
 * Prints "ready <pid>" and, at the end, "result N". */
#include <stdio.h>
#include <time.h>

#include "../targets/target_common.h"

#define VDSO_NOINLINE __attribute__((noinline, noclone))

volatile long vdso_sink;

VDSO_NOINLINE long vdso_loop(double seconds)
{
	struct timespec ts;
	double end = target_now() + seconds;
	long n = 0;

	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		n++;
	} while ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 < end);
	return n;
}

VDSO_NOINLINE long vdso_outer(double seconds)
{
	long r = vdso_loop(seconds);

	vdso_sink += r;
	return r + 1;
}

int main(int argc, char **argv)
{
	double seconds = target_arg(argc, argv, 1, 2.0);
	long r;

	target_allow_ptrace();
	target_ready();
	r = vdso_outer(seconds);
	vdso_sink += r;
	printf("result %ld\n", r);
	return 0;
}
