/* diffwork target: `diffwork SECONDS`, built twice by diffwork.mk from this one source, as
 * build/targets/diff-base/diffwork and build/targets/diff-slow/diffwork (the same file name,
 * as two builds of one program are). The main thread repeats step_a(), step_b(), step_c(),
 * 1, 1 and 2 units of work each (a unit is a fixed loop count, under 1 ms at -O0); the "slow"
 * build (-DDIFFWORK_B_UNITS=8) makes step_b() eight times longer, so its share of the main
 * thread grows from about 16% to 60% and those of step_a() and step_c() shrink (perf measures
 * step_c's loop at about 1.5 times the cost of the others per unit, and so does perch). The
 * change is large on purpose: on a loaded machine the thread waits for a CPU for up to half a
 * second at a time, wall-clock samples repeat the stack it waits in, and the noise margin
 * widens accordingly. A
 * second thread, "diffhelper", runs helper_outer() -> helper_work() the whole time in both
 * builds. Both threads only compute: their shares do not depend on how loaded the machine is
 * (a thread that computes and sleeps in turn spends more wall time computing on a busy
 * machine). At the end the main thread prints "units a b c" (what it ran). */
#include <pthread.h>
#include <stdio.h>

#include "target_common.h"

#ifndef DIFFWORK_B_UNITS
#define DIFFWORK_B_UNITS 1
#endif
/* `make bench-diff` slows step_b() by a few percent: its loop count in percent */
#ifndef DIFFWORK_B_PERCENT
#define DIFFWORK_B_PERCENT 100
#endif
#define UNIT_LOOPS 400000L

#define NOINLINE __attribute__((noinline))

volatile unsigned long diffwork_sink;
static volatile int stop;

NOINLINE void step_a(void)
{
	for (long i = 0; i < UNIT_LOOPS; i++)
		diffwork_sink += (unsigned long)i * 7;
}

NOINLINE void step_b(void)
{
	for (long i = 0; i < DIFFWORK_B_UNITS * UNIT_LOOPS * DIFFWORK_B_PERCENT / 100; i++)
		diffwork_sink += (unsigned long)i * 11;
}

NOINLINE void step_c(void)
{
	for (long i = 0; i < 2 * UNIT_LOOPS; i++)
		diffwork_sink += (unsigned long)i * 13;
}

NOINLINE void helper_work(void)
{
	for (long i = 0; i < UNIT_LOOPS / 4; i++)
		diffwork_sink += (unsigned long)i * 17;
}

NOINLINE void helper_outer(void)
{
	while (!stop)
		helper_work();
}

static void *helper_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "diffhelper");
	helper_outer();
	return NULL;
}

NOINLINE void run(double seconds)
{
	double end = target_now() + seconds;
	long rounds = 0;

	while (target_now() < end) {
		step_a();
		step_b();
		step_c();
		rounds++;
	}
	printf("units %ld %ld %ld\n", rounds, rounds * DIFFWORK_B_UNITS, rounds * 2);
}

int main(int argc, char **argv)
{
	double seconds = target_arg(argc, argv, 1, 2.0);
	pthread_t helper;

	target_allow_ptrace();
	if (pthread_create(&helper, NULL, helper_main, NULL))
		return 1;
	target_ready();
	run(seconds);
	stop = 1;
	pthread_join(helper, NULL);
	return 0;
}
