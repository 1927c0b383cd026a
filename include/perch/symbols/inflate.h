/* zlib streams (RFC 1950: deflate with a header and an Adler-32 check) inflated by isa-l where
 * it can be loaded, by zlib otherwise. A cold `perch dump` inflates about 6 MB of glibc's
 * compressed debug sections, 40% of its CPU time with zlib 1.2.13; isa-l's igzip inflates
 * them 2.2 times as fast (docs/benchmark.md). isa-l is dlopen()ed on first use
 * (libisal.so.2, the ABI of the headers perch was compiled against), so that runs that inflate
 * nothing (a warm dump) do not load it; a build without its headers, a static build (Debian
 * ships no libisal.a; the ARM64 build is static) and a machine without the library use zlib.
 * PERCH_INFLATE=zlib in the environment picks zlib (to compare the two). */
#ifndef PERCH_INFLATE_H
#define PERCH_INFLATE_H

#include <stddef.h>
#include <stdint.h>

struct inflater;

enum {
	INFLATE_BAD = -1, /* corrupt: a bad header, block, distance or check value */
	INFLATE_MORE = 0, /* not at its end: the input ran out or the output is full */
	INFLATE_END = 1,  /* the stream ended and its check value matched */
};

enum inflate_backend { INFLATE_DEFAULT, INFLATE_ISAL, INFLATE_ZLIB };

/* A new stream: isa-l's where it was loaded (INFLATE_DEFAULT), or the one asked for. NULL
 * when that one is not there (isa-l) or out of memory for zlib's state. */
struct inflater *inflater_new(enum inflate_backend backend);
/* Inflate from *@in (*@in_left bytes) into *@out (*@out_left bytes), moving both on, until
 * the stream ends, the input runs out or the output is full. Sizes may exceed 4 GiB. After
 * INFLATE_END or INFLATE_BAD the stream takes no more input. */
int inflater_run(struct inflater *z, const uint8_t **in, size_t *in_left, uint8_t **out,
		 size_t *out_left);
void inflater_free(struct inflater *z);

/* "isa-l" or "zlib": what inflater_new() uses in this process. */
const char *inflater_backend(void);

#endif
