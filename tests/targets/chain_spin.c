/* chain target: the leaf; burns CPU, reading the clock rarely so samples land in spin itself. */
#include "chain.h"
#include "target_common.h"

CHAIN_NOINLINE long spin(double seconds)
{
	double end = target_now() + seconds;
	unsigned long x = 88172645463325252UL;
	long n = 0;

	do {
		for (int i = 0; i < 200000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		n++;
	} while (target_now() < end);
	chain_sink += (long)(x & 0xff);
	return n;
}
