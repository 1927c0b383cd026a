/* Shared by the benchmark's target programs (make bench): the ~30-frame call chain, clocks,
 * option parsing and the one result line every target prints for the driver. */
#ifndef PERCH_BENCH_H
#define PERCH_BENCH_H

#include <stdint.h>

#define BENCH_NOINLINE __attribute__((noipa, noinline))
#define BENCH_LEVELS   28 /* f00 .. f27, then a leaf */

/* Leaf iterations per unit of work; bench_chain() of one unit takes about 50 us. */
extern unsigned int bench_leaf_iters;
extern volatile uint64_t bench_sink;

/* One unit of work: main's caller -> f00 -> ... -> f27 -> leaf @leaf (0..3). */
uint64_t bench_chain(uint64_t x, int leaf);
/* The same, entered at level @level (0 = f00, 27 = f27): a shorter stack. */
uint64_t bench_chain_from(int level, uint64_t x, int leaf);

/* CLOCK_MONOTONIC, this process's CPU time (user+sys), in seconds. */
double bench_now(void);
double bench_process_cpu(void);
/* Sleep @ms milliseconds (restarted on EINTR). */
void bench_sleep_ms(double ms);
/* A numeric option value; exits 64 on garbage. */
double bench_num(const char *opt, const char *s);
/* xorshift64 */
uint64_t bench_rand(uint64_t *state);

#endif
