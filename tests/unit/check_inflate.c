/* The inflater (inflate.h) with each backend, against streams zlib's own deflate made
 * (compress2() at levels 1, 6 and 9): the same bytes back, whole or a few bytes at a time;
 * corrupt and truncated streams refused or left unfinished, never reported ended. */
#include <check.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perch/symbols/inflate.h"

#define DATA_SIZE ((size_t)3 << 20)

/* Text-like bytes: words from a small vocabulary with numbers, compressible as debug sections
 * are, from a fixed seed. */
static uint8_t *make_data(size_t n)
{
	static const char *const words[] = {
	    "DW_TAG_subprogram ", "__libc_start_main ", "0x", "static ", "int ", "\n",
	    "pthread_cond_wait "};
	uint8_t *d = malloc(n);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t i = 0;

	ck_assert_ptr_nonnull(d);
	while (i < n) {
		const char *w;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w = (x & 3) ? words[(x >> 8) % 7] : (const char *)&x;
		for (size_t k = 0; k < ((x & 3) ? strlen(w) : 3) && i < n; k++)
			d[i++] = (uint8_t)w[k];
	}
	return d;
}

static uint8_t *deflate_zlib(const uint8_t *d, size_t n, int level, size_t *out_n)
{
	uLongf len = compressBound(n);
	uint8_t *c = malloc(len);

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(compress2(c, &len, d, n, level), Z_OK);
	*out_n = len;
	return c;
}

/* The backends to test: zlib always; isa-l where this build loads it (test_default() says
 * where it must). */
static int backends(enum inflate_backend *b)
{
	struct inflater *z = inflater_new(INFLATE_ISAL);
	int n = 0;

	b[n++] = INFLATE_ZLIB;
	if (z)
		b[n++] = INFLATE_ISAL;
	inflater_free(z);
	return n;
}

static struct inflater *new_or_fail(enum inflate_backend b)
{
	struct inflater *z = inflater_new(b);

	ck_assert_msg(z, "no inflater for backend %d", (int)b);
	return z;
}

START_TEST(test_whole)
{
	enum inflate_backend be[2];
	int nb = backends(be);
	uint8_t *d = make_data(DATA_SIZE), *out = malloc(DATA_SIZE + 1);
	static const int levels[] = {1, 6, 9};

	for (size_t l = 0; l < 3; l++) {
		size_t cn;
		uint8_t *c = deflate_zlib(d, DATA_SIZE, levels[l], &cn);

		for (int i = 0; i < nb; i++) {
			struct inflater *z = new_or_fail(be[i]);
			const uint8_t *in = c;
			size_t in_left = cn, out_left = DATA_SIZE + 1;
			uint8_t *o = out;

			memset(out, 0, DATA_SIZE + 1);
			ck_assert_int_eq(inflater_run(z, &in, &in_left, &o, &out_left),
					 INFLATE_END);
			ck_assert_uint_eq(in_left, 0);
			ck_assert_uint_eq(out_left, 1);
			ck_assert_msg(!memcmp(out, d, DATA_SIZE),
				      "backend %d, level %d: other bytes", (int)be[i], levels[l]);
			/* ended: no more */
			ck_assert_int_eq(inflater_run(z, &in, &in_left, &o, &out_left),
					 INFLATE_END);
			inflater_free(z);
		}
		free(c);
	}
	free(out);
	free(d);
}
END_TEST

/* Output a few bytes at a time, input a byte at a time: as the section streams ask. */
START_TEST(test_steps)
{
	enum inflate_backend be[2];
	int nb = backends(be);
	size_t n = 200000, cn;
	uint8_t *d = make_data(n), *c = deflate_zlib(d, n, 6, &cn), *out = malloc(n + 1);
	static const size_t out_steps[] = {1, 7, 4096, 65536};

	for (int i = 0; i < nb; i++) {
		for (size_t s = 0; s < 4; s++) {
			struct inflater *z = new_or_fail(be[i]);
			const uint8_t *in = c;
			size_t in_left = cn, ready = 0;
			int ret = INFLATE_MORE, calls = 0;

			while (ret == INFLATE_MORE && ready <= n && calls < 10000000) {
				size_t step =
				    n + 1 - ready < out_steps[s] ? n + 1 - ready : out_steps[s];
				size_t left = step;
				uint8_t *o = out + ready;

				ret = inflater_run(z, &in, &in_left, &o, &left);
				ready += step - left;
				calls++;
			}
			ck_assert_int_eq(ret, INFLATE_END);
			ck_assert_uint_eq(ready, n);
			ck_assert(!memcmp(out, d, n));
			inflater_free(z);
		}
		/* the input in pieces of 1 byte */
		{
			struct inflater *z = new_or_fail(be[i]);
			const uint8_t *in = c;
			size_t ready = 0, fed = 0;
			int ret = INFLATE_MORE;

			while (ret == INFLATE_MORE && fed < cn) {
				size_t one = 1, left = n + 1 - ready;
				uint8_t *o = out + ready;

				ret = inflater_run(z, &in, &one, &o, &left);
				fed += 1 - one;
				ready = (size_t)(o - out);
			}
			ck_assert_int_eq(ret, INFLATE_END);
			ck_assert_uint_eq(ready, n);
			ck_assert(!memcmp(out, d, n));
			inflater_free(z);
		}
	}
	free(out);
	free(c);
	free(d);
}
END_TEST

static int run_once(enum inflate_backend b, const uint8_t *c, size_t cn, uint8_t *out, size_t n,
		    size_t *in_left, size_t *out_left)
{
	struct inflater *z = new_or_fail(b);
	const uint8_t *in = c;
	uint8_t *o = out;
	int ret;

	*in_left = cn;
	*out_left = n;
	ret = inflater_run(z, &in, in_left, &o, out_left);
	inflater_free(z);
	return ret;
}

START_TEST(test_corrupt)
{
	enum inflate_backend be[2];
	int nb = backends(be);
	size_t n = 500000, cn, il, ol;
	uint8_t *d = make_data(n), *c = deflate_zlib(d, n, 6, &cn), *out = malloc(n + 1);

	for (int i = 0; i < nb; i++) {
		/* the Adler-32 at the end */
		c[cn - 1] ^= 1;
		ck_assert_int_eq(run_once(be[i], c, cn, out, n + 1, &il, &ol), INFLATE_BAD);
		c[cn - 1] ^= 1;
		/* the header's check bits (FCHECK) */
		c[1] ^= 1;
		ck_assert_int_eq(run_once(be[i], c, cn, out, n + 1, &il, &ol), INFLATE_BAD);
		c[1] ^= 1;
		/* truncated: all of it read, not ended */
		ck_assert_int_eq(run_once(be[i], c, cn - 10, out, n + 1, &il, &ol), INFLATE_MORE);
		ck_assert_uint_eq(il, 0);
		/* more output than room: the room filled, not ended */
		ck_assert_int_eq(run_once(be[i], c, cn, out, n - 1, &il, &ol), INFLATE_MORE);
		ck_assert_uint_eq(ol, 0);
		/* garbage */
		memset(out, 0xa5, 4096);
		ck_assert_int_eq(run_once(be[i], out, 4096, out + 4096, 4096, &il, &ol),
				 INFLATE_BAD);
		/* the good stream still inflates */
		ck_assert_int_eq(run_once(be[i], c, cn, out, n + 1, &il, &ol), INFLATE_END);
		ck_assert(!memcmp(out, d, n));
	}
	free(out);
	free(c);
	free(d);
}
END_TEST

/* The default is isa-l wherever its library loads (what makes cold dumps faster), except in a
 * static build, which cannot load it. */
START_TEST(test_default)
{
	const char *want = getenv("PERCH_INFLATE");
	int loads = 0;

#ifndef PERCH_NO_ISAL
	void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);

	loads = h != NULL;
	if (h)
		dlclose(h);
#endif
	if (loads && !(want && !strcmp(want, "zlib")))
		ck_assert_str_eq(inflater_backend(), "isa-l");
	else
		ck_assert_str_eq(inflater_backend(), "zlib");
	if (loads) {
		struct inflater *z = inflater_new(INFLATE_ISAL);

		ck_assert_msg(z, "libisal.so.2 loads here, but the inflater does not use it");
		inflater_free(z);
	}
}
END_TEST

Suite *inflate_suite(void)
{
	Suite *s = suite_create("inflate");
	TCase *tc = tcase_create("backends");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_whole);
	tcase_add_test(tc, test_steps);
	tcase_add_test(tc, test_corrupt);
	tcase_add_test(tc, test_default);
	suite_add_tcase(s, tc);
	return s;
}
