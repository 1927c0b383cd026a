/* Unit tests for what `perch report` adds on a synthetic profile: the HTML flame graph (golden
 * file fixtures/golden/flamegraph/report.html; the same frames as the SVG), the "perch" output
 * format (a whole profile as a recording in one go, read back the same) and the report filters
 * (--tid, --thread, --mode cpu, --start/--end) of report_apply().
 *
 * PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=report build/tests/unit/run rewrites the golden file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/out/writers.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"
#include "perch/report/report.h"
#include "testutil.h"

#define T0 7000000000ULL
#define MS 1000000ULL

/* Two threads over 100 ms: "main" (tid 10) runs hot() 7 samples and waits 3 ('S'), "io"
 * (tid 11) runs cold() 2 samples; one sample per 10 ms, thread 11 in the second half only. */
static struct profile *build(void)
{
	struct profile *p = profile_new();
	uint32_t exe = profile_intern_str(p, "/bin/app");
	struct profile_frame f = {0};
	uint32_t l_main, l_hot, l_cold, l_wait, s_hot, s_cold, s_wait, t10, t11;

	profile_keep_samples(p, 1);
	profile_set_meta(p, "pid", "10");
	profile_set_meta(p, "comm", "app");
	f.module = exe;
	f.name = profile_intern_str(p, "main");
	l_main = profile_intern_location(p, exe, 0x100, &f, 1);
	f.name = profile_intern_str(p, "hot");
	l_hot = profile_intern_location(p, exe, 0x200, &f, 1);
	f.name = profile_intern_str(p, "cold");
	l_cold = profile_intern_location(p, exe, 0x300, &f, 1);
	f.name = profile_intern_str(p, "[sleep nanosleep]");
	f.module = profile_intern_str(p, "[perch]");
	f.kind = PROFILE_FRAME_PSEUDO;
	l_wait = profile_intern_location(p, f.module, f.name, &f, 1);
	s_hot = profile_intern_stack(p, (uint32_t[]){l_hot, l_main}, 2);
	s_cold = profile_intern_stack(p, (uint32_t[]){l_cold, l_main}, 2);
	s_wait = profile_intern_stack(p, (uint32_t[]){l_wait, l_main}, 2);
	t10 = profile_thread(p, 10, "main");
	t11 = profile_thread(p, 11, "io");
	for (int i = 0; i < 10; i++) {
		int waits = i == 2 || i == 5 || i == 8;

		profile_add_sample(p, t10, waits ? s_wait : s_hot, T0 + (uint64_t)i * 10 * MS,
				   waits ? 'S' : 'R');
		if (i == 6 || i == 9)
			profile_add_sample(p, t11, s_cold, T0 + (uint64_t)i * 10 * MS + 1, 'R');
	}
	return p;
}

/* The text between @from and @to in @s (malloc'ed). */
static char *between(const char *s, const char *from, const char *to)
{
	const char *a = strstr(s, from), *b = a ? strstr(a, to) : NULL;

	ck_assert_msg(a && b, "no '%s' ... '%s'", from, to);
	return xstrndup(a, (size_t)(b - a));
}

START_TEST(test_html_flamegraph)
{
	struct profile *p = build();
	size_t len;
	char *html = testutil_render(out_flamegraph_html_write, p, NULL, &len);
	char *svg = testutil_render(out_flamegraph_write, p, NULL, NULL), *a, *b;

	ck_assert_msg(!strncmp(html, "<!DOCTYPE html>\n<html lang=\"en\">\n", 33), "%.80s", html);
	ck_assert_ptr_nonnull(strstr(html, "<title>perch: app pid 10</title>"));
	ck_assert_ptr_null(strstr(html, "<?xml"));
	ck_assert_ptr_null(strstr(html, "CDATA"));
	/* the script runs after the SVG it reads, inside the body */
	ck_assert(strstr(html, "</svg>\n<script>\n") &&
		  strstr(html, "</svg>\n<script>\n") <
		      strstr(html, "</script>\n</body>\n</html>\n"));
	/* no network: nothing loaded from anywhere */
	ck_assert_ptr_null(strstr(html, "src="));
	ck_assert_ptr_null(strstr(html, "href="));
	/* the same frames as the SVG */
	a = between(html, "<g id=\"frames\">", "<text id=\"details\"");
	b = between(svg, "<g id=\"frames\">", "<text id=\"details\"");
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "<title>hot (native, 7 samples, 58.3%)</title>"));
	testutil_check_golden("flamegraph/report.html", html, len);
	free(a);
	free(b);
	free(svg);
	free(html);
	profile_free(p);
}
END_TEST

/* --format perch: the whole profile as one recording, read back the same. */
START_TEST(test_perch_format)
{
	struct profile *p = build(), *back;
	struct recording_info info;
	size_t len;
	char *data = testutil_render(out_recording_write, p, NULL, &len), *x, *y;

	ck_assert_int_eq(recording_read_mem((const uint8_t *)data, len, &back, &info), 0);
	ck_assert_msg(info.complete, "%s", info.error);
	ck_assert_uint_eq(info.samples, 12);
	x = testutil_render(out_folded_write, p, NULL, NULL);
	y = testutil_render(out_folded_write, back, NULL, NULL);
	ck_assert_str_eq(x, y);
	ck_assert_str_eq(profile_meta(back, "comm"), "app");
	free(x);
	free(y);
	free(data);
	profile_free(back);
	profile_free(p);
}
END_TEST

static uint64_t total_after(const struct profile *p, const char *const *opts)
{
	struct report_filter f;
	struct profile *q;
	uint64_t n;

	report_filter_init(&f);
	for (; *opts; opts += 2)
		ck_assert_int_eq(report_filter_option(&f, opts[0], opts[1]), 0);
	q = report_apply(p, &f, NULL);
	n = profile_total_samples(q);
	/* meta copied, samples kept in order */
	ck_assert_str_eq(profile_meta(q, "comm"), "app");
	profile_free(q);
	report_filter_release(&f);
	return n;
}

#define OPTS(...) ((const char *const[]){__VA_ARGS__, NULL})

START_TEST(test_filters)
{
	struct profile *p = build();
	struct report_filter f;

	ck_assert_uint_eq(total_after(p, (const char *const[]){NULL}), 12);
	ck_assert_uint_eq(total_after(p, OPTS("tid", "11")), 2);
	ck_assert_uint_eq(total_after(p, OPTS("tid", "10,11")), 12);
	ck_assert_uint_eq(total_after(p, OPTS("thread", "^ma")), 10);
	ck_assert_uint_eq(total_after(p, OPTS("thread", "o$")), 2);
	ck_assert_uint_eq(total_after(p, OPTS("mode", "cpu")), 9);
	ck_assert_uint_eq(total_after(p, OPTS("mode", "wall")), 12);
	/* [0.05 s, ...): main 5..9 and io 6, 9; [.., 0.05 s): main 0..4 */
	ck_assert_uint_eq(total_after(p, OPTS("start", "0.05")), 7);
	ck_assert_uint_eq(total_after(p, OPTS("end", "0.05")), 5);
	ck_assert_uint_eq(total_after(p, OPTS("start", "0.02", "end", "0.07", "mode", "cpu")), 4);
	report_filter_init(&f);
	ck_assert_int_lt(report_filter_option(&f, "tid", "x"), 0);
	ck_assert_int_lt(report_filter_option(&f, "tid", ","), 0);
	ck_assert_int_lt(report_filter_option(&f, "thread", "("), 0);
	ck_assert_int_lt(report_filter_option(&f, "mode", "idle"), 0);
	ck_assert_int_lt(report_filter_option(&f, "start", "-1"), 0);
	ck_assert_int_lt(report_filter_option(&f, "end", "nan"), 0);
	report_filter_release(&f);
	profile_free(p);
}
END_TEST

Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_html_flamegraph);
	tcase_add_test(tc, test_perch_format);
	tcase_add_test(tc, test_filters);
	suite_add_tcase(s, tc);
	return s;
}
