/* A library perch finds inside an APK: stored uncompressed and page-aligned in a zip, mapped
 * straight from the zip by apkload (as Android's linker maps lib/ABI/NAME.so out of base.apk).
 * Self-contained on purpose: no data, no relocations, no calls out, so apkload needs no dynamic
 * linker; its entry point (-e apk_entry) is how apkload finds the code. */
#include <stdint.h>

__attribute__((noinline)) static uint64_t apk_inner_spin(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < 2000000; i++)
		x = x * 6364136223846793005ULL + i;
	return x;
}

__attribute__((noinline)) static uint64_t apk_outer_spin(uint64_t rounds)
{
	uint64_t x = 0;

	for (uint64_t r = 0; r < rounds; r++)
		x += apk_inner_spin(r);
	return x;
}

uint64_t apk_entry(uint64_t rounds)
{
	return apk_outer_spin(rounds);
}
