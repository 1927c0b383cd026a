/* deeprec target: `deeprec DEPTH`: main -> rec(DEPTH) -> ... -> rec(0) -> pause(), a stack
 * deeper than perch's default frame limits (3000 + 4 frames for DEPTH 2999). */
#include <unistd.h>

#include "target_common.h"

volatile int deeprec_sink;

__attribute__((noinline)) int rec(int n)
{
	if (n == 0) {
		target_ready();
		pause();
		return 0;
	}
	return rec(n - 1) + deeprec_sink + 1;
}

int main(int argc, char **argv)
{
	target_allow_ptrace();
	return rec((int)target_arg(argc, argv, 1, 2999));
}
