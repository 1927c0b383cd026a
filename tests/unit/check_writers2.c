/* Unit tests for the Sentry, ART method trace and text call tree writers on a synthetic
 * timeline, against golden files in fixtures/golden/{sentry,arttrace,text}/, and through
 * consumers when installed: python3 (tests/unit/py/check_writers2.py: Relay's rules, a
 * perflib-style .trace reader) and dmtracedump (Debian package dmtracedump). A consumer that
 * is missing is reported as "SKIP: ..." on stderr.
 *
 * Golden files (tests/unit/testutil.h): PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=writers2
 * build/tests/unit/run rewrites them (review the diff like code). */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/writers.h"
#include "perch/profile/profile.h"
#include "testutil.h"

#define T0	    5000000000000ULL /* CLOCK_MONOTONIC of the first tick */
#define PERIOD	    10000000ULL	     /* 10 ms */
#define EVIL_NAME   "tab\there\nnl \"q\" <x> & \xff bad \xe2\x82 end"
#define EVIL_THREAD "big\tone\n"

enum { S_A, S_B, S_READ, S_JIT, S_NOFR, S_REC, S_EVIL, S_EMPTY, NR_STACKS };

/* One run of a thread's script: @n samples of @stack (-1: a gap of @n ticks). */
struct run {
	int stack, n;
};

struct event {
	uint64_t t;
	uint32_t thread, stack;
};

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

/* The synthetic profile: thread i follows scripts[i], one sample per 10 ms tick, sampled i µs
 * after the tick. The expected values in the tests are worked out from these scripts:
 *   tid 100 "main":       A x3, B x2, gap x3, A, [empty], A   (8 samples, ticks 0-10)
 *   tid 70000 EVIL_THREAD: JIT x2, NOFR, EVIL                  (4 samples, ticks 0-3)
 *   tid 4464 "collide":   READ x3 (4464 == 70000 & 0xffff)     (3 samples)
 *   tid 200 "":           REC                                  (1 sample)
 * Stacks, root first: A = _start main compute helper(inlined); B = A + memcpy (libc);
 * READ = worker __x64_sys_read (kernel); JIT = worker Foo.bar (jit) Foo.baz (interpreted);
 * NOFR = worker libc+0x1234 (no frames); REC = _start main recurse x3; EVIL = worker EVIL. */
static struct profile *build_profile(int keep)
{
	static const struct run t0[] = {{S_A, 3},     {S_B, 2}, {-1, 3}, {S_A, 1},
					{S_EMPTY, 1}, {S_A, 1}, {0, 0}};
	static const struct run t1[] = {{S_JIT, 2}, {S_NOFR, 1}, {S_EVIL, 1}, {0, 0}};
	static const struct run t2[] = {{S_READ, 3}, {0, 0}};
	static const struct run t3[] = {{S_REC, 1}, {0, 0}};
	static const struct run *const scripts[] = {t0, t1, t2, t3};
	struct profile *p = profile_new();
	uint32_t demo = profile_intern_str(p, "/usr/bin/demo");
	uint32_t libc = profile_intern_str(p, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t jit = profile_intern_str(p, "/memfd:jit-cache (deleted)");
	struct profile_frame f, inl[2];
	uint32_t l_start, l_main, l_comp, l_memcpy, l_worker, l_read, l_jit, l_interp, l_nofr;
	uint32_t l_rec, l_evil, stacks[NR_STACKS], threads[4];
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
	profile_keep_samples(p, keep);
	l_start = LOC(demo, 0x1040, FRAME("_start", "", 0, demo, PROFILE_FRAME_NATIVE));
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
	l_comp = profile_intern_location(p, demo, 0x1200, inl, 2);
	l_memcpy = LOC(libc, 0x9a000, FRAME("memcpy", "", 0, libc, PROFILE_FRAME_NATIVE));
	l_worker = LOC(demo, 0x1300,
		       FRAME("worker", "/src/demo/worker.c", 12, demo, PROFILE_FRAME_NATIVE));
	l_read =
	    LOC(0, 0xffffffff81000000ULL, FRAME("__x64_sys_read", "", 0, 0, PROFILE_FRAME_KERNEL));
	l_jit = LOC(jit, 0x9debc100,
		    FRAME("com.example.Foo.bar(int)", "Foo.java", 88, jit, PROFILE_FRAME_JIT));
	l_interp =
	    LOC(0, 0x7000, FRAME("com.example.Foo.baz()", "Foo.java", 91, 0, PROFILE_FRAME_INTERP));
	l_nofr = profile_intern_location(p, libc, 0x1234, NULL, 0);
	l_rec =
	    LOC(demo, 0x1700, FRAME("recurse", "/src/demo/rec.c", 3, demo, PROFILE_FRAME_NATIVE));
	l_evil =
	    LOC(demo, 0x1800, FRAME(EVIL_NAME, "/src/\t\"e\".c", 9, demo, PROFILE_FRAME_NATIVE));

	stacks[S_A] = STACK(l_comp, l_main, l_start);
	stacks[S_B] = STACK(l_memcpy, l_comp, l_main, l_start);
	stacks[S_READ] = STACK(l_read, l_worker);
	stacks[S_JIT] = STACK(l_interp, l_jit, l_worker);
	stacks[S_NOFR] = STACK(l_nofr, l_worker);
	stacks[S_REC] = STACK(l_rec, l_rec, l_rec, l_main, l_start);
	stacks[S_EVIL] = STACK(l_evil, l_worker);
	stacks[S_EMPTY] = profile_intern_stack(p, NULL, 0);
#undef FRAME
#undef LOC
#undef STACK

	threads[0] = profile_thread(p, 100, "main");
	threads[1] = profile_thread(p, 70000, EVIL_THREAD);
	threads[2] = profile_thread(p, 4464, "collide");
	threads[3] = profile_thread(p, 200, "");
	for (i = 0; i < ARRAY_SIZE(scripts); i++) {
		const struct run *r;
		uint64_t tick = 0;
		int k;

		for (r = scripts[i]; r->n; r++) {
			for (k = 0; k < r->n; k++, tick++) {
				if (r->stack < 0)
					continue;
				ALLOC_GROW(ev, nr_ev + 1, alloc_ev);
				ev[nr_ev++] = (struct event){T0 + tick * PERIOD + i * 1000,
							     threads[i], stacks[r->stack]};
			}
		}
	}
	qsort(ev, nr_ev, sizeof(*ev), cmp_event);
	for (i = 0; i < nr_ev; i++)
		profile_add_sample(p, ev[i].thread, ev[i].stack, ev[i].t, 'R');
	free(ev);

	profile_set_meta(p, "pid", "100");
	profile_set_meta(p, "comm", "demo app");
	profile_set_meta(p, "period_ns", "10000000");
	profile_set_meta(p, "start_time_ns", "1700000000123456789");
	profile_set_meta(p, "build_id:/usr/bin/demo", "0123456789abcdef0123456789abcdef01234567");
	profile_set_meta(p, "build_id:/usr/lib/x86_64-linux-gnu/libc.so.6", "ABCD");
	profile_set_meta(p, "counters", "cpu_percent rss_bytes native_heap_bytes bogus");
	snprintf(buf, sizeof(buf), "%llu=97.5 junk %llu=55 %llu=nan", T0, T0 + 50000000ULL,
		 T0 + 100000000ULL);
	profile_set_meta(p, "counter:cpu_percent", buf);
	snprintf(buf, sizeof(buf), "%llu=10485760 %llu=11534336", T0, T0 + 100000000ULL);
	profile_set_meta(p, "counter:rss_bytes", buf);
	snprintf(buf, sizeof(buf), "%llu=4096", T0 + 20000000ULL);
	profile_set_meta(p, "counter:native_heap_bytes", buf);
	profile_set_meta(p, "counter:pss_bytes", "1=1"); /* not listed in "counters": unused */
	return p;
}

#define DEMO_TOTAL 16 /* 8 + 4 + 3 + 1 from the scripts */

static char *render_text(const struct profile *p, const struct output_opts *o,
			 const struct out_text_opts *to)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(out_text_write_opts(p, o, to, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_eq(strlen(buf), n); /* no NUL inside */
	return buf;
}

/* consumers */

/* python3 tests/unit/py/check_writers2.py KIND FILE [ARGS]: its output, or NULL when python3 is
 * missing; *@st is its exit status. */
static char *py_run(const char *kind, const char *path, const char *args, int *st)
{
	char *cmd, *out;

	if (!testutil_have_tool("python3"))
		return NULL;
	cmd = xasprintf("python3 tests/unit/py/check_writers2.py %s '%s' %s", kind, path,
			args ? args : "");
	out = testutil_run(cmd, st);
	free(cmd);
	return out;
}

/* The same, and it must pass. */
static char *py_check(const char *kind, const char *path, const char *args)
{
	int st;
	char *out = py_run(kind, path, args, &st);

	if (out)
		ck_assert_msg(st == 0, "check_writers2.py %s %s failed (%d):\n%.4000s", kind, path,
			      st, out);
	return out;
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/* @s is valid UTF-8 whose only control characters are in @allowed. */
static void assert_clean_text(const char *s, const char *allowed)
{
	size_t len;

	for (; *s; s += len) {
		uint32_t cp = json_utf8_next(s, &len);

		ck_assert_msg(!(cp == JSON_REPLACEMENT_CHAR && len == 1),
			      "invalid UTF-8 at \"%.20s\"", s);
		ck_assert_msg(cp >= 0x20 || strchr(allowed, (int)cp),
			      "control character %#x at \"%.20s\"", cp, s);
	}
}

/* Sentry */

START_TEST(test_sentry_golden)
{
	struct profile *p = build_profile(1);
	size_t len;
	char *text = testutil_render(out_sentry_write, p, NULL, &len), *path, *out;

	ck_assert_ptr_nonnull(strstr(text, "\"version\": \"2\""));
	/* UUID4-shaped ids: version digit 4 at 12, variant 8/9/a/b at 16 */
	{
		const char *id = strstr(text, "\"chunk_id\": \"") + 13;

		ck_assert_uint_eq(strspn(id, "0123456789abcdef"), 32);
		ck_assert_int_eq(id[12], '4');
		ck_assert_ptr_nonnull(strchr("89ab", id[16]));
	}
	ck_assert_ptr_nonnull(strstr(text, "\"release\": \"demo_app@unknown\""));
	ck_assert_ptr_nonnull(strstr(text, "\"environment\": \"production\""));
	/* the first sample: start_time_ns (…123456789 ns) rounded to the µs */
	ck_assert_ptr_nonnull(strstr(
	    text, "{\"timestamp\": 1700000000.123457, \"stack_id\": 0, \"thread_id\": \"100\"}"));
	/* tid 70000, 1 µs later */
	ck_assert_ptr_nonnull(strstr(text, "\"timestamp\": 1700000000.123458, \"stack_id\": 1, "
					   "\"thread_id\": \"70000\"}"));
	/* images: the build-id as a little-endian GUID, zero-padded when short */
	ck_assert_ptr_nonnull(strstr(text,
				     "\"code_file\": \"/usr/bin/demo\", \"debug_id\": "
				     "\"67452301-ab89-efcd-0123-456789abcdef\", "
				     "\"image_addr\": \"0x10000\", \"image_vmaddr\": \"0x0\", "
				     "\"image_size\": 8192}"));
	ck_assert_ptr_nonnull(strstr(text,
				     "\"debug_id\": \"0000cdab-0000-0000-0000-000000000000\", "
				     "\"image_addr\": \"0x20000\""));
	ck_assert_ptr_null(strstr(text, "jit-cache (deleted)\", \"debug_id"));
	/* frames */
	ck_assert_ptr_nonnull(strstr(text, "{\"function\": \"compute\", \"filename\": "
					   "\"/src/demo/compute.c\", \"lineno\": 30, \"package\": "
					   "\"/usr/bin/demo\", \"instruction_addr\": \"0x11200\", "
					   "\"in_app\": true, \"platform\": \"native\"}"));
	ck_assert_ptr_nonnull(strstr(text, "{\"function\": \"memcpy\", \"package\": "
					   "\"/usr/lib/x86_64-linux-gnu/libc.so.6\", "
					   "\"instruction_addr\": \"0xba000\", \"in_app\": false"));
	ck_assert_ptr_nonnull(strstr(text,
				     "{\"function\": \"baz\", \"module\": \"com.example.Foo\", "
				     "\"filename\": \"Foo.java\", \"lineno\": 91, "
				     "\"platform\": \"java\"}"));
	ck_assert_ptr_nonnull(strstr(text, "{\"function\": \"__x64_sys_read\", \"in_app\": false, "
					   "\"platform\": \"native\"}"));
	/* a frameless location with an image: no name, Sentry symbolicates the address */
	ck_assert_ptr_nonnull(strstr(text, "{\"package\": \"/usr/lib/x86_64-linux-gnu/libc.so.6\", "
					   "\"instruction_addr\": \"0x21234\""));
	/* hostile names escaped; no raw control character anywhere */
	ck_assert_ptr_nonnull(strstr(text,
				     "\"function\": \"tab\\there\\nnl \\\"q\\\" \\u003cx\\u003e "
				     "\\u0026 \\ufffd bad \\ufffd\\ufffd end\""));
	ck_assert_ptr_nonnull(strstr(text, "\"70000\": {\"name\": \"big\\tone\\n\"}"));
	ck_assert_ptr_nonnull(strstr(text, "\"200\": {}"));
	ck_assert_ptr_null(strchr(text, '\t'));
	/* measurements: the valid points of the listed counters, by Sentry's names */
	ck_assert_ptr_nonnull(strstr(text, "\"cpu_usage\": {\"unit\": \"percent\", \"values\": "
					   "[{\"timestamp\": 1700000000.123457, \"value\": 97.5}, "
					   "{\"timestamp\": 1700000000.173457, \"value\": 55}]}"));
	ck_assert_ptr_nonnull(strstr(text,
				     "\"memory_footprint\": {\"unit\": \"byte\", \"values\": "
				     "[{\"timestamp\": 1700000000.123457, \"value\": 10485760}, "
				     "{\"timestamp\": 1700000000.223457, \"value\": 11534336}]}"));
	ck_assert_ptr_nonnull(strstr(text, "\"memory_native_footprint\": {\"unit\": \"byte\", "
					   "\"values\": [{\"timestamp\": 1700000000.143457, "
					   "\"value\": 4096}]}"));
	ck_assert_ptr_null(strstr(text, "bogus"));
	testutil_check_golden("sentry/demo.json", text, len);

	path = testutil_tmp_file("demo.json", text, len);
	out = py_check("sentry", path, "--dump");
	if (out) {
		/* what a reader sees: stacks leaf first, names resolved through the indexes */
		ck_assert_ptr_nonnull(
		    strstr(out, "sentry ok: 16 samples, 8 stacks, 12 frames, 4 threads"));
		ck_assert_ptr_nonnull(
		    strstr(out, "\n100 1700000000.123457 helper;compute;main;_start\n"));
		ck_assert_ptr_nonnull(
		    strstr(out, "\n100 1700000000.153457 memcpy;helper;compute;main;_start\n"));
		ck_assert_ptr_nonnull(strstr(out, "\n100 1700000000.213457 \n"));
		ck_assert_ptr_nonnull(strstr(out, "\n70000 1700000000.123458 com.example.Foo.baz;"
						  "com.example.Foo.bar;worker\n"));
		ck_assert_ptr_nonnull(strstr(out, "\n70000 1700000000.143458 0x21234;worker\n"));
		ck_assert_ptr_nonnull(strstr(out, "\n200 1700000000.123460 "
						  "recurse;recurse;recurse;main;_start\n"));
		ck_assert_uint_eq(count_str(out, "\n100 "), 8);
		/* Relay drops a thread with one non-idle sample: said, not rejected */
		ck_assert_ptr_nonnull(strstr(out, "warn: thread 200 has 1 non-idle sample(s)"));
		free(out);
	}
	free(path);
	free(text);
	profile_free(p);
}
END_TEST

/* 150 samples one second apart: an envelope of three chunks (60 + 60 + 30), one profiler. */
START_TEST(test_sentry_envelope)
{
	struct profile *p = profile_new();
	struct profile_frame f = {0};
	uint32_t loc, st, t;
	size_t len, i;
	char *text, *path, *out, *single;
	char buf[256];

	profile_keep_samples(p, 1);
	f.name = profile_intern_str(p, "spin");
	loc = profile_intern_location(p, 0, 0x10, &f, 1);
	st = profile_intern_stack(p, &loc, 1);
	t = profile_thread(p, 42, "spinner");
	for (i = 0; i < 150; i++)
		profile_add_sample(p, t, st, T0 + i * 1000000000ULL, 'R');
	profile_set_meta(p, "start_time_ns", "1700000000000000000");
	profile_set_meta(p, "profiler_id", "00112233445566778899aabbccddeeff");
	profile_set_meta(p, "counters", "cpu_usage");
	snprintf(buf, sizeof(buf), "%llu=1 %llu=2 %llu=3", T0, T0 + 65000000000ULL,
		 T0 + 130000000000ULL);
	profile_set_meta(p, "counter:cpu_usage", buf);
	text = testutil_render(out_sentry_envelope_write, p, NULL, &len);
	ck_assert_uint_eq(count_str(text, "{\"type\": \"profile_chunk\", \"platform\": \"rust\""),
			  3);
	ck_assert_uint_eq(count_str(text, "\"profiler_id\": \"00112233445566778899aabbccddeeff\""),
			  3);
	ck_assert_uint_eq(count_str(text, "\"thread_id\": \"42\""), 150);
	/* chunk 2 starts at 60 s and ends at 119 s and has the 65 s counter point */
	ck_assert_ptr_nonnull(strstr(text, "\"values\": [{\"timestamp\": 1700000065.000000, "
					   "\"value\": 2}]}"));
	path = testutil_tmp_file("env.envelope", text, len);
	out = py_check("sentry-envelope", path, NULL);
	if (out) {
		ck_assert_ptr_nonnull(strstr(out, "sentry envelope ok: 3 chunks, 150 samples"));
		free(out);
	}
	free(path);
	/* the single chunk holds it all, and Relay's 66 s rule rejects it */
	single = testutil_render(out_sentry_write, p, NULL, &len);
	path = testutil_tmp_file("long.json", single, len);
	{
		int s;

		out = py_run("sentry", path, NULL, &s);
		if (out) {
			ck_assert_int_eq(s, 1);
			ck_assert_ptr_nonnull(strstr(out, "FAIL: samples span 149.000 s > 66 s"));
			free(out);
		}
	}
	free(path);
	free(single);
	free(text);
	profile_free(p);
}
END_TEST

/* ART method trace */

/* The text part of a .trace (up to and with "*end\n"). */
static char *art_text(const char *data, size_t len)
{
	const char *end = memmem(data, len, "\n*end\n", 6);

	ck_assert_ptr_nonnull(end);
	return xstrndup(data, (size_t)(end - data) + 6);
}

START_TEST(test_arttrace_golden)
{
	struct profile *p = build_profile(1);
	size_t len, tlen;
	char *data = testutil_render(out_arttrace_write, p, NULL, &len),
	     *text = art_text(data, len), *path;
	char *out, *cmd;
	const unsigned char *bin;
	int st;

	/* 50 records worked out from the scripts: tid 100: 13 enters + 13 exits (a 30 ms gap
	 * leaves all at 50 ms, the empty sample at 90 ms, the end at 110 ms); 70000: 10;
	 * 4464: 4; 200: 10 */
	ck_assert_str_eq(
	    text,
	    "*version\n2\ndata-file-overflow=false\nclock=wall\n"
	    "elapsed-time-usec=110000\nnum-method-calls=50\n"
	    "clock-call-overhead-nsec=0\nvm=art\npid=100\n"
	    "*threads\n"
	    "100\tmain\n"
	    "200\ttid 200\n"
	    "4464\tcollide\n"
	    "1\tbig_one_ (tid 70000)\n"
	    "*methods\n"
	    "0x4\tdemo\t_start\t()V\t?\n"
	    "0x8\tdemo\tmain\t()V\tmain.c\n"
	    "0xc\tdemo\tcompute\t()V\tcompute.c\n"
	    "0x10\tdemo\thelper\t()V\tutil.h\n"
	    "0x14\tdemo\tworker\t()V\tworker.c\n"
	    "0x18\tcom.example.Foo\tbar\t(int)\tFoo.java\n"
	    "0x1c\tcom.example.Foo\tbaz\t()\tFoo.java\n"
	    "0x20\t[kernel]\t__x64_sys_read\t()V\t?\n"
	    "0x24\tdemo\trecurse\t()V\trec.c\n"
	    "0x28\tlibc.so.6\t[libc.so.6+0x1234]\t()V\t?\n"
	    "0x2c\tlibc.so.6\tmemcpy\t()V\t?\n"
	    "0x30\tdemo\ttab_here_nl \"q\" <x> & \xef\xbf\xbd bad \xef\xbf\xbd\xef\xbf\xbd end"
	    "\t()V\t_\"e\".c\n"
	    "*end\n");
	tlen = strlen(text);
	assert_clean_text(text, "\t\n");
	ck_assert_uint_eq(len, tlen + 32 + 50 * 10);
	bin = (const unsigned char *)data + tlen;
	/* "SLOW", version 2, offset 32, start = T0 in µs */
	ck_assert_int_eq(memcmp(bin, "SLOW\x02\x00\x20\x00", 8), 0);
	ck_assert_uint_eq((uint64_t)bin[8] | (uint64_t)bin[9] << 8 | (uint64_t)bin[10] << 16 |
			      (uint64_t)bin[11] << 24 | (uint64_t)bin[12] << 32,
			  T0 / 1000);
	/* a truncated UTF-8 sequence gives one U+FFFD per byte (json_utf8_next) */
	/* first record: tid 100 enters _start (0x4 | 0) at 0 */
	ck_assert_int_eq(memcmp(bin + 32, "\x64\x00\x04\x00\x00\x00\x00\x00\x00\x00", 10), 0);
	testutil_check_golden("arttrace/demo.trace", data, len);
	path = testutil_tmp_file("demo.trace", data, len);

	out = py_check("arttrace", path, "--dump");
	if (out) {
		ck_assert_ptr_nonnull(
		    strstr(out, "arttrace ok: version 2, 50 records, 12 methods, 4 threads"));
		ck_assert_int_eq(strncmp(out, "100 enter 0 demo._start\n", 24), 0);
		ck_assert_uint_eq(count_str(out, "\n100 enter "), 12); /* + the first line */
		ck_assert_uint_eq(count_str(out, "\n100 exit "), 13);
		ck_assert_ptr_nonnull(strstr(out, "100 enter 30000 libc.so.6.memcpy\n"
						  "1 exit 30001 libc.so.6.[libc.so.6+0x1234]\n"));
		ck_assert_ptr_nonnull(strstr(out, "100 exit 50000 libc.so.6.memcpy\n"
						  "100 exit 50000 demo.helper\n"
						  "100 exit 50000 demo.compute\n"
						  "100 exit 50000 demo.main\n"
						  "100 exit 50000 demo._start\n"));
		ck_assert_ptr_nonnull(strstr(out, "1 exit 20001 com.example.Foo.baz\n"
						  "1 exit 20001 com.example.Foo.bar\n"
						  "1 enter 20001 libc.so.6.[libc.so.6+0x1234]\n"));
		ck_assert_ptr_nonnull(strstr(out, "4464 exit 30002 demo.worker\n"));
		ck_assert_ptr_nonnull(strstr(out, "100 exit 110000 demo._start\n"));
		free(out);
	}

	if (testutil_have_tool("dmtracedump")) {
		cmd = xasprintf("dmtracedump -o '%s'", path);
		out = testutil_run(cmd, &st);
		ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
		ck_assert_ptr_nonnull(strstr(out, "VERSION: 2\nThreads (4):\n"));
		/* dmtracedump lists threads by id, "%2d" */
		ck_assert_ptr_nonnull(
		    strstr(out, "Threads (4):\n 1 big_one_ (tid 70000)\n100 main\n"));
		ck_assert_uint_eq(count_str(out, "\n100 ent "), 13);
		ck_assert_uint_eq(count_str(out, "\n100 xit "), 13);
		ck_assert_uint_eq(count_str(out, " ent ") + count_str(out, " xit "), 50);
		/* depth shown by the dots: memcpy is the 5th frame, left when the gap starts */
		ck_assert_ptr_nonnull(
		    strstr(out, "\n100 xit     50000 .......libc.so.6.memcpy ()V"));
		free(out);
		free(cmd);
		/* the profile view: every method, inclusive times from the records */
		cmd = xasprintf("dmtracedump '%s'", path);
		out = testutil_run(cmd, &st);
		ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
		ck_assert_ptr_null(strstr(out, "rror"));
		ck_assert_ptr_nonnull(strstr(out, "demo.recurse ()V"));
		ck_assert_ptr_nonnull(strstr(out, "com.example.Foo.bar (int)"));
		free(out);
		free(cmd);
	}
	free(path);
	free(text);
	free(data);
	profile_free(p);
}
END_TEST

/* Without kept samples, each thread's counts are laid out one period apart. */
START_TEST(test_no_kept_samples)
{
	struct profile *p = build_profile(0);
	size_t len, n;
	char *data, *path, *out;

	profile_samples(p, &n);
	ck_assert_uint_eq(n, 0);
	data = testutil_render(out_arttrace_write, p, NULL, &len);
	path = testutil_tmp_file("counts.trace", data, len);
	out = py_check("arttrace", path, NULL);
	if (out) {
		ck_assert_ptr_nonnull(strstr(out, "arttrace ok: version 2,"));
		free(out);
	}
	/* tid 100: 8 samples from 0 to 70 ms, the last one ending at 80 ms: the longest thread */
	ck_assert_ptr_nonnull(strstr(data, "elapsed-time-usec=80000\n"));
	free(path);
	free(data);

	data = testutil_render(out_sentry_write, p, NULL, &len);
	ck_assert_uint_eq(count_str(data, "\"thread_id\": \"100\""), 8);
	ck_assert_uint_eq(count_str(data, "{\"timestamp\": "), DEMO_TOTAL + 5);
	path = testutil_tmp_file("counts.json", data, len);
	out = py_check("sentry", path, NULL);
	if (out) {
		ck_assert_ptr_nonnull(strstr(out, "sentry ok: 16 samples"));
		free(out);
	}
	free(path);
	free(data);
	profile_free(p);
}
END_TEST

/* A thread whose clock goes back is held at its last time; a sample past the 32-bit µs range
 * (71.6 minutes) is dropped and the header says so. */
START_TEST(test_arttrace_overflow)
{
	struct profile *p = profile_new();
	struct profile_frame f = {0};
	uint32_t la, lb, sa, sb, t;
	size_t len;
	char *data, *path, *out;

	profile_keep_samples(p, 1);
	f.name = profile_intern_str(p, "a");
	la = profile_intern_location(p, 0, 1, &f, 1);
	f.name = profile_intern_str(p, "b");
	lb = profile_intern_location(p, 0, 2, &f, 1);
	sa = profile_intern_stack(p, &la, 1);
	sb = profile_intern_stack(p, (uint32_t[]){lb, la}, 2);
	t = profile_thread(p, 7, "t");
	profile_add_sample(p, t, sa, T0, 0);
	profile_add_sample(p, t, sa, T0 + 2 * PERIOD, 0);
	profile_add_sample(p, t, sb, T0 + PERIOD, 0);		/* back in time: at 20 ms */
	profile_add_sample(p, t, sa, T0 + 5000000000000ULL, 0); /* 5000 s: past the range */
	data = testutil_render(out_arttrace_write, p, NULL, &len);
	ck_assert_ptr_nonnull(strstr(data, "data-file-overflow=true\nclock=wall\n"
					   "elapsed-time-usec=30000\nnum-method-calls=4\n"));
	path = testutil_tmp_file("overflow.trace", data, len);
	out = py_check("arttrace", path, "--dump");
	if (out) {
		ck_assert_ptr_nonnull(
		    strstr(out, "7 enter 0 [unknown].a\n7 enter 20000 [unknown].b\n"
				"7 exit 30000 [unknown].b\n7 exit 30000 [unknown].a\n"));
		free(out);
	}
	free(path);
	free(data);
	profile_free(p);
}
END_TEST

/* text */

START_TEST(test_text_golden)
{
	struct profile *p = build_profile(1);
	struct out_text_opts to = {.min_percent = -1};
	char *text = render_text(p, NULL, NULL), *again;

	ck_assert_ptr_nonnull(strstr(text, "# perch call tree: 16 samples in 4 threads, pid 100 "
					   "(demo app), period 10000 us\n"));
	/* threads by samples: 100 (8), 70000 (4), 4464 (3), 200 (1) */
	ck_assert(strstr(text, "# thread main (tid 100): 8 samples, 50.00% of 16\n") <
		  strstr(text, "# thread big_one_ (tid 70000): 4 samples, 25.00% of 16\n"));
	ck_assert(strstr(text, "(tid 70000)") < strstr(text, "# thread collide (tid 4464): 3 "));
	ck_assert(strstr(text, "(tid 4464)") < strstr(text, "# thread [unknown] (tid 200): 1 "));
	/* tid 100: A x5, B x2, empty x1; children by total, [no stack] (1) after _start (7) */
	ck_assert_ptr_nonnull(strstr(text, "#    Total      Self   Samples  Call tree\n"
					   "   87.50%     0.00%         7  _start (demo)\n"
					   "   87.50%     0.00%         7  `- main (demo)\n"
					   "   87.50%     0.00%         7     `- compute (demo)\n"
					   "   87.50%    62.50%         7        `- helper (demo) "
					   "[inlined]\n"
					   "   25.00%    25.00%         2           `- memcpy "
					   "(libc.so.6)\n"
					   "   12.50%    12.50%         1  [no stack]\n"));
	/* tid 70000: worker (4) -> Foo.bar (2) / libc+0x1234 (1) / EVIL (1): by total then name */
	ck_assert_ptr_nonnull(strstr(text,
				     "  100.00%     0.00%         4  worker (demo)\n"
				     "   50.00%     0.00%         2  |- com.example.Foo.bar(int) "
				     "(memfd:jit-cache (deleted))\n"
				     "   50.00%    50.00%         2  |  `- com.example.Foo.baz()\n"
				     "   25.00%    25.00%         1  |- [libc.so.6+0x1234]\n"
				     "   25.00%    25.00%         1  `- tab_here_nl \"q\" <x> & "
				     "\xef\xbf\xbd bad \xef\xbf\xbd\xef\xbf\xbd end (demo)\n"));
	/* recursion: one node per level */
	ck_assert_ptr_nonnull(strstr(text, "`- recurse (demo)\n"));
	ck_assert_uint_eq(count_str(text, "recurse (demo)\n"), 3 + 2); /* tree + top tables */
	/* each thread's top table, from out_top_write() on that thread's samples only */
	ck_assert_uint_eq(count_str(text, "total samples: "), 4);
	ck_assert_ptr_nonnull(strstr(text, "total samples: 8\n"));
	ck_assert_ptr_null(strstr(text, "not shown"));
	assert_clean_text(text, "\n");
	testutil_check_golden("text/demo.txt", text, strlen(text));

	/* deterministic */
	again = render_text(p, NULL, &to);
	ck_assert_str_eq(again, text);
	free(again);

	/* a higher threshold leaves out [no stack] (12.5%) and memcpy (25%) of tid 100 */
	to.min_percent = 30;
	again = render_text(p, NULL, &to);
	ck_assert_ptr_nonnull(strstr(again, "# thread main (tid 100): 8 samples, 50.00% of 16\n"
					    "# 2 nodes under 30.00% not shown\n"));
	ck_assert_ptr_null(strstr(again, "   12.50%    12.50%         1  [no stack]\n"));
	ck_assert_ptr_null(strstr(again, "- memcpy (libc.so.6)\n"));
	free(again);

	/* merged: one tree, the threads' roots side by side; one top table */
	to.min_percent = -1;
	to.merged = 1;
	again = render_text(p, NULL, &to);
	ck_assert_ptr_nonnull(strstr(again, "# all threads: 16 samples\n"));
	ck_assert_ptr_nonnull(strstr(again,
				     "   50.00%     0.00%         8  _start (demo)\n"
				     "   50.00%     0.00%         8  `- main (demo)\n"
				     "   43.75%     0.00%         7     |- compute (demo)\n"));
	ck_assert_ptr_nonnull(strstr(again, "   43.75%     0.00%         7  worker (demo)\n"));
	ck_assert_uint_eq(count_str(again, "total samples: "), 1);
	assert_clean_text(again, "\n");
	testutil_check_golden("text/demo-merged.txt", again, strlen(again));
	free(again);
	free(text);
	profile_free(p);
}
END_TEST

/* The default threshold: 0.5% of the tree is shown, less is not. */
START_TEST(test_text_threshold)
{
	struct profile *p = profile_new();
	struct profile_frame f = {0};
	uint32_t la, lb, lc, sa, sb, sc, t1, t2;
	char *text;
	int i;

	f.name = profile_intern_str(p, "a");
	la = profile_intern_location(p, 0, 1, &f, 1);
	f.name = profile_intern_str(p, "b");
	lb = profile_intern_location(p, 0, 2, &f, 1);
	f.name = profile_intern_str(p, "c");
	lc = profile_intern_location(p, 0, 3, &f, 1);
	sa = profile_intern_stack(p, &la, 1);
	sb = profile_intern_stack(p, (uint32_t[]){lb, la}, 2);
	sc = profile_intern_stack(p, (uint32_t[]){lc, la}, 2);
	t1 = profile_thread(p, 1, "t1");
	t2 = profile_thread(p, 2, "t2");
	for (i = 0; i < 199; i++)
		profile_add_sample(p, t1, sa, 0, 0);
	profile_add_sample(p, t1, sb, 0, 0); /* 1 of 200 = 0.5%: shown */
	profile_add_weighted(p, t2, sa, 0, 0, 299);
	profile_add_sample(p, t2, sc, 0, 0); /* 1 of 300: hidden */
	text = render_text(p, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(text, "    0.50%     0.50%         1  `- b\n"));
	ck_assert_ptr_nonnull(strstr(text, "# thread t1 (tid 1): 200 samples, 40.00% of 500\n#\n"));
	ck_assert_ptr_nonnull(strstr(text, "# thread t2 (tid 2): 300 samples, 60.00% of 500\n"
					   "# 1 node under 0.50% not shown\n"));
	ck_assert_ptr_null(strstr(text, "- c\n"));
	ck_assert_ptr_nonnull(strstr(text, "total samples: 300\n")); /* weights count */
	free(text);
	profile_free(p);
}
END_TEST

/* Every writer on an empty profile. */
START_TEST(test_empty)
{
	struct profile *p = profile_new();
	size_t len;
	char *data, *path, *out;
	int st;

	data = testutil_render(out_sentry_write, p, NULL, &len);
	ck_assert_ptr_nonnull(strstr(data, "\"samples\": [\n  ],"));
	path = testutil_tmp_file("empty.json", data, len);
	out = py_run("sentry", path, NULL, &st);
	if (out) { /* valid JSON, but Relay rejects a chunk without samples */
		ck_assert_int_eq(st, 1);
		ck_assert_ptr_nonnull(strstr(out, "FAIL: no samples"));
		free(out);
	}
	free(path);
	free(data);

	data = testutil_render(out_arttrace_write, p, NULL, &len);
	ck_assert_ptr_nonnull(strstr(data, "elapsed-time-usec=0\nnum-method-calls=0\n"));
	ck_assert_ptr_null(strstr(data, "pid="));
	path = testutil_tmp_file("empty.trace", data, len);
	out = py_check("arttrace", path, NULL);
	free(out);
	free(path);
	free(data);

	data = render_text(p, NULL, NULL);
	ck_assert_str_eq(data,
			 "# perch call tree: 0 samples in 0 threads, period 10000 us\n"
			 "# Total: samples with the function on their path (perf's Children); "
			 "Self: samples ending in it;\n"
			 "# percentages of the thread's samples; children by Total\n");
	free(data);
	profile_free(p);
}
END_TEST

/* Hostile meta: bad ids and build-ids are ignored, pid garbage is left out, given values are
 * escaped. */
START_TEST(test_hostile_meta)
{
	struct profile *p = build_profile(1);
	size_t len;
	char *data, *path, *out;

	profile_set_meta(p, "profiler_id", "0011223344556677889AABBCCDDEEFF0"); /* upper case */
	profile_set_meta(p, "build_id:/usr/bin/demo", "xyz");
	profile_set_meta(p, "build_id:/usr/lib/x86_64-linux-gnu/libc.so.6", "abc");
	profile_set_meta(p, "sentry_release", "rel\"ease\n1");
	profile_set_meta(p, "pid", "12\n*end");
	profile_set_meta(p, "counter:cpu_percent", "=1 x=2 18446744073709551616=3 9=inf 7=");
	data = testutil_render(out_sentry_write, p, NULL, &len);
	ck_assert_ptr_null(strstr(data, "0011223344556677889AABBCCDDEEFF0"));
	ck_assert_ptr_null(strstr(data, "debug_meta"));
	ck_assert_ptr_null(strstr(data, "instruction_addr"));
	ck_assert_ptr_null(strstr(data, "cpu_usage"));
	ck_assert_ptr_nonnull(strstr(data, "\"release\": \"rel\\\"ease\\n1\""));
	/* a libc frame without an image has a name again */
	ck_assert_ptr_nonnull(strstr(data, "{\"function\": \"[libc.so.6+0x1234]\", \"package\""));
	path = testutil_tmp_file("hostile.json", data, len);
	out = py_check("sentry", path, NULL);
	free(out);
	free(path);
	free(data);

	data = testutil_render(out_arttrace_write, p, NULL, &len);
	ck_assert_ptr_null(strstr(data, "pid="));
	ck_assert_uint_eq(count_str(data, "*end"), 1);
	free(data);
	profile_free(p);
}
END_TEST

/* The checkers themselves reject broken files (so their "ok" means something). */
START_TEST(test_checkers_reject)
{
	struct profile *p = build_profile(1);
	size_t len, tlen;
	char *data = testutil_render(out_arttrace_write, p, NULL, &len),
	     *text = art_text(data, len), *bad;
	char *path, *out, *json;
	int st;

	if (!testutil_have_tool("python3"))
		goto out;
	tlen = strlen(text);
	/* truncated in the middle of a record */
	path = testutil_tmp_file("trunc.trace", data, len - 3);
	out = py_run("arttrace", path, NULL, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_ptr_nonnull(strstr(out, "trailing partial record"));
	free(out);
	free(path);
	/* truncated inside the text */
	path = testutil_tmp_file("trunc2.trace", data, tlen - 3);
	out = py_run("arttrace", path, NULL, &st);
	ck_assert_int_eq(st, 1);
	free(out);
	free(path);
	/* the first record turned into an exit of a method never entered */
	bad = xmalloc(len);
	memcpy(bad, data, len);
	bad[tlen + 32 + 2] = 0x09; /* 0x8 | exit */
	path = testutil_tmp_file("mismatch.trace", bad, len);
	out = py_run("arttrace", path, NULL, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_ptr_nonnull(strstr(out, "exits demo.main but nothing is innermost"));
	free(out);
	free(path);
	/* bad magic; garbage */
	memcpy(bad, data, len);
	bad[tlen] = 'X';
	path = testutil_tmp_file("magic.trace", bad, len);
	out = py_run("arttrace", path, NULL, &st);
	ck_assert_int_eq(st, 1);
	free(out);
	free(path);
	path = testutil_tmp_file("garbage.trace", "\x01\x02*end\n\xff", 8);
	out = py_run("arttrace", path, NULL, &st);
	ck_assert_int_eq(st, 1);
	free(out);
	free(path);
	free(bad);

	/* Sentry: a stack_id out of range */
	json = testutil_render(out_sentry_write, p, NULL, &len);
	bad = strstr(json, "\"stack_id\": 0,");
	bad[12] = '9';
	path = testutil_tmp_file("bad.json", json, len);
	out = py_run("sentry", path, NULL, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_ptr_nonnull(strstr(out, "stack_id 9 out of range"));
	free(out);
	free(path);
	path = testutil_tmp_file("trunc.json", json, len / 2);
	out = py_run("sentry", path, NULL, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_ptr_nonnull(strstr(out, "not JSON"));
	free(out);
	free(path);
	free(json);
out:
	free(text);
	free(data);
	profile_free(p);
}
END_TEST

START_TEST(test_managed_split)
{
	size_t dot, paren;

	ck_assert_int_eq(out_managed_split("com.example.Foo.bar(int)", &dot, &paren), 0);
	ck_assert_uint_eq(dot, 15);
	ck_assert_uint_eq(paren, 19);
	ck_assert_int_eq(out_managed_split("Foo.bar", &dot, &paren), 0);
	ck_assert_uint_eq(dot, 3);
	ck_assert_uint_eq(paren, 7);
	ck_assert_int_eq(out_managed_split("bar(int)", &dot, &paren), -EINVAL);
	ck_assert_int_eq(out_managed_split(".bar()", &dot, &paren), -EINVAL);
	ck_assert_int_eq(out_managed_split("Foo.(int)", &dot, &paren), -EINVAL);
	ck_assert_int_eq(out_managed_split("std::vector<int>::at(unsigned long)", &dot, &paren),
			 -EINVAL);
	ck_assert_int_eq(out_managed_split("Foo.bar(int) const", &dot, &paren), -EINVAL);
	ck_assert_int_eq(out_managed_split("", &dot, &paren), -EINVAL);
	ck_assert_int_eq(out_managed_split(NULL, &dot, &paren), -EINVAL);
}
END_TEST

/* A write error reaches the caller as -errno. */
START_TEST(test_write_error)
{
	struct profile *p = build_profile(1);
	output_write_fn *const writers[] = {out_sentry_write, out_sentry_envelope_write,
					    out_arttrace_write, out_text_write};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(writers); i++)
		testutil_check_enospc(writers[i], p);
	profile_free(p);
}
END_TEST

Suite *writers2_suite(void)
{
	Suite *s = suite_create("writers2");
	TCase *tc = tcase_create("golden");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_sentry_golden);
	tcase_add_test(tc, test_sentry_envelope);
	tcase_add_test(tc, test_arttrace_golden);
	tcase_add_test(tc, test_arttrace_overflow);
	tcase_add_test(tc, test_no_kept_samples);
	tcase_add_test(tc, test_text_golden);
	tcase_add_test(tc, test_text_threshold);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_hostile_meta);
	tcase_add_test(tc, test_checkers_reject);
	tcase_add_test(tc, test_managed_split);
	tcase_add_test(tc, test_write_error);
	suite_add_tcase(s, tc);
	return s;
}
