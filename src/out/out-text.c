/* Text call tree writer: perf report --stdio --children style trees (total and self per node),
 * one per thread or merged, each followed by out_top_write()'s tables for the same samples. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/output.h"
#include "perch/out/writers.h"
#include "perch/profile/profile.h"

#define TEXT_NO_STACK "[no stack]"

struct tnode {
	uint32_t label;		      /* index into the labels */
	uint32_t parent, child, next; /* node indexes, 0 = none (node 0 is the root) */
	uint64_t total, self;
};

struct text {
	const struct profile *p;
	char **labels; /* cleaned display names, unique */
	size_t nr_labels, alloc_labels;
	struct u64map label_map; /* hash of a label -> index (chained in label_next) */
	uint32_t *label_next;
	size_t alloc_next;
	uint32_t *loc_first, *loc_nr; /* per location: its labels, root first */
	uint32_t *loc_l;
	size_t nr_loc_l, alloc_loc_l;
	/* the tree being built */
	struct tnode *n;
	size_t nr_n, alloc_n;
	struct u64map child_map; /* parent << 32 | label -> node */
	double min_percent;
};

/* The label index of @s (taken over), added when new. */
static uint32_t label_id(struct text *t, char *s)
{
	uint64_t h = u64map_hash_str(s);
	size_t slot;
	uint32_t idx = u64map_find(&t->label_map, h, &slot);

	if (idx == UINT32_MAX) {
		u64map_set(&t->label_map, slot, h, (uint32_t)t->nr_labels);
	} else {
		for (;; idx = t->label_next[idx]) {
			if (!strcmp(t->labels[idx], s)) {
				free(s);
				return idx;
			}
			if (t->label_next[idx] == UINT32_MAX)
				break;
		}
		t->label_next[idx] = (uint32_t)t->nr_labels;
	}
	ALLOC_GROW(t->labels, t->nr_labels + 1, t->alloc_labels);
	ALLOC_GROW(t->label_next, t->nr_labels + 1, t->alloc_next);
	t->labels[t->nr_labels] = s;
	t->label_next[t->nr_labels] = UINT32_MAX;
	return (uint32_t)t->nr_labels++;
}

/* Append @s with control characters as '_' and invalid UTF-8 as U+FFFD. */
static void add_clean(struct strbuf *sb, const char *s)
{
	size_t step;

	for (; s && *s; s += step) {
		uint32_t cp = json_utf8_next(s, &step);

		json_add_utf8(sb, cp < 0x20 || cp == 0x7f ? '_' : cp);
	}
}

/* "name (module)" the way out_top_write() shows a function; "[inlined]" for inlined frames,
 * "(tail call)" for tail-call frames. */
static char *frame_label(const struct profile *p, const struct profile_frame *f, uint32_t module)
{
	struct strbuf sb = STRBUF_INIT;
	const char *name = f ? profile_str(p, f->name) : NULL, *mod = profile_str(p, module);

	if (name && *name)
		add_clean(&sb, name);
	else
		strbuf_addstr(&sb, "[unknown]");
	if (mod && *mod) {
		strbuf_addstr(&sb, " (");
		add_clean(&sb, path_base(mod));
		strbuf_addch(&sb, ')');
	}
	if (f && f->inlined)
		strbuf_addstr(&sb, " [inlined]");
	if (f && f->tailcall)
		strbuf_addstr(&sb, " (tail call)");
	return strbuf_detach(&sb, NULL);
}

/* The labels of location @loc, root first (outermost inline frame first). */
static const uint32_t *loc_labels(struct text *t, uint32_t loc, size_t *n)
{
	const struct profile_location *l;
	const uint32_t *fr;
	size_t nf, i;

	if (t->loc_nr[loc] == UINT32_MAX) {
		l = profile_location(t->p, loc);
		fr = profile_location_frames(t->p, loc, &nf);
		t->loc_first[loc] = (uint32_t)t->nr_loc_l;
		ALLOC_GROW(t->loc_l, t->nr_loc_l + (nf ? nf : 1), t->alloc_loc_l);
		if (!nf) {
			const char *mod = l ? profile_str(t->p, l->module) : NULL;
			struct strbuf sb = STRBUF_INIT;

			if (mod && *mod) {
				strbuf_addch(&sb, '[');
				add_clean(&sb, path_base(mod));
				strbuf_addf(&sb, "+0x%" PRIx64 "]", l ? l->addr : 0);
			} else {
				strbuf_addf(&sb, "0x%" PRIx64, l ? l->addr : 0);
			}
			t->loc_l[t->nr_loc_l++] = label_id(t, strbuf_detach(&sb, NULL));
		}
		for (i = nf; i-- > 0;) {
			const struct profile_frame *f = profile_frame(t->p, fr[i]);
			uint32_t mod = f && f->module ? f->module : l ? l->module : 0;

			t->loc_l[t->nr_loc_l++] = label_id(t, frame_label(t->p, f, mod));
		}
		t->loc_nr[loc] = (uint32_t)(t->nr_loc_l - t->loc_first[loc]);
	}
	*n = t->loc_nr[loc];
	return t->loc_l + t->loc_first[loc];
}

static uint32_t node_child(struct text *t, uint32_t parent, uint32_t label)
{
	uint64_t key = (uint64_t)parent << 32 | label;
	size_t slot;
	uint32_t c = u64map_find(&t->child_map, key, &slot);

	if (c != UINT32_MAX)
		return c;
	ALLOC_GROW(t->n, t->nr_n + 1, t->alloc_n);
	t->n[t->nr_n] =
	    (struct tnode){.label = label, .parent = parent, .next = t->n[parent].child};
	t->n[parent].child = (uint32_t)t->nr_n;
	u64map_set(&t->child_map, slot, key, (uint32_t)t->nr_n);
	return (uint32_t)t->nr_n++;
}

static void tree_reset(struct text *t)
{
	u64map_release(&t->child_map);
	ALLOC_GROW(t->n, 1, t->alloc_n);
	t->n[0] = (struct tnode){0};
	t->nr_n = 1;
}

static void tree_add(struct text *t, uint32_t stack, uint64_t count)
{
	size_t n, i, k, nl;
	const uint32_t *locs = profile_stack(t->p, stack, &n);
	uint32_t node = 0;

	t->n[0].total += count;
	if (!n) {
		node = node_child(t, 0, label_id(t, xstrdup(TEXT_NO_STACK)));
		t->n[node].total += count;
	}
	for (i = n; i-- > 0;) {
		const uint32_t *ls = loc_labels(t, locs[i], &nl);

		for (k = 0; k < nl; k++) {
			node = node_child(t, node, ls[k]);
			t->n[node].total += count;
		}
	}
	t->n[node].self += count;
}

struct by_thread {
	struct text *t;
	uint32_t thread; /* UINT32_MAX: all */
};

static void add_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct by_thread *bt = arg;

	if (bt->thread == UINT32_MAX || bt->thread == thread)
		tree_add(bt->t, stack, count);
}

static int cmp_node(const void *a, const void *b, void *arg)
{
	const struct text *t = arg;
	const struct tnode *x = &t->n[*(const uint32_t *)a], *y = &t->n[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(t->labels[x->label], t->labels[y->label]);
}

static int shown(const struct text *t, uint64_t total, uint64_t tree_total)
{
	return (double)total * 100.0 >= t->min_percent * (double)tree_total;
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* The shown children of @node, sorted; *@nr set. Caller frees. */
static uint32_t *children(struct text *t, uint32_t node, uint64_t tree_total, size_t *nr)
{
	uint32_t *v = NULL, c;
	size_t alloc = 0;

	*nr = 0;
	for (c = t->n[node].child; c; c = t->n[c].next) {
		if (!shown(t, t->n[c].total, tree_total))
			continue;
		ALLOC_GROW(v, *nr + 1, alloc);
		v[(*nr)++] = c;
	}
	if (*nr)
		qsort_r(v, *nr, sizeof(*v), cmp_node, t);
	return v;
}

static void print_node(struct text *t, FILE *f, uint32_t node, uint64_t tree_total,
		       struct strbuf *prefix, int depth, int last)
{
	const struct tnode *nd = &t->n[node];
	size_t nr, i, keep = prefix->len;
	uint32_t *kids;

	fprintf(f, "%8.2f%% %8.2f%% %9" PRIu64 "  %s%s%s\n", pct(nd->total, tree_total),
		pct(nd->self, tree_total), nd->total, prefix->buf,
		depth ? (last ? "`- " : "|- ") : "", t->labels[nd->label]);
	if (depth)
		strbuf_addstr(prefix, last ? "   " : "|  ");
	kids = children(t, node, tree_total, &nr);
	for (i = 0; i < nr; i++)
		print_node(t, f, kids[i], tree_total, prefix, depth + 1, i + 1 == nr);
	free(kids);
	strbuf_setlen(prefix, keep);
}

static void print_tree(struct text *t, FILE *f)
{
	struct strbuf prefix = STRBUF_INIT;
	uint64_t total = t->n[0].total;
	size_t nr, i, hidden = 0;
	uint32_t *roots;

	for (i = 1; i < t->nr_n; i++)
		hidden += !shown(t, t->n[i].total, total);
	if (hidden)
		fprintf(f, "# %zu node%s under %.2f%% not shown\n", hidden, hidden > 1 ? "s" : "",
			t->min_percent);
	fprintf(f, "#\n#    Total      Self   Samples  Call tree\n");
	roots = children(t, 0, total, &nr);
	for (i = 0; i < nr; i++)
		print_node(t, f, roots[i], total, &prefix, 0, i + 1 == nr);
	free(roots);
	strbuf_release(&prefix);
}

/* A copy of the counts of @thread (UINT32_MAX: all threads) for out_top_write(), with names
 * cleaned the way the tree shows them. */
struct copy {
	const struct profile *p;
	struct profile *q;
	uint32_t thread;
	uint32_t *qthread; /* thread in p -> thread in q, UINT32_MAX = not yet */
	uint32_t *loc_map; /* location in p -> location in q, UINT32_MAX = not yet */
	uint32_t *locs;
	size_t alloc_locs;
};

static uint32_t copy_str(struct copy *c, uint32_t id)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t qid;

	if (!id)
		return 0;
	add_clean(&sb, profile_str(c->p, id));
	qid = profile_intern_str(c->q, sb.buf);
	strbuf_release(&sb);
	return qid;
}

static void copy_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct copy *c = arg;
	size_t n, i, nf, k;
	const uint32_t *locs = profile_stack(c->p, stack, &n);
	uint32_t qs;

	if (c->thread != UINT32_MAX && thread != c->thread)
		return;
	if (c->qthread[thread] == UINT32_MAX) {
		c->qthread[thread] = profile_thread_copy(c->q, c->p, thread);
	}
	ALLOC_GROW(c->locs, n + 1, c->alloc_locs);
	for (i = 0; i < n; i++) {
		if (c->loc_map[locs[i]] == UINT32_MAX) {
			const struct profile_location *l = profile_location(c->p, locs[i]);
			const uint32_t *fr = profile_location_frames(c->p, locs[i], &nf);
			struct profile_frame *qf = xcalloc(nf + 1, sizeof(*qf));

			for (k = 0; k < nf; k++) {
				const struct profile_frame *f = profile_frame(c->p, fr[k]);

				if (!f)
					continue;
				qf[k] = *f;
				qf[k].name = copy_str(c, f->name);
				qf[k].file = copy_str(c, f->file);
				qf[k].module = copy_str(c, f->module);
			}
			c->loc_map[locs[i]] = profile_intern_location(
			    c->q, copy_str(c, l ? l->module : 0), l ? l->addr : 0, qf, nf);
			free(qf);
		}
		c->locs[i] = c->loc_map[locs[i]];
	}
	qs = profile_intern_stack(c->q, c->locs, n);
	for (; count > UINT32_MAX; count -= UINT32_MAX)
		profile_add_weighted(c->q, c->qthread[thread], qs, 0, 0, UINT32_MAX);
	if (count)
		profile_add_weighted(c->q, c->qthread[thread], qs, 0, 0, (uint32_t)count);
}

static int top_of_thread(const struct profile *p, const struct output_opts *o, uint32_t thread,
			 FILE *f)
{
	struct copy c = {.p = p, .q = profile_new(), .thread = thread};
	size_t nr_locs = profile_nr_locations(p), nr_threads = profile_nr_threads(p);
	int ret;

	c.qthread = xmalloc((nr_threads + 1) * sizeof(*c.qthread));
	memset(c.qthread, 0xff, (nr_threads + 1) * sizeof(*c.qthread));
	c.loc_map = xmalloc((nr_locs + 1) * sizeof(*c.loc_map));
	memset(c.loc_map, 0xff, (nr_locs + 1) * sizeof(*c.loc_map));
	profile_foreach_count(p, copy_count, &c);
	ret = out_top_write(c.q, o, f);
	free(c.loc_map);
	free(c.qthread);
	free(c.locs);
	profile_free(c.q);
	return ret;
}

struct tcount {
	const struct profile *p;
	uint64_t *v; /* samples per thread */
};

static void sum_thread(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct tcount *tc = arg;

	(void)stack;
	tc->v[thread] += count;
}

static int cmp_thread(const void *a, const void *b, void *arg)
{
	const struct tcount *tc = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	pid_t tx = profile_thread_get(tc->p, x)->tid, ty = profile_thread_get(tc->p, y)->tid;

	if (tc->v[x] != tc->v[y])
		return tc->v[x] > tc->v[y] ? -1 : 1;
	return (tx > ty) - (tx < ty);
}

static void print_thread_head(const struct profile *p, FILE *f, uint32_t thread, uint64_t n,
			      uint64_t total)
{
	const struct profile_thread *th = profile_thread_get(p, thread);
	const char *name = profile_str(p, th->name);
	struct strbuf sb = STRBUF_INIT;

	if (name && *name)
		add_clean(&sb, name);
	else
		strbuf_addstr(&sb, "[unknown]");
	if (th->pid && profile_multi_process(p)) {
		const char *pn = profile_process_name(p, th->pid);

		/* several processes (followed children): say whose thread it is */
		strbuf_addf(&sb, " of process %s-%d", pn && *pn ? pn : "[unknown]", (int)th->pid);
	}
	fprintf(f, "\n# thread %s (tid %d): %" PRIu64 " sample%s, %.2f%% of %" PRIu64 "\n", sb.buf,
		(int)th->tid, n, n == 1 ? "" : "s", pct(n, total), total);
	strbuf_release(&sb);
}

int out_text_write_opts(const struct profile *p, const struct output_opts *o,
			const struct out_text_opts *to, FILE *f)
{
	struct text t = {.p = p};
	size_t nr_locs = profile_nr_locations(p), nr_threads = profile_nr_threads(p), i;
	uint64_t total = profile_total_samples(p), period = out_period_ns(p);
	struct tcount tc = {p, xcalloc(nr_threads + 1, sizeof(uint64_t))};
	uint32_t *order = xmalloc((nr_threads + 1) * sizeof(*order)), nr_order = 0;
	const char *pid = profile_meta(p, "pid"), *comm = profile_meta(p, "comm");
	struct strbuf sb = STRBUF_INIT;
	int ret = 0;

	t.min_percent = to && to->min_percent >= 0 ? to->min_percent : OUT_TEXT_DEFAULT_MIN_PERCENT;
	t.loc_first = xcalloc(nr_locs + 1, sizeof(*t.loc_first));
	t.loc_nr = xmalloc((nr_locs + 1) * sizeof(*t.loc_nr));
	memset(t.loc_nr, 0xff, (nr_locs + 1) * sizeof(*t.loc_nr));
	profile_foreach_count(p, sum_thread, &tc);
	for (i = 0; i < nr_threads; i++)
		if (tc.v[i])
			order[nr_order++] = (uint32_t)i;
	if (nr_order)
		qsort_r(order, nr_order, sizeof(*order), cmp_thread, &tc);

	add_clean(&sb, comm);
	fprintf(f, "# perch call tree: %" PRIu64 " samples in %u thread%s", total, nr_order,
		nr_order == 1 ? "" : "s");
	if (pid && *pid)
		fprintf(f, ", pid %s", pid);
	if (sb.len)
		fprintf(f, " (%s)", sb.buf);
	fprintf(f, ", period %" PRIu64 " us\n", period / 1000);
	fprintf(f,
		"# Total: samples with the function on their path (perf's Children); Self: "
		"samples ending in it;\n# percentages of the %s samples; children by Total\n",
		to && to->merged ? "profile's" : "thread's");
	strbuf_release(&sb);

	if (to && to->merged) {
		struct by_thread bt = {&t, UINT32_MAX};

		fprintf(f, "\n# all threads: %" PRIu64 " samples\n", total);
		tree_reset(&t);
		profile_foreach_count(p, add_count, &bt);
		print_tree(&t, f);
		fputc('\n', f);
		ret = top_of_thread(p, o, UINT32_MAX, f);
	}
	for (i = 0; !(to && to->merged) && i < nr_order && !ret; i++) {
		struct by_thread bt = {&t, order[i]};

		print_thread_head(p, f, order[i], tc.v[order[i]], total);
		tree_reset(&t);
		profile_foreach_count(p, add_count, &bt);
		print_tree(&t, f);
		fputc('\n', f);
		ret = top_of_thread(p, o, order[i], f);
	}
	if (!ret && fflush(f))
		ret = -errno;
	else if (!ret && ferror(f))
		ret = -EIO;
	for (i = 0; i < t.nr_labels; i++)
		free(t.labels[i]);
	free(t.labels);
	free(t.label_next);
	u64map_release(&t.label_map);
	u64map_release(&t.child_map);
	free(t.loc_first);
	free(t.loc_nr);
	free(t.loc_l);
	free(t.n);
	free(tc.v);
	free(order);
	return ret;
}

int out_text_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	return out_text_write_opts(p, o, NULL, f);
}
