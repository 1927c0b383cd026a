/* Helpers shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c): the input as a C string,
 * and splitting one input into parts. Each harness defines LLVMFuzzerTestOneInput and asserts
 * the invariants its module documents, so a broken invariant is a finding like a crash. */
#ifndef PERCH_FUZZ_H
#define PERCH_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A malloc'ed NUL-terminated copy of @data (the parsers take text). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* An exact, non-relocated copy of @data in its own allocation, so ASan sees every byte read
 * past the end (libFuzzer's own buffer already is one; this is for sub-slices). */
static inline uint8_t *fuzz_dup(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);

	if (!p)
		abort();
	memcpy(p, data, size);
	return p;
}

/* Little-endian u64 from the first bytes of @data (fewer than 8: zero-padded). */
static inline uint64_t fuzz_u64(const uint8_t *data, size_t size)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8 && i < size; i++)
		v |= (uint64_t)data[i] << (8 * i);
	return v;
}

/* A broken invariant: report and abort (libFuzzer saves the input as a crash). */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
