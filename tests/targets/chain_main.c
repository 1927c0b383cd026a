/* chain target: `chain-fp SECONDS` / `chain-o2 SECONDS` spins in main->f0->f1->f2->f3->spin. */
#include <stdio.h>

#include "chain.h"
#include "target_common.h"

volatile long chain_sink;

int main(int argc, char **argv)
{
	double seconds = target_arg(argc, argv, 1, 2.0);
	long r;

	target_allow_ptrace();
	target_ready();
	r = f0(seconds);
	chain_sink += r;
	printf("result %ld\n", r);
	return 0;
}
