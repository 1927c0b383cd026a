/* Unit tests for the recording file (src/profile/recording.c): a synthetic profile streamed in
 * several flushes reads back identical (samples, threads, renames, inlined frames, every meta key
 * including timelines that grew between flushes); the streamed profile keeps no samples after
 * a flush; every prefix of a file (a recording cut short) and every corrupted byte reads back
 * as an error or as the complete chunks before it; a stored version-1 file still reads back
 * (fixtures/recording/demo-v1.perch, against fixtures/golden/recording/demo-v1.folded; frozen:
 * perch writes version 2 now); a recording of several processes (version 2: a process per
 * thread, process names renamed at exec) reads back with each thread in its process
 * (fixtures/recording/demo-v2.perch, against fixtures/golden/recording/demo-v2.folded).
 *
 * PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=recording build/tests/unit/run rewrites the stored
 * version-2 file, its golden rendering and the fuzz seeds in fixtures/fuzz/recording/. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"
#include "testutil.h"

#define T0 5000000000ULL

/* Build the demo profile; with @w, flush it to the recording every few samples. */
static struct profile *build(struct recording_writer *w)
{
	struct profile *p = profile_new();
	uint32_t exe = profile_intern_str(p, "/usr/bin/demo");
	uint32_t libc = profile_intern_str(p, "/usr/lib/libc.so.6");
	struct profile_frame f[2];
	uint32_t l_main, l_work, l_memcpy, l_wait, s[3], t1, t2;
	char buf[64];

	profile_keep_samples(p, 1);
	profile_set_meta(p, "pid", "4242");
	profile_set_meta(p, "build_id:/usr/bin/demo", "0123456789abcdef");
	profile_set_meta(p, "counters", "cpu_percent");
	memset(f, 0, sizeof(f));
	f[0].name = profile_intern_str(p, "main");
	f[0].file = profile_intern_str(p, "/src/main.c");
	f[0].line = 10;
	f[0].module = exe;
	l_main = profile_intern_location(p, exe, 0x1100, f, 1);
	/* inlined helper into work */
	f[0].name = profile_intern_str(p, "helper");
	f[0].line = 3;
	f[0].inlined = 1;
	f[1] = f[0];
	f[1].name = profile_intern_str(p, "work");
	f[1].line = 20;
	f[1].inlined = 0;
	l_work = profile_intern_location(p, exe, 0x1200, f, 2);
	memset(f, 0, sizeof(f));
	f[0].name = profile_intern_str(p, "memcpy");
	f[0].module = libc;
	l_memcpy = profile_intern_location(p, libc, 0x9a000, f, 1);
	f[0].name = profile_intern_str(p, "[lock futex]");
	f[0].module = profile_intern_str(p, "[perch]");
	f[0].kind = PROFILE_FRAME_PSEUDO;
	l_wait = profile_intern_location(p, f[0].module, f[0].name, f, 1);
	s[0] = profile_intern_stack(p, (uint32_t[]){l_work, l_main}, 2);
	t1 = profile_thread(p, 4242, "demo");
	t2 = profile_thread(p, 4243, NULL);
	for (int i = 0; i < 40; i++) {
		profile_add_weighted(p, t1, s[0], T0 + (uint64_t)i * 10000000, 'R', i == 7 ? 3 : 1);
		if (i == 5) {
			s[1] = profile_intern_stack(p, (uint32_t[]){l_memcpy, l_work, l_main}, 3);
			s[2] = profile_intern_stack(p, (uint32_t[]){l_wait, l_main}, 2);
		}
		if (i >= 5)
			profile_add_sample(p, i % 3 ? t2 : t1, s[1 + i % 2],
					   T0 + (uint64_t)i * 10000000 + 5000, i % 2 ? 'S' : 'R');
		if (i == 20)
			profile_thread(p, 4243, "worker-renamed");
		/* a timeline that grows, and a key rewritten */
		snprintf(buf, sizeof(buf), "%s%llu=%d", i ? " " : "",
			 (unsigned long long)(T0 + (uint64_t)i * 10000000), i % 7);
		{
			const char *old = profile_meta(p, "counter:cpu_percent");
			char *v = xasprintf("%s%s", old ? old : "", buf);

			profile_set_meta(p, "counter:cpu_percent", v);
			free(v);
		}
		if (i == 30)
			profile_set_meta(p, "pid", "4243");
		if (w && i % 9 == 8) {
			ck_assert_int_eq(recording_flush(w, p), 0);
			/* streamed: the written samples are gone, the counts are not */
			size_t n;

			profile_samples(p, &n);
			ck_assert_uint_eq(n, 0);
		}
	}
	profile_set_meta(p, "duration_ns", "400000000");
	return p;
}

static char *folded(const struct profile *p)
{
	return testutil_render(out_folded_write, p, NULL, NULL);
}

/* Write the demo recording to <tmp>/@name; returns its path and the live profile in *@live. */
static char *write_demo(const char *name, struct profile **live)
{
	char *path = testutil_tmp_path(name);
	struct recording_writer *w = recording_create(path);
	struct profile *p;
	size_t n;

	ck_assert_ptr_nonnull(w);
	p = build(w);
	ck_assert_int_eq(recording_close(w, p), 0);
	profile_samples(p, &n);
	ck_assert_uint_eq(n, 0);
	*live = p;
	return path;
}

/* Same samples (time, thread tid, stack frames, state, weight) in the same order. */
static void assert_same_samples(const struct profile *a, const struct profile *b)
{
	size_t na, nb;
	const struct profile_sample *sa = profile_samples(a, &na), *sb = profile_samples(b, &nb);

	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++) {
		size_t ka, kb;
		const uint32_t *la = profile_stack(a, sa[i].stack, &ka);
		const uint32_t *lb = profile_stack(b, sb[i].stack, &kb);

		ck_assert_uint_eq(sa[i].time_ns, sb[i].time_ns);
		ck_assert_int_eq(profile_thread_get(a, sa[i].thread)->tid,
				 profile_thread_get(b, sb[i].thread)->tid);
		ck_assert_int_eq(sa[i].state, sb[i].state);
		ck_assert_uint_eq(sa[i].weight, sb[i].weight);
		ck_assert_uint_eq(ka, kb);
		for (size_t j = 0; j < ka; j++) {
			const struct profile_location *x = profile_location(a, la[j]);
			const struct profile_location *y = profile_location(b, lb[j]);
			size_t fa, fb;
			const uint32_t *ffa = profile_location_frames(a, la[j], &fa);
			const uint32_t *ffb = profile_location_frames(b, lb[j], &fb);

			ck_assert_uint_eq(x->addr, y->addr);
			ck_assert_str_eq(profile_str(a, x->module), profile_str(b, y->module));
			ck_assert_uint_eq(fa, fb);
			for (size_t k = 0; k < fa; k++) {
				const struct profile_frame *p1 = profile_frame(a, ffa[k]);
				const struct profile_frame *p2 = profile_frame(b, ffb[k]);

				ck_assert_str_eq(profile_str(a, p1->name),
						 profile_str(b, p2->name));
				ck_assert_str_eq(profile_str(a, p1->file),
						 profile_str(b, p2->file));
				ck_assert_uint_eq(p1->line, p2->line);
				ck_assert_uint_eq(p1->kind, p2->kind);
				ck_assert_uint_eq(p1->inlined, p2->inlined);
			}
		}
	}
}

START_TEST(test_roundtrip)
{
	struct profile *live, *ref = build(NULL), *back;
	struct recording_info info;
	char *path = write_demo("demo.perch", &live), *a, *b;
	const char *key, *value;

	ck_assert_int_eq(recording_read(path, &back, &info), 0);
	ck_assert_msg(info.complete, "%s", info.error);
	ck_assert_str_eq(info.error, "");
	ck_assert_uint_eq(info.version, RECORDING_VERSION);
	ck_assert_uint_ge(info.chunks, 5);
	ck_assert_uint_eq(profile_total_samples(back), profile_total_samples(ref));
	ck_assert_uint_eq(profile_total_samples(back), 40 + 2 + 35);
	assert_same_samples(ref, back);
	/* every meta key, the grown timeline and the rewritten pid too */
	ck_assert_uint_eq(profile_nr_meta(back), profile_nr_meta(ref));
	for (size_t i = 0; (key = profile_meta_at(ref, i, &value)); i++) {
		ck_assert_ptr_nonnull(profile_meta(back, key));
		ck_assert_str_eq(profile_meta(back, key), value);
	}
	ck_assert_str_eq(profile_meta(back, "pid"), "4243");
	ck_assert_str_eq(profile_str(back, profile_thread_get(back, 1)->name), "worker-renamed");
	a = folded(ref);
	b = folded(back);
	ck_assert_str_eq(a, b);
	/* the live profile's counts were untouched by the dropped samples */
	free(b);
	b = folded(live);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	profile_free(back);
	profile_free(live);
	profile_free(ref);
	free(path);
}
END_TEST

/* Every prefix: an error before the first complete chunk, then the chunks read so far (samples
 * never decrease with length), complete only for the whole file. Also every byte flipped. */
START_TEST(test_cut_and_corrupt)
{
	struct profile *live, *back;
	struct recording_info info;
	char *path = write_demo("cut.perch", &live);
	size_t size, len;
	uint8_t *data = testutil_read_file(path, &size);
	uint64_t last = 0;
	int ok_seen = 0;

	for (len = 0; len <= size; len++) {
		uint8_t *copy = xmalloc(len ? len : 1);
		int ret;

		memcpy(copy, data, len);
		ret = recording_read_mem(copy, len, &back, &info);
		if (ret < 0) {
			ck_assert_msg(!ok_seen, "prefix %zu fails after a shorter one read", len);
			ck_assert_ptr_null(back);
			ck_assert(info.error[0]);
		} else {
			ok_seen = 1;
			ck_assert_uint_ge(info.samples, last);
			last = info.samples;
			ck_assert_int_eq(info.complete, len == size);
			ck_assert(info.complete || info.error[0]);
			/* where it stopped: within the prefix, its end when cut between chunks */
			ck_assert(info.complete ? !info.bad_offset
						: info.bad_offset > 0 && info.bad_offset <= len);
			if (strstr(info.error, "no end record"))
				ck_assert_uint_eq(info.bad_offset, len);
			profile_free(back);
		}
		free(copy);
	}
	ck_assert(ok_seen);
	ck_assert_uint_eq(last, 40 + 35);
	for (size_t i = 0; i < size; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			data[i] ^= (uint8_t)(1u << bit);
			if (recording_read_mem(data, size, &back, &info) == 0) {
				/* a damaged chunk stops reading: nothing complete after it */
				ck_assert(!info.complete || i < 8 + 8);
				profile_free(back);
			}
			data[i] ^= (uint8_t)(1u << bit);
		}
	}
	free(data);
	profile_free(live);
	free(path);
}
END_TEST

START_TEST(test_bad_files)
{
	struct profile *p;
	struct recording_info info;
	uint8_t hdr[16] = "PERCHREC\x03\x00\x10\x00";
	char *path;

	ck_assert_int_eq(recording_read_mem((const uint8_t *)"hello", 5, &p, &info), -EINVAL);
	ck_assert_ptr_nonnull(strstr(info.error, "not a perch recording"));
	ck_assert_int_eq(recording_read_mem(hdr, sizeof(hdr), &p, &info), -EPROTONOSUPPORT);
	ck_assert_ptr_nonnull(strstr(info.error, "version 3"));
	/* a header alone: no chunk to read */
	hdr[8] = 2;
	ck_assert_int_eq(recording_read_mem(hdr, sizeof(hdr), &p, &info), -EINVAL);
	hdr[8] = 1;
	ck_assert_int_eq(recording_read_mem(hdr, sizeof(hdr), &p, &info), -EINVAL);
	ck_assert_int_eq(recording_read("/nonexistent/x.perch", &p, &info), -ENOENT);
	ck_assert_int_eq(recording_read("/", &p, &info), -EINVAL);
	ck_assert_ptr_null(recording_create("/nonexistent/x.perch"));
	/* a symlink is not followed */
	path = testutil_tmp_path("link.perch");
	ck_assert_int_eq(symlink("/tmp/target-of-link", path), 0);
	ck_assert_ptr_null(recording_create(path));
	ck_assert_int_eq(errno, ELOOP);
	free(path);
	ck_assert(recording_is_path("a/run.perch"));
	ck_assert(!recording_is_path(".perch") && !recording_is_path("run.perch.svg"));
}
END_TEST

/* A file written by format version 1 still reads back the same (frozen: this perch writes
 * version 2, whose threads carry their process). */
START_TEST(test_stored_v1)
{
	char *rel = testutil_fixture_path("recording/demo-v1.perch"), *text;
	struct profile *back;
	struct recording_info info;

	ck_assert_int_eq(recording_read(rel, &back, &info), 0);
	ck_assert_msg(info.complete, "%s", info.error);
	ck_assert_uint_eq(info.version, 1);
	text = folded(back);
	testutil_check_golden("recording/demo-v1.folded", text, strlen(text));
	ck_assert_str_eq(profile_meta(back, "build_id:/usr/bin/demo"), "0123456789abcdef");
	/* no process recorded: every thread is of meta "pid"'s process */
	ck_assert_uint_eq(profile_nr_processes(back), 0);
	ck_assert_int_eq(profile_thread_get(back, 0)->pid, 0);
	free(text);
	profile_free(back);
	free(rel);
}
END_TEST

/* A shell (pid 700) that forks a child (701) which execs xz: the child's process name changes
 * between flushes, and tid 702 exists in both processes one after the other (a reused id is a
 * different thread of a different process). */
static struct profile *build_multi(struct recording_writer *w)
{
	struct profile *p = profile_new();
	uint32_t exe = profile_intern_str(p, "/bin/sh");
	struct profile_frame f = {0};
	uint32_t loc, st, t_sh, t_child, t_a, t_b;

	profile_keep_samples(p, 1);
	profile_set_meta(p, "pid", "700");
	f.name = profile_intern_str(p, "main");
	f.module = exe;
	loc = profile_intern_location(p, exe, 0x1000, &f, 1);
	st = profile_intern_stack(p, &loc, 1);
	profile_process(p, 700, "sh");
	t_sh = profile_thread_in(p, 700, 700, "sh");
	t_a = profile_thread_in(p, 700, 702, "sh-worker");
	t_child = profile_thread_in(p, 701, 701, "sh");
	profile_process(p, 701, "sh");
	for (int i = 0; i < 20; i++) {
		profile_add_sample(p, t_sh, st, T0 + (uint64_t)i * 1000, 'S');
		profile_add_sample(p, i < 10 ? t_a : t_child, st, T0 + (uint64_t)i * 1000 + 1, 'R');
		if (i == 9) {
			if (w)
				ck_assert_int_eq(recording_flush(w, p), 0);
			/* the child execs xz; tid 702 of the shell is gone, 702 of xz appears */
			profile_process(p, 701, "xz");
			profile_thread_in(p, 701, 701, "xz");
			t_b = profile_thread_in(p, 701, 702, "xz-worker");
		}
		if (i >= 10)
			profile_add_sample(p, t_b, st, T0 + (uint64_t)i * 1000 + 2, 'R');
	}
	return p;
}

static char *write_multi(const char *name, struct profile **live)
{
	char *path = testutil_tmp_path(name);
	struct recording_writer *w = recording_create(path);

	ck_assert_ptr_nonnull(w);
	*live = build_multi(w);
	ck_assert_int_eq(recording_close(w, *live), 0);
	return path;
}

START_TEST(test_processes)
{
	struct profile *live, *back, *ref = build_multi(NULL);
	struct recording_info info;
	char *path = write_multi("multi.perch", &live), *a, *b;

	ck_assert_int_eq(recording_read(path, &back, &info), 0);
	ck_assert_msg(info.complete, "%s", info.error);
	ck_assert_uint_eq(profile_nr_processes(back), 2);
	ck_assert_uint_eq(profile_nr_threads(back), 4);
	ck_assert_str_eq(profile_process_name(back, 700), "sh");
	ck_assert_str_eq(profile_process_name(back, 701), "xz");
	ck_assert(profile_multi_process(back));
	assert_same_samples(ref, back);
	for (uint32_t i = 0; i < profile_nr_threads(ref); i++) {
		ck_assert_int_eq(profile_thread_get(back, i)->pid, profile_thread_get(ref, i)->pid);
		ck_assert_int_eq(profile_thread_get(back, i)->tid, profile_thread_get(ref, i)->tid);
	}
	a = folded(ref);
	b = folded(back);
	ck_assert_str_eq(a, b);
	/* the process before the thread, as stackcollapse-perf.pl --tid writes it */
	ck_assert_ptr_nonnull(strstr(a, "xz-701/xz-worker-702;main 10\n"));
	ck_assert_ptr_nonnull(strstr(a, "sh-700/sh-worker-702;main 10\n"));
	ck_assert_ptr_nonnull(strstr(a, "sh-700/sh-700;main 20\n"));
	free(a);
	free(b);
	profile_free(back);
	profile_free(live);
	profile_free(ref);
	free(path);
}
END_TEST

/* The stored version-2 file of build_multi() reads back to its golden rendering. */
START_TEST(test_stored_v2)
{
	char *rel = testutil_fixture_path("recording/demo-v2.perch"), *text;
	struct profile *live, *back;
	struct recording_info info;
	const char *update = getenv("PERCH_UPDATE_GOLDEN");
	size_t size;
	uint8_t *data;

	if (update && !strcmp(update, "1")) {
		char *path = write_multi("v2.perch", &live), *seed;

		data = testutil_read_file(path, &size);
		testutil_write_file(rel, data, size);
		/* fuzz seeds: the whole file, cut in a chunk */
		seed = testutil_fixture_path("fuzz/recording/demo-v2");
		testutil_write_file(seed, data, size);
		free(seed);
		seed = testutil_fixture_path("fuzz/recording/cut-v2");
		testutil_write_file(seed, data, size * 2 / 3);
		free(seed);
		free(data);
		profile_free(live);
		free(path);
	}
	ck_assert_int_eq(recording_read(rel, &back, &info), 0);
	ck_assert_msg(info.complete, "%s", info.error);
	ck_assert_uint_eq(info.version, 2);
	text = folded(back);
	testutil_check_golden("recording/demo-v2.folded", text, strlen(text));
	free(text);
	profile_free(back);
	free(rel);
}
END_TEST

Suite *recording_suite(void)
{
	Suite *s = suite_create("recording");
	TCase *tc = tcase_create("file");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_cut_and_corrupt);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_stored_v1);
	tcase_add_test(tc, test_processes);
	tcase_add_test(tc, test_stored_v2);
	suite_add_tcase(s, tc);
	return s;
}
