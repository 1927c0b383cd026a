/* chain target: f3 calls spin and works on the result, so the call is no tail call. */
#include "chain.h"

CHAIN_NOINLINE long f3(double seconds)
{
	long r = spin(seconds);

	chain_sink += r;
	return r + 4;
}
