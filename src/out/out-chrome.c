/* Chrome trace event JSON writers (docs/design/formats.md section 4): nested "X" slices per thread
 * from consecutive samples, metadata and counters (example A); or stackFrames + samples (example B)
 * in a separate file. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/writers.h"
#include "perch/proc/framestats.h"
#include "perch/proc/stall.h"
#include "perch/profile/profile.h"

/* One frame of a sample, root first. A location without frames is an item of its own. */
struct item {
	uint32_t name; /* string id, 0 = none (then shown from @loc) */
	uint32_t file, line, module;
	uint32_t loc;
	uint8_t kind;
	uint8_t frameless; /* a location without frames, named "[module+0xaddr]" */
	uint8_t tailcall;  /* a tail-call frame: "_[t]" after the name, as in folded output */
};

struct items {
	struct item *v;
	size_t nr, alloc;
};

static const char *const kind_names[] = {
    [PROFILE_FRAME_NATIVE] = "native",	    [PROFILE_FRAME_PSEUDO] = "pseudo",
    [PROFILE_FRAME_KERNEL] = "kernel",	    [PROFILE_FRAME_JIT] = "jit",
    [PROFILE_FRAME_INTERP] = "interpreted", [PROFILE_FRAME_AOT] = "aot",
};

static const char *kind_name(uint8_t kind)
{
	return kind < ARRAY_SIZE(kind_names) && kind_names[kind] ? kind_names[kind] : "native";
}

static int item_eq(const struct item *a, const struct item *b)
{
	return a->name == b->name && a->kind == b->kind && a->frameless == b->frameless &&
	       a->tailcall == b->tailcall && (a->name || a->loc == b->loc);
}

/* The display name of @it as a JSON string. */
static void add_item_name(struct strbuf *sb, const struct profile *p, const struct item *it)
{
	const struct profile_location *l;
	char *name;

	if (it->name || !it->frameless) {
		const char *s = profile_str(p, it->name);

		if (it->tailcall) {
			name = xasprintf("%s_[t]", s && *s ? s : "[unknown]");
			json_add_str(sb, name);
			free(name);
			return;
		}
		json_add_str(sb, s && *s ? s : "[unknown]");
		return;
	}
	l = profile_location(p, it->loc);
	if (l && l->module)
		name =
		    xasprintf("[%s+0x%" PRIx64 "]", path_base(profile_str(p, l->module)), l->addr);
	else if (l && it->kind != PROFILE_FRAME_PSEUDO)
		name = xasprintf("0x%" PRIx64, l->addr);
	else
		name = xstrdup("[unknown]");
	json_add_str(sb, name);
	free(name);
}

/* The root-first items of @stack into @out (emptied first). */
static void stack_items(const struct profile *p, uint32_t stack, struct items *out)
{
	size_t n, i, nf, j;
	const uint32_t *locs = profile_stack(p, stack, &n);

	out->nr = 0;
	for (i = n; i-- > 0;) {
		const uint32_t *fr = profile_location_frames(p, locs[i], &nf);

		if (!nf) {
			const struct profile_location *l = profile_location(p, locs[i]);

			ALLOC_GROW(out->v, out->nr + 1, out->alloc);
			out->v[out->nr++] = (struct item){
			    .loc = locs[i], .frameless = 1, .module = l ? l->module : 0};
		}
		for (j = nf; j-- > 0;) {
			const struct profile_frame *f = profile_frame(p, fr[j]);

			ALLOC_GROW(out->v, out->nr + 1, out->alloc);
			out->v[out->nr++] =
			    (struct item){.name = f ? f->name : 0,
					  .file = f ? f->file : 0,
					  .line = f ? f->line : 0,
					  .module = f ? f->module : 0,
					  .loc = locs[i],
					  .kind = f ? f->kind : PROFILE_FRAME_NATIVE,
					  .tailcall = f ? f->tailcall : 0};
		}
	}
}

static void add_us(struct strbuf *sb, uint64_t ns)
{
	strbuf_addf(sb, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}

/* The process id to put in every event: meta "pid", else the first thread's tid, else 1. */
static uint64_t trace_pid(const struct profile *p)
{
	uint64_t pid = profile_meta_u64(p, "pid");
	const struct profile_thread *t = profile_thread_get(p, 0);

	if (pid)
		return pid;
	return t && t->tid > 0 ? (uint64_t)t->tid : 1;
}

/* The process track of thread @t: its own process in a recording of several, else @pid. */
static uint64_t thread_pid(const struct profile_thread *t, uint64_t pid)
{
	return t && t->pid > 0 ? (uint64_t)t->pid : pid;
}

static const char *thread_name(const struct profile *p, const struct profile_thread *t, char *buf,
			       size_t size)
{
	const char *name = profile_str(p, t->name);

	if (name && *name)
		return name;
	snprintf(buf, size, "tid %d", (int)t->tid);
	return buf;
}

/* counters */

struct cpoint {
	uint64_t t;
	double v;
	uint32_t name; /* index into the names */
};

struct counters {
	char **names;
	size_t nr_names, alloc_names;
	struct cpoint *v;
	size_t nr, alloc;
};

/* Parse meta "counters" and "counter:NAME" ("T=V T=V ..."); malformed pairs are skipped. */
static void counters_parse(const struct profile *p, struct counters *c)
{
	const char *list = profile_meta(p, "counters"), *s;

	while (list && *list) {
		size_t len;
		char *name, *key;

		list += strspn(list, " \t");
		len = strcspn(list, " \t");
		if (!len)
			break;
		name = xstrndup(list, len);
		list += len;
		key = xasprintf("counter:%s", name);
		s = profile_meta(p, key);
		free(key);
		ALLOC_GROW(c->names, c->nr_names + 1, c->alloc_names);
		c->names[c->nr_names] = name;
		while (s && *s) {
			unsigned long long t;
			const char *vs;
			double v;
			char *end;

			s += strspn(s, " \t");
			if (!*s)
				break;
			errno = 0;
			if (*s < '0' || *s > '9')
				goto skip;
			t = strtoull(s, &end, 10);
			if (errno || *end != '=')
				goto skip;
			vs = end + 1;
			v = strtod(vs, &end);
			if (errno || end == vs || (*end && *end != ' ' && *end != '\t') ||
			    !isfinite(v))
				goto skip;
			ALLOC_GROW(c->v, c->nr + 1, c->alloc);
			c->v[c->nr++] = (struct cpoint){t, v, (uint32_t)c->nr_names};
			s = end;
			continue;
		skip:
			s += strcspn(s, " \t");
		}
		c->nr_names++;
	}
}

static void counters_release(struct counters *c)
{
	size_t i;

	for (i = 0; i < c->nr_names; i++)
		free(c->names[i]);
	free(c->names);
	free(c->v);
}

/* slices */

struct open {
	struct item it;
	uint64_t start;
};

struct tstate {
	struct open *v;
	size_t nr, alloc;
	uint64_t last;
};

struct slice {
	uint32_t thread, depth;
	uint64_t start, end;
	struct item it;
};

struct slices {
	struct slice *v;
	size_t nr, alloc;
	const struct profile *p;
	uint32_t *rank; /* thread index -> position by tid */
};

static void close_to(struct slices *sl, struct tstate *ts, uint32_t thread, size_t depth,
		     uint64_t end)
{
	while (ts->nr > depth) {
		ts->nr--;
		ALLOC_GROW(sl->v, sl->nr + 1, sl->alloc);
		sl->v[sl->nr++] = (struct slice){thread, (uint32_t)ts->nr, ts->v[ts->nr].start, end,
						 ts->v[ts->nr].it};
	}
}

static struct slices *cmp_ctx;

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	uint32_t rx = cmp_ctx->rank[x->thread], ry = cmp_ctx->rank[y->thread];

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth); /* parent first */
}

/* Thread indexes ordered by tid: rank[idx] = position. */
static uint32_t *thread_ranks(const struct profile *p)
{
	size_t nr = profile_nr_threads(p), i, k;
	uint32_t *order = xmalloc((nr + 1) * sizeof(*order));
	uint32_t *rank = xmalloc((nr + 1) * sizeof(*rank));

	for (i = 0; i < nr; i++) {
		for (k = i; k > 0 && profile_thread_get(p, order[k - 1])->tid >
					 profile_thread_get(p, (uint32_t)i)->tid;
		     k--)
			order[k] = order[k - 1];
		order[k] = (uint32_t)i;
	}
	for (i = 0; i < nr; i++)
		rank[order[i]] = (uint32_t)i;
	free(order);
	return rank;
}

static void build_slices(const struct profile *p, struct slices *sl, uint64_t period)
{
	size_t n, i, c, nr_threads = profile_nr_threads(p);
	const struct profile_sample *ks = profile_samples(p, &n);
	struct tstate *ts = xcalloc(nr_threads + 1, sizeof(*ts));
	struct items items = {0};

	for (i = 0; i < n; i++) {
		struct tstate *t;

		if (ks[i].thread >= nr_threads)
			continue;
		t = &ts[ks[i].thread];
		/* a pause (or time going backwards) ends everything that was open */
		if (t->nr && (ks[i].time_ns < t->last || ks[i].time_ns - t->last > 2 * period))
			close_to(sl, t, ks[i].thread, 0, t->last + period);
		stack_items(p, ks[i].stack, &items);
		for (c = 0; c < t->nr && c < items.nr && item_eq(&t->v[c].it, &items.v[c]); c++)
			;
		close_to(sl, t, ks[i].thread, c, ks[i].time_ns);
		for (; c < items.nr; c++) {
			ALLOC_GROW(t->v, t->nr + 1, t->alloc);
			t->v[t->nr++] = (struct open){items.v[c], ks[i].time_ns};
		}
		t->last = ks[i].time_ns;
	}
	for (i = 0; i < nr_threads; i++) {
		close_to(sl, &ts[i], (uint32_t)i, 0, ts[i].last + period);
		free(ts[i].v);
	}
	free(ts);
	free(items.v);
	cmp_ctx = sl;
	if (sl->nr)
		qsort(sl->v, sl->nr, sizeof(*sl->v), cmp_slice);
}

/* stalls (meta "stalls"): slices on tracks of their own, one per lane of non-overlapping
 * stalls (they cannot nest with the watched thread's sample slices) */

#define STALL_TID_BASE 0x40000000 /* above any Linux tid (PID_MAX_LIMIT is 2^22) */

struct stalls {
	struct stall *v;
	size_t nr;
	uint32_t *lane; /* per stall */
	uint32_t nr_lanes;
};

static int cmp_stall_start(const void *a, const void *b)
{
	const struct stall *x = a, *y = b;

	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static void stalls_load(const struct profile *p, struct stalls *s)
{
	uint64_t *lane_end = NULL;
	size_t i;

	s->nr = stall_meta_parse(profile_meta(p, "stalls"), &s->v);
	if (!s->nr)
		return;
	qsort(s->v, s->nr, sizeof(*s->v), cmp_stall_start);
	s->lane = xcalloc(s->nr, sizeof(*s->lane));
	lane_end = xcalloc(s->nr, sizeof(*lane_end));
	for (i = 0; i < s->nr; i++) {
		uint64_t end = s->v[i].start_ns + s->v[i].duration_ns;
		uint32_t l;

		if (end < s->v[i].start_ns)
			end = UINT64_MAX; /* hostile duration */
		for (l = 0; l < s->nr_lanes && lane_end[l] > s->v[i].start_ns; l++)
			;
		if (l == s->nr_lanes)
			s->nr_lanes++;
		lane_end[l] = end;
		s->lane[i] = l;
	}
	free(lane_end);
}

static const char *stall_thread_name(const struct profile *p, pid_t tid, char *buf, size_t size)
{
	for (size_t i = 0; i < profile_nr_threads(p); i++) {
		const struct profile_thread *t = profile_thread_get(p, (uint32_t)i);

		if (t->tid == tid)
			return thread_name(p, t, buf, size);
	}
	snprintf(buf, size, "tid %d", (int)tid);
	return buf;
}

static void add_stall_lanes(struct strbuf *sb, const struct profile *p, uint64_t pid,
			    const struct stalls *s)
{
	char name[160], tbuf[96];

	for (uint32_t l = 0; l < s->nr_lanes; l++) {
		/* name the lane after the thread of its first stall */
		size_t i;

		for (i = 0; i < s->nr && s->lane[i] != l; i++)
			;
		snprintf(name, sizeof(name), "stalls of %s",
			 i < s->nr ? stall_thread_name(p, s->v[i].tid, tbuf, sizeof(tbuf)) : "?");
		strbuf_addf(sb,
			    ",\n  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %" PRIu64
			    ", \"tid\": %u, \"args\": {\"name\": ",
			    pid, STALL_TID_BASE + l);
		json_add_str(sb, name);
		strbuf_addstr(sb, "}}");
	}
}

static void add_stalls(struct strbuf *sb, const struct profile *p, uint64_t pid, uint64_t base,
		       const struct stalls *s)
{
	struct items items = {0};
	char *name;

	for (size_t i = 0; i < s->nr; i++) {
		const struct stall *st = &s->v[i];
		uint64_t dur = st->start_ns + st->duration_ns < st->start_ns
				   ? UINT64_MAX - st->start_ns
				   : st->duration_ns;

		strbuf_addstr(sb, ",\n  {\"ph\": \"X\", \"name\": ");
		name = xasprintf("stall: %s", st->reason);
		json_add_str(sb, name);
		free(name);
		strbuf_addf(sb, ", \"cat\": \"stall\", \"pid\": %" PRIu64 ", \"tid\": %u, \"ts\": ",
			    pid, STALL_TID_BASE + s->lane[i]);
		add_us(sb, st->start_ns - base);
		strbuf_addstr(sb, ", \"dur\": ");
		add_us(sb, dur);
		strbuf_addf(sb,
			    ", \"args\": {\"kind\": \"%s\", \"thread\": %d, \"cut\": %s, "
			    "\"reason\": ",
			    stall_kind_name(st->kind), (int)st->tid, st->cut ? "true" : "false");
		json_add_str(sb, st->reason);
		if (st->stack != STALL_NO_STACK && st->stack < profile_nr_stacks(p)) {
			stack_items(p, st->stack, &items);
			strbuf_addstr(sb, ", \"stack\": [");
			for (size_t j = 0; j < items.nr; j++) {
				if (j)
					strbuf_addstr(sb, ", ");
				add_item_name(sb, p, &items.v[j]);
			}
			strbuf_addch(sb, ']');
		}
		strbuf_addstr(sb, "}}");
	}
	free(items.v);
}

static int finish(FILE *f, const struct strbuf *sb)
{
	errno = 0;
	if (fwrite(sb->buf, 1, sb->len, f) != sb->len || fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

static void add_metadata(struct strbuf *sb, const struct profile *p, uint64_t pid,
			 const uint32_t *rank)
{
	const char *comm = profile_meta(p, "comm");
	size_t nr = profile_nr_threads(p), i, k;
	char buf[32];

	strbuf_addf(sb,
		    "  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %" PRIu64
		    ", \"tid\": %" PRIu64 ", \"args\": {\"name\": ",
		    pid, pid);
	if (comm && *comm) {
		json_add_str(sb, comm);
	} else {
		snprintf(buf, sizeof(buf), "pid %" PRIu64, pid);
		json_add_str(sb, buf);
	}
	strbuf_addstr(sb, "}}");
	/* a process track for each other process of the recording (followed children) */
	for (i = 0; i < profile_nr_processes(p) && profile_multi_process(p); i++) {
		const struct profile_process *pr = profile_process_get(p, (uint32_t)i);
		const char *name = profile_process_name(p, pr->pid);

		if ((uint64_t)pr->pid == pid)
			continue;
		strbuf_addf(
		    sb,
		    ",\n  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": %d, "
		    "\"args\": {\"name\": ",
		    (int)pr->pid, (int)pr->pid);
		if (name && *name) {
			json_add_str(sb, name);
		} else {
			snprintf(buf, sizeof(buf), "pid %d", (int)pr->pid);
			json_add_str(sb, buf);
		}
		strbuf_addstr(sb, "}}");
	}
	for (k = 0; k < nr; k++) {
		const struct profile_thread *t = NULL;
		char tbuf[32];

		for (i = 0; i < nr; i++)
			if (rank[i] == k)
				t = profile_thread_get(p, (uint32_t)i);
		if (!t)
			continue;
		strbuf_addf(sb,
			    ",\n  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %" PRIu64
			    ", \"tid\": %d, \"args\": {\"name\": ",
			    thread_pid(t, pid), (int)t->tid);
		json_add_str(sb, thread_name(p, t, tbuf, sizeof(tbuf)));
		strbuf_addstr(sb, "}}");
	}
}

static void add_other_data(struct strbuf *sb, const struct profile *p)
{
	static const char *const keys[] = {"pid", "comm", "period_ns", "start_time_ns",
					   "duration_ns"};
	size_t i;

	strbuf_addstr(sb, "{\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"tool\": \"perch\"");
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *v = profile_meta(p, keys[i]);

		if (!v)
			continue;
		strbuf_addf(sb, ", \"%s\": ", keys[i]);
		json_add_str(sb, v);
	}
	strbuf_addstr(sb, "},\n");
}

/* Android frames (meta "frames", framestats.h): "frame" / "slow frame" / "frozen frame"
 * slices on tracks "frames" of their own; a frame can still be rendering when the next one
 * starts, so overlapping frames go to further lanes ("frames 2", ...) */

#define FRAME_TID_BASE 0x48000000 /* above any tid, apart from the stall lanes */

struct frames {
	struct framestats_frame *v;
	size_t nr;
	uint32_t *lane; /* per frame */
	uint32_t nr_lanes;
};

static void frames_load(const struct profile *p, struct frames *fr)
{
	uint64_t *lane_end;

	fr->nr = framestats_meta_parse(profile_meta(p, "frames"), &fr->v);
	if (!fr->nr)
		return;
	fr->lane = xcalloc(fr->nr, sizeof(*fr->lane));
	lane_end = xcalloc(fr->nr, sizeof(*lane_end));
	for (size_t i = 0; i < fr->nr; i++) { /* sorted by start */
		uint32_t l;

		for (l = 0; l < fr->nr_lanes && lane_end[l] > fr->v[i].start_ns; l++)
			;
		if (l == fr->nr_lanes)
			fr->nr_lanes++;
		lane_end[l] = fr->v[i].end_ns;
		fr->lane[i] = l;
	}
	free(lane_end);
}

static void add_frames(struct strbuf *sb, uint64_t pid, uint64_t base, const struct frames *fr)
{
	static const char *const names[] = {
	    [FRAMESTATS_OK] = "frame",
	    [FRAMESTATS_SLOW] = "slow frame",
	    [FRAMESTATS_FROZEN] = "frozen frame",
	};

	for (uint32_t l = 0; l < fr->nr_lanes; l++) {
		strbuf_addf(sb,
			    ",\n  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %" PRIu64
			    ", \"tid\": %u, \"args\": {\"name\": \"frames%s",
			    pid, FRAME_TID_BASE + l, l ? " " : "");
		if (l)
			strbuf_addf(sb, "%u", l + 1);
		strbuf_addstr(sb, "\"}}");
	}
	for (size_t i = 0; i < fr->nr; i++) {
		const struct framestats_frame *f = &fr->v[i];
		enum framestats_class c = framestats_classify(f);

		strbuf_addf(
		    sb,
		    ",\n  {\"ph\": \"X\", \"name\": \"%s\", \"cat\": \"frame\", \"pid\": %" PRIu64
		    ", \"tid\": %u, \"ts\": ",
		    names[c], pid, FRAME_TID_BASE + fr->lane[i]);
		add_us(sb, f->start_ns - base);
		strbuf_addstr(sb, ", \"dur\": ");
		add_us(sb, f->end_ns - f->start_ns);
		strbuf_addf(sb, ", \"args\": {\"budget_ms\": %.3f, \"slow\": %s, \"frozen\": %s}}",
			    (double)f->budget_ns / 1e6, c == FRAMESTATS_SLOW ? "true" : "false",
			    c == FRAMESTATS_FROZEN ? "true" : "false");
	}
}

int out_chrome_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct slices sl = {.p = p};
	struct counters c = {0};
	struct stalls stalls = {0};
	struct frames frames = {0};
	struct strbuf sb = STRBUF_INIT;
	uint64_t period = out_period_ns(p), pid = trace_pid(p), base = UINT64_MAX;
	size_t n, i;
	const struct profile_sample *ks = profile_samples(p, &n);
	int ret;

	(void)o;
	sl.rank = thread_ranks(p);
	counters_parse(p, &c);
	for (i = 0; i < n; i++)
		if (ks[i].time_ns < base)
			base = ks[i].time_ns;
	for (i = 0; i < c.nr; i++)
		if (c.v[i].t < base)
			base = c.v[i].t;
	stalls_load(p, &stalls);
	for (i = 0; i < stalls.nr; i++)
		if (stalls.v[i].start_ns < base)
			base = stalls.v[i].start_ns;
	frames_load(p, &frames);
	if (frames.nr && frames.v[0].start_ns < base)
		base = frames.v[0].start_ns;
	build_slices(p, &sl, period);

	add_other_data(&sb, p);
	strbuf_addstr(&sb, "\"traceEvents\": [\n");
	add_metadata(&sb, p, pid, sl.rank);
	add_stall_lanes(&sb, p, pid, &stalls);
	for (i = 0; i < sl.nr; i++) {
		const struct slice *s = &sl.v[i];
		const struct profile_thread *t = profile_thread_get(p, s->thread);
		const char *file = profile_str(p, s->it.file), *mod = profile_str(p, s->it.module);

		strbuf_addstr(&sb, ",\n  {\"ph\": \"X\", \"name\": ");
		add_item_name(&sb, p, &s->it);
		strbuf_addf(&sb, ", \"cat\": \"%s\", \"pid\": %" PRIu64 ", \"tid\": %d, \"ts\": ",
			    kind_name(s->it.kind), thread_pid(t, pid), (int)t->tid);
		add_us(&sb, s->start - base);
		strbuf_addstr(&sb, ", \"dur\": ");
		add_us(&sb, s->end - s->start);
		if ((file && *file) || (mod && *mod)) {
			const char *sep = "";

			strbuf_addstr(&sb, ", \"args\": {");
			if (file && *file) {
				strbuf_addstr(&sb, "\"file\": ");
				json_add_str(&sb, file);
				if (s->it.line)
					strbuf_addf(&sb, ", \"line\": %" PRIu32, s->it.line);
				sep = ", ";
			}
			if (mod && *mod) {
				strbuf_addf(&sb, "%s\"module\": ", sep);
				json_add_str(&sb, mod);
			}
			strbuf_addch(&sb, '}');
		}
		strbuf_addch(&sb, '}');
	}
	add_stalls(&sb, p, pid, base, &stalls);
	add_frames(&sb, pid, base, &frames);
	for (i = 0; i < c.nr; i++) {
		strbuf_addstr(&sb, ",\n  {\"ph\": \"C\", \"name\": ");
		json_add_str(&sb, c.names[c.v[i].name]);
		strbuf_addf(&sb, ", \"pid\": %" PRIu64 ", \"ts\": ", pid);
		add_us(&sb, c.v[i].t - base);
		strbuf_addf(&sb, ", \"args\": {\"value\": %.15g}}", c.v[i].v);
	}
	strbuf_addstr(&sb, "\n]\n}\n");
	ret = finish(f, &sb);
	strbuf_release(&sb);
	counters_release(&c);
	free(stalls.v);
	free(stalls.lane);
	free(frames.v);
	free(frames.lane);
	free(sl.v);
	free(sl.rank);
	return ret;
}

/* stackFrames + samples */

struct node {
	struct item it;
	uint32_t parent; /* node id, 0 = root */
	uint32_t child, next;
};

struct tree {
	struct node *v; /* v[0] is the root; stackFrames id = node index */
	size_t nr, alloc;
};

static uint32_t tree_child(struct tree *t, uint32_t parent, const struct item *it)
{
	uint32_t c;

	for (c = t->v[parent].child; c; c = t->v[c].next)
		if (item_eq(&t->v[c].it, it))
			return c;
	ALLOC_GROW(t->v, t->nr + 1, t->alloc);
	t->v[t->nr] = (struct node){.it = *it, .parent = parent, .next = t->v[parent].child};
	t->v[parent].child = (uint32_t)t->nr;
	return (uint32_t)t->nr++;
}

int out_chrome_samples_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct tree tr = {0};
	struct items items = {0};
	struct strbuf sb = STRBUF_INIT, samples = STRBUF_INIT;
	uint64_t pid = trace_pid(p), base = UINT64_MAX;
	uint32_t *rank = thread_ranks(p), *sf_of_stack;
	size_t n, i, j, nr_stacks = profile_nr_stacks(p);
	const struct profile_sample *ks = profile_samples(p, &n);
	int ret;

	(void)o;
	ALLOC_GROW(tr.v, 1, tr.alloc);
	tr.v[0] = (struct node){0};
	tr.nr = 1;
	sf_of_stack = xcalloc(nr_stacks + 1, sizeof(*sf_of_stack));
	for (i = 0; i < n; i++)
		if (ks[i].time_ns < base)
			base = ks[i].time_ns;
	for (i = 0; i < n; i++) {
		uint32_t node = 0;
		const struct profile_thread *t = profile_thread_get(p, ks[i].thread);

		if (!t || ks[i].stack >= nr_stacks)
			continue;
		if (!sf_of_stack[ks[i].stack]) {
			stack_items(p, ks[i].stack, &items);
			if (!items.nr) {
				ALLOC_GROW(items.v, 1, items.alloc);
				items.v[0] = (struct item){.loc = UINT32_MAX,
							   .frameless = 1,
							   .kind = PROFILE_FRAME_PSEUDO};
				items.nr = 1;
			}
			for (j = 0; j < items.nr; j++)
				node = tree_child(&tr, node, &items.v[j]);
			sf_of_stack[ks[i].stack] = node;
		}
		strbuf_addf(&samples, "%s  {\"pid\": %" PRIu64 ", \"tid\": %d, \"ts\": ",
			    samples.len ? ",\n" : "", thread_pid(t, pid), (int)t->tid);
		add_us(&samples, ks[i].time_ns - base);
		strbuf_addf(&samples,
			    ", \"name\": \"perch\", \"sf\": \"%" PRIu32 "\", \"weight\": 1}",
			    sf_of_stack[ks[i].stack]);
	}

	strbuf_addstr(&sb, "{\n\"traceEvents\": [\n");
	add_metadata(&sb, p, pid, rank);
	strbuf_addstr(&sb, "\n],\n\"stackFrames\": {");
	for (i = 1; i < tr.nr; i++) {
		const struct node *nd = &tr.v[i];

		strbuf_addf(&sb, "%s\n  \"%zu\": {\"name\": ", i > 1 ? "," : "", i);
		if (nd->it.loc == UINT32_MAX && !nd->it.name)
			json_add_str(&sb, "[no stack]");
		else
			add_item_name(&sb, p, &nd->it);
		strbuf_addf(&sb, ", \"category\": \"%s\"", kind_name(nd->it.kind));
		if (nd->parent)
			strbuf_addf(&sb, ", \"parent\": \"%" PRIu32 "\"", nd->parent);
		strbuf_addch(&sb, '}');
	}
	strbuf_addf(&sb, "\n},\n\"samples\": [\n%s\n]\n}\n", samples.buf);
	ret = finish(f, &sb);
	strbuf_release(&sb);
	strbuf_release(&samples);
	free(items.v);
	free(tr.v);
	free(rank);
	free(sf_of_stack);
	return ret;
}
