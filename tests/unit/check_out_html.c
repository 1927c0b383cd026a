/* Unit tests of the report page writer (src/out/out-html.c) on a synthetic profile: the page around
 * the data block, and the block itself read back by the format in out-html.c's header comment
 * (our own reading: the page's decoder is checked in Chromium by tests/report). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perch/base/xalloc.h"
#include "perch/out/writers.h"
#include "perch/profile/profile.h"
#include "testutil.h"

#define T0 9000000000ULL
#define MS 1000000ULL

/* "main" (tid 10): 10 samples 10 ms apart, hot() or waiting in nanosleep; "io" (tid 11): 2
 * samples of cold(), one of weight 3; a CPU counter, a memory counter and a stall. */
static struct profile *build(int keep)
{
	struct profile *p = profile_new();
	uint32_t exe = profile_intern_str(p, "/bin/app"), l_main, l_hot, l_cold, l_wait;
	uint32_t s_hot, s_cold, s_wait, t10, t11;
	struct profile_frame f = {.module = exe};
	char stalls[128];

	profile_keep_samples(p, keep);
	profile_set_meta(p, "pid", "10");
	profile_set_meta(p, "comm", "app");
	profile_set_meta(p, "period_ns", "10000000");
	f.name = profile_intern_str(p, "main");
	l_main = profile_intern_location(p, exe, 0x100, &f, 1);
	f.name = profile_intern_str(p, "hot");
	l_hot = profile_intern_location(p, exe, 0x200, &f, 1);
	f.name = 0; /* a nameless frame: "[app+0x300]" */
	l_cold = profile_intern_location(p, exe, 0x300, &f, 1);
	f.name = profile_intern_str(p, "[sleep nanosleep]");
	f.kind = PROFILE_FRAME_PSEUDO;
	l_wait = profile_intern_location(p, 0, 1, &f, 1);
	s_hot = profile_intern_stack(p, (uint32_t[]){l_hot, l_main}, 2);
	s_cold = profile_intern_stack(p, (uint32_t[]){l_cold, l_main}, 2);
	s_wait = profile_intern_stack(p, (uint32_t[]){l_wait, l_main}, 2);
	t10 = profile_thread(p, 10, "main");
	t11 = profile_thread(p, 11, "io \"<x>\"");
	for (int i = 0; i < 10; i++) {
		int waits = i == 2 || i == 5 || i == 8;

		profile_add_sample(p, t10, waits ? s_wait : s_hot, T0 + (uint64_t)i * 10 * MS,
				   waits ? 'S' : 'R');
	}
	profile_add_sample(p, t11, s_cold, T0 + 61 * MS, 'R');
	profile_add_weighted(p, t11, s_cold, T0 + 95 * MS, 'R', 3);
	profile_set_meta(p, "counters", "cpu_usage rss_bytes other");
	profile_set_meta(p, "counter:cpu_usage", "9000000000=50.5 9100000000=75 bad 9050000000=1");
	profile_set_meta(p, "counter:rss_bytes", "9000000000=1048576 9090000000=2097152");
	profile_set_meta(p, "counter:other", "9000000000=1");
	snprintf(stalls, sizeof(stalls), "%llu 30000000 10 %u off-cpu 0 [sleep nanosleep]\n",
		 (unsigned long long)(T0 + 20 * MS), s_wait);
	profile_set_meta(p, "stalls", stalls);
	return p;
}

/* Data block @id ("perch-data" or "perch-samples") of @page, base64-decoded and inflated;
 * its size in *@len. */
static unsigned char *block(const char *page, const char *id, size_t *len)
{
	char *mark = xasprintf("id=\"%s\" type=\"application/octet-stream\">", id);
	const char *a = strstr(page, mark), *b;
	unsigned char *raw, *out;
	size_t n = 0, bits = 0;
	uint32_t acc = 0;
	uLongf outlen = 1 << 20;

	ck_assert_ptr_nonnull(a);
	a += strlen(mark);
	free(mark);
	b = strstr(a, "</script>");
	ck_assert_ptr_nonnull(b);
	raw = xmalloc((size_t)(b - a));
	for (const char *s = a; s < b && *s != '='; s++) {
		const char *v =
		    strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", *s);

		ck_assert_msg(v && *s, "not base64: '%c'", *s);
		acc =
		    acc << 6 | (uint32_t)(v - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					      "0123456789+/");
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			raw[n++] = (unsigned char)(acc >> bits);
		}
	}
	out = xmalloc(outlen);
	ck_assert_int_eq(uncompress(out, &outlen, raw, n), Z_OK);
	free(raw);
	*len = outlen;
	return out;
}

static uint64_t varint(const unsigned char **p)
{
	uint64_t v = 0;
	int shift = 0;

	do
		v |= (uint64_t)(**p & 0x7f) << shift, shift += 7;
	while (*(*p)++ & 0x80);
	return v;
}

/* Column @key of the JSON object at @obj ([offset, length] into @area): its @n varints must be
 * @want. */
static void check_col(const char *obj, const char *key, const unsigned char *area,
		      const uint64_t *want, size_t n)
{
	char *name = xasprintf("\"%s\":[", key);
	const char *col = strstr(obj, name);
	const unsigned char *v, *end;
	size_t off, len;

	ck_assert_msg(col, "no column %s", key);
	ck_assert_int_eq(sscanf(col + strlen(name), "%zu,%zu]", &off, &len), 2);
	v = area + off;
	end = v + len;
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(varint(&v), want[i]);
	ck_assert_msg(v == end, "column %s holds more than %zu values", key, n);
	free(name);
}

START_TEST(test_page)
{
	struct profile *p = build(1);
	size_t len, blen, jlen;
	char *page = testutil_render(out_report_html_write, p, NULL, &len);
	unsigned char *blk, *sblk;
	const unsigned char *area;
	char *json;
	const char *t;
	size_t slen;

	ck_assert_msg(!strncmp(page, "<!DOCTYPE html>", 15), "%.40s", page);
	ck_assert_ptr_null(strstr(page, "@PERCH_DATA@"));
	ck_assert_ptr_null(strstr(page, "@PERCH_SAMPLES@"));
	ck_assert_ptr_nonnull(strstr(page, "Content-Security-Policy"));
	ck_assert_ptr_nonnull(strstr(page, "uPlot"));
	ck_assert_ptr_nonnull(strstr(page, "The MIT License")); /* uPlot's licence kept */
	ck_assert_ptr_nonnull(strstr(page, "</html>\n"));
	blk = block(page, "perch-data", &blen);
	ck_assert_int_ge(blen, 12);
	ck_assert(!memcmp(blk, "PRPT\2\0\0\0", 8));
	jlen = blk[8] | blk[9] << 8 | blk[10] << 16 | (size_t)blk[11] << 24;
	ck_assert_uint_le(12 + jlen, blen);
	json = xstrndup((const char *)blk + 12, jlen);
	area = blk + 12 + jlen;
	/* what the header says, against the profile built above */
	ck_assert_ptr_nonnull(strstr(json, "\"total\":14,"));
	ck_assert_ptr_nonnull(strstr(json, "\"period_ns\":10000000,\"unit_ns\":1000000,"));
	ck_assert_ptr_nonnull(strstr(json, "\"t0_ns\":\"9000000000\",\"first\":0,"));
	ck_assert_ptr_nonnull(strstr(json, "\"name\":[\"main\",\"hot\",\"[sleep nanosleep]\","
					   "\"[app+0x300]\"]"));
	ck_assert_ptr_nonnull(strstr(json, "\"kind\":[0,0,1,0]"));
	ck_assert_ptr_nonnull(strstr(json, "\"nodes\":{\"n\":5,"));
	ck_assert_ptr_nonnull(strstr(json, "\"name\":\"io \\\"\\u003cx\\u003e\\\"\""));
	ck_assert_ptr_nonnull(strstr(json, "\"stalls\":[[20,30,10,3,\"off-cpu\",0,"
					   "\"[sleep nanosleep]\"]]"));
	ck_assert_ptr_nonnull(strstr(json,
				     "{\"name\":\"cpu_usage\",\"group\":\"cpu\",\"scale\":100,"
				     "\"n\":2,"));
	ck_assert_ptr_nonnull(strstr(json, "{\"name\":\"rss_bytes\",\"group\":\"mem\""));
	ck_assert_ptr_null(strstr(json, "\"other\""));
	ck_assert_ptr_null(strstr(json, "counter:"));
	/* thread 11's columns: times 61 and 95 ms (in 1 ms units), node dictionary, weights;
	 * the per-sample ones in the samples block */
	t = strstr(json, "{\"tid\":11,");
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t, "\"n\":2,\"weight\":4,\"nodes\":1"));
	sblk = block(page, "perch-samples", &slen);
	check_col(t, "time", sblk, (uint64_t[]){61, 34}, 2);
	check_col(t, "weight_col", sblk, (uint64_t[]){1, 0, 1, 2}, 4); /* runs (1, 0) (1, 2) */
	check_col(t, "state", sblk, (uint64_t[]){2, 'R'}, 2);
	check_col(t, "node", sblk, (uint64_t[]){1, 0}, 2);
	check_col(t, "dict_weight", area, (uint64_t[]){4}, 1);
	/* one span, running: 61 ms up to the next sample at 95 (34 ms: within the 4.5 periods
	 * that sample's weight 3 allows) and one period after it */
	ck_assert_ptr_nonnull(strstr(t, "\"classes\":[4,0,0,0,0,0,0,0,0],\"nr_spans\":1,"));
	check_col(t, "spans", area, (uint64_t[]){61, 44, 0}, 3);
	/* thread 10: running in hot() but at 20, 50 and 80 ms sleeping in nanosleep (S) */
	t = strstr(json, "{\"tid\":10,");
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t, "\"classes\":[7,0,3,0,0,0,0,0,0],\"nr_spans\":7,"));
	check_col(
	    t, "spans", area,
	    (uint64_t[]){0, 20, 0, 0, 10, 2, 0, 20, 0, 0, 10, 2, 0, 20, 0, 0, 10, 2, 0, 10, 0}, 21);
	check_col(t, "dict_weight", area, (uint64_t[]){7, 3}, 2);
	free(sblk);
	free(json);
	free(blk);
	free(page);
	profile_free(p);
}
END_TEST

/* Without samples in time order: the aggregated counts, all at t0. */
START_TEST(test_untimed)
{
	struct profile *p = build(0);
	size_t len, blen;
	char *page = testutil_render(out_report_html_write, p, NULL, &len);
	unsigned char *blk = block(page, "perch-data", &blen);
	char *json = xstrndup((const char *)blk + 12, blen - 12);

	ck_assert_ptr_nonnull(strstr(json, "\"timed\":0,\"total\":14"));
	ck_assert_ptr_nonnull(strstr(json, "\"tid\":10,\"pid\":10,\"name\":\"main\",\"n\":2,"
					   "\"weight\":10"));
	free(json);
	free(blk);
	free(page);
	profile_free(p);
}
END_TEST

/* A Java thread blocked on a monitor (art-thread.h's wait frame) has a class of its own, the
 * page's "Java monitor"; a Java wait counts as sleeping. */
START_TEST(test_java_lock)
{
	struct profile *p = profile_new();
	uint32_t exe = profile_intern_str(p, "/bin/app"), l_main, l_blocked, l_waiting, t;
	struct profile_frame f = {.module = exe};
	size_t len, blen;
	char *page, *json;
	unsigned char *blk;

	profile_keep_samples(p, 1);
	profile_set_meta(p, "period_ns", "10000000");
	f.name = profile_intern_str(p, "main");
	l_main = profile_intern_location(p, exe, 0x100, &f, 1);
	f.kind = PROFILE_FRAME_PSEUDO;
	f.name = profile_intern_str(p, "[java blocked on java.lang.Object held by tid 7]");
	l_blocked = profile_intern_location(p, 0, 1, &f, 1);
	f.name = profile_intern_str(p, "[java waiting on java.lang.Object]");
	l_waiting = profile_intern_location(p, 0, 2, &f, 1);
	t = profile_thread(p, 10, "main");
	for (int i = 0; i < 4; i++)
		profile_add_sample(
		    p, t,
		    profile_intern_stack(p, (uint32_t[]){i < 3 ? l_blocked : l_waiting, l_main}, 2),
		    T0 + (uint64_t)i * 10 * MS, 'S');
	page = testutil_render(out_report_html_write, p, NULL, &len);
	blk = block(page, "perch-data", &blen);
	json = xstrndup((const char *)blk + 12, blen - 12);
	ck_assert_msg(strstr(json, "\"classes\":[0,0,1,0,0,0,3,0,0]"), "%.300s",
		      strstr(json, "\"classes\"") ? strstr(json, "\"classes\"") : json);
	free(json);
	free(blk);
	free(page);
	profile_free(p);
}
END_TEST

START_TEST(test_enospc)
{
	struct profile *p = build(1);

	testutil_check_enospc(out_report_html_write, p);
	profile_free(p);
}
END_TEST

Suite *out_html_suite(void)
{
	Suite *s = suite_create("out_html");
	TCase *tc = tcase_create("page");

	tcase_add_test(tc, test_page);
	tcase_add_test(tc, test_untimed);
	tcase_add_test(tc, test_java_lock);
	tcase_add_test(tc, test_enospc);
	suite_add_tcase(s, tc);
	return s;
}
