/* The report page (`perch report X.perch -o report.html`): one self-contained HTML page with
 * the recording's summary, thread timeline, CPU and memory charts, flame graph, top functions
 * and callers/callees. This file only encodes the profile into the page's data block; the page
 * (web/report.html, .css, .js and uPlot) is compiled in from $(O)/gen/report-page.inc, which
 * web/embed.py generates at build time (mk/report.mk).
 *
 * The page holds two data blocks (decoded by web/report.js, functions decode and
 * decodeSamples), each base64 of a zlib stream (the page inflates them with the browser's
 * DecompressionStream("deflate")). The first, before the page's script, holds what the first
 * view (the whole recording) needs:
 *
 *   "PRPT" u32 version (2) u32 json_len  json[json_len]  area[...]      (little endian)
 *
 * The second, after the script (the browser parses it while the first view is drawn; the page
 * inflates it when idle or when a time range is first selected), is an area alone: the
 * per-sample columns.
 *
 * json is the header (thread list, function table, counter series, stalls, slow frames, meta; see
 * html_encode()); every column it names is [offset, length] into an area, a run of unsigned
 * LEB128 varints:
 *   nodes    the call tree of every stack (a trie, root first, merged by function): node 0 is
 *            the root; node i >= 1 has "parent" i - varint and "func" varint
 *   threads  per thread, in the first area: "newnode" the nodes the thread's samples use, in
 *            the order of first use (its node dictionary); "dict_weight" the weight of the
 *            samples of each; "spans" the timeline, "nr_spans" triples (start - the end of
 *            the span before, length, state class; state_class()) in time units, a sample
 *            lasting up to the next one unless the gap is longer than that one's weight
 *            accounts for; "classes" the weight per state class. In the samples area, one
 *            entry per sample in time order: "time" the distance in time units (header
 *            "unit_ns") from the previous sample (the first: from "t0_ns"); "node" 0 = the
 *            same node as the previous sample, k = the k-th node of the dictionary; "state"
 *            runs of (count, /proc state letter, 0 unknown); "weight_col" runs of (count,
 *            weight - 1)
 *   series   per counter, one entry per point: "time" as for samples; "value" the zigzag
 *            delta of round(value * scale) from the previous point
 * Times are relative to t0_ns (the earliest sample, counter point or stall), so they fit a
 * JavaScript number ("first" is the earliest sample's); a time unit is 1/10 of the sampling
 * period in whole us (at least 1 us). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/writers.h"
#include "perch/proc/framestats.h"
#include "perch/proc/stall.h"
#include "perch/profile/profile.h"

/* out_html_page[]: the page with HTML_DATA_MARK where the data block goes */
#include "report-page.inc"

#define HTML_DATA_MARK	  "@PERCH_DATA@"
#define HTML_VERSION	  2
#define HTML_NO_NODE	  UINT32_MAX
#define HTML_SAMPLES_MARK "@PERCH_SAMPLES@"

/* The state classes of the timeline (the page's STATES, in this order) and the waits a stack
 * can end in (a wait frame's name, see stateclass_of()). */
enum {
	HTML_RUNNING,
	HTML_RUNNABLE,
	HTML_SLEEPING,
	HTML_IO,
	HTML_LOCK,
	HTML_BINDER,
	HTML_JAVA_LOCK, /* a Java thread blocked on a monitor (ART's state, art-thread.h) */
	HTML_STOPPED,
	HTML_UNKNOWN,
	HTML_NR_CLASSES
};
#define HTML_W_NONE (-1)
#define HTML_W_RUN  0

struct html_func {
	uint32_t name;	 /* profile string id; 0: @label */
	uint32_t module; /* profile string id */
	uint8_t kind;
	int8_t wait; /* HTML_W_*: the wait a stack ending in it means */
	char *label; /* "[libfoo.so+0x1a2b]" for a nameless frame */
};

struct html_col {
	size_t off, len;
};

struct html_run {
	uint64_t count, value;
};

/* A stretch of a thread's timeline in one state class: [start, end) in time units. */
struct html_span {
	uint64_t start, end;
	int cls; /* -1: none yet */
};

struct html_thread {
	size_t n;	 /* samples */
	uint64_t weight; /* their weight */
	uint64_t last_t; /* for the delta of the time column */
	uint32_t last_node;
	struct u64map dict;	  /* node: its index among the nodes this thread used */
	uint32_t nr_dict, last_k; /* last_k: the entry of the last sample's node */
	uint64_t *dict_w;	  /* per dictionary entry: the weight of its samples */
	size_t alloc_dict_w;
	uint64_t cls_w[HTML_NR_CLASSES]; /* weight per state class */
	uint64_t pend_t;		 /* the last sample, whose span ends at the next one */
	int pend_cls;			 /* -1: no sample yet */
	struct html_span span;		 /* the span being extended */
	uint64_t span_end;		 /* the end of the last span written */
	size_t nr_spans;
	struct html_run state_run, weight_run;
	struct strbuf t, node, newnode, state, weight_col, spans;
};

struct html {
	const struct profile *p;
	uint64_t t0, unit;
	double period_u; /* the sampling period in time units */
	struct html_func *funcs;
	size_t nr_funcs, alloc_funcs;
	struct u64map func_map; /* name * 8 + kind, or bit 62 + location: func index */
	uint32_t *node_parent, *node_func;
	size_t nr_nodes, alloc_nodes;
	struct u64map node_map; /* parent << 32 | func: node */
	uint32_t *stack_node;	/* per profile stack: its node, HTML_NO_NODE when not yet made */
	struct html_thread *threads;
	struct strbuf area;  /* the varint columns of the first block */
	struct strbuf sarea; /* the per-sample columns: the second block */
	struct strbuf json;
};

static void put_varint(struct strbuf *sb, uint64_t v)
{
	char b[10];
	size_t n = 0;

	do {
		b[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	strbuf_add(sb, b, n);
}

/* The wait a stack ending in a frame named @name means: HTML_W_NONE, HTML_W_RUN ("[running]")
 * or the class of the wait frame ("[io read]", "[lock futex]", "[sleep nanosleep]"...; see
 * src/record/procwait.c for the names perch gives, art-thread.h for the "[java ...]" ones). */
static int wait_class(const struct profile *p, uint32_t name, uint8_t kind)
{
	static const struct {
		const char *prefix;
		int cls;
	} waits[] = {
	    {"[java blocked", HTML_JAVA_LOCK},
	    {"[java waiting for lock inflation", HTML_JAVA_LOCK},
	    {"[java ", HTML_SLEEPING}, /* waiting, timed waiting, sleeping */
	    {"[io ", HTML_IO},
	    {"[pagefault", HTML_IO},
	    {"[lock ", HTML_LOCK},
	    {"[binder ", HTML_BINDER},
	    {"[sleep ", HTML_SLEEPING},
	    {"[poll ", HTML_SLEEPING},
	    {"[wait ", HTML_SLEEPING},
	    {"[stopped", HTML_STOPPED},
	    {"[running]", HTML_W_RUN},
	};
	const char *s = name ? profile_str(p, name) : "";

	if (kind != PROFILE_FRAME_PSEUDO || !s || s[0] != '[')
		return HTML_W_NONE;
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (!strncmp(s, waits[i].prefix, strlen(waits[i].prefix)))
			return waits[i].cls;
	return HTML_W_NONE;
}

/* The state class of a sample: its /proc state letter and the wait its stack ends in. A
 * thread in R whose stack still ends in a wait frame was woken and had not run yet. */
static int state_class(int letter, int w)
{
	switch (letter) {
	case 'R':
		return w > HTML_W_RUN ? HTML_RUNNABLE : HTML_RUNNING;
	case 'T':
	case 't':
		return HTML_STOPPED;
	case 'D':
		return w == HTML_LOCK || w == HTML_BINDER || w == HTML_JAVA_LOCK ? w : HTML_IO;
	case 0: /* no state recorded: the stack tells */
		return w > HTML_W_RUN ? w : HTML_RUNNING;
	case 'S':
	case 'I':
		return w > HTML_W_RUN ? w : HTML_SLEEPING;
	default:
		return HTML_UNKNOWN;
	}
}

static uint32_t func_of(struct html *h, uint32_t loc, const struct profile_frame *f)
{
	const struct profile *p = h->p;
	uint32_t name = f ? f->name : 0, idx;
	uint8_t kind = f ? f->kind : PROFILE_FRAME_NATIVE;
	/* merged as the flame graph and folded stacks merge: by name and kind; a nameless frame
	 * only with frames of its own location */
	uint64_t key = name ? (uint64_t)name * 8 + (kind & 7) : (1ULL << 62) | loc;
	size_t slot;

	idx = u64map_find(&h->func_map, key, &slot);
	if (idx != UINT32_MAX)
		return idx;
	ALLOC_GROW(h->funcs, h->nr_funcs + 1, h->alloc_funcs);
	h->funcs[h->nr_funcs] =
	    (struct html_func){.name = name, .kind = kind, .wait = wait_class(p, name, kind)};
	if (f)
		h->funcs[h->nr_funcs].module = f->module;
	if (!name) {
		const struct profile_location *l = profile_location(p, loc);

		if (l && l->module)
			h->funcs[h->nr_funcs].label = xasprintf(
			    "[%s+0x%" PRIx64 "]", path_base(profile_str(p, l->module)), l->addr);
		else
			h->funcs[h->nr_funcs].label = xasprintf("0x%" PRIx64, l ? l->addr : 0);
		if (l)
			h->funcs[h->nr_funcs].module = l->module;
	}
	u64map_set(&h->func_map, slot, key, (uint32_t)h->nr_funcs);
	return (uint32_t)h->nr_funcs++;
}

static uint32_t child_of(struct html *h, uint32_t parent, uint32_t func)
{
	uint64_t key = (uint64_t)parent << 32 | func;
	size_t slot;
	uint32_t idx = u64map_find(&h->node_map, key, &slot);

	if (idx != UINT32_MAX)
		return idx;
	ALLOC_GROW(h->node_parent, h->nr_nodes + 1, h->alloc_nodes);
	h->node_func = xrealloc(h->node_func, h->alloc_nodes * sizeof(*h->node_func));
	h->node_parent[h->nr_nodes] = parent;
	h->node_func[h->nr_nodes] = func;
	u64map_set(&h->node_map, slot, key, (uint32_t)h->nr_nodes);
	return (uint32_t)h->nr_nodes++;
}

/* The tree node of profile stack @stack: its frames root first, inlined frames as frames. */
static uint32_t node_of(struct html *h, uint32_t stack)
{
	const struct profile *p = h->p;
	const uint32_t *locs;
	size_t n, nf, j;
	uint32_t node = 0;

	if (h->stack_node[stack] != HTML_NO_NODE)
		return h->stack_node[stack];
	locs = profile_stack(p, stack, &n);
	for (size_t i = n; i-- > 0;) {
		const uint32_t *fr = profile_location_frames(p, locs[i], &nf);

		if (!nf)
			node = child_of(h, node, func_of(h, locs[i], NULL));
		for (j = nf; j-- > 0;)
			node = child_of(h, node, func_of(h, locs[i], profile_frame(p, fr[j])));
	}
	h->stack_node[stack] = node;
	return node;
}

static uint64_t to_units(const struct html *h, uint64_t t)
{
	return t > h->t0 ? (t - h->t0 + h->unit / 2) / h->unit : 0;
}

/* Run-length coding: a (count, value) pair is written when the value changes (and at the
 * end, by end_run()). */
static void add_run(struct html_run *r, struct strbuf *sb, uint64_t value)
{
	if (r->count && r->value != value) {
		put_varint(sb, r->count);
		put_varint(sb, r->value);
		r->count = 0;
	}
	r->value = value;
	r->count++;
}

static void end_run(struct html_run *r, struct strbuf *sb)
{
	if (r->count) {
		put_varint(sb, r->count);
		put_varint(sb, r->value);
	}
	r->count = 0;
}

/* Add [@a, @b) in class @cls to the thread's timeline: the span grows while the class stays
 * and the time is contiguous; else it is written as (start - the last span's end, length,
 * class). @cls -1: only write the span. */
static void add_span(struct html_thread *t, uint64_t a, uint64_t b, int cls)
{
	struct html_span *sp = &t->span;

	if (cls >= 0 && sp->cls == cls && sp->end == a) {
		sp->end = b;
		return;
	}
	if (sp->cls >= 0) {
		put_varint(&t->spans, sp->start - t->span_end);
		put_varint(&t->spans, sp->end - sp->start);
		put_varint(&t->spans, (uint64_t)sp->cls);
		t->span_end = sp->end;
		t->nr_spans++;
	}
	*sp = (struct html_span){a, b, cls};
}

/* The span of the thread's last sample, now that the next one (at @u, of weight @w; @w 0: none)
 * is known: up to the next sample, unless the thread was not seen for longer than that one's
 * weight (ticks missed and credited to it) accounts for. */
static void end_sample_span(const struct html *h, struct html_thread *t, uint64_t u, uint32_t w)
{
	uint64_t period = (uint64_t)(h->period_u + 0.5), end = t->pend_t + period;

	if (t->pend_cls < 0)
		return;
	if (w && (double)(u - t->pend_t) <= h->period_u * (w + 1.5))
		end = u;
	add_span(t, t->pend_t, end, t->pend_cls);
}

static void add_sample(struct html *h, uint32_t thread, uint32_t stack, uint64_t time_ns,
		       char state, uint32_t weight)
{
	struct html_thread *t = &h->threads[thread];
	uint64_t u = to_units(h, time_ns);
	uint32_t node = node_of(h, stack);
	int letter = (unsigned char)state & 0x7f, cls;

	weight = weight ? weight : 1;
	put_varint(&t->t, u >= t->last_t ? u - t->last_t : 0);
	if (u > t->last_t)
		t->last_t = u;
	if (t->n && node == t->last_node) {
		put_varint(&t->node, 0);
	} else {
		size_t slot;
		uint32_t k = u64map_find(&t->dict, node, &slot);
		if (k == UINT32_MAX) {
			u64map_set(&t->dict, slot, node, t->nr_dict);
			k = t->nr_dict++;
			put_varint(&t->newnode, node);
			ALLOC_GROW(t->dict_w, t->nr_dict, t->alloc_dict_w);
			t->dict_w[k] = 0;
		}
		put_varint(&t->node, (uint64_t)k + 1);
		t->last_k = k;
	}
	t->dict_w[t->last_k] += weight;
	t->last_node = node;
	add_run(&t->state_run, &t->state, (uint64_t)letter);
	add_run(&t->weight_run, &t->weight_col, weight - 1);
	cls = state_class(letter, node ? h->funcs[h->node_func[node]].wait : HTML_W_NONE);
	t->cls_w[cls] += weight;
	end_sample_span(h, t, t->last_t, weight);
	t->pend_t = t->last_t;
	t->pend_cls = cls;
	t->n++;
	t->weight += weight;
}

static void add_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct html *h = arg;

	add_sample(h, thread, stack, h->t0, 0, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count);
}

/* Append column @sb to @area (the first block's or the samples'). */
static struct html_col col_add(struct strbuf *area, const struct strbuf *sb)
{
	struct html_col c = {area->len, sb->len};

	strbuf_add(area, sb->buf, sb->len);
	return c;
}

static void json_col(struct strbuf *js, const char *key, struct html_col c)
{
	strbuf_addf(js, ",\"%s\":[%zu,%zu]", key, c.off, c.len);
}

/* The process of thread @t: its own when the recording says, else the meta "pid". */
static long thread_pid(const struct profile *p, const struct profile_thread *t)
{
	(void)t;
	return (long)profile_meta_u64(p, "pid");
}

static void json_threads(struct html *h)
{
	const struct profile *p = h->p;
	struct strbuf *js = &h->json, dict_w = STRBUF_INIT;

	strbuf_addstr(js, ",\"threads\":[");
	for (size_t i = 0; i < profile_nr_threads(p); i++) {
		const struct profile_thread *pt = profile_thread_get(p, (uint32_t)i);
		struct html_thread *t = &h->threads[i];

		strbuf_addf(js, "%s{\"tid\":%d,\"pid\":%ld,\"name\":", i ? "," : "", (int)pt->tid,
			    thread_pid(p, pt));
		json_add_str(js, profile_str(p, pt->name));
		end_run(&t->state_run, &t->state);
		end_run(&t->weight_run, &t->weight_col);
		end_sample_span(h, t, 0, 0);
		add_span(t, 0, 0, -1);
		for (uint32_t k = 0; k < t->nr_dict; k++)
			put_varint(&dict_w, t->dict_w[k]);
		strbuf_addf(js, ",\"n\":%zu,\"weight\":%" PRIu64 ",\"nodes\":%" PRIu32, t->n,
			    t->weight, t->nr_dict);
		json_col(js, "newnode", col_add(&h->area, &t->newnode));
		json_col(js, "dict_weight", col_add(&h->area, &dict_w));
		strbuf_addf(js, ",\"classes\":[");
		for (int c = 0; c < HTML_NR_CLASSES; c++)
			strbuf_addf(js, "%s%" PRIu64, c ? "," : "", t->cls_w[c]);
		strbuf_addf(js, "],\"nr_spans\":%zu", t->nr_spans);
		json_col(js, "spans", col_add(&h->area, &t->spans));
		json_col(js, "time", col_add(&h->sarea, &t->t));
		json_col(js, "node", col_add(&h->sarea, &t->node));
		json_col(js, "state", col_add(&h->sarea, &t->state));
		json_col(js, "weight_col", col_add(&h->sarea, &t->weight_col));
		strbuf_addch(js, '}');
		strbuf_reset(&dict_w);
	}
	strbuf_addch(js, ']');
	strbuf_release(&dict_w);
}

static void json_funcs(struct html *h)
{
	const struct profile *p = h->p;
	struct strbuf *js = &h->json;
	struct strbuf nodes = STRBUF_INIT;

	strbuf_addstr(js, ",\"funcs\":{\"name\":[");
	for (size_t i = 0; i < h->nr_funcs; i++) {
		const struct html_func *f = &h->funcs[i];
		const char *name = f->label ? f->label : profile_str(p, f->name);

		if (i)
			strbuf_addch(js, ',');
		json_add_str(js, *name ? name : "[unknown]");
	}
	strbuf_addstr(js, "],\"module\":[");
	for (size_t i = 0; i < h->nr_funcs; i++) {
		if (i)
			strbuf_addch(js, ',');
		json_add_str(js, path_base(profile_str(p, h->funcs[i].module)));
	}
	strbuf_addstr(js, "],\"kind\":[");
	for (size_t i = 0; i < h->nr_funcs; i++)
		strbuf_addf(js, "%s%u", i ? "," : "", h->funcs[i].kind);
	strbuf_addf(js, "]},\"nodes\":{\"n\":%zu", h->nr_nodes);
	for (size_t i = 1; i < h->nr_nodes; i++)
		put_varint(&nodes, i - h->node_parent[i]);
	json_col(js, "parent", col_add(&h->area, &nodes));
	strbuf_reset(&nodes);
	for (size_t i = 1; i < h->nr_nodes; i++)
		put_varint(&nodes, h->node_func[i]);
	json_col(js, "func", col_add(&h->area, &nodes));
	strbuf_addch(js, '}');
	strbuf_release(&nodes);
}

/* Counter NAME's group and scale: "cpu" (process and system, %), "thread" (one thread, %),
 * "mem" (bytes, stored in KiB), or NULL for a counter the page does not draw. */
static const char *series_group(const char *name, double *scale)
{
	size_t n = strlen(name);

	*scale = 100;
	if (!strncmp(name, "thread_cpu_usage.", 17))
		return "thread";
	if (!strcmp(name, "cpu_usage") || !strcmp(name, "cpu_usage_all_cores") ||
	    !strcmp(name, "system_cpu_usage"))
		return "cpu";
	*scale = 1.0 / 1024;
	if (n > 6 && !strcmp(name + n - 6, "_bytes"))
		return "mem";
	return NULL;
}

/* Call @fn for every "TIME_NS=VALUE" pair of @text; malformed pairs are skipped. */
static void foreach_point(const char *text, void (*fn)(void *, uint64_t, double), void *arg)
{
	while (text && *text) {
		char *end;
		uint64_t t;
		double v;

		while (*text == ' ')
			text++;
		if (!*text)
			break;
		errno = 0;
		t = strtoull(text, &end, 10);
		if (!errno && *end == '=') {
			v = strtod(end + 1, &end);
			if ((*end == ' ' || !*end) && isfinite(v))
				fn(arg, t, v);
		}
		text = strchr(text, ' ');
	}
}

static void min_time(void *arg, uint64_t t, double v)
{
	uint64_t *t0 = arg;

	(void)v;
	if (t < *t0)
		*t0 = t;
}

struct series_enc {
	struct html *h;
	double scale;
	size_t n;
	uint64_t last_t;
	int64_t last_v;
	struct strbuf t, v;
};

static void add_point(void *arg, uint64_t t, double v)
{
	struct series_enc *s = arg;
	uint64_t u = to_units(s->h, t);
	double sv = v * s->scale;
	int64_t iv = sv > 9e15	  ? (int64_t)9e15
		     : sv < -9e15 ? (int64_t)-9e15
				  : (int64_t)(sv >= 0 ? sv + 0.5 : sv - 0.5);
	int64_t d = iv - s->last_v;

	if (u < s->last_t)
		return; /* not in time order */
	put_varint(&s->t, u - s->last_t);
	put_varint(&s->v, d >= 0 ? (uint64_t)d << 1 : ((uint64_t)(-(d + 1)) << 1) | 1);
	s->last_t = u;
	s->last_v = iv;
	s->n++;
}

/* Call @fn with each counter named in meta "counters". */
static void foreach_counter(const struct profile *p, void (*fn)(void *, const char *, const char *),
			    void *arg)
{
	const char *list = profile_meta(p, "counters");
	char *names = xstrdup(list ? list : ""), *save = NULL, *name;

	for (name = strtok_r(names, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
		char *key = xasprintf("counter:%s", name);
		const char *text = profile_meta(p, key);

		if (text)
			fn(arg, name, text);
		free(key);
	}
	free(names);
}

static void counter_min_time(void *arg, const char *name, const char *text)
{
	(void)name;
	foreach_point(text, min_time, arg);
}

static void json_series_one(void *arg, const char *name, const char *text)
{
	struct html *h = arg;
	struct series_enc s = {.h = h, .t = STRBUF_INIT, .v = STRBUF_INIT};
	const char *group = series_group(name, &s.scale);
	struct strbuf *js = &h->json;

	if (!group)
		return;
	foreach_point(text, add_point, &s);
	if (s.n) {
		if (js->buf[js->len - 1] != '[')
			strbuf_addch(js, ',');
		strbuf_addstr(js, "{\"name\":");
		json_add_str(js, name);
		strbuf_addf(js, ",\"group\":\"%s\",\"scale\":%.17g,\"n\":%zu", group, s.scale, s.n);
		json_col(js, "time", col_add(&h->area, &s.t));
		json_col(js, "value", col_add(&h->area, &s.v));
		strbuf_addch(js, '}');
	}
	strbuf_release(&s.t);
	strbuf_release(&s.v);
}

static void json_stalls(struct html *h)
{
	struct stall *v;
	size_t n = stall_meta_parse(profile_meta(h->p, "stalls"), &v);
	struct strbuf *js = &h->json;

	strbuf_addstr(js, ",\"stalls\":[");
	for (size_t i = 0; i < n; i++) {
		long node =
		    v[i].stack < profile_nr_stacks(h->p) ? (long)node_of(h, v[i].stack) : -1;

		strbuf_addf(js, "%s[%" PRIu64 ",%" PRIu64 ",%d,%ld,\"%s\",%d,", i ? "," : "",
			    to_units(h, v[i].start_ns), (v[i].duration_ns + h->unit / 2) / h->unit,
			    (int)v[i].tid, node, stall_kind_name(v[i].kind), v[i].cut);
		json_add_str(js, v[i].reason);
		strbuf_addch(js, ']');
	}
	strbuf_addch(js, ']');
	free(v);
}

/* Android slow and frozen frames (meta "frames"): "frames":[[start, duration, 1 slow | 2
 * frozen], ...] in time units; the page marks them on the main thread's row. */
static void json_frames(struct html *h)
{
	struct framestats_frame *v;
	size_t n = framestats_meta_parse(profile_meta(h->p, "frames"), &v), k = 0;
	struct strbuf *js = &h->json;

	strbuf_addstr(js, ",\"frames\":[");
	for (size_t i = 0; i < n; i++) {
		enum framestats_class c = framestats_classify(&v[i]);

		if (c != FRAMESTATS_OK)
			strbuf_addf(js, "%s[%" PRIu64 ",%" PRIu64 ",%d]", k++ ? "," : "",
				    to_units(h, v[i].start_ns),
				    (v[i].end_ns - v[i].start_ns + h->unit / 2) / h->unit, (int)c);
	}
	strbuf_addch(js, ']');
	free(v);
}

/* Meta keys the header carries as they are: the small ones (not the counters, stalls and
 * per-module keys, which are in the columns or of no use to the page). */
static void json_meta(struct html *h)
{
	struct strbuf *js = &h->json;
	const char *key, *value;
	int first = 1;

	strbuf_addstr(js, ",\"meta\":{");
	for (size_t i = 0; (key = profile_meta_at(h->p, i, &value)); i++) {
		if (!strcmp(key, "counters") || !strncmp(key, "counter:", 8) ||
		    !strcmp(key, "stalls") || !strcmp(key, "frames") ||
		    !strncmp(key, "build_id:", 9) || !strncmp(key, "load:", 5) ||
		    strlen(value) > 4096)
			continue;
		if (!first)
			strbuf_addch(js, ',');
		first = 0;
		json_add_str(js, key);
		strbuf_addch(js, ':');
		json_add_str(js, value);
	}
	strbuf_addch(js, '}');
}

/* The earliest time of the recording: sample, counter point or stall. */
static uint64_t first_time(const struct profile *p)
{
	const struct profile_sample *s;
	struct stall *v;
	size_t n, nv;
	uint64_t t0 = UINT64_MAX;

	s = profile_samples(p, &n);
	for (size_t i = 0; i < n; i++)
		if (s[i].time_ns < t0)
			t0 = s[i].time_ns;
	foreach_counter(p, counter_min_time, &t0);
	nv = stall_meta_parse(profile_meta(p, "stalls"), &v);
	for (size_t i = 0; i < nv; i++)
		if (v[i].start_ns < t0)
			t0 = v[i].start_ns;
	free(v);
	return t0 == UINT64_MAX ? 0 : t0;
}

static void html_encode(struct html *h)
{
	const struct profile *p = h->p;
	const struct profile_sample *s;
	size_t n, nth = profile_nr_threads(p);
	uint64_t period = out_period_ns(p), end = 0, first = UINT64_MAX;

	h->unit = period / 10 > 1000 ? period / 10 / 1000 * 1000 : 1000;
	h->t0 = first_time(p);
	h->period_u = (double)period / (double)h->unit;
	h->stack_node = xmalloc((profile_nr_stacks(p) + 1) * sizeof(*h->stack_node));
	memset(h->stack_node, 0xff, (profile_nr_stacks(p) + 1) * sizeof(*h->stack_node));
	h->threads = xcalloc(nth + 1, sizeof(*h->threads));
	for (size_t i = 0; i < nth; i++) {
		struct html_thread *t = &h->threads[i];

		strbuf_init(&t->t, 0);
		strbuf_init(&t->node, 0);
		strbuf_init(&t->newnode, 0);
		t->dict = (struct u64map)U64MAP_INIT;
		strbuf_init(&t->state, 0);
		strbuf_init(&t->weight_col, 0);
		strbuf_init(&t->spans, 0);
		t->pend_cls = t->span.cls = -1;
	}
	/* node 0, the root: not in node_map (its func is never read) */
	ALLOC_GROW(h->node_parent, 1, h->alloc_nodes);
	h->node_func = xrealloc(h->node_func, h->alloc_nodes * sizeof(*h->node_func));
	h->node_parent[0] = h->node_func[0] = 0;
	h->nr_nodes = 1;
	s = profile_samples(p, &n);
	for (size_t i = 0; i < n; i++) {
		if (s[i].thread >= nth || s[i].stack >= profile_nr_stacks(p))
			continue;
		add_sample(h, s[i].thread, s[i].stack, s[i].time_ns, s[i].state, s[i].weight);
		if (s[i].time_ns > end)
			end = s[i].time_ns;
		if (s[i].time_ns < first)
			first = s[i].time_ns;
	}
	if (!n) /* no time line: the aggregated counts, all at t0 */
		profile_foreach_count(p, add_count, h);

	strbuf_addf(&h->json,
		    "{\"version\":%d,\"period_ns\":%" PRIu64 ",\"unit_ns\":%" PRIu64
		    ",\"t0_ns\":\"%" PRIu64 "\",\"first\":%" PRIu64 ",\"end\":%" PRIu64
		    ",\"timed\":%d,\"total\":%" PRIu64,
		    HTML_VERSION, period, h->unit, h->t0, n ? to_units(h, first) : 0,
		    n ? to_units(h, end + period) : 0, n ? 1 : 0, profile_total_samples(p));
	json_meta(h);
	json_threads(h);
	json_stalls(h); /* before the funcs: a stall's stack may add nodes */
	json_frames(h);
	json_funcs(h);
	strbuf_addstr(&h->json, ",\"series\":[");
	foreach_counter(p, json_series_one, h);
	strbuf_addstr(&h->json, "]}");
}

static void html_release(struct html *h)
{
	for (size_t i = 0; i < h->nr_funcs; i++)
		free(h->funcs[i].label);
	free(h->funcs);
	u64map_release(&h->func_map);
	u64map_release(&h->node_map);
	free(h->node_parent);
	free(h->node_func);
	free(h->stack_node);
	for (size_t i = 0; h->threads && i < profile_nr_threads(h->p); i++) {
		strbuf_release(&h->threads[i].t);
		strbuf_release(&h->threads[i].node);
		strbuf_release(&h->threads[i].newnode);
		u64map_release(&h->threads[i].dict);
		strbuf_release(&h->threads[i].state);
		strbuf_release(&h->threads[i].weight_col);
		strbuf_release(&h->threads[i].spans);
		free(h->threads[i].dict_w);
	}
	free(h->threads);
	strbuf_release(&h->area);
	strbuf_release(&h->sarea);
	strbuf_release(&h->json);
}

static void put_u32(struct strbuf *sb, uint32_t v)
{
	unsigned char b[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24};

	strbuf_add(sb, b, 4);
}

/* @len bytes of @buf, zlib-compressed and base64, appended to @out. -EIO when zlib fails. */
static int html_zbase64(const void *buf, size_t len, struct strbuf *out)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uLongf zlen = compressBound(len);
	unsigned char *z = xmalloc(zlen);
	size_t i;

	if (compress2(z, &zlen, buf, len, 6) != Z_OK) {
		free(z);
		return -EIO;
	}
	strbuf_grow(out, (zlen + 2) / 3 * 4 + 1);
	for (i = 0; i + 2 < zlen; i += 3) {
		uint32_t v = (uint32_t)z[i] << 16 | (uint32_t)z[i + 1] << 8 | z[i + 2];
		char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], b64[(v >> 6) & 63], b64[v & 63]};

		strbuf_add(out, q, 4);
	}
	if (i < zlen) {
		uint32_t v = (uint32_t)z[i] << 16 | (i + 1 < zlen ? (uint32_t)z[i + 1] << 8 : 0);
		char q[4] = {b64[v >> 18], b64[(v >> 12) & 63],
			     i + 1 < zlen ? b64[(v >> 6) & 63] : '=', '='};

		strbuf_add(out, q, 4);
	}
	free(z);
	return 0;
}

/* The two data blocks: @out the first ("PRPT" header, json and area), @samples the area of the
 * per-sample columns; each zlib-compressed, base64. -EIO when zlib fails, -EFBIG when the
 * header is over 4 GiB. */
static int html_blocks(struct html *h, struct strbuf *out, struct strbuf *samples)
{
	struct strbuf raw = STRBUF_INIT;
	int ret;

	if (h->json.len > UINT32_MAX)
		return -EFBIG;
	strbuf_add(&raw, "PRPT", 4);
	put_u32(&raw, HTML_VERSION);
	put_u32(&raw, (uint32_t)h->json.len);
	strbuf_add(&raw, h->json.buf, h->json.len);
	strbuf_add(&raw, h->area.buf, h->area.len);
	ret = html_zbase64(raw.buf, raw.len, out);
	if (!ret)
		ret = html_zbase64(h->sarea.buf, h->sarea.len, samples);
	strbuf_release(&raw);
	return ret;
}

int out_report_html_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct html h = {.p = p,
			 .func_map = U64MAP_INIT,
			 .node_map = U64MAP_INIT,
			 .area = STRBUF_INIT,
			 .sarea = STRBUF_INIT,
			 .json = STRBUF_INIT};
	struct strbuf block = STRBUF_INIT, samples = STRBUF_INIT;
	const char *mark = strstr(out_html_page, HTML_DATA_MARK);
	const char *smark = strstr(out_html_page, HTML_SAMPLES_MARK);
	int ret;

	(void)o;
	if (!mark || !smark || smark < mark)
		return -EINVAL; /* the build put no page in: web/embed.py checks for the marks */
	html_encode(&h);
	ret = html_blocks(&h, &block, &samples);
	if (!ret) {
		size_t head = (size_t)(mark - out_html_page);
		const char *mid = mark + strlen(HTML_DATA_MARK);
		size_t nmid = (size_t)(smark - mid);
		const char *tail = smark + strlen(HTML_SAMPLES_MARK);

		errno = 0;
		if (fwrite(out_html_page, 1, head, f) != head ||
		    fwrite(block.buf, 1, block.len, f) != block.len ||
		    fwrite(mid, 1, nmid, f) != nmid ||
		    fwrite(samples.buf, 1, samples.len, f) != samples.len ||
		    fputs(tail, f) == EOF || fflush(f) || ferror(f))
			ret = errno ? -errno : -EIO;
	}
	strbuf_release(&block);
	strbuf_release(&samples);
	html_release(&h);
	return ret;
}
