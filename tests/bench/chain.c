/* The benchmark's call chain: f00 .. f27 -> leaf, 28 distinct non-inlined levels, each with a
 * 64-byte local buffer and work after the call (no tail calls), so a full stack is about 35
 * frames (leaf .. main, libc start, _start) on the main thread and 34 on a worker. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "bench.h"

unsigned int bench_leaf_iters = 30000;
volatile uint64_t bench_sink;

#define LEAF(name, a, b, c)                                                                        \
	BENCH_NOINLINE static uint64_t name(uint64_t x)                                            \
	{                                                                                          \
		for (unsigned int i = 0; i < bench_leaf_iters; i++) {                              \
			x ^= x << a;                                                               \
			x ^= x >> b;                                                               \
			x ^= x << c;                                                               \
		}                                                                                  \
		return x;                                                                          \
	}

LEAF(leaf, 13, 7, 17)
LEAF(leaf_b, 7, 9, 13)
LEAF(leaf_c, 17, 9, 5)
LEAF(leaf_d, 5, 15, 27)

BENCH_NOINLINE static uint64_t leaf_pick(uint64_t x, int which)
{
	switch (which & 3) {
	case 1:
		return leaf_b(x);
	case 2:
		return leaf_c(x);
	case 3:
		return leaf_d(x);
	default:
		return leaf(x);
	}
}

#define LEVEL(n, next_call)                                                                        \
	BENCH_NOINLINE uint64_t f##n(uint64_t x, int w);                                           \
	BENCH_NOINLINE uint64_t f##n(uint64_t x, int w)                                            \
	{                                                                                          \
		volatile char buf[64];                                                             \
		uint64_t r;                                                                        \
		buf[0] = (char)x;                                                                  \
		r = next_call;                                                                     \
		buf[63] = (char)r;                                                                 \
		return r + (uint64_t)buf[0] + (uint64_t)buf[63];                                   \
	}

LEVEL(27, leaf_pick(x + 27, w))
LEVEL(26, f27(x + 26, w))
LEVEL(25, f26(x + 25, w))
LEVEL(24, f25(x + 24, w))
LEVEL(23, f24(x + 23, w))
LEVEL(22, f23(x + 22, w))
LEVEL(21, f22(x + 21, w))
LEVEL(20, f21(x + 20, w))
LEVEL(19, f20(x + 19, w))
LEVEL(18, f19(x + 18, w))
LEVEL(17, f18(x + 17, w))
LEVEL(16, f17(x + 16, w))
LEVEL(15, f16(x + 15, w))
LEVEL(14, f15(x + 14, w))
LEVEL(13, f14(x + 13, w))
LEVEL(12, f13(x + 12, w))
LEVEL(11, f12(x + 11, w))
LEVEL(10, f11(x + 10, w))
LEVEL(09, f10(x + 9, w))
LEVEL(08, f09(x + 8, w))
LEVEL(07, f08(x + 7, w))
LEVEL(06, f07(x + 6, w))
LEVEL(05, f06(x + 5, w))
LEVEL(04, f05(x + 4, w))
LEVEL(03, f04(x + 3, w))
LEVEL(02, f03(x + 2, w))
LEVEL(01, f02(x + 1, w))
LEVEL(00, f01(x, w))

static uint64_t (*const levels[BENCH_LEVELS])(uint64_t, int) = {
    f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13,
    f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27,
};

uint64_t bench_chain(uint64_t x, int leaf_no)
{
	return f00(x, leaf_no);
}

uint64_t bench_chain_from(int level, uint64_t x, int leaf_no)
{
	if (level < 0 || level >= BENCH_LEVELS)
		level = 0;
	return levels[level](x, leaf_no);
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double bench_process_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void bench_sleep_ms(double ms)
{
	struct timespec ts = {(time_t)(ms / 1000),
			      (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

double bench_num(const char *opt, const char *s)
{
	char *end;
	double v;

	if (!s) {
		fprintf(stderr, "option %s needs a value\n", opt);
		exit(64);
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end) {
		fprintf(stderr, "bad value for %s: '%s'\n", opt, s);
		exit(64);
	}
	return v;
}

uint64_t bench_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}
