/* libFuzzer harness for the inflater (inflate.h): the input is a zlib stream, inflated whole by
 * each backend into at most 1 MiB and again in small steps. Invariants: in steps the verdict is
 * the one of the whole stream, and the same bytes where it ended (what a refused stream left in
 * the output is not compared); where isa-l and zlib both say the stream ended, they gave the
 * same bytes (zlib is the reference; the two may differ on what they refuse). */
#include "fuzz.h"
#include "perch/symbols/inflate.h"

#define OUT_MAX ((size_t)1 << 20)

static int run(enum inflate_backend b, const uint8_t *data, size_t size, size_t step, uint8_t *out,
	       size_t *len)
{
	struct inflater *z = inflater_new(b);
	const uint8_t *in = data;
	size_t in_left = size, ready = 0;
	int ret = INFLATE_MORE;

	if (!z)
		return -2; /* (isa-l not there) */
	while (ret == INFLATE_MORE && ready < OUT_MAX) {
		size_t room = OUT_MAX - ready < step ? OUT_MAX - ready : step, left = room;
		uint8_t *o = out + ready;

		ret = inflater_run(z, &in, &in_left, &o, &left);
		if (left == room && ret == INFLATE_MORE)
			break; /* the input ran out */
		ready += room - left;
	}
	inflater_free(z);
	*len = ready;
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *a, *b, *c;
	size_t la, lb, lc;
	int ra, rb, rc;

	if (!a && (!(a = malloc(OUT_MAX)) || !(b = malloc(OUT_MAX)) || !(c = malloc(OUT_MAX))))
		abort();
	ra = run(INFLATE_ZLIB, data, size, OUT_MAX, a, &la);
	rb = run(INFLATE_ZLIB, data, size, 7, b, &lb);
	if (ra != rb || (ra == INFLATE_END && (la != lb || memcmp(a, b, la)))) {
		fprintf(stderr, "invariant broken: zlib whole %d (%zu bytes), in steps %d (%zu)\n",
			ra, la, rb, lb);
		abort();
	}
	rc = run(INFLATE_ISAL, data, size, OUT_MAX, c, &lc);
	if (rc == INFLATE_END && ra == INFLATE_END && (lc != la || memcmp(a, c, la))) {
		fprintf(stderr, "invariant broken: isa-l and zlib ended with other bytes\n");
		abort();
	}
	rb = run(INFLATE_ISAL, data, size, 7, b, &lb);
	if (rc != -2 && (rc != rb || (rc == INFLATE_END && (lc != lb || memcmp(c, b, lc))))) {
		fprintf(stderr, "invariant broken: isa-l whole %d (%zu bytes), in steps %d (%zu)\n",
			rc, lc, rb, lb);
		abort();
	}
	return 0;
}
