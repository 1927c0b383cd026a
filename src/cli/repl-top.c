/* The live table of `top` (REPL and `perch top`): per function, its share of the samples of
 * the last refresh interval (%Own: innermost frame, %Total: anywhere in the stack, once per
 * sample) and the time it accumulated since top started (OwnTime, TotalTime: samples / rate),
 * like py-spy top. Counts come from the recording's profile: the interval is the difference
 * of the per-stack counts between two refreshes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/cli/repl.h"
#include "perch/profile/profile.h"

#define NAME_NO_STACK UINT32_MAX

struct top_fn {
	uint32_t name, module;	/* string ids */
	uint64_t self, total;	/* since the start */
	uint64_t iself, itotal; /* in the last interval */
	uint32_t mark;		/* last stack (+1) counted: once per sample */
};

struct repl_top {
	uint64_t *prev; /* per stack: its count at the last refresh */
	size_t nr_prev;
	uint64_t *cur;
	size_t nr_cur;
	uint64_t total, interval; /* samples */
	struct top_fn *fns;
	size_t nr_fns, alloc_fns;
	struct u64map idx;
};

struct repl_top *repl_top_new(void)
{
	return xcalloc(1, sizeof(struct repl_top));
}

void repl_top_free(struct repl_top *t)
{
	if (!t)
		return;
	free(t->prev);
	free(t->cur);
	free(t->fns);
	u64map_release(&t->idx);
	free(t);
}

static struct top_fn *fn_get(struct repl_top *t, uint32_t name, uint32_t module)
{
	/* string ids are below 2^32 - 1; UINT64_MAX is never made */
	uint64_t key = (uint64_t)name << 32 | module;
	size_t slot;
	uint32_t i = u64map_find(&t->idx, key, &slot);

	if (i != UINT32_MAX)
		return &t->fns[i];
	ALLOC_GROW(t->fns, t->nr_fns + 1, t->alloc_fns);
	memset(&t->fns[t->nr_fns], 0, sizeof(t->fns[0]));
	t->fns[t->nr_fns].name = name;
	t->fns[t->nr_fns].module = module;
	u64map_set(&t->idx, slot, key, (uint32_t)t->nr_fns);
	return &t->fns[t->nr_fns++];
}

static void add_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct repl_top *t = arg;

	(void)thread;
	if (stack < t->nr_cur)
		t->cur[stack] += count;
}

/* The function of frame @i of location @loc (module from the frame, else the location). */
static struct top_fn *frame_fn(struct repl_top *t, const struct profile *p, uint32_t loc_id,
			       size_t i)
{
	const struct profile_location *loc = profile_location(p, loc_id);
	const struct profile_frame *f = NULL;
	size_t n;
	const uint32_t *frames = profile_location_frames(p, loc_id, &n);

	if (i < n)
		f = profile_frame(p, frames[i]);
	if (!f)
		return fn_get(t, 0, loc ? loc->module : 0);
	return fn_get(t, f->name, f->module ? f->module : (loc ? loc->module : 0));
}

static void count_stack(struct repl_top *t, const struct profile *p, uint32_t stack, uint64_t all,
			uint64_t recent)
{
	size_t n, nf;
	const uint32_t *locs = profile_stack(p, stack, &n);
	struct top_fn *fn;

	if (!n) {
		fn = fn_get(t, NAME_NO_STACK, 0);
		fn->self += all;
		fn->total += all;
		fn->iself += recent;
		fn->itotal += recent;
		return;
	}
	fn = frame_fn(t, p, locs[0], 0);
	fn->self += all;
	fn->iself += recent;
	for (size_t i = 0; i < n; i++) {
		profile_location_frames(p, locs[i], &nf);
		for (size_t j = 0; j < (nf ? nf : 1); j++) {
			fn = frame_fn(t, p, locs[i], j);
			if (fn->mark == stack + 1)
				continue; /* recursion counts once */
			fn->mark = stack + 1;
			fn->total += all;
			fn->itotal += recent;
		}
	}
}

void repl_top_update(struct repl_top *t, const struct profile *p)
{
	size_t nr = profile_nr_stacks(p);

	free(t->cur);
	t->nr_cur = nr;
	t->cur = xcalloc(nr ? nr : 1, sizeof(*t->cur));
	profile_foreach_count(p, add_count, t);
	for (size_t i = 0; i < t->nr_fns; i++) {
		t->fns[i].self = t->fns[i].total = t->fns[i].iself = t->fns[i].itotal = 0;
		t->fns[i].mark = 0;
	}
	t->total = t->interval = 0;
	for (size_t i = 0; i < nr; i++) {
		uint64_t before = i < t->nr_prev ? t->prev[i] : 0;
		uint64_t recent = t->cur[i] > before ? t->cur[i] - before : 0;

		if (!t->cur[i])
			continue;
		t->total += t->cur[i];
		t->interval += recent;
		count_stack(t, p, (uint32_t)i, t->cur[i], recent);
	}
	/* the next interval starts here */
	free(t->prev);
	t->prev = t->cur;
	t->nr_prev = t->nr_cur;
	t->cur = NULL;
	t->nr_cur = 0;
}

uint64_t repl_top_interval_samples(const struct repl_top *t)
{
	return t->interval;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct top_fn *x = a, *y = b;

	if (x->iself != y->iself)
		return x->iself > y->iself ? -1 : 1;
	if (x->itotal != y->itotal)
		return x->itotal > y->itotal ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->module < y->module ? -1 : x->module > y->module;
}

static void add_clean(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		strbuf_addch(sb, (char)(c < 0x20 || c == 0x7f ? '_' : c));
	}
}

static void label(const struct profile *p, const struct top_fn *fn, struct strbuf *sb)
{
	const char *name = fn->name == NAME_NO_STACK ? "[no stack]" : profile_str(p, fn->name);
	const char *mod = fn->name == NAME_NO_STACK ? NULL : profile_str(p, fn->module);

	strbuf_reset(sb);
	if (name && *name)
		add_clean(sb, name);
	else
		strbuf_addstr(sb, "[unknown]");
	if (mod && *mod) {
		strbuf_addstr(sb, " (");
		add_clean(sb, path_base(mod));
		strbuf_addch(sb, ')');
	}
}

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

void repl_top_print(struct repl_top *t, const struct profile *p, double hz, size_t rows, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;
	size_t shown = 0;

	if (t->nr_fns) /* no sample yet: no array */
		qsort(t->fns, t->nr_fns, sizeof(*t->fns), cmp_fn);
	/* the order changed: rebuild the index */
	u64map_release(&t->idx);
	for (size_t i = 0; i < t->nr_fns; i++) {
		size_t slot;
		uint64_t key = (uint64_t)t->fns[i].name << 32 | t->fns[i].module;

		u64map_find(&t->idx, key, &slot);
		u64map_set(&t->idx, slot, key, (uint32_t)i);
	}
	fprintf(f, "%7s %7s %10s %10s  %s\n", "%Own", "%Total", "OwnTime", "TotalTime",
		"Function (module)");
	for (size_t i = 0; i < t->nr_fns && shown < rows; i++) {
		const struct top_fn *fn = &t->fns[i];

		if (!fn->total)
			continue;
		label(p, fn, &sb);
		fprintf(f, "%6.1f%% %6.1f%% %9.2fs %9.2fs  %s\n", pct(fn->iself, t->interval),
			pct(fn->itotal, t->interval), (double)fn->self / hz, (double)fn->total / hz,
			sb.buf);
		shown++;
	}
	strbuf_release(&sb);
}
