/* chain target: f1 calls f2 and works on the result, so the call is no tail call. */
#include "chain.h"

CHAIN_NOINLINE long f1(double seconds)
{
	long r = f2(seconds);

	chain_sink += r;
	return r + 2;
}
