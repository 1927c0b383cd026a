/* Unit tests for the windows written while recording (record-ring.h) on a synthetic profile:
 * one thread sampled every 10 ms, fed to the ring as the worker would. The expected files and
 * counts follow from the sample times by hand; the folded files are read back with a small
 * parser (the format is one line per stack, its count last). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/out/output.h"
#include "perch/profile/profile.h"
#include "perch/record/record-opts.h"
#include "perch/record/record-ring.h"
#include "testutil.h"

#define MS 1000000ULL

static struct profile *p;
static uint32_t thread, stacks[2];

static void setup(void)
{
	uint32_t mod, loc[2];
	struct profile_frame f[2];

	testutil_tmp_setup();
	p = profile_new();
	mod = profile_intern_str(p, "/bin/x");
	f[0] = (struct profile_frame){.name = profile_intern_str(p, "work"), .module = mod};
	f[1] = (struct profile_frame){.name = profile_intern_str(p, "wait"), .module = mod};
	loc[0] = profile_intern_location(p, mod, 0x10, &f[0], 1);
	loc[1] = profile_intern_location(p, mod, 0x20, &f[1], 1);
	stacks[0] = profile_intern_stack(p, &loc[0], 1);
	stacks[1] = profile_intern_stack(p, &loc[1], 1);
	thread = profile_thread_in(p, 9, 9, "main");
}

static void teardown(void)
{
	profile_free(p);
	testutil_tmp_teardown();
}

/* Samples at [@from, @to) ms every 10 ms ("wait" on the second half of every second), each
 * counted and handed to the ring. */
static void feed(struct record_ring *r, unsigned int from, unsigned int to)
{
	for (unsigned int t = from; t < to; t += 10) {
		profile_add_sample(p, thread, stacks[t % 1000 >= 500], t * MS, 'R');
		record_ring_sample(r, t * MS);
	}
}

/* The sum of the counts of a folded file, -1 when it cannot be read. */
static long folded_total(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	long sum = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');

		ck_assert_ptr_nonnull(sp);
		sum += strtol(sp + 1, NULL, 10);
	}
	fclose(f);
	return sum;
}

static struct record_output out;

static struct record_ring *new_ring(double ring_s, double chunk_s, int max)
{
	struct record_ring_opts o = {.ring_s = ring_s,
				     .chunk_s = chunk_s,
				     .trigger_max = max,
				     .outputs = &out,
				     .nr_outputs = 1,
				     .period_ns = 10 * MS,
				     .start_realtime_ns = 1700000000ULL * 1000000000ULL};

	out.path = testutil_tmp_path("w.folded");
	out.fmt = output_format_by_name("folded");
	return record_ring_new(&o, p);
}

START_TEST(test_names)
{
	char *s;

	s = record_ring_name("out.trace.json", ".trace.json", ".0003");
	ck_assert_str_eq(s, "out.0003.trace.json");
	free(s);
	s = record_ring_name("dir.d/prof", ".folded", "-x");
	ck_assert_str_eq(s, "dir.d/prof-x");
	free(s);
	s = record_ring_name("a/b.data", NULL, "-x");
	ck_assert_str_eq(s, "a/b-x.data");
	free(s);
	s = record_ring_name(".hidden", ".folded", "-x");
	ck_assert_str_eq(s, ".hidden-x");
	free(s);
}
END_TEST

/* Chunks of 1 s: every sample in exactly one chunk, one that comes late in the next one; the
 * last, partial chunk at the end; memory held about one chunk. */
START_TEST(test_chunks)
{
	struct record_ring *r = new_ring(0, 1, 0);
	long sum = 0;
	char *path;

	feed(r, 0, 1500);
	/* a sample of 0.95 s reaching the worker after the first chunk was written */
	profile_add_sample(p, thread, stacks[0], 950 * MS, 'R');
	record_ring_sample(r, 950 * MS);
	feed(r, 1500, 3500);
	ck_assert_int_eq(record_ring_finish(r, 3500 * MS), 0);
	ck_assert_uint_eq(record_ring_stats(r)->chunks, 4);
	for (int i = 0; i < 4; i++) {
		char tag[16];
		long n;

		snprintf(tag, sizeof(tag), ".%04d", i);
		path = record_ring_name(out.path, ".folded", tag);
		n = folded_total(path);
		/* 100 a second; the first chunk is written 100 ms after its end (one late
		 * sample of it goes to the second); the last chunk is half a second */
		ck_assert_int_eq(n, (i == 0 ? 100 : i == 1 ? 101 : i == 2 ? 100 : 50));
		sum += n;
		free(path);
	}
	ck_assert_int_eq(sum, (long)profile_total_samples(p));
	ck_assert_uint_le(record_ring_stats(r)->held_max, 100 + 10 + 25 + 1);
	path = record_ring_name(out.path, ".folded", ".0004");
	ck_assert_int_ne(access(path, F_OK), 0);
	free(path);
	free(out.path);
	record_ring_free(r);
}
END_TEST

/* A ring of 1 s: a trigger at 2.0 s saved until 2.3 s holds [1.0, 2.3] s, with a dump of the
 * thread at 2.0 s; --trigger-max 1 ignores the second; the end writes the last second to -o;
 * memory held about the ring. */
START_TEST(test_trigger)
{
	struct record_ring *r = new_ring(1, 0, 1);
	int h;
	size_t nf = 0;
	const char *dir = testutil_tmp;
	char cmd[512], *list;
	int status;

	feed(r, 0, 2000);
	h = record_ring_trigger(r, "stall", 2000 * MS, UINT64_MAX, "thread 9 (main) stalled");
	ck_assert_int_ge(h, 0);
	record_ring_until(r, h, 2300 * MS);
	ck_assert_int_eq(record_ring_trigger(r, "signal", 2100 * MS, 2100 * MS, "again"), -1);
	feed(r, 2000, 5000);
	ck_assert_uint_eq(record_ring_stats(r)->saves, 1);
	ck_assert_uint_eq(record_ring_stats(r)->ignored, 1);
	ck_assert_int_eq(record_ring_finish(r, 5000 * MS), 0);
	snprintf(cmd, sizeof(cmd), "cd %s && ls", dir);
	list = testutil_run(cmd, &status);
	for (char *s = strtok(list, "\n"); s; s = strtok(NULL, "\n")) {
		char *path = testutil_tmp_path(s);

		if (strstr(s, "-stall.folded")) {
			/* 1.00 .. 2.30 s inclusive */
			ck_assert_int_eq(folded_total(path), 131);
			nf++;
		} else if (strstr(s, "-stall-threads.txt")) {
			char *text = testutil_run(strcat(strcpy(cmd, "cat "), path), &status);

			ck_assert_ptr_nonnull(strstr(text, "thread 9 (main)"));
			ck_assert_ptr_nonnull(strstr(text, "when thread 9 (main) stalled"));
			ck_assert_ptr_nonnull(strstr(text, "#0   work"));
			free(text);
			nf++;
		} else {
			ck_assert_str_eq(s, "w.folded");
			ck_assert_int_eq(folded_total(path), 100);
			nf++;
		}
		free(path);
	}
	ck_assert_uint_eq(nf, 3);
	/* the ring, the 300 ms the save waited for and its settling, a prune period */
	ck_assert_uint_le(record_ring_stats(r)->held_max, 100 + 30 + 10 + 25 + 1);
	free(list);
	free(out.path);
	record_ring_free(r);
}
END_TEST

Suite *record_ring_suite(void)
{
	Suite *s = suite_create("record_ring");
	TCase *tc = tcase_create("windows");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_chunks);
	tcase_add_test(tc, test_trigger);
	suite_add_tcase(s, tc);
	return s;
}
