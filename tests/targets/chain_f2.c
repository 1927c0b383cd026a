/* chain target: f2 calls f3 and works on the result, so the call is no tail call. */
#include "chain.h"

CHAIN_NOINLINE long f2(double seconds)
{
	long r = f3(seconds);

	chain_sink += r;
	return r + 3;
}
