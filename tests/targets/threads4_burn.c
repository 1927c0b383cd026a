/* threads4 target: one burn function per thread, so samples tell the threads' work apart. */
#include "threads4.h"

#include "target_common.h"

/* Burn until CLOCK_MONOTONIC reaches @until; the clock is read every few microseconds only. */
#define BURN_BODY(until, state)                                                                    \
	do {                                                                                       \
		unsigned long x_ = (state) | 1;                                                    \
		do {                                                                               \
			for (int i_ = 0; i_ < 5000; i_++) {                                        \
				x_ ^= x_ << 13;                                                    \
				x_ ^= x_ >> 7;                                                     \
				x_ ^= x_ << 17;                                                    \
			}                                                                          \
		} while (target_now() < (until));                                                  \
		(state) = x_;                                                                      \
	} while (0)

THREADS4_NOINLINE void burn_a(double until, unsigned long *state)
{
	BURN_BODY(until, *state);
}

THREADS4_NOINLINE void burn_b(double until, unsigned long *state)
{
	BURN_BODY(until, *state);
}

THREADS4_NOINLINE void burn_c(double until, unsigned long *state)
{
	BURN_BODY(until, *state);
}

THREADS4_NOINLINE void burn_d(double until, unsigned long *state)
{
	BURN_BODY(until, *state);
}
