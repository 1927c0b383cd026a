/* Differences between two profiles: frame keys, the merged call tree, the functions of each
 * thread group, sorting and the API (see diff.h); pairing is diff-pair.c's, the tests
 * diff-stat.c's. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff-int.h"
#include "perch/base/log.h"
#include "perch/base/path.h"
#include "perch/base/strarena.h"
#include "perch/base/strbuf.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/profile/diff.h"
#include "perch/profile/profile.h"

/* ---- keys ---- */

uint32_t diff_intern(struct intern *in, struct strarena *a, const char *s, int *added)
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
		       uint32_t mod, uint8_t kind)
{
	int added;
	uint32_t id = diff_intern(&d->keys, &d->arena, text, &added);

	if (added) {
		ALLOC_GROW(d->ki, id + 1, d->alloc_ki);
		d->ki[id] = (struct key_info){
		    .name = strarena_strdup(&d->arena, name && *name ? name : "[unknown]"),
		    .module = strarena_strdup(&d->arena, module ? module : ""),
		    .mod = mod,
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

/* The key of a frame (or of a location without frames when @f is NULL) of @rp: name and
 * paired module, or module, address and build-id. */
static uint32_t frame_key(struct diff *d, struct rep *rp, const struct profile_location *l,
			  const struct profile_frame *f, struct strbuf *sb)
{
	const struct profile *p = rp->p;
	uint32_t modstr = f && f->module ? f->module : l->module;
	const char *path = profile_str(p, modstr), *base, *bid = NULL;
	uint32_t mod = pair_module(d, rp, modstr, &base);
	const char *name = f ? profile_str(p, f->name) : NULL;
	uint8_t kind = f ? f->kind : PROFILE_FRAME_NATIVE;
	char addr_name[600];

	strbuf_reset(sb);
	if (name && *name && !is_address_name(name)) {
		strbuf_addf(sb, "N%u%s%c%" PRIu32, kind, name, 0x1f, mod);
		return key_id(d, sb->buf, name, base, mod, kind);
	}
	if (!name || !*name) {
		snprintf(addr_name, sizeof(addr_name), "%s%s0x%" PRIx64, base, *base ? "+" : "",
			 l->addr);
		name = addr_name;
	}
	/* no name: the same module (paired, with one build-id) and address, or not the same */
	strbuf_addf(sb, "A%u%" PRIu32 "+0x%" PRIx64 "%c", kind, mod, l->addr, 0x1f);
	if (*path) {
		char *k = xasprintf("build_id:%s", path);

		bid = profile_meta(p, k);
		free(k);
	}
	if (bid && *bid)
		strbuf_addstr(sb, bid);
	else
		strbuf_addf(sb, "%c%d", 0x1f, rp->side); /* no build-id: only within one side */
	return key_id(d, sb->buf, name, base, mod, kind);
}

/* The keys of location @loc of @s, outermost (the real function) first. */
static const uint32_t *loc_keys(struct diff *d, struct rep *s, uint32_t loc, size_t *n)
{
	if (s->loc_nr[loc] == NO_ID) {
		const struct profile_location *l = profile_location(s->p, loc);
		size_t nf;
		const uint32_t *fr = profile_location_frames(s->p, loc, &nf);
		struct strbuf sb = STRBUF_INIT;

		s->loc_first[loc] = (uint32_t)s->nr_loc_keys;
		ALLOC_GROW(s->loc_keys, s->nr_loc_keys + (nf ? nf : 1), s->alloc_loc_keys);
		if (!nf)
			s->loc_keys[s->nr_loc_keys++] = frame_key(d, s, l, NULL, &sb);
		for (size_t j = nf; j-- > 0;)
			s->loc_keys[s->nr_loc_keys++] =
			    frame_key(d, s, l, profile_frame(s->p, fr[j]), &sb);
		s->loc_nr[loc] = (uint32_t)(s->nr_loc_keys - s->loc_first[loc]);
		strbuf_release(&sb);
	}
	*n = s->loc_nr[loc];
	return s->loc_keys + s->loc_first[loc];
}

/* ---- groups, nodes, functions ---- */

uint32_t diff_node_new(struct diff *d, uint32_t parent, uint32_t key, const char *name,
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
	c = diff_node_new(d, parent, key, d->ki[key].name, d->ki[key].kind, d->nodes[parent].group);
	u64map_set(&d->child_map, slot, k, c);
	return c;
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
	ALLOC_GROW(d->frep, (size_t)(i + 1) * 4 * NR_REP, d->alloc_frep);
	memset(d->frep + (size_t)i * 4 * NR_REP, 0, 4 * NR_REP * sizeof(*d->frep));
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
	d->frep[(((size_t)i * 2 + side) * 2 + self) * NR_REP + d->cur_rep] += w;
}

static void node_add(struct diff *d, uint32_t node, int side, uint32_t w, uint32_t b)
{
	d->nodes[node].st.x[side] += w;
	d->nbatch[((size_t)node * 2 + side) * DIFF_BATCHES + b] += w;
}

/* One sample (or @w of them) of @stack of @rp in group @g, batch @b. */
static void add_sample(struct diff *d, struct rep *rp, uint32_t g, uint32_t stack, uint32_t w,
		       uint32_t b)
{
	int side = rp->side;
	uint32_t node = d->group_node[g], key = d->key_no_stack;
	size_t n, nk;
	const uint32_t *locs = profile_stack(rp->p, stack, &n);

	if (++d->serial == 0)
		d->serial = 1; /* 0 means "never" in fn_stamp */
	if (!n) {
		node = node_child(d, node, key);
		node_add(d, node, side, w, b);
		fn_add(d, g, key, side, 0, w, b);
	}
	for (size_t i = n; i-- > 0;) {
		const uint32_t *ks = loc_keys(d, rp, locs[i], &nk);

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
	d->grep[((size_t)g * 2 + side) * NR_REP + d->cur_rep] += w;
}

static void add_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct diff *d = arg;
	struct rep *rp = &d->s[d->cur_side].rep[d->cur_rep];

	while (count) {
		uint32_t w = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;

		add_sample(d, rp, rp->group_of[thread], stack, w, 0);
		count -= w;
	}
}

/* Set @rp up: its pairing, its threads' groups, its locations' keys (computed on first use).
 * Does it have every sample in time order? */
static int rep_open(struct diff *d, struct rep *rp)
{
	size_t nt = profile_nr_threads(rp->p), nl = profile_nr_locations(rp->p), n;
	const struct profile_sample *smp = profile_samples(rp->p, &n);
	uint64_t kept = 0;

	rp->group_of = xcalloc(nt ? nt : 1, sizeof(*rp->group_of));
	rp->loc_first = xcalloc(nl ? nl : 1, sizeof(*rp->loc_first));
	rp->loc_nr = xmalloc((nl ? nl : 1) * sizeof(*rp->loc_nr));
	memset(rp->loc_nr, 0xff, (nl ? nl : 1) * sizeof(*rp->loc_nr));
	for (uint32_t t = 0; t < nt; t++)
		rp->group_of[t] = pair_thread(d, rp, t);
	for (size_t i = 0; i < n; i++)
		kept += smp[i].weight ? smp[i].weight : 1;
	return n > 0 && kept == profile_total_samples(rp->p);
}

/* Add every sample of @side's recordings: in time order with batches when the kept samples
 * cover them (the recordings one after the other), else as aggregated counts. */
static void add_side(struct diff *d, int side)
{
	struct side *s = &d->s[side];
	size_t n;

	s->ordered = 1;
	for (size_t r = 0; r < s->nr_rep; r++) {
		s->ordered &= rep_open(d, &s->rep[r]);
		s->total += profile_total_samples(s->rep[r].p);
	}
	d->cur_side = side;
	if (!s->ordered) {
		/* no time order: aggregated counts, one batch (no design effect) */
		for (d->cur_rep = 0; d->cur_rep < (int)s->nr_rep; d->cur_rep++)
			profile_foreach_count(s->rep[d->cur_rep].p, add_count, d);
		return;
	}
	/* batches of consecutive samples per group: first the group sizes */
	for (size_t r = 0; r < s->nr_rep; r++) {
		const struct profile_sample *smp = profile_samples(s->rep[r].p, &n);

		for (size_t i = 0; i < n; i++)
			d->grank[2 * s->rep[r].group_of[smp[i].thread] + side] +=
			    smp[i].weight ? smp[i].weight : 1;
	}
	for (size_t g = 0; g < d->nr_groups; g++) {
		uint64_t nb = d->grank[2 * g + side] / DIFF_BATCH_MIN;

		d->gnb[2 * g + side] = (uint32_t)(nb > DIFF_BATCHES ? DIFF_BATCHES : nb);
		d->groups[g].samples[side] = 0; /* counted again while adding */
	}
	for (d->cur_rep = 0; d->cur_rep < (int)s->nr_rep; d->cur_rep++) {
		struct rep *rp = &s->rep[d->cur_rep];
		const struct profile_sample *smp = profile_samples(rp->p, &n);

		for (size_t i = 0; i < n; i++) {
			uint32_t g = rp->group_of[smp[i].thread],
				 w = smp[i].weight ? smp[i].weight : 1;
			uint64_t size = d->grank[2 * g + side], at = d->groups[g].samples[side];
			uint32_t nb = d->gnb[2 * g + side];

			add_sample(d, rp, g, smp[i].stack, w, nb ? (uint32_t)(at * nb / size) : 0);
		}
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

/* The sides' recordings and options of a new diff. */
static struct diff *diff_setup(const struct profile *const *p[2], const size_t nr[2],
			       const struct diff_opts *o)
{
	struct diff *d = xcalloc(1, sizeof(*d));

	if (o)
		d->o = *o;
	if (!(d->o.alpha > 0 && d->o.alpha <= 0.5))
		d->o.alpha = DIFF_DEFAULT_ALPHA;
	d->map = xcalloc(d->o.nr_map + 1, sizeof(*d->map));
	for (size_t i = 0; i < d->o.nr_map; i++) {
		d->map[i].old = xstrdup(d->o.map[i].old);
		d->map[i].new = xstrdup(d->o.map[i].new);
	}
	d->o.map = d->map;
	for (int s = 0; s < 2; s++) {
		d->label[s] = xstrdup(o && o->label[s] ? o->label[s] : s ? "NEW" : "BASE");
		d->o.label[s] = d->label[s];
		d->s[s].nr_rep = nr[s] > NR_REP ? NR_REP : nr[s] ? nr[s] : 1;
		for (size_t r = 0; r < d->s[s].nr_rep; r++) {
			d->s[s].rep[r].p = nr[s] ? p[s][r] : NULL;
			d->s[s].rep[r].side = s;
			d->s[s].rep[r].idx = (int)r;
		}
	}
	strarena_init(&d->arena);
	return d;
}

struct diff *diff_new_replicates(const struct profile *const *base, size_t nr_base,
				 const struct profile *const *new, size_t nr_new,
				 const struct diff_opts *o)
{
	const struct profile *const *p[2] = {base, new};
	const size_t nr[2] = {nr_base, nr_new};
	struct diff *d = diff_setup(p, nr, o);

	/* both sides' main executables are known before any module is paired */
	for (int s = 0; s < 2; s++)
		for (size_t r = 0; r < d->s[s].nr_rep; r++)
			pair_rep_init(d, &d->s[s].rep[r]);
	d->key_no_stack = key_id(d, "P[no stack]", "[no stack]", "", NO_ID, PROFILE_FRAME_PSEUDO);
	diff_node_new(d, 0, NO_ID, "all", DIFF_NODE_ROOT, 0);
	add_side(d, DIFF_BASE);
	add_side(d, DIFF_NEW);
	pair_count(d);
	stat_run_tests(d);
	sort_all(d);
	return d;
}

struct diff *diff_new(const struct profile *base, const struct profile *new,
		      const struct diff_opts *o)
{
	return diff_new_replicates(&base, 1, &new, 1, o);
}

void diff_free(struct diff *d)
{
	if (!d)
		return;
	for (int s = 0; s < 2; s++) {
		free(d->label[s]);
		for (size_t r = 0; r < d->s[s].nr_rep; r++) {
			struct rep *rp = &d->s[s].rep[r];

			u64map_release(&rp->mod_of);
			free(rp->group_of);
			free(rp->loc_first);
			free(rp->loc_nr);
			free(rp->loc_keys);
		}
	}
	for (size_t i = 0; i < d->o.nr_map; i++) {
		free((char *)d->map[i].old);
		free((char *)d->map[i].new);
	}
	free(d->map);
	strarena_release(&d->arena);
	intern_release(&d->keys);
	free(d->ki);
	intern_release(&d->mod_keys);
	free(d->mods);
	intern_release(&d->group_keys);
	free(d->groups);
	free(d->group_node);
	free(d->gbatch);
	free(d->gnb);
	free(d->grank);
	free(d->grep);
	free(d->gdisp);
	free(d->gdf);
	free(d->groups_sorted);
	free(d->nodes);
	free(d->node_key);
	free(d->nbatch);
	u64map_release(&d->child_map);
	free(d->fns);
	free(d->fn_key);
	free(d->fn_stamp);
	free(d->fbatch);
	free(d->frep);
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

uint64_t diff_compared(const struct diff *d, enum diff_side side)
{
	return d->s[side].compared;
}

size_t diff_nr_replicates(const struct diff *d, enum diff_side side)
{
	return d->s[side].nr_rep;
}

size_t diff_nr_modules(const struct diff *d)
{
	return d->mod_keys.nr;
}

const struct diff_module *diff_module(const struct diff *d, uint32_t idx)
{
	return idx < d->mod_keys.nr ? &d->mods[idx] : NULL;
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
	return profile_meta(d->s[side].rep[0].p, key);
}

const struct profile *diff_profile(const struct diff *d, enum diff_side side)
{
	return d->s[side].rep[0].p;
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

int diff_rule_matches(const struct diff *d, const struct diff_rule *r)
{
	for (size_t i = 0; i < d->nr_fns; i++)
		if (!regexec(&r->re, d->fns[i].name, 0, NULL, 0))
			return 1;
	return 0;
}

size_t diff_rule_family(const struct diff *d, const struct diff_rule *r)
{
	size_t m = 0;

	for (size_t i = 0; i < d->nr_fns; i++)
		m += d->fns[i].total.tested && d->fns[i].total.se > 0 &&
		     !regexec(&r->re, d->fns[i].name, 0, NULL, 0);
	return m;
}

double diff_rule_margin(const struct diff *d, const struct diff_fn *fn, size_t family)
{
	/* two-sided, as the table, although a rule only asks whether a function grew: the
	 * one-sided margin tripped on one of 20 same-build trials of make bench-diff on a loaded
	 * machine (the spread between runs moves with the load) */
	return diff_crit2(d->o.alpha / (double)(family ? family : 1), fn->total.df) * fn->total.se;
}

int diff_rule_trips_at(const struct diff *d, const struct diff_rule *r, const struct diff_fn *fn,
		       size_t family)
{
	const struct diff_stat *st = &fn->total;

	return r->text && st->tested && st->se > 0 &&
	       st->change - diff_rule_margin(d, fn, family) > r->points / 100 &&
	       !regexec(&r->re, fn->name, 0, NULL, 0);
}
