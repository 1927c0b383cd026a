/* Unit tests for the pprof, speedscope, Chrome trace and flame graph writers on a synthetic
 * timeline, against golden files in fixtures/golden/<format>/, and through their real
 * consumers when installed: go tool pprof, protoc, python3 (+ jsonschema with speedscope's own
 * schema), headless Chromium. A consumer that is missing is reported as "SKIP: ..." on stderr.
 *
 * Golden files: PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=writers build/tests/unit/run rewrites them
 * (review the diff like code). pprof's golden file is the uncompressed message, so a zlib
 * upgrade does not change it. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "perch/base/xalloc.h"
#include "perch/out/writers.h"
#include "perch/profile/profile.h"
#include "testutil.h"

#define T0     1000000000000ULL /* CLOCK_MONOTONIC of the first tick */
#define PERIOD 10000000ULL	/* 10 ms */
#define EVIL_NAME                                                                                  \
	"q\"uote <tag> & \x01"                                                                     \
	"ctl \xff\xfe bad \xe2\x82 trunc </script> ]]> \xe2\x80\xa8 end"
#define EVIL_THREAD "ev\"il</script>]]>\x01\xff"

/* One run of a thread's script: @n samples of @stack (-1: a gap of @n ticks). */
struct run {
	int stack;
	int n;
	char state;
};

enum {
	S_CA,
	S_MEMCPY,
	S_CB,
	S_REC,
	S_NONAME,
	S_READ,
	S_NOFRAMES,
	S_DIGITS,
	S_EVIL,
	S_JIT,
	S_EMPTY,
	NR_STACKS
};

struct event {
	uint64_t t;
	uint32_t thread, stack;
	char state;
};

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

/* The synthetic profile; each thread follows its script, one sample per 10 ms tick, thread
 * i sampled i µs after the tick. Expected values in the tests come from these scripts. */
static struct profile *build_profile(void)
{
	static const struct run t1[] = {{S_CA, 6, 'R'},	    {S_MEMCPY, 2, 'R'}, {S_CB, 1, 'R'},
					{S_REC, 2, 'R'},    {-1, 2, 0},		{S_CA, 6, 'R'},
					{S_NONAME, 1, 'S'}, {0, 0, 0}};
	static const struct run t2[] = {{S_READ, 10, 'D'},
					{S_NOFRAMES, 2, 'R'},
					{S_DIGITS, 2, 'R'},
					{S_EVIL, 1, 'R'},
					{0, 0, 0}};
	static const struct run t3[] = {
	    {S_JIT, 4, 'R'}, {S_EMPTY, 3, 'S'}, {S_JIT, 1, 'R'}, {0, 0, 0}};
	static const struct run t4[] = {{S_CA, 1, 0}, {0, 0, 0}};
	static const struct run t5[] = {{S_EVIL, 1, 'R'}, {0, 0, 0}};
	static const struct run *const scripts[] = {t1, t2, t3, t4, t5};
	struct profile *p = profile_new();
	uint32_t demo = profile_intern_str(p, "/usr/bin/demo");
	uint32_t libc = profile_intern_str(p, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t jit = profile_intern_str(p, "/memfd:jit-cache");
	struct profile_frame f, inl[2];
	uint32_t l_start, l_libc, l_main, l_ca, l_cb, l_memcpy, l_worker, l_read, l_weird, l_digits;
	uint32_t l_jit, l_interp, l_noname, l_noframes, l_rec1, l_rec2, l_evil;
	uint32_t stacks[NR_STACKS], threads[5];
	struct event *ev = NULL;
	size_t nr_ev = 0, alloc_ev = 0, i;
	char buf[256];

#define FRAME(name_, file_, line_, module_, kind_)                                                 \
	(memset(&f, 0, sizeof(f)), f.name = profile_intern_str(p, name_),                          \
	 f.file = profile_intern_str(p, file_), f.line = line_, f.module = module_,                \
	 f.kind = kind_, &f)
#define LOC(module_, addr_, frame_) profile_intern_location(p, module_, addr_, frame_, 1)
#define STACK(...)                                                                                 \
	({                                                                                         \
		uint32_t s_[] = {__VA_ARGS__};                                                     \
		profile_intern_stack(p, s_, ARRAY_SIZE(s_));                                       \
	})
	profile_keep_samples(p, 1);
	l_start = LOC(demo, 0x1040, FRAME("_start", "", 0, demo, PROFILE_FRAME_NATIVE));
	l_libc =
	    LOC(libc, 0x27200,
		FRAME("__libc_start_main", "../csu/libc-start.c", 360, libc, PROFILE_FRAME_NATIVE));
	l_main =
	    LOC(demo, 0x1150, FRAME("main", "/src/demo/main.c", 20, demo, PROFILE_FRAME_NATIVE));
	memset(inl, 0, sizeof(inl)); /* compute with helper() inlined: innermost first */
	inl[0].name = profile_intern_str(p, "helper");
	inl[0].file = profile_intern_str(p, "/src/demo/util.h");
	inl[0].line = 5;
	inl[0].module = demo;
	inl[0].inlined = 1;
	inl[1].name = profile_intern_str(p, "compute");
	inl[1].file = profile_intern_str(p, "/src/demo/compute.c");
	inl[1].line = 30;
	inl[1].module = demo;
	l_ca = profile_intern_location(p, demo, 0x1200, inl, 2);
	l_cb = LOC(demo, 0x1210,
		   FRAME("compute", "/src/demo/compute.c", 31, demo, PROFILE_FRAME_NATIVE));
	l_memcpy = LOC(libc, 0x9a000, FRAME("memcpy", "", 0, libc, PROFILE_FRAME_NATIVE));
	l_worker = LOC(demo, 0x1300,
		       FRAME("worker", "/src/demo/worker.c", 12, demo, PROFILE_FRAME_NATIVE));
	l_read =
	    LOC(0, 0xffffffff81000000ULL, FRAME("__x64_sys_read", "", 0, 0, PROFILE_FRAME_KERNEL));
	l_weird =
	    LOC(demo, 0x1400, FRAME("odd;name\nwith\rcontrol", "", 0, demo, PROFILE_FRAME_NATIVE));
	l_digits = LOC(demo, 0x1500,
		       FRAME("operator new 12", "/src/demo/new.cc", 7, demo, PROFILE_FRAME_NATIVE));
	l_jit = LOC(jit, 0x9debc100,
		    FRAME("com.example.Foo.bar(int)", "Foo.java", 88, jit, PROFILE_FRAME_JIT));
	l_interp =
	    LOC(0, 0x7000, FRAME("com.example.Foo.baz()", "Foo.java", 91, 0, PROFILE_FRAME_INTERP));
	l_noname = LOC(demo, 0x1600, FRAME("", "", 0, demo, PROFILE_FRAME_NATIVE));
	l_noframes = profile_intern_location(p, libc, 0x1234, NULL, 0);
	l_rec1 =
	    LOC(demo, 0x1700, FRAME("recurse", "/src/demo/rec.c", 3, demo, PROFILE_FRAME_NATIVE));
	l_rec2 =
	    LOC(demo, 0x1710, FRAME("recurse", "/src/demo/rec.c", 4, demo, PROFILE_FRAME_NATIVE));
	l_evil =
	    LOC(demo, 0x1800, FRAME(EVIL_NAME, "/src/\"x\"<&>.c", 9, demo, PROFILE_FRAME_NATIVE));

	stacks[S_CA] = STACK(l_ca, l_main, l_libc, l_start);
	stacks[S_MEMCPY] = STACK(l_memcpy, l_ca, l_main, l_libc, l_start);
	stacks[S_CB] = STACK(l_cb, l_main, l_libc, l_start);
	stacks[S_REC] = STACK(l_rec1, l_rec2, l_rec1, l_main, l_libc, l_start);
	stacks[S_NONAME] = STACK(l_noname, l_main);
	stacks[S_READ] = STACK(l_read, l_worker);
	stacks[S_NOFRAMES] = STACK(l_noframes, l_worker);
	stacks[S_DIGITS] = STACK(l_digits, l_weird, l_main);
	stacks[S_EVIL] = STACK(l_evil, l_worker);
	stacks[S_JIT] = STACK(l_interp, l_jit, l_worker);
	stacks[S_EMPTY] = profile_intern_stack(p, NULL, 0);
#undef FRAME
#undef LOC
#undef STACK

	threads[0] = profile_thread(p, 1234, "perch demo");
	threads[1] = profile_thread(p, 1240, "worker;1");
	threads[2] = profile_thread(p, 1250, "gc");
	threads[3] = profile_thread(p, 1260, "");
	threads[4] = profile_thread(p, 1270, EVIL_THREAD);
	for (i = 0; i < ARRAY_SIZE(scripts); i++) {
		const struct run *r;
		uint64_t tick = 0;
		int k;

		for (r = scripts[i]; r->n; r++) {
			for (k = 0; k < r->n; k++, tick++) {
				if (r->stack < 0)
					continue;
				ALLOC_GROW(ev, nr_ev + 1, alloc_ev);
				ev[nr_ev++] =
				    (struct event){T0 + tick * PERIOD + i * 1000, threads[i],
						   stacks[r->stack], r->state};
			}
		}
	}
	qsort(ev, nr_ev, sizeof(*ev), cmp_event);
	for (i = 0; i < nr_ev; i++)
		profile_add_sample(p, ev[i].thread, ev[i].stack, ev[i].t, ev[i].state);
	free(ev);

	profile_set_meta(p, "pid", "1234");
	profile_set_meta(p, "comm", "perch-demo");
	profile_set_meta(p, "period_ns", "10000000");
	profile_set_meta(p, "start_time_ns", "1700000000000000000");
	profile_set_meta(p, "build_id:/usr/bin/demo", "0123456789abcdef0123456789abcdef01234567");
	profile_set_meta(p, "counters", "cpu_percent  rss_bytes bogus");
	snprintf(buf, sizeof(buf), "%llu=97.5 %llu=55 junk 12=x %llu=nan %llu=12.25x", T0,
		 T0 + 50000000ULL, T0 + 60000000ULL, T0 + 70000000ULL);
	profile_set_meta(p, "counter:cpu_percent", buf);
	snprintf(buf, sizeof(buf), "%llu=10485760 %llu=11534336", T0, T0 + 100000000ULL);
	profile_set_meta(p, "counter:rss_bytes", buf);
	return p;
}

#define DEMO_TOTAL 43 /* 18 + 15 + 8 + 1 + 1 from the scripts */

/* consumers */

#define SPEEDSCOPE_SCHEMA "schemas/speedscope-1.25.0-file-format-schema.json"

/* python3 tests/unit/py/check_writers.py KIND FILE [FIXTURE]: must pass. @fixture is a path
 * under the fixtures directory. */
static void py_check(const char *kind, const char *path, const char *fixture)
{
	const char *dir = getenv("PERCH_FIXTURES");
	char *cmd, *out;
	int st;

	if (!testutil_have_tool("python3"))
		return;
	if (fixture)
		cmd = xasprintf("python3 tests/unit/py/check_writers.py %s '%s' '%s/%s'", kind,
				path, dir ? dir : "fixtures", fixture);
	else
		cmd = xasprintf("python3 tests/unit/py/check_writers.py %s '%s'", kind, path);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s failed (%d):\n%.3000s", cmd, st, out);
	if (strstr(out, "skip:"))
		fprintf(stderr, "SKIP: %s", strstr(out, "skip:") + 5);
	free(out);
	free(cmd);
}

/* pprof */

static char *gunzip(const char *gz, size_t len, size_t *out_len)
{
	z_stream zs;
	char *out = NULL;
	size_t alloc = 0;
	int ret;

	memset(&zs, 0, sizeof(zs));
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (unsigned char *)gz;
	zs.avail_in = (uInt)len;
	do {
		ALLOC_GROW(out, zs.total_out + 65536, alloc);
		zs.next_out = (unsigned char *)out + zs.total_out;
		zs.avail_out = (uInt)(alloc - zs.total_out);
		ret = inflate(&zs, Z_NO_FLUSH);
		ck_assert_msg(ret == Z_OK || ret == Z_STREAM_END, "inflate: %d", ret);
	} while (ret != Z_STREAM_END);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

/* A minimal protobuf reader for the checks below: bounds-checked, -1 on malformed input. */
struct pbr {
	const unsigned char *p, *end;
};

static int pbr_varint(struct pbr *r, uint64_t *v)
{
	int shift;

	*v = 0;
	for (shift = 0; shift < 64 && r->p < r->end; shift += 7) {
		unsigned char b = *r->p++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* Next field of @r: number, wire type, and the varint value or the bytes. 1 = got one, 0 = end,
 * -1 = malformed. */
static int pbr_next(struct pbr *r, unsigned int *field, uint64_t *v, struct pbr *sub)
{
	uint64_t key;

	if (r->p == r->end)
		return 0;
	if (pbr_varint(r, &key))
		return -1;
	*field = (unsigned int)(key >> 3);
	switch (key & 7) {
	case 0:
		return pbr_varint(r, v) ? -1 : 1;
	case 2:
		if (pbr_varint(r, v) || *v > (uint64_t)(r->end - r->p))
			return -1;
		sub->p = r->p;
		sub->end = r->p + *v;
		r->p += *v;
		return 1;
	default:
		return -1;
	}
}

/* Walk the Profile: string_table[0] == "", every sample has 2 values (count, count x period),
 * the counts add up to @total, every string is valid UTF-8 without control characters. */
static void check_pprof_message(const char *msg, size_t len, uint64_t total)
{
	struct pbr r = {(const unsigned char *)msg, (const unsigned char *)msg + len}, sub, s2;
	unsigned int field, f2;
	uint64_t v, v2, sum = 0, nr_strings = 0;
	int ret;

	while ((ret = pbr_next(&r, &field, &v, &sub)) == 1) {
		if (field == 6) {
			const unsigned char *c;

			if (!nr_strings++)
				ck_assert_msg(v == 0, "string_table[0] is not empty");
			for (c = sub.p; c < sub.end; c++)
				ck_assert_msg(*c >= 0x20 && *c != 0x7f, "control byte in a string");
		}
		if (field == 2) {
			int nvals = 0;
			uint64_t vals[2] = {0, 0};

			while ((ret = pbr_next(&sub, &f2, &v2, &s2)) == 1) {
				if (f2 != 2)
					continue;
				while (s2.p < s2.end) { /* packed values */
					ck_assert_int_eq(pbr_varint(&s2, &v), 0);
					ck_assert_int_lt(nvals, 2);
					vals[nvals++] = v;
				}
			}
			ck_assert_int_eq(ret, 0);
			ck_assert_int_eq(nvals, 2);
			ck_assert_uint_eq(vals[1], vals[0] * PERIOD);
			sum += vals[0];
		}
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(sum, total);
	ck_assert_uint_gt(nr_strings, 1);
}

START_TEST(test_pprof_golden)
{
	struct profile *p = build_profile();
	size_t len, rlen;
	char *gz = testutil_render(out_pprof_write, p, NULL, &len), *raw;

	ck_assert_uint_eq(profile_total_samples(p), DEMO_TOTAL);
	ck_assert_uint_ge(len, 18);
	ck_assert_int_eq((unsigned char)gz[0], 0x1f); /* gzip magic */
	ck_assert_int_eq((unsigned char)gz[1], 0x8b);
	raw = gunzip(gz, len, &rlen);
	check_pprof_message(raw, rlen, DEMO_TOTAL);
	/* strings the spec asks for, and the hostile name made valid UTF-8 */
	ck_assert_ptr_nonnull(memmem(raw, rlen, "\x32\x00", 2));
	ck_assert_ptr_nonnull(memmem(raw, rlen, "thread_name", 11));
	ck_assert_ptr_nonnull(memmem(raw, rlen, "0123456789abcdef0123456789abcdef01234567", 40));
	ck_assert_ptr_nonnull(memmem(raw, rlen,
				     "q\"uote <tag> & _ctl \xef\xbf\xbd\xef\xbf\xbd bad "
				     "\xef\xbf\xbd\xef\xbf\xbd trunc",
				     43));
	testutil_check_golden("pprof/demo.pb", raw, rlen);
	/* deterministic: the same bytes again */
	free(raw);
	free(gz);
	gz = testutil_render(out_pprof_write, p, NULL, &rlen);
	ck_assert_uint_eq(rlen, len);
	free(gz);
	profile_free(p);
}
END_TEST

/* go tool pprof: CheckValid passes, the hottest function and the per-thread labels. */
START_TEST(test_pprof_go)
{
	struct profile *p = build_profile();
	size_t len;
	char *gz = testutil_render(out_pprof_write, p, NULL, &len), *path, *cmd, *out, *line;
	int st;

	if (!testutil_have_tool("go"))
		goto out;
	path = testutil_tmp_file("demo.pb.gz", gz, len);
	cmd = xasprintf("HOME=%s go tool pprof -symbolize=none -raw '%s'", testutil_tmp, path);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
	ck_assert_ptr_nonnull(strstr(out, "samples/count wall/nanoseconds"));
	ck_assert_ptr_nonnull(strstr(out, "0123456789abcdef0123456789abcdef01234567"));
	free(out);
	free(cmd);

	/* helper is the leaf of 6 + 6 samples of thread 1234 and 1 of 1260: 130ms flat */
	cmd = xasprintf("HOME=%s go tool pprof -symbolize=none -top -nodecount=3 '%s'",
			testutil_tmp, path);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
	line = strstr(out, "flat%");
	ck_assert_msg(line, "no -top table:\n%.3000s", out);
	line = strchr(line, '\n');
	ck_assert_ptr_nonnull(line);
	ck_assert_msg(!strncmp(line + 1, "     130ms 30.23% 30.23%      150ms 34.88%  helper", 50),
		      "hottest is not helper:\n%.3000s", out);
	ck_assert_ptr_nonnull(strstr(out, "100ms 23.26% 53.49%      100ms 23.26%  __x64_sys_read"));
	free(out);
	free(cmd);

	/* labels: per-thread roots and the state of the kept samples */
	cmd = xasprintf("HOME=%s go tool pprof -symbolize=none -traces -tagfocus=thread_name=gc "
			"'%s'",
			testutil_tmp, path);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
	ck_assert_ptr_nonnull(strstr(out, "thread_name:  gc\n"));
	ck_assert_ptr_nonnull(strstr(out, " thread_id:  1250\n"));
	ck_assert_ptr_nonnull(strstr(out, "     state:  S\nthread_name:  gc\n       pid:  1234\n"
					  " thread_id:  1250\n      30ms   [no stack]\n"));
	ck_assert_ptr_nonnull(strstr(out, "com.example.Foo.baz()"));
	ck_assert_ptr_null(strstr(out, "helper"));
	free(out);
	free(cmd);
	free(path);
out:
	free(gz);
	profile_free(p);
}
END_TEST

/* protoc decodes the message with the field numbers of profile.proto. */
START_TEST(test_pprof_protoc)
{
	struct profile *p = build_profile();
	size_t len, rlen;
	char *gz = testutil_render(out_pprof_write, p, NULL, &len), *raw, *path, *cmd, *out;
	const char *dir = getenv("PERCH_FIXTURES");
	int st;

	if (!testutil_have_tool("protoc"))
		goto out;
	raw = gunzip(gz, len, &rlen);
	path = testutil_tmp_file("demo.pb", raw, rlen);
	cmd = xasprintf("protoc -I%s/schemas --decode=perftools.profiles.Profile "
			"pprof-profile.proto < '%s'",
			dir ? dir : "fixtures", path);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
	ck_assert_ptr_nonnull(strstr(out, "string_table: \"\"\nstring_table: \"samples\"\n"));
	ck_assert_ptr_nonnull(strstr(out, "period: 10000000\n"));
	ck_assert_ptr_nonnull(strstr(out, "time_nanos: 1700000000000000000\n"));
	/* inlined helper first, then compute, in one location */
	ck_assert_ptr_nonnull(strstr(out, "location {\n  id: 4\n  mapping_id: 1\n  address: 4608\n"
					  "  line {\n    function_id: 4\n    line: 5\n  }\n"
					  "  line {\n    function_id: 5\n    line: 30\n  }\n}\n"));
	free(out);
	free(cmd);
	free(path);
	free(raw);
out:
	free(gz);
	profile_free(p);
}
END_TEST

/* speedscope */

START_TEST(test_speedscope_golden)
{
	struct profile *p = build_profile();
	size_t len;
	char *text = testutil_render(out_speedscope_write, p, NULL, &len), *path;

	/* all threads: 43 samples of 10 ms; thread 1234: 18 samples, first at 0 */
	ck_assert_ptr_nonnull(strstr(text, "\"startValue\": 0, \"endValue\": 430000000}"));
	ck_assert_ptr_nonnull(strstr(text, "\"name\": \"perch demo (tid 1234)\""));
	ck_assert_ptr_nonnull(strstr(text, "\"startValue\": 0, \"endValue\": 180000000}"));
	/* thread 1240 starts 1 µs after the tick */
	ck_assert_ptr_nonnull(strstr(text, "\"startValue\": 1000, \"endValue\": 150001000}"));
	/* 6 merged samples of S_CA then 2 of S_MEMCPY for 1234 */
	ck_assert_ptr_nonnull(strstr(text, "\"weights\": [60000000, 20000000, 10000000, "));
	ck_assert_ptr_nonnull(strstr(text, "\"name\": \"q\\\"uote \\u003ctag\\u003e \\u0026 "
					   "\\u0001ctl \\ufffd\\ufffd bad \\ufffd\\ufffd trunc "
					   "\\u003c/script\\u003e ]]\\u003e \\u2028 end\""));
	testutil_check_golden("speedscope/demo.speedscope.json", text, len);
	path = testutil_tmp_file("demo.speedscope.json", text, len);
	py_check("speedscope", path, SPEEDSCOPE_SCHEMA);
	free(path);
	free(text);
	profile_free(p);
}
END_TEST

/* Without kept samples: aggregated counts, still valid. */
START_TEST(test_speedscope_counts)
{
	struct profile *p = profile_new();
	struct profile_frame f = {0};
	uint32_t loc, t;
	size_t len;
	char *text, *path;
	int i;

	f.name = profile_intern_str(p, "only");
	loc = profile_intern_location(p, 0, 0x10, &f, 1);
	t = profile_thread(p, 9, "t");
	for (i = 0; i < 5; i++)
		profile_add_sample(p, t, profile_intern_stack(p, &loc, 1), 0, 0);
	profile_set_meta(p, "period_ns", "garbage"); /* the default period */
	text = testutil_render(out_speedscope_write, p, NULL, &len);
	ck_assert_ptr_nonnull(strstr(text, "\"samples\": [[0]],\n     \"weights\": [50000000]"));
	path = testutil_tmp_file("counts.speedscope.json", text, len);
	py_check("speedscope", path, SPEEDSCOPE_SCHEMA);
	free(path);
	free(text);
	profile_free(p);
}
END_TEST

/* chrome */

/* Stalls (meta "stalls", include/perch/proc/stall.h): two that overlap (two lanes), one without a
 * stack, a malformed line. */
static struct profile *with_stalls(struct profile *p)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "%llu 300000000 1234 0 off-cpu 0 [lock futex]\n"
		 "%llu 150000000 1240 - running 1 running\n"
		 "not a stall\n",
		 T0 + 20000000ULL, T0 + 100000000ULL);
	profile_set_meta(p, "stalls", buf);
	return p;
}

START_TEST(test_chrome_golden)
{
	struct profile *p = with_stalls(build_profile());
	size_t len;
	char *text = testutil_render(out_chrome_write, p, NULL, &len), *path;

	/* _start runs ticks 0-10 of 1234, a pause of 2 ticks ends it, it starts again at 13;
	 * at 19 the stack has no _start (main is the root) */
	ck_assert_ptr_nonnull(strstr(text, "{\"ph\": \"X\", \"name\": \"_start\", "
					   "\"cat\": \"native\", \"pid\": 1234, \"tid\": 1234, "
					   "\"ts\": 0.000, \"dur\": 110000.000"));
	ck_assert_ptr_nonnull(strstr(text, "{\"ph\": \"X\", \"name\": \"_start\", "
					   "\"cat\": \"native\", \"pid\": 1234, \"tid\": 1234, "
					   "\"ts\": 130000.000, \"dur\": 60000.000"));
	ck_assert_ptr_nonnull(strstr(text,
				     "{\"ph\": \"X\", \"name\": \"main\", \"cat\": \"native\", "
				     "\"pid\": 1234, \"tid\": 1234, \"ts\": 190000.000, "
				     "\"dur\": 10000.000"));
	/* compute continues from helper's location to l_cb (same function): ticks 0-8 */
	ck_assert_ptr_nonnull(strstr(text,
				     "\"name\": \"compute\", \"cat\": \"native\", \"pid\": 1234, "
				     "\"tid\": 1234, \"ts\": 0.000, \"dur\": 90000.000"));
	ck_assert_ptr_nonnull(strstr(text,
				     "\"name\": \"helper\", \"cat\": \"native\", \"pid\": 1234, "
				     "\"tid\": 1234, \"ts\": 0.000, \"dur\": 80000.000"));
	ck_assert_ptr_nonnull(strstr(text,
				     "\"name\": \"memcpy\", \"cat\": \"native\", \"pid\": 1234, "
				     "\"tid\": 1234, \"ts\": 60000.000, \"dur\": 20000.000"));
	ck_assert_ptr_nonnull(strstr(text, "\"name\": \"__x64_sys_read\", \"cat\": \"kernel\", "
					   "\"pid\": 1234, \"tid\": 1240, \"ts\": 1.000, "
					   "\"dur\": 100000.000}"));
	ck_assert_ptr_nonnull(strstr(text, "\"name\": \"[libc.so.6+0x1234]\""));
	ck_assert_ptr_nonnull(strstr(text,
				     "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1234, "
				     "\"tid\": 1260, \"args\": {\"name\": \"tid 1260\"}}"));
	/* counters: the valid pairs only */
	ck_assert_ptr_nonnull(strstr(text,
				     "{\"ph\": \"C\", \"name\": \"cpu_percent\", \"pid\": 1234, "
				     "\"ts\": 0.000, \"args\": {\"value\": 97.5}},\n"
				     "  {\"ph\": \"C\", \"name\": \"cpu_percent\", \"pid\": 1234, "
				     "\"ts\": 50000.000, \"args\": {\"value\": 55}},\n"
				     "  {\"ph\": \"C\", \"name\": \"rss_bytes\""));
	ck_assert_ptr_null(strstr(text, "bogus"));
	ck_assert_ptr_null(strstr(text, "nan"));
	/* stalls: slices on their own tracks, overlapping ones in separate lanes */
	ck_assert_ptr_nonnull(strstr(text,
				     "{\"ph\": \"X\", \"name\": \"stall: [lock futex]\", "
				     "\"cat\": \"stall\", \"pid\": 1234, \"tid\": 1073741824, "
				     "\"ts\": 20000.000, \"dur\": 300000.000, \"args\": "
				     "{\"kind\": \"off-cpu\", \"thread\": 1234, \"cut\": false"));
	ck_assert_ptr_nonnull(strstr(text, "\"name\": \"stall: running\", \"cat\": \"stall\", "
					   "\"pid\": 1234, \"tid\": 1073741825"));
	ck_assert_ptr_nonnull(strstr(text, "\"tid\": 1073741824, \"args\": {\"name\": "
					   "\"stalls of perch demo\"}}"));
	ck_assert_ptr_null(strstr(text, "not a stall"));
	testutil_check_golden("chrome/demo.json", text, len);
	path = testutil_tmp_file("demo.json", text, len);
	py_check("chrome", path, NULL);
	free(path);
	free(text);

	text = testutil_render(out_chrome_samples_write, p, NULL, &len);
	ck_assert_ptr_nonnull(strstr(text, "\"stackFrames\": {\n  \"1\": {\"name\": \"_start\", "
					   "\"category\": \"native\"},\n"));
	testutil_check_golden("chrome/demo-samples.json", text, len);
	path = testutil_tmp_file("demo-samples.json", text, len);
	py_check("chrome-samples", path, NULL);
	free(path);
	free(text);
	profile_free(p);
}
END_TEST

/* flame graph */

START_TEST(test_flamegraph_golden)
{
	struct profile *p = build_profile();
	size_t len;
	char *text = testutil_render(out_flamegraph_write, p, NULL, &len), *path;

	ck_assert_ptr_nonnull(strstr(text, "data-total=\"43\""));
	/* the root, then the threads in name order ('[' < 'e' < 'g' < 'p' < 'w') */
	ck_assert_ptr_nonnull(strstr(text, "<title>all (all, 43 samples, 100.0%)</title>"));
	ck_assert_ptr_nonnull(strstr(text, "<title>perch demo-1234 (thread, 18 samples, 41.9%)"));
	ck_assert(strstr(text, "data-name=\"[unknown]-1260\"") <
		  strstr(text, "data-name=\"gc-1250\""));
	ck_assert(strstr(text, "data-name=\"gc-1250\"") <
		  strstr(text, "data-name=\"perch demo-1234\""));
	ck_assert_ptr_nonnull(strstr(text, "<title>compute (native, 15 samples, 34.9%)</title>"));
	ck_assert_ptr_nonnull(strstr(text, "<title>__x64_sys_read (kernel, 10 samples, 23.3%)"));
	ck_assert_ptr_nonnull(strstr(text, "<title>com.example.Foo.bar(int) (JIT, 5 samples"));
	ck_assert_ptr_nonnull(strstr(text, "<title>[no stack] (pseudo, 3 samples"));
	/* hostile names: escaped, no raw control character, the script not closed early */
	ck_assert_ptr_nonnull(strstr(text, "q&quot;uote &lt;tag&gt; &amp; \xef\xbf\xbd"
					   "ctl"));
	ck_assert_ptr_nonnull(strstr(text, "ev&quot;il&lt;/script&gt;]]&gt;\xef\xbf\xbd"));
	ck_assert_ptr_null(strstr(text, "\x01"));
	ck_assert_ptr_eq(strstr(text, "]]>"), strstr(text, "]]></script>"));
	testutil_check_golden("flamegraph/demo.svg", text, len);
	path = testutil_tmp_file("demo.svg", text, len);
	py_check("svg", path, NULL);
	free(path);
	free(text);
	profile_free(p);
}
END_TEST

/* Headless Chromium opens the SVG from disk (no network), runs its script without an error,
 * zooms on "main" and searches "compute" through the script's self-test hook. */
START_TEST(test_flamegraph_chromium)
{
	struct profile *p = build_profile();
	const char *browser = NULL;
	size_t len;
	char *text = testutil_render(out_flamegraph_write, p, NULL, &len), *path, *cmd, *out;
	int st;

	if (!system("command -v chromium >/dev/null 2>&1"))
		browser = "chromium";
	else if (!system("command -v chromium-browser >/dev/null 2>&1"))
		browser = "chromium-browser";
	else
		fprintf(stderr, "SKIP: chromium not installed, the flame graph was not opened\n");
	if (!browser)
		goto out;
	path = testutil_tmp_file("demo.svg", text, len);
	cmd = xasprintf("HOME=%s timeout 50 %s --headless --no-sandbox --disable-gpu "
			"--no-first-run --disable-extensions --enable-logging=stderr --v=0 "
			"--user-data-dir=%s/chromium --dump-dom 'file://%s#selftest=main/compute'",
			testutil_tmp, browser, testutil_tmp, path);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
	/* console messages (errors, uncaught exceptions) are logged as ":CONSOLE" lines */
	ck_assert_msg(!strstr(out, ":CONSOLE"), "console message:\n%.3000s",
		      strstr(out, ":CONSOLE"));
	/* 35 frames drawn; the first "main" is under [unknown]-1260; compute: 15 + 1 samples */
	ck_assert_msg(strstr(out, "data-ready=\"35\""), "the script did not run:\n%.3000s", out);
	ck_assert_msg(strstr(out, "data-selftest=\"zoomed=main;shown=7;matched=16;width=1180.00;"
				  "text=Matched: 37.2% (16 samples)\""),
		      "unexpected self-test result:\n%.3000s",
		      strstr(out, "<svg") ? strstr(out, "<svg") : out);
	free(out);
	free(cmd);
	free(path);
out:
	free(text);
	profile_free(p);
}
END_TEST

/* Every writer on an empty profile: valid output for its consumer. */
START_TEST(test_empty)
{
	struct profile *p = profile_new();
	size_t len, rlen;
	char *text, *raw, *path;

	text = testutil_render(out_pprof_write, p, NULL, &len);
	raw = gunzip(text, len, &rlen);
	check_pprof_message(raw, rlen, 0);
	free(raw);
	free(text);

	text = testutil_render(out_speedscope_write, p, NULL, &len);
	path = testutil_tmp_file("empty.speedscope.json", text, len);
	py_check("speedscope", path, SPEEDSCOPE_SCHEMA);
	free(path);
	free(text);

	text = testutil_render(out_chrome_write, p, NULL, &len);
	ck_assert_ptr_nonnull(strstr(text, "\"name\": \"pid 1\""));
	path = testutil_tmp_file("empty.json", text, len);
	py_check("chrome", path, NULL);
	free(path);
	free(text);

	text = testutil_render(out_chrome_samples_write, p, NULL, &len);
	path = testutil_tmp_file("empty-samples.json", text, len);
	py_check("chrome-samples", path, NULL);
	free(path);
	free(text);

	text = testutil_render(out_flamegraph_write, p, NULL, &len);
	ck_assert_ptr_nonnull(strstr(text, "data-total=\"0\""));
	path = testutil_tmp_file("empty.svg", text, len);
	py_check("svg", path, NULL);
	free(path);
	free(text);
	profile_free(p);
}
END_TEST

/* Hostile meta values: garbage numbers fall back, counters without pairs are dropped, and a
 * counter list that is only separators is harmless. */
START_TEST(test_hostile_meta)
{
	struct profile *p = profile_new();
	struct profile_frame f = {0};
	uint32_t loc, t;
	size_t len;
	char *text, *path;

	f.name = profile_intern_str(p, "x");
	loc = profile_intern_location(p, 0, 1, &f, 1);
	t = profile_thread(p, 5, "t");
	profile_keep_samples(p, 1);
	profile_add_sample(p, t, profile_intern_stack(p, &loc, 1), 500, 'R');
	profile_set_meta(p, "pid", "-12");
	profile_set_meta(p, "period_ns", "99999999999999999999999");
	profile_set_meta(p, "counters", " \t a\"b  c ");
	profile_set_meta(p, "counter:a\"b", "=1 1= x=2 18446744073709551616=3 7=1e999 8=-0.5 9=");
	profile_set_meta(p, "counter:c", "");
	ck_assert_uint_eq(out_period_ns(p), OUT_DEFAULT_PERIOD_NS);
	text = testutil_render(out_chrome_write, p, NULL, &len);
	/* pid falls back to the thread, ts from the earliest time (the counter at 8 ns) */
	ck_assert_ptr_nonnull(strstr(text, "{\"ph\": \"C\", \"name\": \"a\\\"b\", \"pid\": 5, "
					   "\"ts\": 0.000, \"args\": {\"value\": -0.5}}\n"));
	ck_assert_ptr_nonnull(strstr(text, "\"ts\": 0.492, \"dur\": 10000.000"));
	ck_assert_ptr_null(strstr(text, "\"name\": \"c\""));
	path = testutil_tmp_file("meta.json", text, len);
	py_check("chrome", path, NULL);
	free(path);
	free(text);
	profile_free(p);
}
END_TEST

/* A write error reaches the caller as -errno. */
START_TEST(test_write_error)
{
	struct profile *p = build_profile();
	int (*const writers[])(const struct profile *, const struct output_opts *,
			       FILE *) = {out_pprof_write, out_speedscope_write, out_chrome_write,
					  out_chrome_samples_write, out_flamegraph_write};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(writers); i++)
		testutil_check_enospc(writers[i], p);
	profile_free(p);
}
END_TEST

Suite *writers_suite(void)
{
	Suite *s = suite_create("writers");
	TCase *tc = tcase_create("golden");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_pprof_golden);
	tcase_add_test(tc, test_speedscope_golden);
	tcase_add_test(tc, test_speedscope_counts);
	tcase_add_test(tc, test_chrome_golden);
	tcase_add_test(tc, test_flamegraph_golden);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_hostile_meta);
	tcase_add_test(tc, test_write_error);
	suite_add_tcase(s, tc);

	/* the real consumers, when installed */
	tc = tcase_create("consumers");
	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_pprof_go);
	tcase_add_test(tc, test_pprof_protoc);
	tcase_add_test(tc, test_flamegraph_chromium);
	suite_add_tcase(s, tc);
	return s;
}
