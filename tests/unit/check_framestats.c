/* Unit tests for framestats: the captures in tests/fake-adb/framestats (the gfxinfo output of
 * several Android generations, written from Android's documentation of `dumpsys gfxinfo PKG
 * framestats` and hwui's FrameInfoNames; see the README there) parse to the frames they were
 * written from: durations FrameCompleted - IntendedVsync, rows with non-zero Flags left out,
 * repeated polls merged, the budget from FrameInterval or the vsync spacing. The expected
 * figures are the frame lists in that README, so this checks our reading of the format
 * against the documentation, not against a device. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/out/writers.h"
#include "perch/proc/framestats.h"
#include "perch/profile/profile.h"
#include "testutil.h"

#define MS   1000000ULL
#define T0   10158314881426ULL
#define P60  16666666ULL
#define P120 8333333ULL

static const char *capture(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "tests/fake-adb/framestats/%s", name);
	return path;
}

/* @fs holds exactly the frames starting at T0 + idx[i] * @period lasting dur_ms[i]. */
static void expect_frames(const struct framestats *fs, uint64_t period, const int *idx,
			  const int *dur_ms, size_t n)
{
	ck_assert_uint_eq(fs->n, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(fs->v[i].start_ns, T0 + (uint64_t)idx[i] * period);
		ck_assert_uint_eq(fs->v[i].end_ns - fs->v[i].start_ns, (uint64_t)dur_ms[i] * MS);
	}
}

static const int idx60[] = {1, 2, 3, 5, 6, 55};
static const int dur60[] = {8, 10, 30, 12, 800, 9};

static void check_60hz_capture(const char *name)
{
	struct framestats fs;
	size_t slow = 0, frozen = 0;

	framestats_init(&fs);
	ck_assert_int_eq(framestats_load(&fs, capture(name)), 0);
	expect_frames(&fs, P60, idx60, dur60, 6);
	ck_assert_uint_eq(fs.flagged, 1); /* the first frame: WindowLayoutChanged */
	framestats_fill_budget(&fs, 0);
	for (size_t i = 0; i < fs.n; i++) {
		ck_assert_uint_eq(fs.v[i].budget_ns, P60); /* estimated from the vsync spacing */
		slow += framestats_classify(&fs.v[i]) == FRAMESTATS_SLOW;
		frozen += framestats_classify(&fs.v[i]) == FRAMESTATS_FROZEN;
	}
	ck_assert_uint_eq(slow, 1);   /* 30 ms */
	ck_assert_uint_eq(frozen, 1); /* 800 ms, not counted as slow too */
	framestats_release(&fs);
}

START_TEST(test_android6)
{
	check_60hz_capture("android-6.txt");
}
END_TEST

START_TEST(test_android9)
{
	check_60hz_capture("android-9.txt");
}
END_TEST

/* Two polls whose rings overlap (frames 2 and 3 in both): every frame once. */
START_TEST(test_two_polls_dedup)
{
	struct framestats fs;

	framestats_init(&fs);
	ck_assert_int_eq(framestats_load(&fs, capture("android-12-two-polls.txt")), 0);
	ck_assert_uint_eq(fs.blocks, 2);
	expect_frames(&fs, P60, idx60, dur60, 6);
	ck_assert_uint_eq(fs.flagged, 1);
	/* a third poll of the same text adds nothing */
	ck_assert_int_eq(framestats_load(&fs, capture("android-12-two-polls.txt")), 0);
	ck_assert_uint_eq(fs.n, 6);
	ck_assert_uint_eq(fs.flagged, 1);
	ck_assert_uint_eq(fs.gaps, 0);
	framestats_release(&fs);
}
END_TEST

/* Android 13+: FrameInterval gives each frame its budget (120 Hz: 8.3 ms), whatever the
 * fallback says; 12 ms and 9 ms frames are slow there. */
START_TEST(test_android14_frame_interval)
{
	static const int idx[] = {0, 1, 2, 3, 6}, dur[] = {5, 7, 12, 6, 9};
	struct framestats fs;
	size_t slow = 0;

	framestats_init(&fs);
	ck_assert_int_eq(framestats_load(&fs, capture("android-14-120hz.txt")), 0);
	expect_frames(&fs, P120, idx, dur, 5);
	ck_assert_uint_eq(fs.flagged, 1); /* Flags 4 (SurfaceCanvas) */
	framestats_fill_budget(&fs, P60);
	for (size_t i = 0; i < fs.n; i++) {
		ck_assert_uint_eq(fs.v[i].budget_ns, P120);
		slow += framestats_classify(&fs.v[i]) == FRAMESTATS_SLOW;
	}
	ck_assert_uint_eq(slow, 2);
	framestats_release(&fs);
}
END_TEST

START_TEST(test_missing_column)
{
	struct framestats fs;

	framestats_init(&fs);
	ck_assert_int_eq(framestats_load(&fs, capture("no-completed.txt")), -EINVAL);
	ck_assert_msg(strstr(fs.error, "no FrameCompleted column"), "error: %s", fs.error);
	framestats_release(&fs);
	framestats_init(&fs);
	ck_assert_int_eq(framestats_parse(&fs, "---PROFILEDATA---\nFlags,Vsync,FrameCompleted,\n"
					       "---PROFILEDATA---\n"),
			 -EINVAL);
	ck_assert_msg(strstr(fs.error, "no IntendedVsync column"), "error: %s", fs.error);
	framestats_release(&fs);
}
END_TEST

START_TEST(test_bad_input)
{
	struct framestats fs;

	framestats_init(&fs);
	/* not a framestats dump: the app is not running */
	ck_assert_int_eq(framestats_parse(&fs, "No process found for: com.example.x\n"), -ENOENT);
	ck_assert_msg(strstr(fs.error, "PROFILEDATA"), "error: %s", fs.error);
	/* a row with garbage in a required column names the line and column */
	ck_assert_int_eq(framestats_parse(&fs, "---PROFILEDATA---\n"
					       "Flags,IntendedVsync,Vsync,FrameCompleted,\n"
					       "0,100,100,x200,\n---PROFILEDATA---\n"),
			 -EINVAL);
	ck_assert_msg(strstr(fs.error, "line 3") && strstr(fs.error, "FrameCompleted"), "error: %s",
		      fs.error);
	/* a row too short for its header */
	ck_assert_int_eq(framestats_parse(&fs, "---PROFILEDATA---\n"
					       "Flags,IntendedVsync,Vsync,FrameCompleted,\n"
					       "0,100,\n"),
			 -EINVAL);
	ck_assert_uint_eq(fs.n, 0);
	framestats_release(&fs);
}
END_TEST

/* CRLF line ends (adb shell on old devices), a cut-short dump, an incomplete frame (no
 * FrameCompleted yet) and columns in any order. */
START_TEST(test_tolerated)
{
	struct framestats fs;

	framestats_init(&fs);
	ck_assert_int_eq(framestats_parse(&fs, "junk\r\n---PROFILEDATA---\r\n"
					       "FrameCompleted,Vsync,Flags,IntendedVsync,\r\n"
					       "3000000,1000000,0,1000000,\r\n"
					       "0,1016666,0,1016666,\r\n"
					       "70000000,50000000,0,50000000,\r\n"),
			 0);
	ck_assert_uint_eq(fs.n, 2);
	ck_assert_uint_eq(fs.incomplete, 1);
	ck_assert_uint_eq(fs.v[0].start_ns, 1000000);
	ck_assert_uint_eq(fs.v[0].end_ns, 3000000);
	ck_assert_uint_eq(fs.v[1].end_ns, 70000000);
	framestats_release(&fs);
}
END_TEST

/* A full ring (120 rows) that starts after the newest frame already seen: a gap. */
START_TEST(test_gap)
{
	struct strbuf_like {
		char *s;
		size_t len;
	} b = {xmalloc(64 * 1024), 0};
	struct framestats fs;

	for (int poll = 0; poll < 2; poll++) {
		b.len = (size_t)sprintf(b.s, "---PROFILEDATA---\nFlags,IntendedVsync,Vsync,"
					     "FrameCompleted,\n");
		for (int i = 0; i < FRAMESTATS_RING; i++) {
			uint64_t t = (uint64_t)(poll * 1000 + i) * P60;

			b.len += (size_t)sprintf(
			    b.s + b.len, "0,%llu,%llu,%llu,\n", (unsigned long long)t + 1,
			    (unsigned long long)t + 1, (unsigned long long)t + 5 * MS);
		}
		strcpy(b.s + b.len, "---PROFILEDATA---\n");
		if (!poll)
			framestats_init(&fs);
		ck_assert_int_eq(framestats_parse(&fs, b.s), 0);
	}
	ck_assert_uint_eq(fs.n, 2 * FRAMESTATS_RING);
	ck_assert_uint_eq(fs.gaps, 1);
	framestats_release(&fs);
	free(b.s);
}
END_TEST

START_TEST(test_meta_roundtrip)
{
	struct framestats_frame in[] = {{5 * MS, 40 * MS, P60}, {1 * MS, 3 * MS, P60}}, *out;
	char *text = framestats_meta_format(in, 2);
	size_t n = framestats_meta_parse(text, &out);

	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(out[0].start_ns, 1 * MS); /* sorted */
	ck_assert_uint_eq(out[1].end_ns, 40 * MS);
	ck_assert_uint_eq(out[1].budget_ns, P60);
	free(out);
	free(text);
	ck_assert_uint_eq(framestats_meta_parse("1 2\n5 3 7\nx 1 2\n1 5 9 extra\n", &out), 0);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(framestats_meta_parse(NULL, &out), 0);
}
END_TEST

static uint32_t stack_of(struct profile *p, const char *leaf, const char *root)
{
	struct profile_frame f[2] = {0};
	uint32_t locs[2];

	f[0].name = profile_intern_str(p, leaf);
	f[1].name = profile_intern_str(p, root);
	locs[0] = profile_intern_location(p, 0, 0x1000 + (uint64_t)f[0].name, &f[0], 1);
	locs[1] = profile_intern_location(p, 0, 0x2000 + (uint64_t)f[1].name, &f[1], 1);
	return profile_intern_stack(p, locs, 2);
}

/* framestats_store keeps the frames the samples overlap; the summary lists the slow frame
 * with the main thread's (tid = pid) stacks inside it, not another thread's. */
START_TEST(test_store_and_summary)
{
	struct profile *p = profile_new();
	struct framestats fs;
	uint32_t main_t, other, draw, jank;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	profile_keep_samples(p, 1);
	profile_set_meta(p, "pid", "42");
	other = profile_thread(p, 43, "worker");
	main_t = profile_thread(p, 42, "app");
	draw = stack_of(p, "draw_frame", "main");
	jank = stack_of(p, "jank_frame", "main");
	for (uint64_t t = 100; t < 400; t += 5) {
		profile_add_sample(p, main_t, t >= 200 && t < 240 ? jank : draw, t * MS, 'R');
		profile_add_sample(p, other, draw, t * MS, 'R');
	}
	framestats_init(&fs);
	ck_assert_int_eq(framestats_parse(&fs, "---PROFILEDATA---\n"
					       "Flags,IntendedVsync,Vsync,FrameCompleted,\n"
					       "0,10000000,10000000,20000000,\n" /* before */
					       "0,150000000,150000000,155000000,\n"
					       "0,200000000,200000000,240000000,\n" /* slow */
					       "0,500000000,500000000,505000000,\n" /* after */
					       "---PROFILEDATA---\n"),
			 0);
	framestats_fill_budget(&fs, P60);
	framestats_store(&fs, p);
	ck_assert_str_eq(profile_meta(p, "frames"),
			 "150000000 155000000 16666666\n200000000 240000000 16666666\n");
	ck_assert_str_eq(profile_meta(p, "frame_counts"), "2 1 0 0 0");
	f = open_memstream(&buf, &len);
	framestats_print_summary(p, 5, 100 * MS, "perch: ", f);
	fclose(f);
	ck_assert_msg(strstr(buf, "perch: frames: 2 (1 slow over the 16.7 ms frame budget, 0 "
				  "frozen over 700 ms)"),
		      "%s", buf);
	ck_assert_msg(strstr(buf, "40.0 ms at +0.100 s  slow"), "%s", buf);
	ck_assert_msg(strstr(buf, "8 of 8 samples in jank_frame <- main"), "%s", buf);
	ck_assert_msg(!strstr(buf, "draw_frame"), "%s", buf);
	free(buf);
	framestats_release(&fs);
	profile_free(p);
}
END_TEST

/* The writers: a slow frame is a "slow frame" slice on a "frames" track at its time (µs from
 * the first sample), two overlapping frames go to two lanes; the Sentry chunk carries the
 * slow frame's duration, the frozen one's, and 60 Hz once. */
START_TEST(test_writers)
{
	struct profile *p = profile_new();
	uint32_t t, st;
	char *text;

	profile_keep_samples(p, 1);
	profile_set_meta(p, "pid", "42");
	profile_set_meta(p, "start_time_ns", "1700000000000000000");
	t = profile_thread(p, 42, "app");
	st = stack_of(p, "draw_frame", "main");
	for (uint64_t ms = 1000; ms < 3000; ms += 10)
		profile_add_sample(p, t, st, ms * MS, 'R');
	profile_set_meta(p, "frames",
			 "1100000000 1140000000 16666666\n"
			 "1130000000 1135000000 16666666\n"
			 "2000000000 2800000000 16666666\n");
	text = testutil_render(out_chrome_write, p, NULL, NULL);
	ck_assert_msg(strstr(text, "\"name\": \"thread_name\", \"pid\": 42, \"tid\": 1207959552, "
				   "\"args\": {\"name\": \"frames\"}") &&
			  strstr(text, "\"tid\": 1207959553, \"args\": {\"name\": \"frames 2\"}"),
		      "%s", text);
	ck_assert_msg(strstr(text, "{\"ph\": \"X\", \"name\": \"slow frame\", \"cat\": \"frame\", "
				   "\"pid\": 42, \"tid\": 1207959552, \"ts\": 100000.000, \"dur\": "
				   "40000.000"),
		      "%s", text);
	ck_assert_msg(strstr(text, "\"name\": \"frame\", \"cat\": \"frame\", \"pid\": 42, "
				   "\"tid\": 1207959553, \"ts\": 130000.000, \"dur\": 5000.000"),
		      "%s", text);
	ck_assert_msg(strstr(text, "\"name\": \"frozen frame\""), "%s", text);
	free(text);
	text = testutil_render(out_sentry_write, p, NULL, NULL);
	ck_assert_msg(strstr(text, "\"slow_frame_renders\": {\"unit\": \"nanosecond\", \"values\": "
				   "[{\"timestamp\": 1700000000.140000, \"value\": 40000000}]}"),
		      "%s", text);
	ck_assert_msg(strstr(text, "\"frozen_frame_renders\": {\"unit\": \"nanosecond\", "
				   "\"values\": [{\"timestamp\": 1700000001.800000, \"value\": "
				   "800000000}]}"),
		      "%s", text);
	ck_assert_msg(strstr(text, "\"screen_frame_rates\": {\"unit\": \"hz\", \"values\": "
				   "[{\"timestamp\": 1700000000.140000, \"value\": 60.0000024"),
		      "%s", text);
	free(text);
	profile_free(p);
}
END_TEST

Suite *framestats_suite(void)
{
	Suite *s = suite_create("framestats");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_android6);
	tcase_add_test(tc, test_android9);
	tcase_add_test(tc, test_two_polls_dedup);
	tcase_add_test(tc, test_android14_frame_interval);
	tcase_add_test(tc, test_missing_column);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_tolerated);
	tcase_add_test(tc, test_gap);
	suite_add_tcase(s, tc);
	tc = tcase_create("meta");
	tcase_add_test(tc, test_meta_roundtrip);
	tcase_add_test(tc, test_store_and_summary);
	tcase_add_test(tc, test_writers);
	suite_add_tcase(s, tc);
	return s;
}
