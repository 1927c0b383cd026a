/* Unit tests for stall detection: synthetic sample sequences of a watched thread (10 ms apart
 * unless said otherwise), where the expected stalls follow from the sequence by hand; the
 * function-level stack key and wait reason on a small profile; the meta text form. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/proc/stall.h"
#include "perch/profile/profile.h"

#define MS  1000000ULL
#define TID 100

static struct stall_detector *new_detector(int cpu_mode)
{
	struct stall_opts o = {
	    .threshold_ns = 200 * MS, .period_ns = 10 * MS, .cpu_mode = cpu_mode, .tid = TID};

	return stall_new(&o);
}

/* Samples at [@from, @to) ms every 10 ms, in @state; keys rotate over @nkeys values starting
 * at @key (nkeys 1: one stack all along). */
static void feed(struct stall_detector *d, unsigned int from, unsigned int to, char state,
		 uint64_t key, unsigned int nkeys, uint32_t stack, const char *reason)
{
	for (unsigned int t = from; t < to; t += 10) {
		struct stall_sample s = {.time_ns = t * MS,
					 .state = state,
					 .key = key + (t / 10) % nkeys,
					 .stack = stack,
					 .reason = reason};

		stall_feed(d, TID, "main", &s);
	}
}

START_TEST(test_off_cpu)
{
	struct stall_detector *d = new_detector(0);
	const struct stall *v;
	size_t n;

	feed(d, 0, 100, 'R', 1, 3, 1, NULL);		       /* busy, changing stacks */
	feed(d, 100, 600, 'S', 50, 1, 7, "[sleep nanosleep]"); /* 500 ms asleep */
	feed(d, 600, 800, 'R', 1, 3, 1, NULL);
	feed(d, 800, 950, 'S', 50, 1, 7, "[sleep nanosleep]"); /* 150 ms: too short */
	feed(d, 950, 1200, 'R', 1, 3, 1, NULL);
	stall_finish(d, 1200 * MS);
	v = stall_list(d, &n);
	ck_assert_uint_eq(n, 1);
	/* from the first sleeping sample to the first running one */
	ck_assert_uint_eq(v[0].start_ns, 100 * MS);
	ck_assert_uint_eq(v[0].duration_ns, 500 * MS);
	ck_assert_int_eq(v[0].kind, STALL_OFF_CPU);
	ck_assert_int_eq(v[0].tid, TID);
	ck_assert_uint_eq(v[0].stack, 7);
	ck_assert_int_eq(v[0].cut, 0);
	ck_assert_str_eq(v[0].reason, "[sleep nanosleep]");
	stall_free(d);
}
END_TEST

/* Off-CPU in two places: the reason and stack are the longer stretch's; a state without a
 * wait frame is named by its letter. */
START_TEST(test_reason_of_longest_stretch)
{
	struct stall_detector *d = new_detector(0);
	const struct stall *v;
	size_t n;

	feed(d, 0, 50, 'R', 1, 3, 1, NULL);
	feed(d, 50, 100, 'S', 60, 1, 8, "[lock futex]");
	feed(d, 100, 400, 'S', 61, 1, 9, "[io read /tmp/x\nfifo]");
	feed(d, 400, 450, 'R', 1, 3, 1, NULL);
	feed(d, 450, 700, 'D', 62, 1, 10, NULL);
	feed(d, 700, 750, 'R', 1, 3, 1, NULL);
	stall_finish(d, 750 * MS);
	v = stall_list(d, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0].start_ns, 50 * MS);
	ck_assert_uint_eq(v[0].duration_ns, 350 * MS);
	ck_assert_uint_eq(v[0].stack, 9);
	ck_assert_str_eq(v[0].reason, "[io read /tmp/x?fifo]"); /* no control characters */
	ck_assert_uint_eq(v[1].duration_ns, 250 * MS);
	ck_assert_str_eq(v[1].reason, "state D");
	stall_free(d);
}
END_TEST

/* Running in one function for 300 ms is a stall; running in one stack but mostly blocked
 * is only the off-CPU one. */
START_TEST(test_running)
{
	struct stall_detector *d = new_detector(0);
	const struct stall *v;
	size_t n;

	feed(d, 0, 100, 'R', 1, 3, 1, NULL);
	feed(d, 100, 400, 'R', 70, 1, 12, NULL);
	feed(d, 400, 500, 'R', 1, 3, 1, NULL);
	stall_finish(d, 500 * MS);
	v = stall_list(d, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].kind, STALL_RUNNING);
	ck_assert_uint_eq(v[0].start_ns, 100 * MS);
	ck_assert_uint_eq(v[0].duration_ns, 300 * MS);
	ck_assert_uint_eq(v[0].stack, 12);
	ck_assert_str_eq(v[0].reason, "running");
	stall_free(d);
}
END_TEST

/* Stalls that touch the ends are marked cut; the last one ends a period after its last
 * sample. */
START_TEST(test_cut)
{
	struct stall_detector *d = new_detector(0);
	const struct stall *v;
	size_t n;

	feed(d, 0, 300, 'S', 50, 1, 7, "[poll epoll_wait]");
	feed(d, 300, 400, 'R', 1, 3, 1, NULL);
	feed(d, 400, 700, 'S', 50, 1, 7, "[poll epoll_wait]");
	stall_finish(d, 700 * MS);
	v = stall_list(d, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0].cut, 1);
	ck_assert_uint_eq(v[0].duration_ns, 300 * MS);
	ck_assert_int_eq(v[1].cut, 1);
	ck_assert_uint_eq(v[1].start_ns, 400 * MS);
	ck_assert_uint_eq(v[1].duration_ns, 300 * MS);
	stall_free(d);
}
END_TEST

/* cpu mode: a waiting thread is not sampled, so a gap is off-CPU time without a stack. */
START_TEST(test_cpu_mode_gap)
{
	struct stall_detector *d = new_detector(1);
	const struct stall *v;
	size_t n;

	feed(d, 0, 100, 'R', 1, 3, 1, NULL);
	feed(d, 500, 600, 'R', 1, 3, 1, NULL);
	stall_finish(d, 900 * MS);
	v = stall_list(d, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0].start_ns, 100 * MS); /* a period after the last sample */
	ck_assert_uint_eq(v[0].duration_ns, 400 * MS);
	ck_assert_uint_eq(v[0].stack, STALL_NO_STACK);
	ck_assert_str_eq(v[0].reason, "not running");
	ck_assert_int_eq(v[0].cut, 0);
	/* not running from 600 ms to the end */
	ck_assert_uint_eq(v[1].start_ns, 600 * MS);
	ck_assert_uint_eq(v[1].duration_ns, 300 * MS);
	ck_assert_int_eq(v[1].cut, 1);
	stall_free(d);
}
END_TEST

/* Other threads are ignored; a name picks the first thread that has it. */
START_TEST(test_watch_by_name)
{
	struct stall_opts o = {.threshold_ns = 200 * MS, .period_ns = 10 * MS, .name = "ui"};
	struct stall_detector *d = stall_new(&o);
	struct stall_sample s = {.state = 'S', .key = 5, .stack = 3, .reason = "[lock futex]"};
	size_t n;

	for (unsigned int t = 0; t < 500; t += 10) {
		s.time_ns = t * MS;
		stall_feed(d, 7, "worker", &s);
	}
	ck_assert_int_eq(stall_watched(d), 0);
	for (unsigned int t = 500; t < 1000; t += 10) {
		s.time_ns = t * MS;
		stall_feed(d, 8, "ui", &s);
		stall_feed(d, 9, "ui", &s); /* a second "ui": not watched */
		stall_feed(d, 7, "worker", &s);
	}
	s.state = 'R';
	s.time_ns = 1000 * MS;
	stall_feed(d, 8, "ui", &s);
	/* time going backwards is dropped */
	s.time_ns = 10 * MS;
	s.state = 'S';
	stall_feed(d, 8, "ui", &s);
	stall_finish(d, 1000 * MS);
	ck_assert_int_eq(stall_watched(d), 8);
	stall_list(d, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(stall_list(d, &n)[0].tid, 8);
	ck_assert_uint_eq(stall_list(d, &n)[0].duration_ns, 500 * MS);
	stall_free(d);
}
END_TEST

static uint32_t add_stack(struct profile *p, const char *const *names, size_t n, uint64_t addr)
{
	uint32_t locs[8], mod = profile_intern_str(p, "/bin/app");

	for (size_t i = 0; i < n; i++) {
		struct profile_frame f = {.name = profile_intern_str(p, names[i]), .module = mod};

		if (names[i][0] == '[') {
			f.kind = PROFILE_FRAME_PSEUDO;
			f.module = 0;
		}
		locs[i] =
		    profile_intern_location(p, f.module, addr + i * 0x100 + (i ? 0 : 1), &f, 1);
	}
	return profile_intern_stack(p, locs, n);
}

static void append_text(void *arg, const char *text)
{
	strbuf_addstr(arg, text);
}

/* A long sequence with off-CPU and running stalls that close out of start order, fed to two
 * detectors: one drained after every sample (as record streams them), one kept whole. The
 * drained pieces end to end are the kept list's meta text; the count and the longest agree. */
START_TEST(test_drain_same_as_kept)
{
	struct stall_detector *a = new_detector(0), *b = new_detector(0);
	struct strbuf pieces = STRBUF_INIT;
	const struct stall *v, *la, *lb;
	size_t n, na, nb, offa, offb;
	char *whole;
	unsigned int t = 0;

	for (int round = 0; round < 40; round++) {
		unsigned int len = (round % 3 == 1 ? 700 : 150) + (unsigned int)(round * 37 % 300);

		for (unsigned int u = t; u < t + len; u += 10) {
			/* asleep; or running in one stack with a short sleep now and then, or a
			 * 250 ms sleep inside (an off-CPU stall that closes before the running
			 * one around it, which began earlier) */
			char state = round % 3 == 0				     ? 'S'
				     : round % 3 == 1 && u - t >= 100 && u - t < 350 ? 'S'
				     : (u / 10) % 17 == 0			     ? 'S'
										     : 'R';
			struct stall_sample s = {.time_ns = u * MS,
						 .state = state,
						 .key = (uint64_t)round,
						 .stack = (uint32_t)round,
						 .reason =
						     state == 'S' ? "[sleep nanosleep]" : NULL};

			stall_feed(a, TID, "main", &s);
			stall_feed(b, TID, "main", &s);
			stall_drain(a, append_text, &pieces);
		}
		t += len;
	}
	stall_finish(a, t * MS);
	stall_finish(b, t * MS);
	stall_drain(a, append_text, &pieces);
	stall_list(a, &n);
	ck_assert_uint_eq(n, 0);
	v = stall_list(b, &n);
	ck_assert_uint_gt(n, 10);
	/* the case that matters: an off-CPU stall nested in a running one (closed first) */
	for (na = 0; na + 1 < n; na++)
		if (v[na].kind == STALL_RUNNING && v[na + 1].kind == STALL_OFF_CPU &&
		    v[na + 1].start_ns + v[na + 1].duration_ns < v[na].start_ns + v[na].duration_ns)
			break;
	ck_assert_uint_lt(na + 1, n);
	whole = stall_meta_format(v, n);
	ck_assert_str_eq(pieces.buf, whole);
	ck_assert_uint_eq(stall_count(a, &offa), n);
	ck_assert_uint_eq(stall_count(b, &offb), n);
	ck_assert_uint_eq(offa, offb);
	la = stall_longest(a, &na);
	lb = stall_longest(b, &nb);
	ck_assert_uint_eq(na, STALL_LONGEST);
	ck_assert_uint_eq(nb, na);
	for (size_t i = 0; i < na; i++) {
		ck_assert_uint_eq(la[i].start_ns, lb[i].start_ns);
		ck_assert(i == 0 || la[i].duration_ns <= la[i - 1].duration_ns);
	}
	free(whole);
	strbuf_release(&pieces);
	stall_free(a);
	stall_free(b);
}
END_TEST

START_TEST(test_stack_key)
{
	struct profile *p = profile_new();
	static const char *const a[] = {"spin", "work", "main"};
	static const char *const b[] = {"spin2", "work", "main"};
	static const char *const w[] = {"[sleep nanosleep]", "nanosleep", "main"};
	uint32_t s1 = add_stack(p, a, 3, 0x1000), s2 = add_stack(p, a, 3, 0x5000);
	uint32_t s3 = add_stack(p, b, 3, 0x7000), s4 = add_stack(p, w, 3, 0x9000);

	ck_assert_uint_ne(s1, s2);				     /* other PCs: other stacks, */
	ck_assert(stall_stack_key(p, s1) == stall_stack_key(p, s2)); /* the same functions */
	ck_assert(stall_stack_key(p, s1) != stall_stack_key(p, s3));
	ck_assert_ptr_null(stall_stack_reason(p, s1));
	ck_assert_str_eq(stall_stack_reason(p, s4), "[sleep nanosleep]");
	ck_assert_ptr_null(stall_stack_reason(p, 12345));

	/* fed through the profile */
	struct stall_opts o = {.threshold_ns = 200 * MS, .period_ns = 10 * MS, .tid = TID};
	struct stall_detector *d = stall_new(&o);
	const struct stall *v;
	size_t n;

	for (unsigned int t = 0; t < 400; t += 10)
		stall_feed_stack(d, p, TID, "main", t * MS, 'S', 0, s4);
	stall_feed_stack(d, p, TID, "main", 400 * MS, 'R', -1, s1);
	stall_finish(d, 400 * MS);
	v = stall_list(d, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].reason, "[sleep nanosleep]");
	ck_assert_uint_eq(v[0].stack, s4);
	stall_free(d);
	profile_free(p);
}
END_TEST

/* Off-CPU at every sample, but running in between (a thread that wakes every 10 ms for a
 * moment): samples that say it ran since the previous one end each run, so no stall; the
 * same sequence with the thread left alone between the samples (ran 0, or unknown: the state
 * alone) is one 500-ms stall. */
static size_t stalls_of_sleeper(int ran)
{
	struct stall_detector *d = new_detector(0);
	size_t n;

	for (unsigned int t = 0; t < 500; t += 10) {
		struct stall_sample s = {.time_ns = t * MS,
					 .state = 'S',
					 .key = 50,
					 .stack = 7,
					 .reason = "[sleep clock_nanosleep]",
					 .ran = t ? ran : -1};

		stall_feed(d, TID, "main", &s);
	}
	feed(d, 500, 600, 'R', 1, 3, 1, NULL);
	stall_finish(d, 600 * MS);
	stall_list(d, &n);
	stall_free(d);
	return n;
}

START_TEST(test_progress_between_samples)
{
	ck_assert_uint_eq(stalls_of_sleeper(1), 0);
	ck_assert_uint_eq(stalls_of_sleeper(0), 1);
	ck_assert_uint_eq(stalls_of_sleeper(-1), 1);
}
END_TEST

START_TEST(test_meta_round_trip)
{
	struct stall in[2] = {
	    {.start_ns = 4061234000000ULL,
	     .duration_ns = 512000000,
	     .tid = 1234,
	     .stack = 17,
	     .kind = STALL_OFF_CPU,
	     .reason = "[io read /tmp/a b]"},
	    {.start_ns = 4062000000000ULL,
	     .duration_ns = 300000000,
	     .tid = 1234,
	     .stack = STALL_NO_STACK,
	     .kind = STALL_RUNNING,
	     .cut = 1,
	     .reason = "running"},
	};
	char *text = stall_meta_format(in, 2);
	struct stall *out;
	size_t n;

	ck_assert_str_eq(text, "4061234000000 512000000 1234 17 off-cpu 0 [io read /tmp/a b]\n"
			       "4062000000000 300000000 1234 - running 1 running\n");
	n = stall_meta_parse(text, &out);
	ck_assert_uint_eq(n, 2);
	ck_assert_mem_eq(&out[0], &in[0], sizeof(in[0]));
	ck_assert_mem_eq(&out[1], &in[1], sizeof(in[1]));
	free(out);
	free(text);
	text = stall_meta_format(NULL, 0);
	ck_assert_str_eq(text, "");
	free(text);
}
END_TEST

/* Hostile meta text: only well-formed lines survive. */
START_TEST(test_meta_hostile)
{
	static const char text[] =
	    "\n"
	    "1 2 3 4 off-cpu 0 ok\n"
	    "1 2 3 4 off-cpu 0\n" /* no reason: fine, empty */
	    "x 2 3 4 off-cpu 0 r\n"
	    "1 2 3 4294967295 off-cpu 0 r\n" /* the no-stack value spelled as a number */
	    "1 2 99999999999 4 off-cpu 0 r\n"
	    "1 2 3 4 sideways 0 r\n"
	    "1 2 3 4 running 2 r\n"
	    "18446744073709551616 2 3 4 running 0 r\n"
	    "1 2 3 - running 1 \x01weird\n"
	    "1  2 3 4 off-cpu 0 r";
	struct stall *v;
	size_t n = stall_meta_parse(text, &v);

	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(v[0].reason, "ok");
	ck_assert_str_eq(v[1].reason, "");
	ck_assert_uint_eq(v[2].stack, STALL_NO_STACK);
	ck_assert_str_eq(v[2].reason, "?weird");
	free(v);
	ck_assert_uint_eq(stall_meta_parse(NULL, &v), 0);
	ck_assert_ptr_null(v);
}
END_TEST

/* stall_ongoing(): an off-CPU run from its first sample while it lasts, a run in one stack
 * while more than half of it ran (a thread changing stacks is always in a run just begun). */
START_TEST(test_ongoing)
{
	struct stall_detector *d = new_detector(0);
	uint64_t start = 0;
	enum stall_kind kind = STALL_RUNNING;

	feed(d, 0, 100, 'R', 1, 3, 1, NULL);
	ck_assert_int_eq(stall_ongoing(d, &start, NULL), 1);
	ck_assert_uint_eq(start, 90 * MS);
	feed(d, 100, 400, 'S', 50, 1, 7, "[sleep nanosleep]");
	ck_assert_int_eq(stall_ongoing(d, &start, &kind), 1);
	ck_assert_uint_eq(start, 100 * MS);
	ck_assert_int_eq(kind, STALL_OFF_CPU);
	feed(d, 400, 700, 'R', 60, 1, 8, NULL); /* one stack, running */
	ck_assert_int_eq(stall_ongoing(d, &start, &kind), 1);
	ck_assert_uint_eq(start, 400 * MS);
	ck_assert_int_eq(kind, STALL_RUNNING);
	feed(d, 700, 800, 'S', 70, 1, 9, "[lock futex]");
	feed(d, 800, 850, 'R', 70, 1, 9, NULL); /* the same stack, ran in 5 of 15 */
	ck_assert_int_eq(stall_ongoing(d, &start, &kind), 0);
	stall_free(d);
}
END_TEST

Suite *stall_suite(void)
{
	Suite *s = suite_create("stall");
	TCase *tc = tcase_create("detect");

	tcase_add_test(tc, test_off_cpu);
	tcase_add_test(tc, test_progress_between_samples);
	tcase_add_test(tc, test_reason_of_longest_stretch);
	tcase_add_test(tc, test_running);
	tcase_add_test(tc, test_cut);
	tcase_add_test(tc, test_cpu_mode_gap);
	tcase_add_test(tc, test_drain_same_as_kept);
	tcase_add_test(tc, test_watch_by_name);
	tcase_add_test(tc, test_stack_key);
	tcase_add_test(tc, test_ongoing);
	suite_add_tcase(s, tc);
	tc = tcase_create("meta");
	tcase_add_test(tc, test_meta_round_trip);
	tcase_add_test(tc, test_meta_hostile);
	suite_add_tcase(s, tc);
	return s;
}
