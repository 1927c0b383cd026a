/* Unit tests for textscan: numbers at their limits, empty input, the @end bound (inputs are
 * often copied into exact-size heap buffers without a NUL, so ASan sees any read past @end),
 * hostile bytes, and the line iterator. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/textscan.h"
#include "perch/base/xalloc.h"

#define SENTINEL 0x5a5a5a5a5a5a5a5aull

/* @len bytes of @s in a heap buffer of exactly @len bytes: no NUL after them. */
static char *unterminated(const char *s, size_t len)
{
	char *buf = xmalloc(len ? len : 1);

	memcpy(buf, s, len);
	return buf;
}

/* --- decimal --- */

START_TEST(test_u64_basic)
{
	const char *s = "42 kB", *p = s;
	uint64_t v = SENTINEL;

	ck_assert_int_eq(textscan_u64(&p, NULL, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_ptr_eq(p, s + 2);

	s = "0007x";
	p = s;
	ck_assert_int_eq(textscan_u64(&p, s + strlen(s), &v), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_ptr_eq(p, s + 4);
}
END_TEST

START_TEST(test_u64_limits)
{
	const char *max = "18446744073709551615";
	const char *over[] = {"18446744073709551616", "18446744073709551620",
			      "99999999999999999999", "184467440737095516150"};
	const char *p = max;
	uint64_t v = SENTINEL;
	size_t i;

	ck_assert_int_eq(textscan_u64(&p, NULL, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_ptr_eq(p, max + 20);
	/* leading zeros do not count towards overflow */
	p = "00000000000000000000000018446744073709551615";
	ck_assert_int_eq(textscan_u64(&p, NULL, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	for (i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
		p = over[i];
		v = SENTINEL;
		ck_assert_int_eq(textscan_u64(&p, NULL, &v), -ERANGE);
		ck_assert_ptr_eq(p, over[i]); /* nothing consumed on failure */
		ck_assert_uint_eq(v, SENTINEL);
	}
}
END_TEST

/* Printed by libc, read back by us; one more digit appended must overflow exactly when the
 * 128-bit result does not fit. */
START_TEST(test_u64_roundtrip)
{
	uint64_t x = 0x9e3779b97f4a7c15ull, v;
	char buf[32];
	int i;

	for (i = 0; i < 2000; i++) {
		const char *p = buf;
		unsigned int d = (unsigned int)(x % 10);
		unsigned __int128 wide;
		int n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* vary the magnitude so every digit count is exercised */
		n = snprintf(buf, sizeof(buf), "%" PRIu64, x >> (i % 64));
		ck_assert_int_eq(textscan_u64(&p, NULL, &v), 0);
		ck_assert_uint_eq(v, x >> (i % 64));
		ck_assert_ptr_eq(p, buf + n);

		buf[n] = (char)('0' + d);
		buf[n + 1] = '\0';
		p = buf;
		wide = (unsigned __int128)(x >> (i % 64)) * 10 + d;
		if (wide > UINT64_MAX) {
			ck_assert_int_eq(textscan_u64(&p, NULL, &v), -ERANGE);
		} else {
			ck_assert_int_eq(textscan_u64(&p, NULL, &v), 0);
			ck_assert_uint_eq(v, (uint64_t)wide);
		}
	}
}
END_TEST

START_TEST(test_u64_empty_and_junk)
{
	const char *bad[] = {"", "-1", "+1", " 1", "x1", "\3771", "\n1"};
	uint64_t v = SENTINEL;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *p = bad[i];

		ck_assert_int_eq(textscan_u64(&p, NULL, &v), -EINVAL);
		ck_assert_ptr_eq(p, bad[i]);
		p = bad[i];
		ck_assert_int_eq(textscan_u64(&p, bad[i] + strlen(bad[i]), &v), -EINVAL);
	}
	ck_assert_uint_eq(v, SENTINEL);
}
END_TEST

START_TEST(test_u64_end_bound)
{
	const char *s = "12345", *p = s;
	char *buf;
	uint64_t v = SENTINEL;

	/* a digit exactly at @end is not read */
	ck_assert_int_eq(textscan_u64(&p, s, &v), -EINVAL);
	ck_assert_uint_eq(v, SENTINEL);
	ck_assert_int_eq(textscan_u64(&p, s + 3, &v), 0);
	ck_assert_uint_eq(v, 123);
	ck_assert_ptr_eq(p, s + 3);

	/* digits up to the end of an unterminated buffer */
	buf = unterminated("98765432109876543210", 20);
	p = buf;
	ck_assert_int_eq(textscan_u64(&p, buf + 20, &v), -ERANGE);
	p = buf;
	ck_assert_int_eq(textscan_u64(&p, buf + 19, &v), 0);
	ck_assert_uint_eq(v, 9876543210987654321ull);
	ck_assert_ptr_eq(p, buf + 19);
	free(buf);

	/* a NUL inside [s, end) stops the scan like any other non-digit */
	s = "12\00034";
	p = s;
	ck_assert_int_eq(textscan_u64(&p, s + 5, &v), 0);
	ck_assert_uint_eq(v, 12);
	ck_assert_ptr_eq(p, s + 2);
}
END_TEST

/* --- hexadecimal --- */

START_TEST(test_x64_basic)
{
	const char *s = "7fff0000-7fff1000", *p = s;
	uint64_t v = SENTINEL;

	ck_assert_int_eq(textscan_x64(&p, NULL, 16, &v), 0);
	ck_assert_uint_eq(v, 0x7fff0000);
	ck_assert_ptr_eq(p, s + 8);

	s = "aBcDeF09 ";
	p = s;
	ck_assert_int_eq(textscan_x64(&p, s + strlen(s), 16, &v), 0);
	ck_assert_uint_eq(v, 0xabcdef09);
	ck_assert_ptr_eq(p, s + 8);

	/* no prefix handling: "0x10" is the digit 0, then 'x' */
	s = "0x10";
	p = s;
	ck_assert_int_eq(textscan_x64(&p, NULL, 16, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_ptr_eq(p, s + 1);
}
END_TEST

START_TEST(test_x64_digit_limit)
{
	const char *p, *s;
	uint64_t v = SENTINEL;

	p = "ffffffffffffffff";
	ck_assert_int_eq(textscan_x64(&p, NULL, 16, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);

	/* a longer run fails instead of stopping after 16 (or @max_digits) digits */
	s = "10000000000000000";
	p = s;
	v = SENTINEL;
	ck_assert_int_eq(textscan_x64(&p, NULL, 16, &v), -ERANGE);
	ck_assert_ptr_eq(p, s);
	ck_assert_uint_eq(v, SENTINEL);
	s = "123456789";
	p = s;
	ck_assert_int_eq(textscan_x64(&p, NULL, 8, &v), -ERANGE);
	ck_assert_ptr_eq(p, s);
	s = "12345678:9";
	p = s;
	ck_assert_int_eq(textscan_x64(&p, NULL, 8, &v), 0);
	ck_assert_uint_eq(v, 0x12345678);
	ck_assert_ptr_eq(p, s + 8);

	/* above 16 counts as 16: the value can never overflow */
	p = "11111111111111111";
	ck_assert_int_eq(textscan_x64(&p, NULL, 1000, &v), -ERANGE);
	p = "1111111111111111";
	ck_assert_int_eq(textscan_x64(&p, NULL, 1000, &v), 0);
	ck_assert_uint_eq(v, 0x1111111111111111ull);

	/* zero digits allowed accepts nothing */
	v = SENTINEL;
	p = "1";
	ck_assert_int_eq(textscan_x64(&p, NULL, 0, &v), -EINVAL);
	ck_assert_uint_eq(v, SENTINEL);
}
END_TEST

START_TEST(test_x64_roundtrip)
{
	uint64_t x = 0x2545f4914f6cdd1dull, v;
	char buf[32];
	int i;

	for (i = 0; i < 2000; i++) {
		const char *p = buf;
		int n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = snprintf(buf, sizeof(buf), i & 1 ? "%" PRIx64 : "%" PRIX64, x >> (i % 64));
		ck_assert_int_eq(textscan_x64(&p, buf + n, 16, &v), 0);
		ck_assert_uint_eq(v, x >> (i % 64));
		ck_assert_ptr_eq(p, buf + n);
	}
}
END_TEST

START_TEST(test_x64_empty_and_bounds)
{
	const char *bad[] = {"", "g", "-1", " 1", "\xff", "x"};
	const char *s, *p;
	uint64_t v = SENTINEL;
	char *buf;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = bad[i];
		ck_assert_int_eq(textscan_x64(&p, NULL, 16, &v), -EINVAL);
		ck_assert_ptr_eq(p, bad[i]);
	}
	ck_assert_uint_eq(v, SENTINEL);

	s = "abcdef";
	p = s;
	ck_assert_int_eq(textscan_x64(&p, s, 16, &v), -EINVAL);
	ck_assert_int_eq(textscan_x64(&p, s + 2, 16, &v), 0);
	ck_assert_uint_eq(v, 0xab);
	ck_assert_ptr_eq(p, s + 2);

	buf = unterminated("deadbeef", 8);
	p = buf;
	ck_assert_int_eq(textscan_x64(&p, buf + 8, 16, &v), 0);
	ck_assert_uint_eq(v, 0xdeadbeef);
	ck_assert_ptr_eq(p, buf + 8);
	/* the bound also cuts a run that would be too long */
	p = buf;
	ck_assert_int_eq(textscan_x64(&p, buf + 8, 4, &v), -ERANGE);
	free(buf);
}
END_TEST

/* --- literals and spaces --- */

START_TEST(test_expect)
{
	const char *s = "cpu0 1 2", *p = s;
	char *buf;

	ck_assert_int_eq(textscan_expect(&p, NULL, "cpu"), 0);
	ck_assert_ptr_eq(p, s + 3);
	ck_assert_int_eq(textscan_expect(&p, NULL, "1"), -EINVAL);
	ck_assert_ptr_eq(p, s + 3);
	ck_assert_int_eq(textscan_expect(&p, s + 8, "0"), 0);
	ck_assert_ptr_eq(p, s + 4);

	/* a partial match consumes nothing */
	p = s;
	ck_assert_int_eq(textscan_expect(&p, NULL, "cpx"), -EINVAL);
	ck_assert_ptr_eq(p, s);
	/* the literal must fit before @end, and before the NUL */
	ck_assert_int_eq(textscan_expect(&p, s + 2, "cpu"), -EINVAL);
	ck_assert_ptr_eq(p, s);
	p = "cp";
	ck_assert_int_eq(textscan_expect(&p, NULL, "cpu"), -EINVAL);
	p = "";
	ck_assert_int_eq(textscan_expect(&p, NULL, "c"), -EINVAL);
	/* an empty literal is a caller bug, not a match */
	p = s;
	ck_assert_int_eq(textscan_expect(&p, NULL, ""), -EINVAL);
	ck_assert_ptr_eq(p, s);

	buf = unterminated(" 0", 2);
	p = buf;
	ck_assert_int_eq(textscan_expect(&p, buf + 2, " 0x"), -EINVAL);
	ck_assert_ptr_eq(p, buf);
	ck_assert_int_eq(textscan_expect(&p, buf + 2, " 0"), 0);
	ck_assert_ptr_eq(p, buf + 2);
	free(buf);
}
END_TEST

START_TEST(test_skip_spaces)
{
	const char *s = "   x", *p = s;
	char *buf;

	ck_assert_uint_eq(textscan_skip_spaces(&p, NULL), 3);
	ck_assert_ptr_eq(p, s + 3);
	ck_assert_uint_eq(textscan_skip_spaces(&p, NULL), 0);
	ck_assert_ptr_eq(p, s + 3);
	/* only ' ': a tab is data */
	s = "\t x";
	p = s;
	ck_assert_uint_eq(textscan_skip_spaces(&p, NULL), 0);
	ck_assert_ptr_eq(p, s);
	p = "";
	ck_assert_uint_eq(textscan_skip_spaces(&p, NULL), 0);

	buf = unterminated("    ", 4);
	p = buf;
	ck_assert_uint_eq(textscan_skip_spaces(&p, buf + 2), 2);
	ck_assert_ptr_eq(p, buf + 2);
	ck_assert_uint_eq(textscan_skip_spaces(&p, buf + 4), 2);
	ck_assert_ptr_eq(p, buf + 4);
	ck_assert_uint_eq(textscan_skip_spaces(&p, buf + 4), 0);
	free(buf);
}
END_TEST

/* --- lines --- */

/* Join the lines the iterator yields as "[line]" pieces, checking each *eol. */
static char *collect(const char *text, size_t *nr)
{
	const char *pos = text, *line, *eol;
	char *out = xstrdup("");

	*nr = 0;
	while ((line = textscan_line(&pos, &eol))) {
		char *next;

		ck_assert(*eol == '\n' || *eol == '\0');
		ck_assert(line <= eol);
		ck_assert_ptr_null(memchr(line, '\n', (size_t)(eol - line)));
		next = xasprintf("%s[%.*s]", out, (int)(eol - line), line);
		free(out);
		out = next;
		(*nr)++;
	}
	ck_assert_int_eq(*pos, '\0');
	return out;
}

START_TEST(test_lines)
{
	static const struct {
		const char *text, *want;
		size_t nr;
	} cases[] = {
	    {"", "", 0},
	    {"\n", "[]", 1},
	    {"x\n", "[x]", 1},
	    {"x", "[x]", 1}, /* no final '\n' */
	    {"a\nbb\n\nccc", "[a][bb][][ccc]", 4},
	    {"\n\n", "[][]", 2},
	    {"a\nb\0c\n", "[a][b]", 2}, /* a NUL ends the text */
	    {"key:\tv a l\r\n", "[key:\tv a l\r]", 1},
	};
	size_t i, nr;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = collect(cases[i].text, &nr);

		ck_assert_msg(!strcmp(got, cases[i].want), "case %zu: got %s", i, got);
		ck_assert_uint_eq(nr, cases[i].nr);
		free(got);
	}
}
END_TEST

START_TEST(test_lines_early_exit)
{
	const char *text = "one\ntwo\nthree", *pos = text, *line, *eol;

	line = textscan_line(&pos, &eol);
	ck_assert_ptr_eq(line, text);
	ck_assert_ptr_eq(eol, text + 3);
	ck_assert_ptr_eq(pos, text + 4);
	line = textscan_line(&pos, &eol);
	ck_assert_ptr_eq(line, text + 4);
	/* a caller that stops here sees unread text at pos */
	ck_assert_int_eq(*pos, 't');
	line = textscan_line(&pos, &eol);
	ck_assert_ptr_eq(eol, text + strlen(text));
	ck_assert_ptr_eq(pos, eol);
	ck_assert_ptr_null(textscan_line(&pos, &eol));
	ck_assert_ptr_null(textscan_line(&pos, &eol)); /* stays at the end */
}
END_TEST

/* Scanners chained over a /proc/PID/maps line, each bounded by the line's end. */
START_TEST(test_chain_maps_line)
{
	const char *text = "55d0c3a00000-55d0c3a02000 r-xp 00002000 fe:01 1314   /usr/bin/demo\n";
	const char *pos = text, *line, *eol, *p;
	uint64_t start, end, off, maj, min, ino;

	line = textscan_line(&pos, &eol);
	p = line;
	ck_assert_int_eq(textscan_x64(&p, eol, 16, &start), 0);
	ck_assert_int_eq(textscan_expect(&p, eol, "-"), 0);
	ck_assert_int_eq(textscan_x64(&p, eol, 16, &end), 0);
	ck_assert_int_eq(textscan_expect(&p, eol, " r-xp "), 0);
	ck_assert_int_eq(textscan_x64(&p, eol, 16, &off), 0);
	ck_assert_uint_eq(textscan_skip_spaces(&p, eol), 1);
	ck_assert_int_eq(textscan_x64(&p, eol, 8, &maj), 0);
	ck_assert_int_eq(textscan_expect(&p, eol, ":"), 0);
	ck_assert_int_eq(textscan_x64(&p, eol, 8, &min), 0);
	ck_assert_uint_eq(textscan_skip_spaces(&p, eol), 1);
	ck_assert_int_eq(textscan_u64(&p, eol, &ino), 0);
	ck_assert_uint_eq(textscan_skip_spaces(&p, eol), 3);
	ck_assert_uint_eq(start, 0x55d0c3a00000ull);
	ck_assert_uint_eq(end, 0x55d0c3a02000ull);
	ck_assert_uint_eq(off, 0x2000);
	ck_assert_uint_eq(maj, 0xfe);
	ck_assert_uint_eq(min, 1);
	ck_assert_uint_eq(ino, 1314);
	ck_assert_int_eq((int)(eol - p), 13);
	ck_assert(!memcmp(p, "/usr/bin/demo", 13));
}
END_TEST

/* Every prefix of a line, in an exact-size buffer: no scanner reads past @end, and each
 * either fails or stops inside the prefix. */
START_TEST(test_truncated_prefixes)
{
	static const char line[] = "7f00-7f01 rw-p 00000000 00:00 18446744073709551615 [heap]";
	size_t len;

	for (len = 0; len < sizeof(line) - 1; len++) {
		char *buf = unterminated(line, len);
		const char *p = buf, *e = buf + len;
		uint64_t v;

		if (!textscan_x64(&p, e, 16, &v))
			ck_assert(p <= e);
		p = buf;
		textscan_skip_spaces(&p, e);
		ck_assert(p <= e);
		p = buf;
		if (!textscan_expect(&p, e, "7f00-7f01 rw-p"))
			ck_assert_uint_ge(len, 14);
		p = buf + (len > 30 ? 30 : len);
		if (!textscan_u64(&p, e, &v))
			ck_assert(p <= e);
		free(buf);
	}
}
END_TEST

Suite *textscan_suite(void)
{
	Suite *s = suite_create("textscan");
	TCase *tc = tcase_create("numbers");

	tcase_add_test(tc, test_u64_basic);
	tcase_add_test(tc, test_u64_limits);
	tcase_add_test(tc, test_u64_roundtrip);
	tcase_add_test(tc, test_x64_basic);
	tcase_add_test(tc, test_x64_digit_limit);
	tcase_add_test(tc, test_x64_roundtrip);
	suite_add_tcase(s, tc);

	tc = tcase_create("text");
	tcase_add_test(tc, test_expect);
	tcase_add_test(tc, test_skip_spaces);
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_lines_early_exit);
	tcase_add_test(tc, test_chain_maps_line);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_test(tc, test_u64_empty_and_junk);
	tcase_add_test(tc, test_u64_end_bound);
	tcase_add_test(tc, test_x64_empty_and_bounds);
	tcase_add_test(tc, test_truncated_prefixes);
	suite_add_tcase(s, tc);
	return s;
}
