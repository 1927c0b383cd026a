/* "top" text writer: the hottest functions by self (leaf) and total (anywhere in the stack,
 * once per sample) share of all samples. A function is a (name, module) pair. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/profile/profile.h"

#define TOP_DEFAULT 20
/* The name id of the pseudo function that counts samples with an empty stack. */
#define NAME_NO_STACK UINT32_MAX

struct top_fn {
	uint32_t name, module; /* string ids */
	uint64_t self, total;
	uint32_t mark; /* last stack (+1) counted in total: once per sample */
	char *label;   /* "name (module)", cleaned; made before sorting */
};

struct top {
	const struct profile *p;
	uint64_t *stack_count; /* samples per stack, all threads together */
	struct top_fn *fns;
	size_t nr, alloc;
	uint32_t *slot; /* open addressing: fn index + 1, 0 = empty */
	size_t mask;
};

static uint64_t fn_hash(uint32_t name, uint32_t module)
{
	uint64_t x = (uint64_t)name << 32 | module;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void top_grow(struct top *t)
{
	size_t cap = t->slot ? (t->mask + 1) * 2 : 256, i;

	free(t->slot);
	t->slot = xcalloc(cap, sizeof(*t->slot));
	t->mask = cap - 1;
	for (i = 0; i < t->nr; i++) {
		size_t j = (size_t)fn_hash(t->fns[i].name, t->fns[i].module) & t->mask;

		while (t->slot[j])
			j = (j + 1) & t->mask;
		t->slot[j] = (uint32_t)i + 1;
	}
}

static struct top_fn *top_fn_get(struct top *t, uint32_t name, uint32_t module)
{
	size_t j;

	if (!t->slot || (t->nr + 1) * 2 > t->mask + 1)
		top_grow(t);
	for (j = (size_t)fn_hash(name, module) & t->mask; t->slot[j]; j = (j + 1) & t->mask) {
		struct top_fn *fn = &t->fns[t->slot[j] - 1];

		if (fn->name == name && fn->module == module)
			return fn;
	}
	ALLOC_GROW(t->fns, t->nr + 1, t->alloc);
	memset(&t->fns[t->nr], 0, sizeof(t->fns[t->nr]));
	t->fns[t->nr].name = name;
	t->fns[t->nr].module = module;
	t->slot[j] = (uint32_t)++t->nr;
	return &t->fns[t->nr - 1];
}

static void add_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct top *t = arg;

	(void)thread;
	t->stack_count[stack] += count;
}

/* The function of frame @i of location @loc (module from the frame, else the location). */
static struct top_fn *frame_fn(struct top *t, uint32_t loc_id, size_t i)
{
	const struct profile_location *loc = profile_location(t->p, loc_id);
	const struct profile_frame *f = NULL;
	const uint32_t *frames;
	size_t n;

	frames = profile_location_frames(t->p, loc_id, &n);
	if (i < n)
		f = profile_frame(t->p, frames[i]);
	if (!f) /* a location without frames: "[unknown]" in its module */
		return top_fn_get(t, 0, loc ? loc->module : 0);
	return top_fn_get(t, f->name, f->module ? f->module : loc->module);
}

static void count_stack(struct top *t, uint32_t stack, uint64_t count)
{
	const uint32_t *locs;
	size_t n, i, j, nf;

	locs = profile_stack(t->p, stack, &n);
	if (!n) {
		struct top_fn *fn = top_fn_get(t, NAME_NO_STACK, 0);

		fn->self += count;
		fn->total += count;
		return;
	}
	/* self: the innermost frame of the leaf location */
	frame_fn(t, locs[0], 0)->self += count;
	for (i = 0; i < n; i++) {
		profile_location_frames(t->p, locs[i], &nf);
		for (j = 0; j < (nf ? nf : 1); j++) {
			struct top_fn *fn = frame_fn(t, locs[i], j);

			if (fn->mark != stack + 1) { /* recursion counts once */
				fn->mark = stack + 1;
				fn->total += count;
			}
		}
	}
}

static void add_clean(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		strbuf_addch(sb, (char)(c < 0x20 || c == 0x7f ? '_' : c));
	}
}

static char *fn_label(const struct profile *p, const struct top_fn *fn)
{
	struct strbuf sb = STRBUF_INIT;
	const char *name = fn->name == NAME_NO_STACK ? "[no stack]" : profile_str(p, fn->name);
	const char *mod = profile_str(p, fn->module), *slash;

	if (name && *name)
		add_clean(&sb, name);
	else
		strbuf_addstr(&sb, "[unknown]");
	if (mod && *mod && strcmp(mod, "[perch]")) { /* perch's own wait frames need no module */
		slash = strrchr(mod, '/');
		strbuf_addstr(&sb, " (");
		add_clean(&sb, slash && slash[1] ? slash + 1 : mod);
		strbuf_addch(&sb, ')');
	}
	return strbuf_detach(&sb, NULL);
}

static int cmp_self(const void *a, const void *b)
{
	const struct top_fn *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->label, y->label);
}

static int cmp_total(const void *a, const void *b)
{
	const struct top_fn *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->label, y->label);
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

static void print_table(FILE *f, const struct top *t, size_t limit, uint64_t total, int by_self)
{
	size_t i, shown = 0;

	fprintf(f, "\ntop %zu functions by %s:\n", limit, by_self ? "self" : "total");
	fprintf(f, "%7s %7s %9s %9s  %s\n", "self%", "total%", "self", "total",
		"function (module)");
	for (i = 0; i < t->nr && shown < limit; i++) {
		const struct top_fn *fn = &t->fns[i];

		if (by_self && !fn->self)
			break; /* sorted: only functions that were never a leaf remain */
		fprintf(f, "%7.1f %7.1f %9" PRIu64 " %9" PRIu64 "  %s\n", pct(fn->self, total),
			pct(fn->total, total), fn->self, fn->total, fn->label);
		shown++;
	}
}

/* Every function's self and total counts of @p into @t, labelled. */
static void top_build(struct top *t, const struct profile *p)
{
	size_t nr_stacks = profile_nr_stacks(p), i;

	t->p = p;
	t->stack_count = xcalloc(nr_stacks ? nr_stacks : 1, sizeof(*t->stack_count));
	profile_foreach_count(p, add_count, t);
	for (i = 0; i < nr_stacks; i++)
		if (t->stack_count[i])
			count_stack(t, (uint32_t)i, t->stack_count[i]);
	for (i = 0; i < t->nr; i++)
		t->fns[i].label = fn_label(p, &t->fns[i]);
}

static void top_release(struct top *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->fns[i].label);
	free(t->fns);
	free(t->slot);
	free(t->stack_count);
}

void out_top_brief(const struct profile *p, size_t n, struct strbuf *sb)
{
	struct top t = {0};
	uint64_t total = profile_total_samples(p);

	top_build(&t, p);
	qsort(t.fns, t.nr, sizeof(*t.fns), cmp_self);
	for (size_t i = 0; i < t.nr && i < n && t.fns[i].self; i++)
		strbuf_addf(sb, "%s%s %.1f%%", i ? ", " : "", t.fns[i].label,
			    pct(t.fns[i].self, total));
	top_release(&t);
}

int out_top_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct top t = {0};
	uint64_t total = profile_total_samples(p);
	size_t limit = o && o->top > 0 ? (size_t)o->top : TOP_DEFAULT;
	int ret = 0;

	top_build(&t, p);

	fprintf(f, "total samples: %" PRIu64 "\n", total);
	if (t.nr) {
		qsort(t.fns, t.nr, sizeof(*t.fns), cmp_self);
		print_table(f, &t, limit, total, 1);
		qsort(t.fns, t.nr, sizeof(*t.fns), cmp_total);
		print_table(f, &t, limit, total, 0);
	}
	if (fflush(f))
		ret = -errno;
	else if (ferror(f))
		ret = -EIO;
	top_release(&t);
	return ret;
}
