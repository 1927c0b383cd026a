/* Unit tests of the diff module (diff.h) and its writers, on synthetic profiles:
 * - statistics against values from outside: Student's t and normal tails and critical values
 *   from scipy.stats and python's statistics module (tests/unit/py/check_diff.py), the
 *   two-proportion test against scipy's Pearson chi-square of the 2x2 table (z^2 = chi2
 *   when both samples have the same size);
 * - the batch-means design effect against the known variance of a persistent chain
 *   ((1 + q) / (1 - q) for a chain that keeps its state with probability q), and the whole
 *   test's false-positive rate and power on simulated pairs of runs;
 * - matching across builds: names and module base names, nameless frames by build-id, threads
 *   by process and thread name, recursion counted once;
 * - --fail-if rules; the text, folded and flame graph writers (golden files
 *   fixtures/golden/diff/, the SVG parsed by python's XML parser).
 *
 * PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=diff build/tests/unit/run rewrites the golden files. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/writers.h"
#include "perch/profile/diff.h"
#include "perch/profile/profile.h"
#include "testutil.h"

#define T0     5000000000ULL
#define PERIOD 10000000ULL

/* ---- outside values ---- */

/* Ask tests/unit/py/check_diff.py the questions in @q; its answer lines into @out (at most
 * @max). 0, or -1 when it cannot answer (scipy missing: a SKIP line is printed). */
static int ask_python(const char *q, char **out, size_t max)
{
	char *path = testutil_tmp_file("questions.txt", q, strlen(q));
	char *cmd = xasprintf("/usr/bin/python3 tests/unit/py/check_diff.py '%s'", path);
	int status;
	char *ans = testutil_run(cmd, &status), *save = NULL, *line;
	size_t n = 0;

	free(cmd);
	free(path);
	if (status == 3 || status == 127) {
		fprintf(stderr, "SKIP: %s", status == 3 ? ans : "no /usr/bin/python3\n");
		free(ans);
		return -1;
	}
	ck_assert_msg(status == 0, "check_diff.py failed: %s", ans);
	for (line = strtok_r(ans, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save))
		out[n++] = xstrdup(line);
	free(ans);
	ck_assert_uint_gt(n, 0);
	return 0;
}

static void assert_close(double got, double want, double rel, const char *what)
{
	double err = fabs(got - want) / (fabs(want) > 1e-300 ? fabs(want) : 1);

	ck_assert_msg(err <= rel, "%s: perch %.17g, outside %.17g (relative error %g)", what, got,
		      want, err);
}

START_TEST(t_distribution)
{
	static const int dfs[] = {0, 1, 2, 3, 4, 7, 15, 30, 31};
	static const double ts[] = {0.25, 1.0, 1.96, 3.0, 4.5};
	static const double ps[] = {0.05, 1e-3, 1e-5, 2e-7};
	struct strbuf q = STRBUF_INIT;
	char *ans[256];
	size_t k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(dfs); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(ts); j++)
			strbuf_addf(&q, "tail %d %.17g\n", dfs[i], ts[j]);
		for (size_t j = 0; j < ARRAY_SIZE(ps); j++)
			strbuf_addf(&q, "crit %d %.17g\n", dfs[i], ps[j]);
	}
	if (ask_python(q.buf, ans, ARRAY_SIZE(ans)) < 0) {
		strbuf_release(&q);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(dfs); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(ts); j++, k++) {
			char what[64];

			snprintf(what, sizeof(what), "P(|T|>%g), df %d", ts[j], dfs[i]);
			assert_close(diff_tail2(ts[j], dfs[i]), strtod(ans[k], NULL), 1e-9, what);
			free(ans[k]);
		}
		for (size_t j = 0; j < ARRAY_SIZE(ps); j++, k++) {
			char what[64];

			snprintf(what, sizeof(what), "t for p %g, df %d", ps[j], dfs[i]);
			assert_close(diff_crit2(ps[j], dfs[i]), strtod(ans[k], NULL), 1e-8, what);
			free(ans[k]);
		}
	}
	strbuf_release(&q);
}
END_TEST

/* With equal sample counts the pooled variance is the larger one, so z is the pooled
 * two-proportion z and z^2 is Pearson's chi-square of the table (scipy's, uncorrected). */
START_TEST(two_proportion_vs_chi2)
{
	static const unsigned long cases[][4] = {{30, 100, 45, 100},  {150, 600, 215, 600},
						 {1, 500, 9, 500},    {480, 500, 495, 500},
						 {0, 1000, 12, 1000}, {333, 1000, 333, 1000}};
	struct strbuf q = STRBUF_INIT;
	char *ans[16];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		strbuf_addf(&q, "chi2 %lu %lu %lu %lu\n", cases[i][0], cases[i][1], cases[i][2],
			    cases[i][3]);
	if (ask_python(q.buf, ans, ARRAY_SIZE(ans)) < 0) {
		strbuf_release(&q);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct diff_stat st = {.x = {cases[i][0], cases[i][2]},
				       .n = {cases[i][1], cases[i][3]}};
		double chi2, p;
		char what[80];

		ck_assert_int_eq(sscanf(ans[i], "%lf %lf", &chi2, &p), 2);
		diff_stat_test(&st, NULL, 0, 1.959963984540054);
		snprintf(what, sizeof(what), "z^2 of %lu/%lu vs %lu/%lu", cases[i][0], cases[i][1],
			 cases[i][2], cases[i][3]);
		assert_close(st.z * st.z, chi2, 1e-9, what);
		if (chi2 > 0)
			assert_close(st.p, p, 1e-7, what);
		ck_assert_int_eq(st.beyond_noise, p < 0.05);
		ck_assert(st.tested);
		free(ans[i]);
	}
	strbuf_release(&q);
}
END_TEST

/* Unequal sizes: the variance is never below the pooled one (|z| <= sqrt(chi2)), and a
 * design effect widens the margin by its square root. */
START_TEST(two_proportion_conservative)
{
	struct diff_stat a = {.x = {10, 300}, .n = {50, 1000}}, b = a;
	double pbar = 310.0 / 1050, v_pool = pbar * (1 - pbar) * (1.0 / 50 + 1.0 / 1000);

	diff_stat_test(&a, NULL, 0, 3);
	ck_assert(fabs(a.z) <= fabs(a.change) / sqrt(v_pool) + 1e-12);
	diff_stat_test(&b, (double[]){4, 4}, 0, 3);
	assert_close(b.margin, 2 * a.margin, 1e-12, "margin with deff 4");
	assert_close(b.z, a.z / 2, 1e-12, "z with deff 4");
	assert_close(b.deff, 4, 1e-12, "deff 4");
	/* a design effect on one side widens that side's part only */
	b = a;
	diff_stat_test(&b, (double[]){1, 9}, 0, 3);
	ck_assert(b.margin > a.margin && b.margin < 3 * a.margin);
	/* a side without samples: nothing is tested */
	b = (struct diff_stat){.x = {0, 5}, .n = {0, 10}};
	diff_stat_test(&b, NULL, 0, 3);
	ck_assert(!b.tested && !b.beyond_noise);
}
END_TEST

/* ---- simulation ---- */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
	return (double)(rnd(s) >> 11) * 0x1.0p-53;
}

/* A chain over @nf states: keeps its state with probability @stay, else draws one from
 * @share. Every state's indicator then has lag-k autocorrelation stay^k. */
static int chain_next(uint64_t *s, int cur, const double *share, int nf, double stay)
{
	double u;
	int k;

	if (cur >= 0 && unif(s) < stay)
		return cur;
	u = unif(s);
	for (k = 0; k < nf - 1 && u >= share[k]; k++)
		u -= share[k];
	return k;
}

START_TEST(design_effect_of_a_chain)
{
	static const double stays[] = {0, 0.5, 0.8};
	const double share[2] = {0.3, 0.7};
	uint64_t seed = 42;

	for (size_t i = 0; i < ARRAY_SIZE(stays); i++) {
		double sum = 0, want = (1 + stays[i]) / (1 - stays[i]);
		const int reps = 40, per = 400;

		for (int r = 0; r < reps; r++) {
			uint32_t xb[DIFF_BATCHES] = {0}, nb[DIFF_BATCHES];
			int cur = -1;

			for (int b = 0; b < DIFF_BATCHES; b++) {
				nb[b] = per;
				for (int j = 0; j < per; j++) {
					cur = chain_next(&seed, cur, share, 2, stays[i]);
					xb[b] += cur == 0;
				}
			}
			sum += diff_batch_deff(xb, nb, DIFF_BATCHES);
		}
		ck_assert_msg(fabs(sum / reps - want) <= 0.15 * want,
			      "stay %g: mean design effect %g, the chain's is %g", stays[i],
			      sum / reps, want);
	}
	/* what cannot be estimated */
	{
		uint32_t x[2] = {0, 0}, n[2] = {10, 10}, one[1] = {5}, n1[1] = {10};

		ck_assert(diff_batch_deff(x, n, 2) == 0);
		ck_assert(diff_batch_deff(one, n1, 1) == 0);
	}
}
END_TEST

/* One thread "main" of process "app" (module @exe), @n samples one period apart, each in one
 * of the functions f0..f(nf-1) called from main, chosen by chain_next(). */
static struct profile *sim_profile(uint64_t *seed, size_t n, const double *share, int nf,
				   double stay, const char *exe_path, uint64_t shift)
{
	struct profile *p = profile_new();
	uint32_t exe = profile_intern_str(p, exe_path), l_main, stacks[8], t;
	struct profile_frame f = {.module = exe};
	int cur = -1;

	profile_keep_samples(p, 1);
	profile_set_meta(p, "comm", "app");
	f.name = profile_intern_str(p, "main");
	l_main = profile_intern_location(p, exe, 0x1000 + shift, &f, 1);
	for (int k = 0; k < nf; k++) {
		char name[8];
		uint32_t l;

		snprintf(name, sizeof(name), "f%d", k);
		f.name = profile_intern_str(p, name);
		l = profile_intern_location(p, exe, 0x2000 + 0x100 * (uint64_t)k + shift, &f, 1);
		stacks[k] = profile_intern_stack(p, (uint32_t[]){l, l_main}, 2);
	}
	t = profile_thread(p, 100 + (pid_t)(rnd(seed) % 1000), "main");
	for (size_t i = 0; i < n; i++) {
		cur = chain_next(seed, cur, share, nf, stay);
		profile_add_sample(p, t, stacks[cur], T0 + i * PERIOD, 'R');
	}
	return p;
}

static int any_beyond(const struct diff *d)
{
	for (uint32_t i = 0; i < diff_nr_fns(d); i++)
		if (diff_fn(d, i)->total.beyond_noise || diff_fn(d, i)->self.beyond_noise)
			return 1;
	for (uint32_t i = 0; i < diff_nr_nodes(d); i++)
		if (diff_node(d, i)->st.beyond_noise)
			return 1;
	return 0;
}

/* The same test taking samples as independent (no design effect, normal reference). */
static int naive_beyond(const struct diff *d)
{
	double crit = diff_crit2(diff_alpha(d) / (double)diff_nr_tests(d), 0);

	for (uint32_t i = 0; i < diff_nr_fns(d); i++) {
		struct diff_stat st = diff_fn(d, i)->total;

		diff_stat_test(&st, NULL, 0, crit);
		if (st.beyond_noise)
			return 1;
	}
	return 0;
}

/* Pairs of runs of one program whose samples come in runs (stay 0.7: a design effect of
 * about 5.7): at alpha 0.05 at most about 5% of the comparisons may call anything beyond
 * noise; the same test without the design effect calls far more. */
START_TEST(false_positives_same_program)
{
	const double share[3] = {0.5, 0.3, 0.2};
	struct diff_opts o = {.alpha = 0.05};
	uint64_t seed = 7;
	int pairs = 200, ours = 0, naive = 0;

	for (int i = 0; i < pairs; i++) {
		struct profile *a = sim_profile(&seed, 1000, share, 3, 0.7, "/b/app", 0);
		struct profile *b = sim_profile(&seed, 1000, share, 3, 0.7, "/b/app", 0);
		struct diff *d = diff_new(a, b, &o);

		ck_assert(diff_time_ordered(d));
		ours += any_beyond(d);
		naive += naive_beyond(d);
		diff_free(d);
		profile_free(a);
		profile_free(b);
	}
	fprintf(stderr,
		"diff: %d of %d same-program comparisons beyond noise at alpha 0.05 "
		"(%d without the design effect)\n",
		ours, pairs, naive);
	/* 5% of 200 is 10; 19 or more has probability < 0.5% when the rate is 5% */
	ck_assert_int_le(ours, 18);
	ck_assert_int_ge(naive, 4 * (ours > 10 ? ours : 10));
}
END_TEST

/* A real change (f1 from 30% to 40% of the thread) with the same persistence is found, with
 * the right sign, in nearly every pair; --fail-if '^f1$:+2' (grew by more than 2 points beyond
 * noise: change - margin > 2, with a margin of about 6 points here) trips in most. */
START_TEST(power_real_change)
{
	const double before[3] = {0.5, 0.3, 0.2}, after[3] = {0.4, 0.4, 0.2};
	uint64_t seed = 11;
	int pairs = 50, found = 0, tripped = 0;
	struct diff_rule rule;

	ck_assert_int_eq(diff_rule_parse(&rule, "^f1$:+2"), 0);
	for (int i = 0; i < pairs; i++) {
		struct profile *a = sim_profile(&seed, 4000, before, 3, 0.5, "/b1/app", 0);
		struct profile *b = sim_profile(&seed, 4000, after, 3, 0.5, "/b2/app", 0x40);
		struct diff *d = diff_new(a, b, NULL);

		for (uint32_t k = 0; k < diff_nr_fns(d); k++) {
			const struct diff_fn *fn = diff_fn(d, k);

			if (strcmp(fn->name, "f1"))
				continue;
			found += fn->total.beyond_noise && fn->total.change > 0;
			tripped += diff_rule_trips(&rule, fn);
			ck_assert_str_eq(fn->module, "app");
		}
		diff_free(d);
		profile_free(a);
		profile_free(b);
	}
	ck_assert_int_ge(found, pairs * 9 / 10);
	ck_assert_int_ge(tripped, pairs / 2);
	diff_rule_release(&rule);
}
END_TEST

/* ---- matching ---- */

struct build {
	const char *exe, *exe_bid, *lib_bid, *comm;
	uint64_t shift;
	pid_t tid0;
	int workers;
};

/* "main" runs hot() (recursive: hot;hot) or cold(), a nameless frame of the executable
 * (app+0x500) and one of libfoo.so (libfoo.so+0x40); @workers threads "worker" run work(). */
static struct profile *build_profile(const struct build *b, int hot, int cold)
{
	struct profile *p = profile_new();
	uint32_t exe = profile_intern_str(p, b->exe), lib = profile_intern_str(p, "/lib/libfoo.so");
	struct profile_frame f = {.module = exe};
	uint32_t l_main, l_hot, l_cold, l_anon, l_lib, l_work, s_hot, s_cold, s_anon, s_lib, s_work;
	uint32_t t_main;
	char key[128];
	uint64_t t = T0;

	profile_keep_samples(p, 1);
	profile_set_meta(p, "comm", b->comm);
	snprintf(key, sizeof(key), "build_id:%s", b->exe);
	profile_set_meta(p, key, b->exe_bid);
	profile_set_meta(p, "build_id:/lib/libfoo.so", b->lib_bid);
	f.name = profile_intern_str(p, "main");
	l_main = profile_intern_location(p, exe, 0x100 + b->shift, &f, 1);
	f.name = profile_intern_str(p, "hot");
	l_hot = profile_intern_location(p, exe, 0x200 + b->shift, &f, 1);
	f.name = profile_intern_str(p, "cold");
	l_cold = profile_intern_location(p, exe, 0x300 + b->shift, &f, 1);
	f.name = profile_intern_str(p, "work");
	l_work = profile_intern_location(p, exe, 0x400 + b->shift, &f, 1);
	f.name = profile_intern_str(p, "app+0x500");
	l_anon = profile_intern_location(p, exe, 0x500, &f, 1);
	f.module = lib;
	f.name = profile_intern_str(p, "libfoo.so+0x40");
	l_lib = profile_intern_location(p, lib, 0x40, &f, 1);
	s_hot = profile_intern_stack(p, (uint32_t[]){l_hot, l_hot, l_main}, 3);
	s_cold = profile_intern_stack(p, (uint32_t[]){l_cold, l_main}, 2);
	s_anon = profile_intern_stack(p, (uint32_t[]){l_anon, l_main}, 2);
	s_lib = profile_intern_stack(p, (uint32_t[]){l_lib, l_main}, 2);
	s_work = profile_intern_stack(p, (uint32_t[]){l_work}, 1);
	t_main = profile_thread(p, b->tid0, "main");
	for (int i = 0; i < hot; i++)
		profile_add_sample(p, t_main, s_hot, t += PERIOD, 'R');
	for (int i = 0; i < cold; i++)
		profile_add_sample(p, t_main, s_cold, t += PERIOD, 'R');
	for (int i = 0; i < 10; i++) {
		profile_add_sample(p, t_main, s_anon, t += PERIOD, 'R');
		profile_add_sample(p, t_main, s_lib, t += PERIOD, 'R');
	}
	for (int w = 0; w < b->workers; w++) {
		uint32_t tw = profile_thread(p, b->tid0 + 1 + w, "worker");

		for (int i = 0; i < 50; i++)
			profile_add_sample(p, tw, s_work, t += PERIOD, 'R');
	}
	return p;
}

static const struct diff_fn *find_fn(const struct diff *d, const char *group, const char *name,
				     int nth)
{
	for (uint32_t i = 0; i < diff_nr_fns(d); i++) {
		const struct diff_fn *fn = diff_fn(d, i);

		if (!strcmp(fn->name, name) && !strcmp(diff_group(d, fn->group)->label, group) &&
		    !nth--)
			return fn;
	}
	return NULL;
}

START_TEST(match_across_builds)
{
	const struct build b1 = {"/build1/app", "aa01", "cc03", "app", 0, 1000, 2};
	const struct build b2 = {"/opt/build2/app", "bb02", "cc03", "app", 0x1000, 2000, 1};
	struct profile *a = build_profile(&b1, 60, 20), *b = build_profile(&b2, 30, 50);
	struct diff *d = diff_new(a, b, NULL);
	const struct diff_fn *fn;

	ck_assert_int_eq(diff_nr_groups(d), 2);
	/* the main thread's group first (more samples in NEW), then the workers */
	ck_assert_str_eq(diff_group(d, diff_groups_sorted(d)[0])->label, "app/main");
	ck_assert_str_eq(diff_group(d, diff_groups_sorted(d)[1])->label, "app/worker");
	ck_assert_int_eq(diff_group(d, diff_groups_sorted(d)[1])->threads[0], 2);
	ck_assert_int_eq(diff_group(d, diff_groups_sorted(d)[1])->threads[1], 1);
	ck_assert_int_eq(diff_group(d, diff_groups_sorted(d)[1])->samples[0], 100);

	/* named frames match by name and module base name, not address or directory */
	fn = find_fn(d, "app/main", "hot", 0);
	ck_assert_ptr_nonnull(fn);
	ck_assert_str_eq(fn->module, "app");
	/* recursion (hot;hot) counts once per sample */
	ck_assert_int_eq(fn->total.x[0], 60);
	ck_assert_int_eq(fn->total.x[1], 30);
	ck_assert_int_eq(fn->total.n[0], 100);
	ck_assert_int_eq(fn->total.n[1], 100);
	ck_assert_int_eq(fn->self.x[0], 60);
	ck_assert(fabs(fn->total.change - (-0.30)) < 1e-12);
	ck_assert_ptr_null(find_fn(d, "app/main", "hot", 1));

	/* nameless frames: the executable's build-ids differ, two different frames */
	fn = find_fn(d, "app/main", "app+0x500", 0);
	ck_assert_ptr_nonnull(fn);
	ck_assert(!fn->total.x[0] != !fn->total.x[1]);
	ck_assert_ptr_nonnull(find_fn(d, "app/main", "app+0x500", 1));
	/* ... the library's are the same: one frame */
	fn = find_fn(d, "app/main", "libfoo.so+0x40", 0);
	ck_assert_ptr_nonnull(fn);
	ck_assert_int_eq(fn->total.x[0], 10);
	ck_assert_int_eq(fn->total.x[1], 10);
	ck_assert_ptr_null(find_fn(d, "app/main", "libfoo.so+0x40", 1));
	diff_free(d);

	/* every thread as one group */
	d = diff_new(a, b, &(struct diff_opts){.merge_threads = 1});
	ck_assert_int_eq(diff_nr_groups(d), 1);
	ck_assert_str_eq(diff_group(d, 0)->label, "all threads");
	ck_assert_int_eq(diff_group(d, 0)->threads[0], 3);
	ck_assert_int_eq(diff_samples(d, DIFF_BASE), 200);
	fn = find_fn(d, "all threads", "work", 0);
	ck_assert_int_eq(fn->total.x[0], 100);
	ck_assert_int_eq(fn->total.n[0], 200);
	diff_free(d);
	profile_free(a);
	profile_free(b);
}
END_TEST

/* Another program name (a build under another file name): the recorded process is the same
 * role whatever its name, its threads pair by name, and everything is compared. */
START_TEST(match_process_name)
{
	const struct build b1 = {"/b/app", "aa", "cc", "app", 0, 10, 1};
	const struct build b2 = {"/b/app", "aa", "cc", "other", 0, 10, 1};
	struct profile *a = build_profile(&b1, 10, 10), *b = build_profile(&b2, 10, 10);
	struct diff *d = diff_new(a, b, NULL);

	ck_assert_int_eq(diff_nr_groups(d), 2);
	ck_assert_uint_gt(diff_nr_tests(d), 0);
	ck_assert_str_eq(diff_group(d, diff_groups_sorted(d)[1])->name[1], "other/main");
	ck_assert_str_eq(diff_group(d, diff_groups_sorted(d)[1])->label, "app/main");
	ck_assert_uint_eq(diff_compared(d, DIFF_BASE), diff_samples(d, DIFF_BASE));
	ck_assert_uint_eq(diff_compared(d, DIFF_NEW), diff_samples(d, DIFF_NEW));
	for (uint32_t i = 0; i < diff_nr_fns(d); i++)
		ck_assert(diff_fn(d, i)->total.tested);
	diff_free(d);
	profile_free(a);
	profile_free(b);
}
END_TEST

/* The call tree: NEW's and BASE's paths merged, vanished ones with no NEW samples. */
START_TEST(tree_paths)
{
	const struct build b1 = {"/b/app", "aa", "cc", "app", 0, 10, 0};
	struct profile *a = build_profile(&b1, 10, 10), *b = build_profile(&b1, 20, 0);
	struct diff *d = diff_new(a, b, NULL);
	int seen_cold = 0;

	ck_assert_int_eq(diff_node(d, 0)->kind, DIFF_NODE_ROOT);
	for (uint32_t i = 1; i < diff_nr_nodes(d); i++) {
		const struct diff_node *nd = diff_node(d, i), *up = diff_node(d, nd->parent);

		ck_assert_int_eq(nd->depth, up->depth + 1);
		ck_assert(nd->st.x[0] <= up->st.x[0] && nd->st.x[1] <= up->st.x[1]);
		if (!strcmp(nd->name, "cold")) {
			seen_cold = 1;
			ck_assert_int_eq(nd->st.x[0], 10);
			ck_assert_int_eq(nd->st.x[1], 0);
			ck_assert_str_eq(up->name, "main");
			ck_assert_str_eq(diff_node(d, up->parent)->name, "app/main");
		}
	}
	ck_assert(seen_cold);
	diff_free(d);
	profile_free(a);
	profile_free(b);
}
END_TEST

/* ---- rules ---- */

START_TEST(rules)
{
	struct diff_rule r;
	struct diff_fn fn = {.name = "ns::parse_json", .module = "app"};

	ck_assert_int_eq(diff_rule_parse(&r, "ns::parse.*:+2.5"), 0);
	ck_assert(fabs(r.points - 2.5) < 1e-12);
	fn.total =
	    (struct diff_stat){.tested = 1, .beyond_noise = 1, .change = 0.06, .margin = 0.03};
	ck_assert(diff_rule_trips(&r, &fn)); /* 6 - 3 > 2.5 */
	fn.total.margin = 0.04;
	ck_assert(!diff_rule_trips(&r, &fn)); /* 6 - 4 < 2.5 */
	fn.total.margin = 0.01;
	fn.name = "parse_xml";
	ck_assert(!diff_rule_trips(&r, &fn));
	fn.name = "ns::parse_json";
	fn.total.change = -0.06;
	ck_assert(!diff_rule_trips(&r, &fn)); /* shrank */
	diff_rule_release(&r);
	ck_assert_int_eq(diff_rule_parse(&r, "hot:+0"), 0);
	fn.name = "hot";
	fn.total =
	    (struct diff_stat){.tested = 1, .beyond_noise = 0, .change = 0.05, .margin = 0.06};
	ck_assert(!diff_rule_trips(&r, &fn)); /* within noise */
	diff_rule_release(&r);
	ck_assert_int_eq(diff_rule_parse(&r, "hot:5"), -EINVAL);
	ck_assert_int_eq(diff_rule_parse(&r, "hot:+x"), -EINVAL);
	ck_assert_int_eq(diff_rule_parse(&r, ":+1"), -EINVAL);
	ck_assert_int_eq(diff_rule_parse(&r, "hot:+-1"), -EINVAL);
	ck_assert_int_eq(diff_rule_parse(&r, "(hot:+1"), -EINVAL);
	diff_rule_release(&r); /* after a failed parse: nothing to free, no crash */
}
END_TEST

/* ---- writers ---- */

/* A small diff without randomness: main's hot() from 60 to 30 of 100 samples, cold() from 20
 * to 50, the workers' group, and a vanished path. */
static struct diff *small_diff(struct profile **a, struct profile **b)
{
	const struct build b1 = {"/build1/app", "aa01", "cc03", "app", 0, 1000, 2};
	const struct build b2 = {"/opt/build2/app", "bb02", "cc03", "app", 0x1000, 2000, 1};

	*a = build_profile(&b1, 60, 20);
	*b = build_profile(&b2, 30, 50);
	return diff_new(*a, *b,
			&(struct diff_opts){.label = {"base.perch", "new.perch"}, .alpha = 0.01});
}

static char *render_diff(out_diff_write_fn *fn, const struct diff *d, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fn(d, NULL, f), 0);
	fclose(f);
	*len = size;
	return buf;
}

START_TEST(writer_text)
{
	struct profile *a, *b;
	struct diff *d = small_diff(&a, &b);
	size_t len;
	char *text = render_diff(out_diff_text_write, d, &len);

	testutil_check_golden("diff/small.txt", text, len);
	/* cold grew beyond noise, hot shrank: both marked */
	ck_assert_ptr_nonnull(strstr(text, "+30.00"));
	ck_assert_ptr_nonnull(strstr(text, "-30.00"));
	free(text);
	diff_free(d);
	profile_free(a);
	profile_free(b);
}
END_TEST

START_TEST(writer_folded)
{
	struct profile *a, *b;
	struct diff *d = small_diff(&a, &b);
	size_t len;
	char *text = render_diff(out_folded_diff_write, d, &len), *save = NULL, *line;
	unsigned long sum[2] = {0, 0};

	testutil_check_golden("diff/small.folded", text, len);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long c0, c1;
		char *sp = strrchr(line, ' ');

		ck_assert_ptr_nonnull(sp);
		*sp = 0;
		c1 = strtoul(sp + 1, NULL, 10);
		sp = strrchr(line, ' ');
		ck_assert_ptr_nonnull(sp);
		c0 = strtoul(sp + 1, NULL, 10);
		ck_assert_ptr_nonnull(strchr(line, ';'));
		sum[0] += c0;
		sum[1] += c1;
	}
	/* NEW's column counts NEW's samples; BASE's is scaled to NEW's per thread */
	ck_assert_uint_eq(sum[1], diff_samples(d, DIFF_NEW));
	ck_assert_uint_eq(sum[0], 100 + 50);
	free(text);
	diff_free(d);
	profile_free(a);
	profile_free(b);
}
END_TEST

START_TEST(writer_flamegraph)
{
	struct profile *a, *b;
	struct diff *d = small_diff(&a, &b);
	size_t len;
	char *svg = render_diff(out_flamegraph_diff_write, d, &len), *path, *cmd, *out;
	int status;

	testutil_check_golden("diff/small.svg", svg, len);
	ck_assert_ptr_nonnull(strstr(svg, "data-diff=\""));
	ck_assert_ptr_nonnull(strstr(svg, "In BASE, not in NEW"));
	/* well-formed XML for an outside parser */
	path = testutil_tmp_file("diff.svg", svg, len);
	cmd = xasprintf("/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; "
			"r = E.parse(sys.argv[1]).getroot(); "
			"print(len(r.findall(\".//{http://www.w3.org/2000/svg}g\")))' '%s'",
			path);
	out = testutil_run(cmd, &status);
	ck_assert_msg(status == 0, "python's XML parser: %s", out);
	ck_assert_int_gt(atoi(out), 5);
	free(out);
	free(cmd);
	free(path);
	free(svg);
	svg = render_diff(out_flamegraph_diff_html_write, d, &len);
	ck_assert_ptr_nonnull(strstr(svg, "<!DOCTYPE html>"));
	free(svg);
	diff_free(d);
	profile_free(a);
	profile_free(b);
}
END_TEST

Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("stats");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_distribution);
	tcase_add_test(tc, two_proportion_vs_chi2);
	tcase_add_test(tc, two_proportion_conservative);
	tcase_add_test(tc, design_effect_of_a_chain);
	tcase_add_test(tc, false_positives_same_program);
	tcase_add_test(tc, power_real_change);
	suite_add_tcase(s, tc);

	tc = tcase_create("match");
	tcase_add_test(tc, match_across_builds);
	tcase_add_test(tc, match_process_name);
	tcase_add_test(tc, tree_paths);
	tcase_add_test(tc, rules);
	suite_add_tcase(s, tc);

	tc = tcase_create("writers");
	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, writer_text);
	tcase_add_test(tc, writer_folded);
	tcase_add_test(tc, writer_flamegraph);
	suite_add_tcase(s, tc);
	return s;
}
