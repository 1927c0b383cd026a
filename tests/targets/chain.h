/* The chain target: main -> f0 -> f1 -> f2 -> f3 -> spin, one translation unit per function,
 * so the expected stack is known whatever the optimisation level (strace's stack-fcall-*.c). */
#ifndef PERCH_TARGET_CHAIN_H
#define PERCH_TARGET_CHAIN_H

#define CHAIN_NOINLINE __attribute__((noinline, noclone))

/* Written after each call so no call in the chain can become a tail call. */
extern volatile long chain_sink;

long f0(double seconds);
long f1(double seconds);
long f2(double seconds);
long f3(double seconds);
/* Burn CPU for @seconds; returns a checksum of the work. */
long spin(double seconds);

#endif
