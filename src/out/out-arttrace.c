/* Android ART method trace writer (docs/design/formats.md section 6): the non-streaming ".trace"
 * layout (text header, then 10-byte version 2 records), built the way ART's sampling tracer does
 * it: each sample of a thread is diffed against that thread's previous one. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/writers.h"
#include "perch/profile/profile.h"

#define ART_MAGIC	 0x574f4c53u /* "SLOW" */
#define ART_VERSION	 2
#define ART_HEADER_SIZE	 32
#define ART_RECORD_SIZE	 10
#define ART_ACTION_ENTER 0
#define ART_ACTION_EXIT	 1
#define ART_MAX_TID	 0xffff

/* A method: what a frame is reduced to. Key: (kind, module, name), or (module, addr) for a
 * location without frames. */
struct art_method {
	uint32_t module, name;
	uint64_t addr; /* frameless locations only */
	uint8_t kind, frameless;
	uint32_t file; /* of the first frame seen */
};

/* One record before sorting by time. */
struct art_rec {
	uint32_t wall; /* µs since the start */
	uint32_t seq;  /* emission order: keeps each thread's records in order */
	uint16_t tid;
	uint32_t method_action;
};

struct art_thread {
	uint32_t *open; /* method indexes of the open frames, root first */
	size_t nr, alloc;
	uint64_t last; /* time of the last sample, ns */
	int seen;
	uint16_t id;
};

struct art {
	const struct profile *p;
	struct art_method *m;
	size_t nr_m, alloc_m;
	uint32_t *slot; /* open addressing over methods: index + 1, 0 = empty */
	size_t mask;
	uint32_t *loc_first, *loc_nr; /* per location: its method indexes, root first */
	uint32_t *loc_m;
	size_t nr_loc_m, alloc_loc_m;
	struct art_rec *r;
	size_t nr_r, alloc_r;
	struct art_thread *th;
	uint32_t *want; /* the sample being diffed, root first */
	size_t alloc_want;
	uint64_t base, limit, period; /* ns: start, last representable time, period */
	int overflow;
};

static uint64_t method_hash(const struct art_method *m)
{
	uint64_t x = ((uint64_t)m->module << 32 | m->name) ^ (m->addr * 0x9e3779b97f4a7c15ULL);

	x ^= (uint64_t)m->kind << 56 ^ (uint64_t)m->frameless << 60;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	return x ^ (x >> 33);
}

static int method_eq(const struct art_method *a, const struct art_method *b)
{
	return a->module == b->module && a->name == b->name && a->addr == b->addr &&
	       a->kind == b->kind && a->frameless == b->frameless;
}

static void slots_grow(struct art *a)
{
	size_t cap = a->slot ? 2 * (a->mask + 1) : 256, i, j;

	free(a->slot);
	a->slot = xcalloc(cap, sizeof(*a->slot));
	a->mask = cap - 1;
	for (i = 0; i < a->nr_m; i++) {
		for (j = method_hash(&a->m[i]) & a->mask; a->slot[j]; j = (j + 1) & a->mask)
			;
		a->slot[j] = (uint32_t)i + 1;
	}
}

/* The index of method @key, added when new. */
static uint32_t method_get(struct art *a, const struct art_method *key)
{
	size_t j;

	if (!a->slot || 2 * (a->nr_m + 1) > a->mask + 1)
		slots_grow(a);
	for (j = method_hash(key) & a->mask; a->slot[j]; j = (j + 1) & a->mask)
		if (method_eq(&a->m[a->slot[j] - 1], key))
			return a->slot[j] - 1;
	ALLOC_GROW(a->m, a->nr_m + 1, a->alloc_m);
	a->m[a->nr_m] = *key;
	a->slot[j] = (uint32_t)++a->nr_m;
	return (uint32_t)a->nr_m - 1;
}

/* The methods of location @loc, root first (outermost inline frame first). */
static const uint32_t *loc_methods(struct art *a, uint32_t loc, size_t *n)
{
	const struct profile_location *l;
	const uint32_t *fr;
	size_t nf, i;

	if (a->loc_nr[loc] == UINT32_MAX) {
		l = profile_location(a->p, loc);
		fr = profile_location_frames(a->p, loc, &nf);
		a->loc_first[loc] = (uint32_t)a->nr_loc_m;
		ALLOC_GROW(a->loc_m, a->nr_loc_m + (nf ? nf : 1), a->alloc_loc_m);
		if (!nf) {
			struct art_method k = {
			    .module = l ? l->module : 0, .addr = l ? l->addr : 0, .frameless = 1};

			a->loc_m[a->nr_loc_m++] = method_get(a, &k);
		}
		for (i = nf; i-- > 0;) {
			const struct profile_frame *f = profile_frame(a->p, fr[i]);
			struct art_method k = {0};

			if (f) {
				k.module = f->module ? f->module : l ? l->module : 0;
				k.name = f->name;
				k.kind = f->kind;
				k.file = f->file;
			}
			a->loc_m[a->nr_loc_m++] = method_get(a, &k);
		}
		a->loc_nr[loc] = (uint32_t)(a->nr_loc_m - a->loc_first[loc]);
	}
	*n = a->loc_nr[loc];
	return a->loc_m + a->loc_first[loc];
}

static void rec_add(struct art *a, struct art_thread *t, uint64_t time, uint32_t method, int action)
{
	ALLOC_GROW(a->r, a->nr_r + 1, a->alloc_r);
	a->r[a->nr_r] = (struct art_rec){.wall = (uint32_t)((time - a->base) / 1000),
					 .seq = (uint32_t)a->nr_r,
					 .tid = t->id,
					 .method_action = (method + 1) << 2 | (uint32_t)action};
	a->nr_r++;
}

/* Leave the open frames of @t down to @depth, innermost first. */
static void close_to(struct art *a, struct art_thread *t, size_t depth, uint64_t time)
{
	while (t->nr > depth) {
		t->nr--;
		rec_add(a, t, time, t->open[t->nr], ART_ACTION_EXIT);
	}
}

/* One sample of thread @ti on @stack at @time (ns). */
static void sample(struct art *a, uint32_t ti, uint32_t stack, uint64_t time)
{
	struct art_thread *t = &a->th[ti];
	size_t n, i, k, nm, c;
	const uint32_t *locs = profile_stack(a->p, stack, &n);
	size_t nr_want = 0;

	if (time > a->limit) {
		a->overflow = 1;
		return;
	}
	if (t->seen && time < t->last)
		time = t->last; /* never backwards on one thread */
	if (t->seen && t->nr && time - t->last > 2 * a->period)
		close_to(a, t, 0, t->last + a->period); /* not seen for a while: it left */
	for (i = n; i-- > 0;) {
		const uint32_t *ms = loc_methods(a, locs[i], &nm);

		ALLOC_GROW(a->want, nr_want + nm, a->alloc_want);
		for (k = 0; k < nm; k++)
			a->want[nr_want++] = ms[k];
	}
	for (c = 0; c < t->nr && c < nr_want && t->open[c] == a->want[c]; c++)
		;
	close_to(a, t, c, time);
	for (; c < nr_want; c++) {
		ALLOC_GROW(t->open, t->nr + 1, t->alloc);
		t->open[t->nr++] = a->want[c];
		rec_add(a, t, time, a->want[c], ART_ACTION_ENTER);
	}
	t->last = time;
	t->seen = 1;
}

struct synth {
	struct art *a;
	uint64_t *next;
};

static void synth_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct synth *sy = arg;
	uint64_t k;

	if (thread >= profile_nr_threads(sy->a->p) || !sy->a->th[thread].id)
		return;
	for (k = 0; k < count && !sy->a->overflow; k++) {
		sample(sy->a, thread, stack, sy->next[thread]);
		sy->next[thread] += sy->a->period;
	}
}

static int cmp_rec(const void *x, const void *y)
{
	const struct art_rec *a = x, *b = y;

	if (a->wall != b->wall)
		return a->wall < b->wall ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Append @s with tab, CR, LF and other control characters as '_' and invalid UTF-8 as U+FFFD;
 * @fallback when @s is empty. */
static void add_clean(struct strbuf *sb, const char *s, size_t len, const char *fallback)
{
	size_t i = 0, step, start = sb->len;

	while (s && i < len && s[i]) {
		uint32_t cp = json_utf8_next(s + i, &step);

		if (i + step > len)
			cp = JSON_REPLACEMENT_CHAR, step = len - i;
		json_add_utf8(sb, cp < 0x20 || cp == 0x7f ? '_' : cp);
		i += step;
	}
	if (sb->len == start)
		strbuf_addstr(sb, fallback);
}

/* "<id>\t<class>\t<method>\t<signature>\t<source>\n" */
static void add_method_line(struct strbuf *sb, const struct art *a, uint32_t idx)
{
	const struct art_method *m = &a->m[idx];
	const char *name = profile_str(a->p, m->name), *mod = profile_str(a->p, m->module);
	const char *file = profile_str(a->p, m->file);
	int managed = m->kind == PROFILE_FRAME_JIT || m->kind == PROFILE_FRAME_INTERP ||
		      m->kind == PROFILE_FRAME_AOT;
	size_t dot, paren;

	strbuf_addf(sb, "%#x\t", (idx + 1) << 2);
	if (!m->frameless && managed && name && !out_managed_split(name, &dot, &paren)) {
		add_clean(sb, name, dot, "[unknown]");
		strbuf_addch(sb, '\t');
		add_clean(sb, name + dot + 1, paren - dot - 1, "[unknown]");
		strbuf_addch(sb, '\t');
		if (name[paren])
			add_clean(sb, name + paren, SIZE_MAX, "()");
		else
			strbuf_addstr(sb, "()");
	} else {
		const char *cls = mod && *mod			    ? path_base(mod)
				  : m->kind == PROFILE_FRAME_KERNEL ? "[kernel]"
				  : m->kind == PROFILE_FRAME_PSEUDO ? "[perch]"
								    : "[unknown]";

		add_clean(sb, cls, SIZE_MAX, "[unknown]");
		strbuf_addch(sb, '\t');
		if (m->frameless) {
			char *label = mod && *mod
					  ? xasprintf("[%s+0x%" PRIx64 "]", path_base(mod), m->addr)
					  : xasprintf("0x%" PRIx64, m->addr);

			add_clean(sb, label, SIZE_MAX, "[unknown]");
			free(label);
		} else {
			add_clean(sb, name, SIZE_MAX, "[unknown]");
		}
		/* perflib and Perfetto read token 4 as a signature only when it starts with '(' */
		strbuf_addstr(sb, "\t()V");
	}
	strbuf_addch(sb, '\t');
	add_clean(sb, path_base(file), SIZE_MAX, "?");
	strbuf_addch(sb, '\n');
}

static void put_le(struct strbuf *sb, uint64_t v, int bytes)
{
	while (bytes--) {
		strbuf_addch(sb, (int)(v & 0xff));
		v >>= 8;
	}
}

/* Thread ids: the tid when it fits in 16 bits (and is not 0), else the smallest free one. */
static void assign_ids(struct art *a)
{
	size_t nr = profile_nr_threads(a->p), i;
	unsigned char *used = xcalloc(ART_MAX_TID + 1, 1);
	uint32_t next = 1;

	for (i = 0; i < nr; i++) {
		const struct profile_thread *t = profile_thread_get(a->p, (uint32_t)i);

		if (t->tid > 0 && t->tid <= ART_MAX_TID && !used[t->tid]) {
			used[t->tid] = 1;
			a->th[i].id = (uint16_t)t->tid;
		}
	}
	for (i = 0; i < nr; i++) {
		if (a->th[i].id)
			continue;
		while (next <= ART_MAX_TID && used[next])
			next++;
		if (next > ART_MAX_TID)
			break; /* more than 65535 threads: the rest keep id 0 */
		used[next] = 1;
		a->th[i].id = (uint16_t)next;
	}
	free(used);
}

static int finish(FILE *f, const struct strbuf *sb)
{
	errno = 0;
	if (fwrite(sb->buf, 1, sb->len, f) != sb->len || fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

static int cmp_tid(const void *x, const void *y, void *arg)
{
	const struct profile *p = arg;
	pid_t a = profile_thread_get(p, *(const uint32_t *)x)->tid;
	pid_t b = profile_thread_get(p, *(const uint32_t *)y)->tid;

	return (a > b) - (a < b);
}

int out_arttrace_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct art a = {.p = p};
	struct strbuf sb = STRBUF_INIT;
	size_t n, i, nr_threads = profile_nr_threads(p), nr_locs = profile_nr_locations(p);
	const struct profile_sample *ks = profile_samples(p, &n);
	const char *pid = profile_meta(p, "pid");
	uint32_t *order;
	uint64_t elapsed = 0;
	int ret;

	(void)o;
	a.period = out_period_ns(p);
	a.th = xcalloc(nr_threads + 1, sizeof(*a.th));
	a.loc_first = xcalloc(nr_locs + 1, sizeof(*a.loc_first));
	a.loc_nr = xmalloc((nr_locs + 1) * sizeof(*a.loc_nr));
	memset(a.loc_nr, 0xff, (nr_locs + 1) * sizeof(*a.loc_nr));
	assign_ids(&a);
	a.base = UINT64_MAX;
	for (i = 0; i < n; i++)
		if (ks[i].thread < nr_threads && ks[i].time_ns < a.base)
			a.base = ks[i].time_ns;
	if (a.base == UINT64_MAX)
		a.base = 0;
	a.limit =
	    UINT64_MAX - a.base < UINT32_MAX * 1000ULL ? UINT64_MAX : a.base + UINT32_MAX * 1000ULL;
	if (n) {
		for (i = 0; i < n; i++)
			if (ks[i].thread < nr_threads && ks[i].stack < profile_nr_stacks(p) &&
			    a.th[ks[i].thread].id)
				sample(&a, ks[i].thread, ks[i].stack, ks[i].time_ns);
	} else {
		struct synth sy = {&a, xcalloc(nr_threads + 1, sizeof(uint64_t))};

		profile_foreach_count(p, synth_count, &sy);
		free(sy.next);
	}
	/* each thread ends one period after its last sample: the trace too */
	for (i = 0; i < nr_threads; i++) {
		uint64_t end = a.th[i].last + a.period;

		if (!a.th[i].seen)
			continue;
		if (end > a.limit || end < a.th[i].last)
			end = a.limit;
		close_to(&a, &a.th[i], 0, end);
		if ((end - a.base) / 1000 > elapsed)
			elapsed = (end - a.base) / 1000;
	}
	if (a.nr_r)
		qsort(a.r, a.nr_r, sizeof(*a.r), cmp_rec);

	strbuf_addf(&sb,
		    "*version\n%d\ndata-file-overflow=%s\nclock=wall\nelapsed-time-usec=%" PRIu64
		    "\nnum-method-calls=%zu\nclock-call-overhead-nsec=0\nvm=art\n",
		    ART_VERSION, a.overflow ? "true" : "false", elapsed, a.nr_r);
	if (pid && *pid >= '1' && *pid <= '9' && strspn(pid, "0123456789") == strlen(pid) &&
	    strlen(pid) < 11)
		strbuf_addf(&sb, "pid=%s\n", pid);
	strbuf_addstr(&sb, "*threads\n");
	order = xmalloc((nr_threads + 1) * sizeof(*order));
	for (i = 0; i < nr_threads; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, nr_threads, sizeof(*order), cmp_tid, (void *)p);
	for (i = 0; i < nr_threads; i++) {
		const struct profile_thread *t = profile_thread_get(p, order[i]);
		const char *name = profile_str(p, t->name);
		char buf[32];

		if (!a.th[order[i]].seen)
			continue;
		snprintf(buf, sizeof(buf), "tid %d", (int)t->tid);
		strbuf_addf(&sb, "%u\t", a.th[order[i]].id);
		add_clean(&sb, name, SIZE_MAX, buf);
		if (a.th[order[i]].id != t->tid && name && *name)
			strbuf_addf(&sb, " (tid %d)", (int)t->tid);
		strbuf_addch(&sb, '\n');
	}
	free(order);
	strbuf_addstr(&sb, "*methods\n");
	for (i = 0; i < a.nr_m; i++)
		add_method_line(&sb, &a, (uint32_t)i);
	strbuf_addstr(&sb, "*end\n");

	put_le(&sb, ART_MAGIC, 4);
	put_le(&sb, ART_VERSION, 2);
	put_le(&sb, ART_HEADER_SIZE, 2);
	put_le(&sb, a.base / 1000, 8);
	put_le(&sb, 0, ART_HEADER_SIZE - 16);
	for (i = 0; i < a.nr_r; i++) {
		put_le(&sb, a.r[i].tid, 2);
		put_le(&sb, a.r[i].method_action, 4);
		put_le(&sb, a.r[i].wall, 4);
	}
	ret = finish(f, &sb);
	strbuf_release(&sb);
	for (i = 0; i < nr_threads; i++)
		free(a.th[i].open);
	free(a.th);
	free(a.m);
	free(a.slot);
	free(a.loc_first);
	free(a.loc_nr);
	free(a.loc_m);
	free(a.want);
	free(a.r);
	return ret;
}
