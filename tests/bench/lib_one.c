/* One of the 120 tiny shared libraries of bench-libs, compiled once per library with
 * -DBENCH_LIB_FN=bench_lib_NNN: a link in a call chain that crosses every library. */
#include <stdint.h>

typedef uint64_t (*bench_lib_fn)(const void *tab, int i, int n, uint64_t x);

__attribute__((noipa, noinline)) uint64_t BENCH_LIB_FN(const void *tab, int i, int n, uint64_t x);

__attribute__((noipa, noinline)) uint64_t BENCH_LIB_FN(const void *tab, int i, int n, uint64_t x)
{
	const bench_lib_fn *fns = tab;
	volatile char buf[64];
	uint64_t r;

	buf[0] = (char)x;
	if (i + 1 < n) {
		r = fns[i + 1](tab, i + 1, n, x + (uint64_t)i);
	} else {
		r = x | 1;
		for (int k = 0; k < 200000; k++) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
		}
	}
	buf[63] = (char)r;
	return r + (uint64_t)buf[0] + (uint64_t)buf[63];
}
