/* chain target: f0 calls f1 and works on the result, so the call is no tail call. */
#include "chain.h"

CHAIN_NOINLINE long f0(double seconds)
{
	long r = f1(seconds);

	chain_sink += r;
	return r + 1;
}
