/* bench-split: the accuracy target. After -d MS, runs for -s SEC alternating split_a() and
 * split_b() in chunks of random length 20-400 us, split_a() chosen 70% of the time, and
 * measures the truth itself: "truth_a P a_s A b_s B" where P = 100 * A / (A + B) and A, B are
 * CLOCK_MONOTONIC seconds spent inside each function (call included). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Burn for @ns, reading the clock about once a microsecond so most samples land here. */
#define SPLIT_FN(name)                                                                             \
	BENCH_NOINLINE uint64_t name(uint64_t ns, uint64_t x);                                     \
	BENCH_NOINLINE uint64_t name(uint64_t ns, uint64_t x)                                      \
	{                                                                                          \
		uint64_t end = now_ns() + ns;                                                      \
		do {                                                                               \
			for (int i = 0; i < 300; i++) {                                            \
				x ^= x << 13;                                                      \
				x ^= x >> 7;                                                       \
				x ^= x << 17;                                                      \
			}                                                                          \
		} while (now_ns() < end);                                                          \
		return x;                                                                          \
	}

SPLIT_FN(split_a)
SPLIT_FN(split_b)

int main(int argc, char **argv)
{
	double delay_ms = 300, secs = 10;
	uint64_t rng = 0x853c49e6748fea9bULL ^ (uint64_t)getpid(), x = 1, ta = 0, tb = 0, stop;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-d"))
			delay_ms = bench_num("-d", argv[++i]);
		else if (!strcmp(argv[i], "-s"))
			secs = bench_num("-s", argv[++i]);
		else {
			fprintf(stderr, "usage: bench-split [-d MS] [-s SEC]\n");
			return 64;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	bench_sleep_ms(delay_ms);
	stop = now_ns() + (uint64_t)(secs * 1e9);
	for (uint64_t t = now_ns(); t < stop;) {
		uint64_t len = (20 + bench_rand(&rng) % 381) * 1000, t1;
		int a = bench_rand(&rng) % 100 < 70;

		x = a ? split_a(len, x) : split_b(len, x);
		t1 = now_ns();
		if (a)
			ta += t1 - t;
		else
			tb += t1 - t;
		t = t1;
	}
	bench_sink = x;
	printf("truth_a %.4f a_s %.6f b_s %.6f\n", 100.0 * (double)ta / (double)(ta + tb),
	       (double)ta / 1e9, (double)tb / 1e9);
	return 0;
}
