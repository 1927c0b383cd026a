/* The noise tests of a diff (see diff.h, Noise): Student's t, the design effect of
 * consecutive samples, the spread between replicate runs, and the family-wise level. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"

#include "diff-int.h"
#include "perch/profile/diff.h"

/* ---- the reference distribution ---- */

/* A(t|df) = P(|T| < t), Abramowitz & Stegun 26.7.3 (odd df) and 26.7.4 (even df): finite
 * sums for integer degrees of freedom. */
static double t_inside(double t, int df)
{
	double th = atan(t / sqrt((double)df)), c2 = cos(th) * cos(th), sum, term;

	if (df % 2) {
		if (df == 1)
			return 2 / M_PI * th;
		sum = term = cos(th);
		for (int k = 3; k <= df - 2; k += 2) {
			term *= c2 * (k - 1) / k;
			sum += term;
		}
		return 2 / M_PI * (th + sin(th) * sum);
	}
	sum = term = 1;
	for (int k = 2; k <= df - 2; k += 2) {
		term *= c2 * (k - 1) / k;
		sum += term;
	}
	return sin(th) * sum;
}

double diff_tail2(double t, int df)
{
	double a;

	if (!(t > 0))
		return 1;
	if (df <= 0 || df > 100000)
		return erfc(t / M_SQRT2);
	a = 1 - t_inside(t, df);
	return a < 0 ? 0 : a;
}

double diff_crit2(double p, int df)
{
	double lo = 0, hi = 1;

	if (!(p > 0) || !(p < 1))
		return p >= 1 ? 0 : INFINITY;
	while (diff_tail2(hi, df) > p && hi < 1e12)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (diff_tail2(mid, df) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double diff_batch_deff(const uint32_t *xb, const uint32_t *ns, size_t nb)
{
	double n = 0, x = 0, s = 0, p, v_batch, v_binom;
	size_t used = 0;

	for (size_t i = 0; i < nb; i++) {
		n += ns[i];
		x += xb[i];
		used += ns[i] > 0;
	}
	if (used < 2 || !(n > 0))
		return 0;
	p = x / n;
	if (p <= 0 || p >= 1)
		return 0;
	/* the variance of a ratio estimate from clusters (batches), with used - 1 degrees
	 * of freedom: unbiased, p(1-p)/n, when the samples are independent */
	for (size_t i = 0; i < nb; i++) {
		double d = xb[i] - p * ns[i];

		s += d * d;
	}
	v_batch = (double)used / (double)(used - 1) * s / (n * n);
	v_binom = p * (1 - p) / n;
	return v_batch / v_binom;
}

void diff_stat_test(struct diff_stat *st, const double deff[2], int df, double crit)
{
	double n0 = (double)st->n[0], n1 = (double)st->n[1], s0, s1, pbar, v_pool, v_un, v, v1;
	double d0 = deff && deff[0] > 1 ? deff[0] : 1, d1 = deff && deff[1] > 1 ? deff[1] : 1;

	st->share[0] = st->n[0] ? (double)st->x[0] / n0 : 0;
	st->share[1] = st->n[1] ? (double)st->x[1] / n1 : 0;
	st->change = st->share[1] - st->share[0];
	st->tested = st->n[0] > 0 && st->n[1] > 0;
	st->deff = 1;
	st->df = df;
	st->z = 0;
	st->p = 1;
	st->margin = 0;
	st->se = 0;
	st->beyond_noise = 0;
	if (!st->tested)
		return;
	s0 = st->share[0];
	s1 = st->share[1];
	pbar = (double)(st->x[0] + st->x[1]) / (n0 + n1);
	/* each side's variance widened by its own design effect */
	v_pool = pbar * (1 - pbar) * (d0 / n0 + d1 / n1);
	v_un = d0 * s0 * (1 - s0) / n0 + d1 * s1 * (1 - s1) / n1;
	/* the pooled variance is the test's under "no change"; the unpooled one is larger when
	 * the larger share is in the smaller sample: take the larger (conservative) */
	v = v_pool > v_un ? v_pool : v_un;
	if (!(v > 0))
		return;
	v1 = pbar * (1 - pbar) * (1 / n0 + 1 / n1);
	v1 = v1 > s0 * (1 - s0) / n0 + s1 * (1 - s1) / n1 ? v1
							  : s0 * (1 - s0) / n0 + s1 * (1 - s1) / n1;
	st->deff = v1 > 0 ? v / v1 : 1;
	st->se = sqrt(v);
	st->z = st->change / st->se;
	st->p = diff_tail2(fabs(st->z), df);
	st->margin = crit * sqrt(v);
	st->beyond_noise = fabs(st->change) > st->margin;
}

/* ---- the spread between runs (replicates) ---- */

/* Pearson's dispersion of a share over the runs of one side: sum over runs of
 * (x_r - n_r p)^2 / (n_r p (1 - p)) over (runs - 1), p the pooled share; 1 for binomial
 * noise alone, 0 when it cannot be estimated (fewer than 2 runs with samples, p 0 or 1). */
static double run_dispersion(const uint32_t *x, const uint32_t *n, size_t nr)
{
	double xs = 0, ns = 0, chi = 0, p;
	size_t used = 0;

	for (size_t r = 0; r < nr; r++) {
		xs += x[r];
		ns += n[r];
		used += n[r] > 0;
	}
	if (used < 2 || !(ns > 0))
		return 0;
	p = xs / ns;
	if (p <= 0 || p >= 1)
		return 0;
	for (size_t r = 0; r < nr; r++) {
		double e = n[r] * p;

		if (n[r])
			chi += (x[r] - e) * (x[r] - e) / (e * (1 - p));
	}
	return chi / (double)(used - 1);
}

/* Each group's dispersion between the runs of each side: the chi-square of the runs x self
 * functions table (a multinomial's homogeneity test) over its (runs - 1)(functions - 1)
 * degrees of freedom; 0 with one run. */
static void group_dispersions(struct diff *d)
{
	size_t n = d->nr_groups * 2;
	double *chi = xcalloc(n + 1, sizeof(*chi));
	uint32_t *cats = xcalloc(n + 1, sizeof(*cats));

	d->gdisp = xcalloc(n + 1, sizeof(*d->gdisp));
	d->gdf = xcalloc(n + 1, sizeof(*d->gdf));
	for (size_t i = 0; i < d->nr_fns; i++)
		for (int s = 0; s < 2; s++) {
			size_t gs = (size_t)d->fns[i].group * 2 + s;
			const uint32_t *x = d->frep + ((i * 2 + s) * 2 + 1) * NR_REP,
				       *nr = d->grep + gs * NR_REP;
			double xs = 0, ns = 0;

			for (size_t r = 0; r < d->s[s].nr_rep; r++) {
				xs += x[r];
				ns += nr[r];
			}
			if (!(xs > 0))
				continue;
			cats[gs]++;
			for (size_t r = 0; r < d->s[s].nr_rep; r++) {
				double e = nr[r] * xs / ns;

				if (e > 0)
					chi[gs] += (x[r] - e) * (x[r] - e) / e;
			}
		}
	for (size_t gs = 0; gs < n; gs++) {
		size_t used = 0;

		for (size_t r = 0; r < d->s[gs % 2].nr_rep; r++)
			used += d->grep[gs * NR_REP + r] > 0;
		if (used >= 2 && cats[gs] >= 2) {
			d->gdf[gs] = (uint32_t)((used - 1) * (cats[gs] - 1));
			d->gdisp[gs] = chi[gs] / (double)d->gdf[gs];
		}
	}
	free(chi);
	free(cats);
}

/* Widen @deff (per side) to the spread between runs: the group's dispersion and, for a
 * function (@x: its per-run counts, side s at @x + s * @stride; NULL for a call path), its
 * own moderated by the group's (their average weighted by degrees of freedom: a function's own
 * estimate from two or three runs has one or two, and alone it would swing by a factor of ten
 * from draw to draw). */
static void widen_by_runs(const struct diff *d, uint32_t g, const uint32_t *x, size_t stride,
			  double deff[2])
{
	for (int s = 0; s < 2; s++) {
		size_t gs = (size_t)g * 2 + s, used = 0;
		double own = 0, d0 = d->gdf[gs];

		for (size_t r = 0; x && r < d->s[s].nr_rep; r++)
			used += d->grep[gs * NR_REP + r] > 0;
		if (x && used >= 2)
			own = run_dispersion(x + s * stride, d->grep + gs * NR_REP, d->s[s].nr_rep);
		if (own > 0)
			own = (d0 * d->gdisp[gs] + (double)(used - 1) * own) /
			      (d0 + (double)(used - 1));
		if (d->gdisp[gs] > deff[s])
			deff[s] = d->gdisp[gs];
		if (own > deff[s])
			deff[s] = own;
	}
}

/* ---- the tests ---- */

/* The design effects (per side) and degrees of freedom of a change whose batch counts for side
 * s are @xb + s * @stride (group batches in @nb + s * DIFF_BATCHES), @used[s] batches. A side
 * whose effect cannot be estimated (no batches, or a share of 0 or 1) takes the other's. */
static void deff_of(const uint32_t *xb, size_t stride, const uint32_t *nb, const uint32_t *used,
		    double deff[2], int *df)
{
	int min_used = 0;

	for (int s = 0; s < 2; s++) {
		deff[s] = 0;
		if (used[s] < 2)
			continue;
		deff[s] = diff_batch_deff(xb + s * stride, nb + s * DIFF_BATCHES, used[s]);
		if (!min_used || (int)used[s] < min_used)
			min_used = (int)used[s];
	}
	for (int s = 0; s < 2; s++)
		if (!(deff[s] > 0))
			deff[s] = deff[!s] > 0 ? deff[!s] : 1;
	*df = min_used ? min_used - 1 : 0;
}

/* Can this change be beyond noise at all? Not when the function is in none or in every
 * sample of both sides (no variance): such "tests" never reject, so they need no share of
 * alpha (the family-wise rate holds without them). */
static int can_differ(const struct diff_stat *st, const struct diff_group *g)
{
	uint64_t x = st->x[0] + st->x[1];

	return x > 0 && x < g->samples[0] + g->samples[1];
}

/* Critical values per degrees of freedom for one family of @m tests. */
static void crit_table(double alpha, size_t m, double *crit)
{
	double p = alpha / (double)(m ? m : 1);

	for (int df = 0; df < DIFF_BATCHES; df++)
		crit[df] = diff_crit2(p, df);
}

/* The number of tests of each family. */
static void count_tests(struct diff *d)
{
	for (size_t i = 0; i < d->nr_fns; i++) {
		const struct diff_group *g = &d->groups[d->fns[i].group];
		int both = g->samples[0] && g->samples[1];

		d->nr_tests += both && can_differ(&d->fns[i].total, g);
		d->nr_tests += both && can_differ(&d->fns[i].self, g);
	}
	for (size_t i = 0; i < d->nr_nodes; i++) {
		const struct diff_node *nd = &d->nodes[i];

		if (nd->depth >= 2)
			d->nr_node_tests += d->groups[nd->group].samples[0] &&
					    d->groups[nd->group].samples[1] &&
					    can_differ(&nd->st, &d->groups[nd->group]);
	}
}

static void test_fns(struct diff *d, const double *crit)
{
	for (size_t i = 0; i < d->nr_fns; i++) {
		struct diff_fn *fn = &d->fns[i];
		uint32_t g = fn->group;
		const uint32_t *used = &d->gnb[2 * g],
			       *nb = d->gbatch + (size_t)g * 2 * DIFF_BATCHES;
		const uint32_t *fb = d->fbatch + i * 4 * DIFF_BATCHES,
			       *fr = d->frep + i * 4 * NR_REP;
		double deff[2];
		int df;

		for (int s = 0; s < 2; s++)
			fn->total.n[s] = fn->self.n[s] = d->groups[g].samples[s];
		deff_of(fb, 2 * DIFF_BATCHES, nb, used, deff, &df);
		widen_by_runs(d, g, fr, 2 * NR_REP, deff);
		diff_stat_test(&fn->total, deff, df, crit[df]);
		deff_of(fb + DIFF_BATCHES, 2 * DIFF_BATCHES, nb, used, deff, &df);
		widen_by_runs(d, g, fr + NR_REP, 2 * NR_REP, deff);
		diff_stat_test(&fn->self, deff, df, crit[df]);
	}
}

static void test_nodes(struct diff *d, const double *crit)
{
	for (size_t i = 0; i < d->nr_nodes; i++) {
		struct diff_node *nd = &d->nodes[i];
		uint32_t g = nd->group;
		double deff[2];
		int df;

		if (nd->depth < 2) {
			/* root and threads: shares of all samples, not tested */
			for (int s = 0; s < 2; s++) {
				nd->st.x[s] = i ? d->groups[g].samples[s] : d->s[s].total;
				nd->st.n[s] = d->s[s].total;
			}
			diff_stat_test(&nd->st, NULL, 0, 0);
			nd->st.tested = nd->st.beyond_noise = 0;
			continue;
		}
		for (int s = 0; s < 2; s++)
			nd->st.n[s] = d->groups[g].samples[s];
		deff_of(d->nbatch + i * 2 * DIFF_BATCHES, DIFF_BATCHES,
			d->gbatch + (size_t)g * 2 * DIFF_BATCHES, &d->gnb[2 * g], deff, &df);
		widen_by_runs(d, g, NULL, 0, deff);
		diff_stat_test(&nd->st, deff, df, crit[df]);
	}
}

void stat_run_tests(struct diff *d)
{
	double crit_fn[DIFF_BATCHES], crit_node[DIFF_BATCHES];

	group_dispersions(d);
	count_tests(d);
	crit_table(d->o.alpha, d->nr_tests, crit_fn);
	crit_table(d->o.alpha, d->nr_node_tests, crit_node);
	test_fns(d, crit_fn);
	test_nodes(d, crit_node);
}
