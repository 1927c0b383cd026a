/* stripped target (tests/e2e/check_dwarf.c): `stripped SECONDS` burns CPU in hot_unnamed(), a
 * static function with a long body, in a copy stripped of every symbol table but .dynsym, so
 * no symbol names it: perch must show it as one frame (its start, from its FDE), not one
 * frame per sampled pc. */
#include <stdio.h>

#include "target_common.h"

volatile unsigned long stripped_sink;

__attribute__((noinline)) static unsigned long hot_unnamed(unsigned long x, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		x ^= x >> 29;
		x += (x << 3) ^ (unsigned long)i;
		x ^= x >> 11;
		x *= 0x9e3779b97f4a7c15UL;
		x ^= x << 5;
		x -= x >> 19;
	}
	return x;
}

int main(int argc, char **argv)
{
	double end = target_now() + target_arg(argc, argv, 1, 2.0);
	unsigned long x = 88172645463325252UL;

	target_allow_ptrace();
	target_ready();
	do
		x = hot_unnamed(x, 100000);
	while (target_now() < end);
	stripped_sink = x;
	printf("result %lu\n", x & 0xff);
	return 0;
}
