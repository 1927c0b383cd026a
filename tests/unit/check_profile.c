/* Unit tests for the profile: interning, id stability across growth, counts invariants. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/profile/profile.h"

static struct profile *p;

static void setup(void)
{
	p = profile_new();
}

static void teardown(void)
{
	profile_free(p);
	p = NULL;
}

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rnd_state >> 33) % n;
}

struct walk {
	uint64_t sum;
	uint64_t *per_thread;
	uint32_t last_thread, last_stack;
	size_t calls;
};

static void walk_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct walk *w = arg;

	ck_assert_uint_gt(count, 0);
	ck_assert_uint_lt(thread, profile_nr_threads(p));
	ck_assert_uint_lt(stack, profile_nr_stacks(p));
	/* strictly ascending (thread, stack): each pair once */
	if (w->calls)
		ck_assert(thread > w->last_thread ||
			  (thread == w->last_thread && stack > w->last_stack));
	w->last_thread = thread;
	w->last_stack = stack;
	w->sum += count;
	w->per_thread[thread] += count;
	w->calls++;
}

/* The count invariants: sum of (thread, stack) counts == total == sum of per-thread samples,
 * and each thread's counts add up to its own sample count. */
static void assert_sane_profile(void)
{
	size_t nt = profile_nr_threads(p), i;
	struct walk w = {0};
	uint64_t thread_sum = 0;

	w.per_thread = xcalloc(nt + 1, sizeof(*w.per_thread));
	profile_foreach_count(p, walk_count, &w);
	for (i = 0; i < nt; i++) {
		ck_assert_uint_eq(w.per_thread[i], profile_thread_get(p, (uint32_t)i)->samples);
		thread_sum += profile_thread_get(p, (uint32_t)i)->samples;
	}
	ck_assert_uint_eq(w.sum, profile_total_samples(p));
	ck_assert_uint_eq(thread_sum, profile_total_samples(p));
	free(w.per_thread);
}

START_TEST(test_strings)
{
	enum { N = 20000 };
	uint32_t *ids = xmalloc(N * sizeof(*ids));
	char buf[64];
	size_t i;

	ck_assert_uint_eq(profile_intern_str(p, ""), 0);
	ck_assert_str_eq(profile_str(p, 0), "");
	ck_assert_ptr_null(profile_str(p, 12345));
	/* many interns: every array and hash table grows many times */
	for (i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "function_%zu", i);
		ids[i] = profile_intern_str(p, buf);
		ck_assert_uint_ne(ids[i], 0);
		if (i)
			ck_assert_uint_ne(ids[i], ids[i - 1]);
	}
	for (i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "function_%zu", i);
		ck_assert_str_eq(profile_str(p, ids[i]), buf);
		ck_assert_uint_eq(profile_intern_str(p, buf), ids[i]); /* same input, same id */
	}
	/* a tail of a stored string, which moves when storage grows */
	{
		uint32_t id = profile_intern_str(p, "prefix_and_tail");
		uint32_t tail = profile_intern_str(p, profile_str(p, id) + strlen("prefix_"));

		ck_assert_str_eq(profile_str(p, tail), "and_tail");
		ck_assert_str_eq(profile_str(p, id), "prefix_and_tail");
	}
	free(ids);
}
END_TEST

START_TEST(test_locations)
{
	uint32_t mod = profile_intern_str(p, "/usr/lib/libfoo.so");
	struct profile_frame fr[2] = {
	    {.name = profile_intern_str(p, "inlined_helper"),
	     .file = profile_intern_str(p, "a.c"),
	     .line = 10,
	     .module = mod,
	     .kind = PROFILE_FRAME_NATIVE,
	     .inlined = 1},
	    {.name = profile_intern_str(p, "outer"),
	     .file = profile_intern_str(p, "a.c"),
	     .line = 42,
	     .module = mod,
	     .kind = PROFILE_FRAME_NATIVE},
	};
	struct profile_frame other = {.name = profile_intern_str(p, "other"), .module = mod};
	const struct profile_location *l;
	const uint32_t *fids;
	uint32_t a, b, c;
	size_t n;

	ck_assert_uint_eq(profile_find_location(p, mod, 0x1234), UINT32_MAX);
	a = profile_intern_location(p, mod, 0x1234, fr, 2);
	ck_assert_uint_eq(profile_find_location(p, mod, 0x1234), a);
	/* same (module, addr): same id, frames of the first call */
	b = profile_intern_location(p, mod, 0x1234, &other, 1);
	ck_assert_uint_eq(a, b);
	/* another address of the same function reuses the frames */
	c = profile_intern_location(p, mod, 0x1238, fr, 2);
	ck_assert_uint_ne(a, c);
	ck_assert_uint_eq(profile_nr_locations(p), 2);
	ck_assert_uint_eq(profile_nr_frames(p), 2);
	/* same address in another module is another location */
	ck_assert_uint_ne(profile_intern_location(p, 0, 0x1234, NULL, 0), a);
	ck_assert_uint_eq(profile_find_location(p, 0, 0x1234), 2);

	l = profile_location(p, a);
	ck_assert_uint_eq(l->module, mod);
	ck_assert_uint_eq(l->addr, 0x1234);
	ck_assert_uint_eq(l->nr_frames, 2);
	fids = profile_location_frames(p, a, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(profile_str(p, profile_frame(p, fids[0])->name), "inlined_helper");
	ck_assert_uint_eq(profile_frame(p, fids[0])->inlined, 1);
	ck_assert_uint_eq(profile_frame(p, fids[0])->line, 10);
	ck_assert_str_eq(profile_str(p, profile_frame(p, fids[1])->name), "outer");
	ck_assert_uint_eq(profile_frame(p, fids[1])->line, 42);
	ck_assert_str_eq(profile_str(p, profile_frame(p, fids[1])->file), "a.c");
	/* frames differing only in line are different frames */
	fr[1].line = 43;
	profile_intern_location(p, mod, 0x2000, fr, 2);
	ck_assert_uint_eq(profile_nr_frames(p), 3);

	ck_assert_ptr_null(profile_location(p, 999));
	ck_assert_ptr_null(profile_frame(p, 999));
	ck_assert_ptr_null(profile_location_frames(p, 999, &n));
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* Interning locations from frames the profile itself stores (which move on growth). */
START_TEST(test_location_from_stored_frames)
{
	struct profile_frame fr[3] = {{.name = profile_intern_str(p, "a")},
				      {.name = profile_intern_str(p, "b")},
				      {.name = profile_intern_str(p, "c")}};
	const uint32_t *fids;
	uint32_t loc, i;
	size_t n;

	loc = profile_intern_location(p, 0, 1, fr, 3);
	fids = profile_location_frames(p, loc, &n);
	ck_assert_uint_eq(n, 3);
	/* new frames: the stored frame array grows while being read */
	for (i = 0; i < 100; i++) {
		struct profile_frame f = {.name = profile_intern_str(p, "x"), .line = i + 1};

		profile_intern_location(p, 0, 1000 + i, &f, 1);
	}
	fids = profile_location_frames(p, loc, &n);
	loc = profile_intern_location(p, 7, 1, profile_frame(p, fids[0]), 3);
	fids = profile_location_frames(p, loc, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(profile_str(p, profile_frame(p, fids[0])->name), "a");
	ck_assert_str_eq(profile_str(p, profile_frame(p, fids[2])->name), "c");
}
END_TEST

START_TEST(test_stacks)
{
	enum { N = 5000 };
	uint32_t *ids = xmalloc(N * sizeof(*ids)), locs[64], empty, s;
	const uint32_t *got;
	size_t i, n, len;

	empty = profile_intern_stack(p, NULL, 0);
	ck_assert_uint_eq(profile_intern_stack(p, locs, 0), empty);
	got = profile_stack(p, empty, &n);
	ck_assert_uint_eq(n, 0);
	(void)got;

	rnd_state = 42;
	for (i = 0; i < N; i++) {
		size_t j;

		len = 1 + i % 63;
		/* deterministic content derived from i: distinct stacks for distinct i */
		for (j = 0; j < len; j++)
			locs[j] = (uint32_t)(i * 7 + j);
		ids[i] = profile_intern_stack(p, locs, len);
	}
	ck_assert_uint_eq(profile_nr_stacks(p), N + 1);
	/* round trip after all the growth; same input, same id */
	for (i = 0; i < N; i++) {
		size_t j;

		len = 1 + i % 63;
		for (j = 0; j < len; j++)
			locs[j] = (uint32_t)(i * 7 + j);
		got = profile_stack(p, ids[i], &n);
		ck_assert_uint_eq(n, len);
		ck_assert_mem_eq(got, locs, len * sizeof(*locs));
		ck_assert_uint_eq(profile_intern_stack(p, locs, len), ids[i]);
	}
	/* order matters; a prefix is another stack */
	locs[0] = 1;
	locs[1] = 2;
	s = profile_intern_stack(p, locs, 2);
	locs[0] = 2;
	locs[1] = 1;
	ck_assert_uint_ne(profile_intern_stack(p, locs, 2), s);
	ck_assert_uint_ne(profile_intern_stack(p, locs, 1), s);

	/* a part of a stored stack as input (profile_stack() memory moves on growth) */
	got = profile_stack(p, ids[N - 1], &n);
	s = profile_intern_stack(p, got + 1, n - 1);
	got = profile_stack(p, s, &len);
	ck_assert_uint_eq(len, n - 1);
	ck_assert_uint_eq(got[0], (uint32_t)((N - 1) * 7 + 1));

	ck_assert_ptr_null(profile_stack(p, 1u << 30, &n));
	ck_assert_uint_eq(n, 0);
	free(ids);
}
END_TEST

START_TEST(test_threads)
{
	uint32_t a, b;

	a = profile_thread(p, 100, "main");
	b = profile_thread(p, 101, NULL);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_eq(profile_thread(p, 100, NULL), a);
	ck_assert_str_eq(profile_str(p, profile_thread_get(p, a)->name), "main");
	ck_assert_str_eq(profile_str(p, profile_thread_get(p, b)->name), "");
	/* a new name replaces the old one; NULL keeps it */
	ck_assert_uint_eq(profile_thread(p, 100, "renamed"), a);
	ck_assert_str_eq(profile_str(p, profile_thread_get(p, a)->name), "renamed");
	ck_assert_int_eq(profile_thread_get(p, a)->tid, 100);
	ck_assert_uint_eq(profile_nr_threads(p), 2);
	ck_assert_ptr_null(profile_thread_get(p, 2));
}
END_TEST

struct grid {
	uint64_t *c;
	size_t nr_stacks;
};

static void grid_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct grid *g = arg;

	g->c[thread * g->nr_stacks + stack] = count;
}

START_TEST(test_counts)
{
	enum { THREADS = 40, STACKS = 300, SAMPLES = 50000 };
	uint32_t th[THREADS], st[STACKS], locs[4];
	uint64_t expect[THREADS][STACKS] = {{0}};
	const struct profile_sample *smp;
	size_t i, n;

	for (i = 0; i < THREADS; i++)
		th[i] = profile_thread(p, (pid_t)(1000 + (THREADS - i) * 3), "t");
	for (i = 0; i < STACKS; i++) {
		locs[0] = (uint32_t)i;
		locs[1] = (uint32_t)i / 3;
		st[i] = profile_intern_stack(p, locs, i % 3);
	}
	profile_keep_samples(p, 1);
	rnd_state = 7;
	for (i = 0; i < SAMPLES; i++) {
		uint32_t t = rnd(THREADS), s = rnd(STACKS);

		profile_add_sample(p, th[t], st[s], 1000 + i, "RS"[i % 2]);
		expect[t][s]++;
		if (i % 5000 == 0)
			assert_sane_profile();
	}
	/* stacks 0, 3, 6, ... are all the empty stack: fold the expectation */
	for (i = 0; i < THREADS; i++) {
		size_t s;

		for (s = 3; s < STACKS; s += 3) {
			expect[i][0] += expect[i][s];
			expect[i][s] = 0;
		}
	}
	ck_assert_uint_eq(profile_total_samples(p), SAMPLES);
	assert_sane_profile();
	smp = profile_samples(p, &n);
	ck_assert_uint_eq(n, SAMPLES);
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(smp[i].time_ns, 1000 + i);
		ck_assert_int_eq(smp[i].state, "RS"[i % 2]);
	}
	/* each (thread, stack) count equals what was added, both aggregated and as samples */
	{
		size_t ns = profile_nr_stacks(p), t, k;
		struct grid g = {xcalloc(THREADS * ns, sizeof(uint64_t)), ns};
		uint64_t *from_samples = xcalloc(THREADS * ns, sizeof(uint64_t));

		profile_foreach_count(p, grid_count, &g);
		for (k = 0; k < n; k++)
			from_samples[smp[k].thread * ns + smp[k].stack]++;
		for (t = 0; t < THREADS; t++) {
			for (k = 1; k < STACKS; k++)
				if (k % 3) /* the empty stacks were folded into k == 0 */
					ck_assert_uint_eq(g.c[th[t] * ns + st[k]], expect[t][k]);
			ck_assert_uint_eq(g.c[th[t] * ns + st[0]], expect[t][0]);
		}
		ck_assert_mem_eq(g.c, from_samples, THREADS * ns * sizeof(uint64_t));
		free(g.c);
		free(from_samples);
	}
}
END_TEST

static void count_into(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	uint64_t *c = arg;

	c[thread * 2 + stack] = count;
}

START_TEST(test_counts_exact)
{
	uint32_t a = profile_thread(p, 5, "a"), b = profile_thread(p, 4, "b");
	uint32_t loc = 9, s0 = profile_intern_stack(p, NULL, 0);
	uint32_t s1 = profile_intern_stack(p, &loc, 1);
	uint64_t c[4] = {0};
	size_t n;

	profile_add_sample(p, a, s1, 0, 0);
	profile_add_sample(p, a, s1, 0, 0);
	profile_add_sample(p, b, s0, 0, 0);
	profile_add_sample(p, a, s0, 0, 0);
	profile_add_sample(p, a, s1, 0, 0);
	profile_foreach_count(p, count_into, c);
	ck_assert_uint_eq(c[a * 2 + s0], 1);
	ck_assert_uint_eq(c[a * 2 + s1], 3);
	ck_assert_uint_eq(c[b * 2 + s0], 1);
	ck_assert_uint_eq(c[b * 2 + s1], 0);
	ck_assert_uint_eq(profile_thread_get(p, a)->samples, 4);
	ck_assert_uint_eq(profile_thread_get(p, b)->samples, 1);
	ck_assert_uint_eq(profile_total_samples(p), 5);
	/* samples are not kept unless asked */
	ck_assert_ptr_null(profile_samples(p, &n));
	ck_assert_uint_eq(n, 0);
	assert_sane_profile();
}
END_TEST

START_TEST(test_meta)
{
	char key[32], val[32];
	int i;

	ck_assert_ptr_null(profile_meta(p, "pid"));
	profile_set_meta(p, "pid", "1234");
	ck_assert_str_eq(profile_meta(p, "pid"), "1234");
	profile_set_meta(p, "pid", "99");
	ck_assert_str_eq(profile_meta(p, "pid"), "99");
	for (i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(val, sizeof(val), "v%d", i * i);
		profile_set_meta(p, key, val);
	}
	ck_assert_str_eq(profile_meta(p, "k7"), "v49");
	ck_assert_str_eq(profile_meta(p, "pid"), "99");
	/* strings are copied */
	strcpy(key, "mutable");
	profile_set_meta(p, key, key);
	key[0] = 'M';
	ck_assert_str_eq(profile_meta(p, "mutable"), "mutable");
}
END_TEST

/* A profile of two threads with samples every 10 ms on stacks of two locations, one frame
 * carrying a detail string. */
static void fill_windowed(struct profile *q)
{
	uint32_t mod = profile_intern_str(q, "/bin/x");
	struct profile_frame f[2] = {{.name = profile_intern_str(q, "leaf"),
				      .module = mod,
				      .detail = profile_intern_str(q, " [dex 7]")},
				     {.name = profile_intern_str(q, "root"), .module = mod}};
	uint32_t l0 = profile_intern_location(q, mod, 0x10, &f[0], 1);
	uint32_t l1 = profile_intern_location(q, mod, 0x20, &f[1], 1);
	uint32_t locs[2] = {l0, l1};
	uint32_t s0 = profile_intern_stack(q, locs, 2), s1 = profile_intern_stack(q, &l1, 1);
	uint32_t a = profile_thread_in(q, 7, 7, "main"), b = profile_thread_in(q, 7, 8, "worker");

	profile_keep_samples(q, 1);
	for (uint64_t t = 0; t < 100; t++)
		profile_add_weighted(q, t % 2 ? a : b, t % 3 ? s0 : s1, t * 10000000ULL,
				     t % 2 ? 'R' : 'S', 1 + (uint32_t)(t % 2));
	profile_set_meta(q, "pid", "7");
}

static int keep_main(const struct profile *src, uint32_t idx, void *arg)
{
	(void)arg;
	return profile_thread_get(src, idx)->tid == 7;
}

/* profile_copy(): the samples of the window, with weights, states, stacks and names; a
 * thread filter keeps the thread without others; the meta comes along. */
START_TEST(test_copy_window)
{
	struct profile *w;
	struct profile_copy_opts o = {.lo_ns = 200000000ULL, .hi_ns = 500000000ULL};
	const struct profile_sample *s;
	size_t n, nl;
	uint64_t total = 0;
	const uint32_t *locs;

	fill_windowed(p);
	w = profile_copy(p, &o);
	s = profile_samples(w, &n);
	ck_assert_uint_eq(n, 30); /* samples 20..49 */
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_ge(s[i].time_ns, o.lo_ns);
		ck_assert_uint_lt(s[i].time_ns, o.hi_ns);
		total += s[i].weight;
	}
	ck_assert_uint_eq(profile_total_samples(w), total);
	ck_assert_uint_eq(total, 15 * 2 + 15 * 1);
	ck_assert_str_eq(profile_meta(w, "pid"), "7");
	ck_assert_uint_eq(profile_nr_threads(w), 2);
	locs = profile_stack(w, s[2].stack, &nl); /* sample 22: 22 % 3 != 0: leaf, root */
	ck_assert_uint_eq(nl, 2);
	ck_assert_str_eq(
	    profile_str(w, profile_frame(w, profile_location_frames(w, locs[0], &n)[0])->name),
	    "leaf");
	ck_assert_str_eq(
	    profile_str(w, profile_frame(w, profile_location_frames(w, locs[0], &n)[0])->detail),
	    " [dex 7]");
	/* copying the stack again names the same one */
	ck_assert_uint_eq(profile_copy_stack(p, profile_samples(p, &n)[22].stack, w), s[2].stack);
	profile_free(w);

	o = (struct profile_copy_opts){
	    .lo_ns = 0, .hi_ns = UINT64_MAX, .cpu_only = 1, .keep_thread = keep_main};
	w = profile_copy(p, &o);
	ck_assert_uint_eq(profile_nr_threads(w), 1);
	ck_assert_uint_eq(profile_total_samples(w), 50 * 2);
	profile_free(w);
}
END_TEST

/* profile_drop_samples_before(): every older sample goes, out-of-order ones too; counts stay. */
START_TEST(test_drop_before)
{
	const struct profile_sample *s;
	uint32_t t, st;
	size_t n;

	fill_windowed(p);
	t = profile_thread_in(p, 7, 7, NULL);
	st = profile_samples(p, &n)[0].stack;
	profile_add_sample(p, t, st, 5, 'R'); /* late: older than everything kept */
	ck_assert_uint_eq(profile_drop_samples_before(p, 300000000ULL), 31);
	s = profile_samples(p, &n);
	ck_assert_uint_eq(n, 70);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(s[i].time_ns, (30 + i) * 10000000ULL);
	ck_assert_uint_eq(profile_total_samples(p), 150 + 1);
}
END_TEST

Suite *profile_suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("intern");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_locations);
	tcase_add_test(tc, test_location_from_stored_frames);
	tcase_add_test(tc, test_stacks);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_meta);
	tcase_add_test(tc, test_copy_window);
	tcase_add_test(tc, test_drop_before);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("counts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_counts_exact);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
