/* Differences between two profiles: matching, shares and the noise test (see diff.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/path.h"
#include "perch/base/strarena.h"
#include "perch/base/strbuf.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/profile/diff.h"
#include "perch/profile/profile.h"

#define NO_ID UINT32_MAX

/* What a frame key stands for: shown as name (module). */
struct key_info {
	const char *name, *module; /* in the arena */
	uint8_t kind;
};

/* One profile being compared. */
struct side {
	const struct profile *p;
	uint32_t *group_of;	      /* per thread: its group */
	uint32_t *loc_first, *loc_nr; /* per location: its keys in loc_keys, outermost first */
	uint32_t *loc_keys;
	size_t nr_loc_keys, alloc_loc_keys;
	uint64_t total;
	int ordered; /* kept samples cover every sample */
};

/* Strings to ids: texts in the arena, chained by hash. */
struct intern {
	struct u64map map; /* hash -> first id with that hash */
	char **text;
	uint32_t *next;
	size_t nr, alloc_text, alloc_next;
};

struct diff {
	struct diff_opts o;
	int cur_side; /* the side add_count() adds to */
	char *label[2];
	struct side s[2];
	struct strarena arena;

	/* frame keys */
	struct intern keys;
	struct key_info *ki;
	size_t alloc_ki;
	uint32_t key_no_stack;

	/* thread groups (their keys: process name, 0x1f, thread name) */
	struct intern group_keys;
	struct diff_group *groups;
	size_t nr_groups, alloc_groups;
	uint32_t *group_node;
	size_t alloc_gnode;
	uint32_t *gbatch; /* (group * 2 + side) * DIFF_BATCHES + batch: samples */
	size_t alloc_gbatch;
	uint32_t *gnb;	 /* group * 2 + side: batches used */
	uint64_t *grank; /* group * 2 + side: samples placed so far */
	size_t alloc_gnb, alloc_grank;
	uint32_t *groups_sorted;

	/* call tree */
	struct diff_node *nodes;
	uint32_t *node_key;
	uint32_t *nbatch; /* (node * 2 + side) * DIFF_BATCHES + batch */
	size_t nr_nodes, alloc_nodes, alloc_nkey, alloc_nbatch;
	struct u64map child_map; /* parent << 32 | key -> node */

	/* functions */
	struct diff_fn *fns;
	uint32_t *fn_key, *fn_stamp;
	uint32_t *fbatch; /* ((fn * 2 + side) * 2 + self) * DIFF_BATCHES + batch */
	size_t nr_fns, alloc_fns, alloc_fkey, alloc_fstamp, alloc_fbatch;
	struct u64map fn_map; /* group << 32 | key -> fn */
	uint32_t *fns_sorted;
	uint32_t serial; /* the sample being added (functions count once per sample) */

	size_t nr_tests, nr_node_tests;
};

/* ---- statistics ---- */

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
	st->z = st->change / sqrt(v);
	st->p = diff_tail2(fabs(st->z), df);
	st->margin = crit * sqrt(v);
	st->beyond_noise = fabs(st->change) > st->margin;
}

/* ---- keys ---- */

/* The id of @s in @in; *@added tells whether it is new (then copied into @a). */
static uint32_t intern(struct intern *in, struct strarena *a, const char *s, int *added)
{
	uint64_t h = u64map_hash_str(s);
	size_t slot;
	uint32_t idx = u64map_find(&in->map, h, &slot);

	*added = 0;
	if (idx == NO_ID) {
		u64map_set(&in->map, slot, h, (uint32_t)in->nr);
	} else {
		for (;; idx = in->next[idx]) {
			if (!strcmp(in->text[idx], s))
				return idx;
			if (in->next[idx] == NO_ID)
				break;
		}
		in->next[idx] = (uint32_t)in->nr;
	}
	ALLOC_GROW(in->text, in->nr + 1, in->alloc_text);
	ALLOC_GROW(in->next, in->nr + 1, in->alloc_next);
	in->text[in->nr] = strarena_strdup(a, s);
	in->next[in->nr] = NO_ID;
	*added = 1;
	return (uint32_t)in->nr++;
}

static void intern_release(struct intern *in)
{
	u64map_release(&in->map);
	free(in->text);
	free(in->next);
}

/* The id of frame key @text, added with its display data when new. */
static uint32_t key_id(struct diff *d, const char *text, const char *name, const char *module,
		       uint8_t kind)
{
	int added;
	uint32_t id = intern(&d->keys, &d->arena, text, &added);

	if (added) {
		ALLOC_GROW(d->ki, id + 1, d->alloc_ki);
		d->ki[id] = (struct key_info){
		    .name = strarena_strdup(&d->arena, name && *name ? name : "[unknown]"),
		    .module = strarena_strdup(&d->arena, module ? module : ""),
		    .kind = kind,
		};
	}
	return id;
}

/* Is @name a made-up name for an address ("app+0x1130", "0x7f001234"), not a function's? */
static int is_address_name(const char *name)
{
	const char *plus = strrchr(name, '+'), *hex = plus ? plus + 1 : name;

	if (hex[0] != '0' || hex[1] != 'x' || !hex[2])
		return 0;
	for (const char *c = hex + 2; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
		      (*c >= 'A' && *c <= 'F')))
			return 0;
	/* a module's base name before the '+': no blank, no parenthesis */
	for (const char *c = name; c < (plus ? plus : name); c++)
		if (*c == ' ' || *c == '(' || *c == ')')
			return 0;
	return 1;
}

/* The key of a frame (or of a location without frames when @f is NULL). */
static uint32_t frame_key(struct diff *d, int side, const struct profile_location *l,
			  const struct profile_frame *f, struct strbuf *sb)
{
	const struct profile *p = d->s[side].p;
	uint32_t mod = f && f->module ? f->module : l->module;
	const char *path = profile_str(p, mod), *base = path_base(path);
	const char *name = f ? profile_str(p, f->name) : NULL;
	uint8_t kind = f ? f->kind : PROFILE_FRAME_NATIVE;
	char addr_name[600];
	uint32_t id;

	strbuf_reset(sb);
	if (name && *name && !is_address_name(name)) {
		strbuf_addf(sb, "N%u%s", kind, name);
		strbuf_addch(sb, 0x1f);
		strbuf_addstr(sb, base);
		return key_id(d, sb->buf, name, base, kind);
	}
	if (!name || !*name) {
		snprintf(addr_name, sizeof(addr_name), "%s%s0x%" PRIx64, base, *base ? "+" : "",
			 l->addr);
		name = addr_name;
	}
	/* no name: the same module (by base name and build-id) and address, or not the same */
	strbuf_addf(sb, "A%u%s+0x%" PRIx64, kind, base, l->addr);
	strbuf_addch(sb, 0x1f);
	if (*path) {
		char *k = xasprintf("build_id:%s", path);
		const char *bid = profile_meta(p, k);

		free(k);
		if (bid && *bid) {
			strbuf_addstr(sb, bid);
			id = key_id(d, sb->buf, name, base, kind);
			return id;
		}
	}
	strbuf_addf(sb, "%c%d", 0x1f, side); /* no build-id: only within one profile */
	return key_id(d, sb->buf, name, base, kind);
}

/* The keys of location @loc of @side, outermost (the real function) first. */
static const uint32_t *loc_keys(struct diff *d, int side, uint32_t loc, size_t *n)
{
	struct side *s = &d->s[side];

	if (s->loc_nr[loc] == NO_ID) {
		const struct profile_location *l = profile_location(s->p, loc);
		size_t nf;
		const uint32_t *fr = profile_location_frames(s->p, loc, &nf);
		struct strbuf sb = STRBUF_INIT;

		s->loc_first[loc] = (uint32_t)s->nr_loc_keys;
		ALLOC_GROW(s->loc_keys, s->nr_loc_keys + (nf ? nf : 1), s->alloc_loc_keys);
		if (!nf)
			s->loc_keys[s->nr_loc_keys++] = frame_key(d, side, l, NULL, &sb);
		for (size_t j = nf; j-- > 0;)
			s->loc_keys[s->nr_loc_keys++] =
			    frame_key(d, side, l, profile_frame(s->p, fr[j]), &sb);
		s->loc_nr[loc] = (uint32_t)(s->nr_loc_keys - s->loc_first[loc]);
		strbuf_release(&sb);
	}
	*n = s->loc_nr[loc];
	return s->loc_keys + s->loc_first[loc];
}

/* ---- groups, nodes, functions ---- */

static uint32_t node_new(struct diff *d, uint32_t parent, uint32_t key, const char *name,
			 uint8_t kind, uint32_t group)
{
	size_t i = d->nr_nodes;

	ALLOC_GROW(d->nodes, i + 1, d->alloc_nodes);
	ALLOC_GROW(d->node_key, i + 1, d->alloc_nkey);
	ALLOC_GROW(d->nbatch, (i + 1) * 2 * DIFF_BATCHES, d->alloc_nbatch);
	memset(d->nbatch + i * 2 * DIFF_BATCHES, 0, 2 * DIFF_BATCHES * sizeof(*d->nbatch));
	memset(&d->nodes[i], 0, sizeof(d->nodes[i]));
	d->nodes[i].parent = parent;
	d->nodes[i].group = group;
	d->nodes[i].depth = i ? d->nodes[parent].depth + 1 : 0;
	d->nodes[i].name = name;
	d->nodes[i].kind = kind;
	d->node_key[i] = key;
	d->nr_nodes++;
	return (uint32_t)i;
}

static uint32_t node_child(struct diff *d, uint32_t parent, uint32_t key)
{
	uint64_t k = (uint64_t)parent << 32 | key;
	size_t slot;
	uint32_t c = u64map_find(&d->child_map, k, &slot);

	if (c != NO_ID)
		return c;
	c = node_new(d, parent, key, d->ki[key].name, d->ki[key].kind, d->nodes[parent].group);
	u64map_set(&d->child_map, slot, k, c);
	return c;
}

/* The group of thread @t of @side (its process name + thread name). */
static uint32_t group_of_thread(struct diff *d, int side, uint32_t t)
{
	const struct profile *p = d->s[side].p;
	const struct profile_thread *th = profile_thread_get(p, t);
	const char *comm = profile_meta(p, "comm"), *tname = th ? profile_str(p, th->name) : NULL;
	struct strbuf key = STRBUF_INIT, label = STRBUF_INIT;
	uint32_t g;
	int added;

	comm = comm ? comm : "";
	tname = tname && *tname ? tname : "[unknown]";
	if (d->o.merge_threads) {
		strbuf_addstr(&label, "all threads");
	} else {
		strbuf_addf(&key, "%s%c%s", comm, 0x1f, tname);
		strbuf_addf(&label, "%s%s%s", comm, *comm ? "/" : "", tname);
	}
	g = intern(&d->group_keys, &d->arena, key.buf, &added);
	if (added) {
		ALLOC_GROW(d->groups, g + 1, d->alloc_groups);
		ALLOC_GROW(d->group_node, g + 1, d->alloc_gnode);
		ALLOC_GROW(d->gbatch, (g + 1) * 2 * DIFF_BATCHES, d->alloc_gbatch);
		ALLOC_GROW(d->gnb, (g + 1) * 2, d->alloc_gnb);
		ALLOC_GROW(d->grank, (g + 1) * 2, d->alloc_grank);
		memset(&d->groups[g], 0, sizeof(d->groups[g]));
		memset(d->gbatch + (size_t)g * 2 * DIFF_BATCHES, 0,
		       2 * DIFF_BATCHES * sizeof(*d->gbatch));
		d->gnb[2 * g] = d->gnb[2 * g + 1] = 0;
		d->grank[2 * g] = d->grank[2 * g + 1] = 0;
		d->groups[g].label = strarena_strdup(&d->arena, label.buf);
		d->group_node[g] = node_new(d, 0, NO_ID, d->groups[g].label, DIFF_NODE_THREAD, g);
		d->nr_groups++;
	}
	d->groups[g].threads[side]++;
	strbuf_release(&key);
	strbuf_release(&label);
	return g;
}

static uint32_t fn_get(struct diff *d, uint32_t group, uint32_t key)
{
	uint64_t k = (uint64_t)group << 32 | key;
	size_t slot;
	uint32_t i = u64map_find(&d->fn_map, k, &slot);

	if (i != NO_ID)
		return i;
	i = (uint32_t)d->nr_fns++;
	u64map_set(&d->fn_map, slot, k, i);
	ALLOC_GROW(d->fns, i + 1, d->alloc_fns);
	ALLOC_GROW(d->fn_key, i + 1, d->alloc_fkey);
	ALLOC_GROW(d->fn_stamp, i + 1, d->alloc_fstamp);
	ALLOC_GROW(d->fbatch, (size_t)(i + 1) * 4 * DIFF_BATCHES, d->alloc_fbatch);
	memset(&d->fns[i], 0, sizeof(d->fns[i]));
	memset(d->fbatch + (size_t)i * 4 * DIFF_BATCHES, 0, 4 * DIFF_BATCHES * sizeof(*d->fbatch));
	d->fns[i].group = group;
	d->fns[i].name = d->ki[key].name;
	d->fns[i].module = d->ki[key].module;
	d->fns[i].kind = d->ki[key].kind;
	d->fn_key[i] = key;
	d->fn_stamp[i] = 0;
	return i;
}

static void fn_add(struct diff *d, uint32_t group, uint32_t key, int side, int self, uint32_t w,
		   uint32_t b)
{
	uint32_t i = fn_get(d, group, key);
	struct diff_stat *st = self ? &d->fns[i].self : &d->fns[i].total;

	if (!self) {
		if (d->fn_stamp[i] == d->serial)
			return; /* once per sample (recursion) */
		d->fn_stamp[i] = d->serial;
	}
	st->x[side] += w;
	d->fbatch[(((size_t)i * 2 + side) * 2 + self) * DIFF_BATCHES + b] += w;
}

static void node_add(struct diff *d, uint32_t node, int side, uint32_t w, uint32_t b)
{
	d->nodes[node].st.x[side] += w;
	d->nbatch[((size_t)node * 2 + side) * DIFF_BATCHES + b] += w;
}

/* One sample (or @w of them) of @stack in group @g, batch @b, on @side. */
static void add_sample(struct diff *d, int side, uint32_t g, uint32_t stack, uint32_t w, uint32_t b)
{
	const struct profile *p = d->s[side].p;
	uint32_t node = d->group_node[g], key = d->key_no_stack;
	size_t n, nk;
	const uint32_t *locs = profile_stack(p, stack, &n);

	if (++d->serial == 0)
		d->serial = 1; /* 0 means "never" in fn_stamp */
	if (!n) {
		node = node_child(d, node, key);
		node_add(d, node, side, w, b);
		fn_add(d, g, key, side, 0, w, b);
	}
	for (size_t i = n; i-- > 0;) {
		const uint32_t *ks = loc_keys(d, side, locs[i], &nk);

		for (size_t j = 0; j < nk; j++) {
			key = ks[j];
			node = node_child(d, node, key);
			node_add(d, node, side, w, b);
			fn_add(d, g, key, side, 0, w, b);
		}
	}
	d->nodes[node].self[side] += w;
	fn_add(d, g, key, side, 1, w, b);
	d->groups[g].samples[side] += w;
	d->gbatch[((size_t)g * 2 + side) * DIFF_BATCHES + b] += w;
}

static void add_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct diff *d = arg;
	int side = d->cur_side;

	while (count) {
		uint32_t w = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;

		add_sample(d, side, d->s[side].group_of[thread], stack, w, 0);
		count -= w;
	}
}

/* Add every sample of @side: in time order with batches when the kept samples cover them. */
static void add_side(struct diff *d, int side)
{
	struct side *s = &d->s[side];
	size_t nt = profile_nr_threads(s->p), nl = profile_nr_locations(s->p), n;
	const struct profile_sample *smp = profile_samples(s->p, &n);
	uint64_t kept = 0;

	s->group_of = xcalloc(nt ? nt : 1, sizeof(*s->group_of));
	s->loc_first = xcalloc(nl ? nl : 1, sizeof(*s->loc_first));
	s->loc_nr = xmalloc((nl ? nl : 1) * sizeof(*s->loc_nr));
	memset(s->loc_nr, 0xff, (nl ? nl : 1) * sizeof(*s->loc_nr));
	for (uint32_t t = 0; t < nt; t++)
		s->group_of[t] = group_of_thread(d, side, t);
	for (size_t i = 0; i < n; i++)
		kept += smp[i].weight ? smp[i].weight : 1;
	s->total = profile_total_samples(s->p);
	s->ordered = n > 0 && kept == s->total;
	if (!s->ordered) {
		/* no time order: aggregated counts, one batch (no design effect) */
		d->cur_side = side;
		profile_foreach_count(s->p, add_count, d);
		return;
	}
	/* batches of consecutive samples per group: first the group sizes */
	for (size_t i = 0; i < n; i++)
		d->grank[2 * s->group_of[smp[i].thread] + side] +=
		    smp[i].weight ? smp[i].weight : 1;
	for (size_t g = 0; g < d->nr_groups; g++) {
		uint64_t nb = d->grank[2 * g + side] / DIFF_BATCH_MIN;

		d->gnb[2 * g + side] = (uint32_t)(nb > DIFF_BATCHES ? DIFF_BATCHES : nb);
		d->groups[g].samples[side] = 0; /* counted again while adding */
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t g = s->group_of[smp[i].thread], w = smp[i].weight ? smp[i].weight : 1;
		uint64_t size = d->grank[2 * g + side], at = d->groups[g].samples[side];
		uint32_t b =
		    d->gnb[2 * g + side] ? (uint32_t)(at * d->gnb[2 * g + side] / size) : 0;

		add_sample(d, side, g, smp[i].stack, w, b);
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

static void run_tests(struct diff *d)
{
	double crit_fn[DIFF_BATCHES], crit_node[DIFF_BATCHES];

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
	crit_table(d->o.alpha, d->nr_tests, crit_fn);
	crit_table(d->o.alpha, d->nr_node_tests, crit_node);

	for (size_t i = 0; i < d->nr_fns; i++) {
		struct diff_fn *fn = &d->fns[i];
		uint32_t g = fn->group;
		const uint32_t *used = &d->gnb[2 * g],
			       *nb = d->gbatch + (size_t)g * 2 * DIFF_BATCHES;
		const uint32_t *fb = d->fbatch + (size_t)i * 4 * DIFF_BATCHES;
		double deff[2];
		int df;

		for (int s = 0; s < 2; s++)
			fn->total.n[s] = fn->self.n[s] = d->groups[g].samples[s];
		deff_of(fb, 2 * DIFF_BATCHES, nb, used, deff, &df);
		diff_stat_test(&fn->total, deff, df, crit_fn[df]);
		deff_of(fb + DIFF_BATCHES, 2 * DIFF_BATCHES, nb, used, deff, &df);
		diff_stat_test(&fn->self, deff, df, crit_fn[df]);
	}
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
		diff_stat_test(&nd->st, deff, df, crit_node[df]);
	}
}

/* ---- sorting ---- */

static const struct diff *sort_d;

static int cmp_group(const void *a, const void *b)
{
	const struct diff_group *x = &sort_d->groups[*(const uint32_t *)a];
	const struct diff_group *y = &sort_d->groups[*(const uint32_t *)b];

	if (x->samples[1] != y->samples[1])
		return x->samples[1] > y->samples[1] ? -1 : 1;
	if (x->samples[0] != y->samples[0])
		return x->samples[0] > y->samples[0] ? -1 : 1;
	return strcmp(x->label, y->label);
}

static double fn_weight(const struct diff_fn *f)
{
	double t = fabs(f->total.change), s = fabs(f->self.change);

	return t > s ? t : s;
}

static uint32_t *group_rank; /* group -> its place in groups_sorted */

static int cmp_fn(const void *a, const void *b)
{
	const struct diff_fn *x = &sort_d->fns[*(const uint32_t *)a];
	const struct diff_fn *y = &sort_d->fns[*(const uint32_t *)b];
	double wx, wy;
	int c;

	if (x->group != y->group)
		return group_rank[x->group] < group_rank[y->group] ? -1 : 1;
	wx = fn_weight(x);
	wy = fn_weight(y);
	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->total.x[1] != y->total.x[1])
		return x->total.x[1] > y->total.x[1] ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

static void sort_all(struct diff *d)
{
	d->groups_sorted = xmalloc((d->nr_groups + 1) * sizeof(*d->groups_sorted));
	d->fns_sorted = xmalloc((d->nr_fns + 1) * sizeof(*d->fns_sorted));
	group_rank = xmalloc((d->nr_groups + 1) * sizeof(*group_rank));
	for (uint32_t i = 0; i < d->nr_groups; i++)
		d->groups_sorted[i] = i;
	for (uint32_t i = 0; i < d->nr_fns; i++)
		d->fns_sorted[i] = i;
	sort_d = d;
	qsort(d->groups_sorted, d->nr_groups, sizeof(uint32_t), cmp_group);
	for (uint32_t i = 0; i < d->nr_groups; i++)
		group_rank[d->groups_sorted[i]] = i;
	qsort(d->fns_sorted, d->nr_fns, sizeof(uint32_t), cmp_fn);
	free(group_rank);
	group_rank = NULL;
}

/* ---- the diff ---- */

struct diff *diff_new(const struct profile *base, const struct profile *new,
		      const struct diff_opts *o)
{
	struct diff *d = xcalloc(1, sizeof(*d));

	if (o)
		d->o = *o;
	if (!(d->o.alpha > 0 && d->o.alpha <= 0.5))
		d->o.alpha = DIFF_DEFAULT_ALPHA;
	for (int s = 0; s < 2; s++) {
		d->label[s] = xstrdup(o && o->label[s] ? o->label[s] : s ? "NEW" : "BASE");
		d->o.label[s] = d->label[s];
	}
	d->s[DIFF_BASE].p = base;
	d->s[DIFF_NEW].p = new;
	strarena_init(&d->arena);
	d->key_no_stack = key_id(d, "P[no stack]", "[no stack]", "", PROFILE_FRAME_PSEUDO);
	node_new(d, 0, NO_ID, "all", DIFF_NODE_ROOT, 0);
	add_side(d, DIFF_BASE);
	add_side(d, DIFF_NEW);
	run_tests(d);
	sort_all(d);
	return d;
}

void diff_free(struct diff *d)
{
	if (!d)
		return;
	for (int s = 0; s < 2; s++) {
		free(d->label[s]);
		free(d->s[s].group_of);
		free(d->s[s].loc_first);
		free(d->s[s].loc_nr);
		free(d->s[s].loc_keys);
	}
	strarena_release(&d->arena);
	intern_release(&d->keys);
	free(d->ki);
	intern_release(&d->group_keys);
	free(d->groups);
	free(d->group_node);
	free(d->gbatch);
	free(d->gnb);
	free(d->grank);
	free(d->groups_sorted);
	free(d->nodes);
	free(d->node_key);
	free(d->nbatch);
	u64map_release(&d->child_map);
	free(d->fns);
	free(d->fn_key);
	free(d->fn_stamp);
	free(d->fbatch);
	u64map_release(&d->fn_map);
	free(d->fns_sorted);
	free(d);
}

const char *diff_label(const struct diff *d, enum diff_side side)
{
	return d->label[side];
}

double diff_alpha(const struct diff *d)
{
	return d->o.alpha;
}

uint64_t diff_samples(const struct diff *d, enum diff_side side)
{
	return d->s[side].total;
}

int diff_time_ordered(const struct diff *d)
{
	return d->s[0].ordered > 0 && d->s[1].ordered > 0;
}

size_t diff_nr_tests(const struct diff *d)
{
	return d->nr_tests;
}

size_t diff_nr_node_tests(const struct diff *d)
{
	return d->nr_node_tests;
}

const char *diff_meta(const struct diff *d, enum diff_side side, const char *key)
{
	return profile_meta(d->s[side].p, key);
}

const struct profile *diff_profile(const struct diff *d, enum diff_side side)
{
	return d->s[side].p;
}

size_t diff_nr_groups(const struct diff *d)
{
	return d->nr_groups;
}

const struct diff_group *diff_group(const struct diff *d, uint32_t idx)
{
	return idx < d->nr_groups ? &d->groups[idx] : NULL;
}

const uint32_t *diff_groups_sorted(const struct diff *d)
{
	return d->groups_sorted;
}

size_t diff_nr_fns(const struct diff *d)
{
	return d->nr_fns;
}

const struct diff_fn *diff_fn(const struct diff *d, uint32_t idx)
{
	return idx < d->nr_fns ? &d->fns[idx] : NULL;
}

const uint32_t *diff_fns_sorted(const struct diff *d)
{
	return d->fns_sorted;
}

size_t diff_nr_nodes(const struct diff *d)
{
	return d->nr_nodes;
}

const struct diff_node *diff_node(const struct diff *d, uint32_t idx)
{
	return idx < d->nr_nodes ? &d->nodes[idx] : NULL;
}

/* ---- --fail-if ---- */

int diff_rule_parse(struct diff_rule *r, const char *arg)
{
	const char *sep = NULL, *c;
	char *re, *end;
	int ret;

	memset(r, 0, sizeof(*r));
	for (c = strstr(arg, ":+"); c; c = strstr(c + 1, ":+"))
		sep = c;
	if (!sep || sep == arg)
		return log_err(-EINVAL, "--fail-if wants FUNCTION_REGEX:+POINTS, not '%s'", arg);
	errno = 0;
	r->points = strtod(sep + 2, &end);
	if (errno || end == sep + 2 || *end || !(r->points >= 0) || r->points > 100)
		return log_err(-EINVAL,
			       "--fail-if '%s': POINTS must be a number of points from 0 to 100",
			       arg);
	re = xstrndup(arg, (size_t)(sep - arg));
	ret = regcomp(&r->re, re, REG_EXTENDED | REG_NOSUB);
	free(re);
	if (ret) {
		char msg[128];

		regerror(ret, &r->re, msg, sizeof(msg));
		return log_err(-EINVAL, "--fail-if '%s': %s", arg, msg);
	}
	r->text = xstrdup(arg);
	return 0;
}

void diff_rule_release(struct diff_rule *r)
{
	if (r->text)
		regfree(&r->re);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

int diff_rule_trips(const struct diff_rule *r, const struct diff_fn *fn)
{
	const struct diff_stat *st = &fn->total;

	return r->text && st->tested && st->beyond_noise &&
	       st->change - st->margin > r->points / 100 && !regexec(&r->re, fn->name, 0, NULL, 0);
}
