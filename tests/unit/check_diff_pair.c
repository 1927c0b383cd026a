/* Unit tests of the diff's pairing (src/profile/diff-pair.c) and of its replicates
 * (diff-stat.c's spread between runs), on synthetic profiles built in code: the main executable
 * under two file names (from meta "exe:PID", and from the lowest "load:" module of a recording
 * that did not note it), a library whose versioned file name changed, numbered pool threads,
 * --map, the share compared, and a function whose share moves between runs of one build. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "perch/profile/diff.h"
#include "perch/profile/profile.h"

#define T0     1000000000ULL
#define PERIOD 10000000ULL

struct run {
	const char *exe, *lib, *comm, *exe_meta, *load_meta;
	const char *const *workers; /* NULL-terminated thread names */
	pid_t pid;
	int hot, cold; /* main thread's samples in hot() (exe) and foo() (lib) */
};

/* Process @r->comm (pid @r->pid): its main thread runs hot() in the executable or foo() in
 * the library; each worker runs work() 20 times. */
static struct profile *run_profile(const struct run *r)
{
	struct profile *p = profile_new();
	uint32_t exe = profile_intern_str(p, r->exe), lib = profile_intern_str(p, r->lib);
	struct profile_frame f = {.module = exe};
	uint32_t l_main, l_hot, l_work, l_foo, s_hot, s_foo, s_work, t;
	char key[64];
	uint64_t at = T0;

	profile_keep_samples(p, 1);
	profile_set_meta(p, "comm", r->comm);
	snprintf(key, sizeof(key), "%d", (int)r->pid);
	profile_set_meta(p, "pid", key);
	if (r->exe_meta) {
		snprintf(key, sizeof(key), "exe:%d", (int)r->pid);
		profile_set_meta(p, key, r->exe_meta);
	}
	if (r->load_meta) {
		snprintf(key, sizeof(key), "load:%s", r->exe);
		profile_set_meta(p, key, "start=0x55aa00001000 bias=0x55aa00000000 machine=62");
		snprintf(key, sizeof(key), "load:%s", r->lib);
		profile_set_meta(p, key, "start=0x7f0000001000 bias=0x7f0000000000 machine=62");
	}
	f.name = profile_intern_str(p, "main");
	l_main = profile_intern_location(p, exe, 0x100, &f, 1);
	f.name = profile_intern_str(p, "hot");
	l_hot = profile_intern_location(p, exe, 0x200, &f, 1);
	f.name = profile_intern_str(p, "work");
	l_work = profile_intern_location(p, exe, 0x300, &f, 1);
	f.module = lib;
	f.name = profile_intern_str(p, "foo");
	l_foo = profile_intern_location(p, lib, 0x40, &f, 1);
	s_hot = profile_intern_stack(p, (uint32_t[]){l_hot, l_main}, 2);
	s_foo = profile_intern_stack(p, (uint32_t[]){l_foo, l_main}, 2);
	s_work = profile_intern_stack(p, (uint32_t[]){l_work}, 1);
	t = profile_thread_in(p, r->pid, r->pid, r->comm);
	for (int i = 0; i < r->hot + r->cold; i++)
		profile_add_sample(p, t, i < r->hot ? s_hot : s_foo, at += PERIOD, 'R');
	for (int w = 0; r->workers && r->workers[w]; w++) {
		uint32_t tw = profile_thread_in(p, r->pid, r->pid + 1 + w, r->workers[w]);

		for (int i = 0; i < 20; i++)
			profile_add_sample(p, tw, s_work, at += PERIOD, 'R');
	}
	return p;
}

static const struct diff_fn *find_fn(const struct diff *d, const char *name)
{
	for (uint32_t i = 0; i < diff_nr_fns(d); i++)
		if (!strcmp(diff_fn(d, i)->name, name))
			return diff_fn(d, i);
	return NULL;
}

static const struct diff_group *find_group(const struct diff *d, const char *label)
{
	for (uint32_t i = 0; i < diff_nr_groups(d); i++)
		if (!strcmp(diff_group(d, i)->label, label))
			return diff_group(d, i);
	return NULL;
}

static const struct diff_module *find_module(const struct diff *d, const char *base_name)
{
	for (uint32_t i = 0; i < diff_nr_modules(d); i++)
		if (diff_module(d, i)->name[0] && !strcmp(diff_module(d, i)->name[0], base_name))
			return diff_module(d, i);
	return NULL;
}

/* Both sides' samples of @name, paired as one function. */
static void assert_paired(const struct diff *d, const char *name, uint64_t base, uint64_t new)
{
	const struct diff_fn *fn = find_fn(d, name);

	ck_assert_msg(fn, "no function %s", name);
	ck_assert_uint_eq(fn->total.x[0], base);
	ck_assert_uint_eq(fn->total.x[1], new);
	ck_assert(fn->total.tested);
}

/* --fail-if: a rule that names nothing is seen; a rule's family is the functions it names,
 * its margin narrower than the table's (fewer tests) and never wider. */
static void assert_rules(const struct diff *d)
{
	struct diff_rule none, one, all;
	const struct diff_fn *hot = find_fn(d, "hot");

	ck_assert_int_eq(diff_rule_parse(&none, "^no_such$:+1"), 0);
	ck_assert_int_eq(diff_rule_parse(&one, "^hot$:+0"), 0);
	ck_assert_int_eq(diff_rule_parse(&all, ".:+0"), 0);
	ck_assert(!diff_rule_matches(d, &none));
	ck_assert(diff_rule_matches(d, &one));
	ck_assert_uint_eq(diff_rule_family(d, &none), 0);
	ck_assert_uint_eq(diff_rule_family(d, &one), 1);
	ck_assert_uint_eq(diff_rule_family(d, &all), 2); /* hot, foo: the others never vary */
	ck_assert(diff_rule_margin(d, hot, 1) < diff_rule_margin(d, hot, 2));
	ck_assert(diff_rule_margin(d, hot, diff_nr_tests(d)) <= hot->total.margin * 1.000001);
	ck_assert(!diff_rule_trips_at(d, &one, hot, 1)); /* hot shrank */
	diff_rule_release(&none);
	diff_rule_release(&one);
	diff_rule_release(&all);
}

static const char *const pool_a[] = {"worker-3", "worker-4", NULL};
static const char *const pool_b[] = {"worker-7", NULL};

/* Builds under two file names, a library's version changed, the pool renumbered. */
START_TEST(exe_by_meta)
{
	const struct run a = {
	    "/ci/1/app", "/lib/libfoo.so.1.2", "app", "/ci/1/app", NULL, pool_a, 100, 30, 10};
	const struct run b = {"/ci/2/app-slow",
			      "/lib/libfoo.so.1.3",
			      "app-slow",
			      "/ci/2/app-slow",
			      NULL,
			      pool_b,
			      200,
			      10,
			      30};
	struct profile *pa = run_profile(&a), *pb = run_profile(&b);
	struct diff *d = diff_new(pa, pb, NULL);
	const struct diff_group *g;
	const struct diff_module *m;

	assert_paired(d, "hot", 30, 10);
	assert_paired(d, "main", 40, 40);
	assert_paired(d, "foo", 10, 30);
	ck_assert_str_eq(find_fn(d, "hot")->module, "app");
	ck_assert_int_eq(diff_nr_groups(d), 2);
	g = find_group(d, "app/app");
	ck_assert_ptr_nonnull(g);
	ck_assert_str_eq(g->how, "main thread");
	ck_assert_str_eq(g->name[1], "app-slow/app-slow");
	g = find_group(d, "app/worker-#");
	ck_assert_ptr_nonnull(g);
	ck_assert_str_eq(g->how, "numbers as #");
	ck_assert_int_eq(g->threads[0], 2);
	ck_assert_int_eq(g->threads[1], 1);
	m = find_module(d, "app");
	ck_assert_str_eq(m->name[1], "app-slow");
	ck_assert_str_eq(m->how, "main executable");
	m = find_module(d, "libfoo.so.1.2");
	ck_assert_str_eq(m->name[1], "libfoo.so.1.3");
	ck_assert_str_eq(m->how, "soname stem");
	ck_assert_uint_eq(m->samples[0], 10);
	ck_assert_uint_eq(diff_compared(d, DIFF_BASE), diff_samples(d, DIFF_BASE));
	ck_assert_uint_eq(diff_compared(d, DIFF_NEW), diff_samples(d, DIFF_NEW));
	assert_rules(d);
	diff_free(d);
	profile_free(pa);
	profile_free(pb);
}
END_TEST

/* A recording without "exe:PID": the module mapped lowest is the executable. */
START_TEST(exe_by_lowest_module)
{
	const struct run a = {"/ci/1/app", "/lib/libfoo.so", "app", NULL, "yes", NULL, 100, 30, 10};
	const struct run b = {
	    "/ci/2/app-v2", "/lib/libfoo.so", "app-v2", NULL, "yes", NULL, 100, 30, 10};
	struct profile *pa = run_profile(&a), *pb = run_profile(&b);
	struct diff *d = diff_new(pa, pb, NULL);

	assert_paired(d, "hot", 30, 30);
	ck_assert_str_eq(find_module(d, "app")->how, "main executable");
	ck_assert_str_eq(find_module(d, "libfoo.so")->how, "name");
	diff_free(d);
	profile_free(pa);
	profile_free(pb);
}
END_TEST

/* Nothing tells which module is the executable: its functions do not pair, and the share
 * compared says so; --map pairs them by hand. */
START_TEST(unpaired_then_map)
{
	static const char *const pa_w[] = {"alpha", NULL}, *const pb_w[] = {"beta", NULL};
	const struct run a = {"/ci/1/app", "/lib/libfoo.so", "app", NULL, NULL, pa_w, 100, 80, 0};
	const struct run b = {
	    "/ci/2/app-v2", "/lib/libfoo.so", "app-v2", NULL, NULL, pb_w, 100, 80, 0};
	struct profile *pa = run_profile(&a), *pb = run_profile(&b);
	struct diff *d = diff_new(pa, pb, NULL);
	const struct diff_map map[] = {{"app", "app-v2"}, {"alpha", "beta"}};

	/* main thread paired (100 samples: main() and hot() of two modules), worker not */
	ck_assert_uint_eq(diff_compared(d, DIFF_BASE), 0);
	ck_assert_uint_eq(diff_compared(d, DIFF_NEW), 0);
	ck_assert_ptr_nonnull(find_group(d, "app/alpha"));
	ck_assert_ptr_nonnull(find_group(d, "app-v2/beta"));
	diff_free(d);
	d = diff_new(pa, pb, &(struct diff_opts){.map = map, .nr_map = 2});
	assert_paired(d, "hot", 80, 80);
	assert_paired(d, "work", 20, 20);
	ck_assert_str_eq(find_group(d, "app-v2/beta")->how, "--map");
	ck_assert_str_eq(find_module(d, "app")->how, "--map");
	ck_assert_uint_eq(diff_compared(d, DIFF_BASE), diff_samples(d, DIFF_BASE));
	diff_free(d);
	profile_free(pa);
	profile_free(pb);
}
END_TEST

/* A process of its own (a child, an --app process) pairs by its name with digits as '#'. */
START_TEST(processes_by_role)
{
	const struct run a = {"/b/app", "/lib/libfoo.so", "app", "/b/app", NULL, NULL, 100, 10, 0};
	struct profile *pa = run_profile(&a), *pb = run_profile(&a);
	uint32_t ta = profile_thread_in(pa, 300, 300, "svc-1"),
		 tb = profile_thread_in(pb, 900, 900, "svc-2");
	uint32_t sa = profile_intern_stack(pa, NULL, 0), sb = profile_intern_stack(pb, NULL, 0);
	struct diff *d;

	profile_process(pa, 300, "svc-1");
	profile_process(pb, 900, "svc-2");
	for (int i = 0; i < 5; i++) {
		profile_add_sample(pa, ta, sa, T0 + 1000 * PERIOD + i, 'R');
		profile_add_sample(pb, tb, sb, T0 + 1000 * PERIOD + i, 'R');
	}
	d = diff_new(pa, pb, NULL);
	ck_assert_int_eq(diff_nr_groups(d), 2);
	ck_assert_str_eq(find_group(d, "svc-1/svc-1")->name[1], "svc-2/svc-2");
	diff_free(d);
	profile_free(pa);
	profile_free(pb);
}
END_TEST

/* f1's share of the main thread, @x of @n samples, in random order (independent samples). */
static struct profile *share_run(uint64_t *seed, int n, int x)
{
	const struct run r = {"/b/app", "/lib/libfoo.so", "app", "/b/app", NULL, NULL, 100, 0, 0};
	struct profile *p = run_profile(&r);
	uint32_t exe = profile_intern_str(p, "/b/app"), l[2], s[2];
	struct profile_frame f = {.module = exe, .name = profile_intern_str(p, "f1")};
	uint32_t t = profile_thread_in(p, 100, 100, "app");
	int left = x;

	l[0] = profile_intern_location(p, exe, 0x500, &f, 1);
	f.name = profile_intern_str(p, "f2");
	l[1] = profile_intern_location(p, exe, 0x600, &f, 1);
	s[0] = profile_intern_stack(p, &l[0], 1);
	s[1] = profile_intern_stack(p, &l[1], 1);
	for (int i = 0; i < n; i++) {
		int in;

		*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
		in = (int)((*seed >> 33) % (uint64_t)(n - i)) < left;
		left -= in;
		profile_add_sample(p, t, s[in ? 0 : 1], T0 + (uint64_t)i * PERIOD, 'R');
	}
	return p;
}

/* Runs of one build whose f1 share moves from run to run (30% and 40%) against runs at 40% and
 * 45%: as one recording a side the 7.5-point change is far beyond sampling noise; as replicates
 * the spread between the runs makes it noise. Runs that agree keep it beyond. */
START_TEST(replicates_spread)
{
	uint64_t seed = 34;
	struct profile *a[2] = {share_run(&seed, 2000, 600), share_run(&seed, 2000, 800)};
	struct profile *b[2] = {share_run(&seed, 2000, 800), share_run(&seed, 2000, 900)};
	struct profile *c[2] = {share_run(&seed, 2000, 700), share_run(&seed, 2000, 700)};
	struct profile *e[2] = {share_run(&seed, 2000, 850), share_run(&seed, 2000, 850)};
	struct diff *d = diff_new_replicates((const struct profile *const *)a, 2,
					     (const struct profile *const *)b, 2, NULL);
	const struct diff_fn *fn = find_fn(d, "f1");

	ck_assert_uint_eq(diff_nr_replicates(d, DIFF_BASE), 2);
	ck_assert_uint_eq(fn->total.x[0], 1400);
	ck_assert(fn->total.change > 0.07);
	ck_assert_msg(!fn->total.beyond_noise, "margin %.2f points", 100 * fn->total.margin);
	diff_free(d);
	d = diff_new_replicates((const struct profile *const *)c, 2,
				(const struct profile *const *)e, 2, NULL);
	fn = find_fn(d, "f1");
	ck_assert(fn->total.change > 0.07);
	ck_assert_msg(fn->total.beyond_noise, "margin %.2f points", 100 * fn->total.margin);
	diff_free(d);
	for (int i = 0; i < 2; i++) {
		profile_free(a[i]);
		profile_free(b[i]);
		profile_free(c[i]);
		profile_free(e[i]);
	}
}
END_TEST

Suite *diff_pair_suite(void)
{
	Suite *s = suite_create("diff_pair");
	TCase *tc = tcase_create("pair");

	tcase_add_test(tc, exe_by_meta);
	tcase_add_test(tc, exe_by_lowest_module);
	tcase_add_test(tc, unpaired_then_map);
	tcase_add_test(tc, processes_by_role);
	tcase_add_test(tc, replicates_spread);
	suite_add_tcase(s, tc);
	return s;
}
