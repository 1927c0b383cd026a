/* speedscope writer (docs/design/formats.md section 3): shared frames, sampled profiles (one for
 * all threads, then one per thread), stacks root first, weights in nanoseconds. */
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

struct ss {
	const struct profile *p;
	struct strbuf frames; /* the JSON of shared.frames entries */
	uint32_t nr_frames;
	uint32_t *frame_idx; /* profile frame id -> speedscope index, UINT32_MAX = none yet */
	uint32_t *loc_idx;   /* frameless location id -> its synthetic frame */
	/* per stack: root-first frame indexes, in stack_data[stack_off[s] .. + stack_len[s]) */
	uint32_t *stack_off, *stack_len;
	uint32_t *stack_data;
	size_t stack_data_nr, stack_data_alloc;
};

/* The frame kind in a frame name: the suffixes of the folded writer (out-folded.c), "_[j]"
 * for compiled managed code (JIT or AOT) and "_[0]" for interpreted code. speedscope frames
 * have no kind or colour field (it colours by name), and a suffix rather than a prefix keeps
 * the method first for its search box and in the same spelling as perch's folded output
 * imported into speedscope. Native names (kernel ones included) get none. */
static const char *kind_suffix(uint8_t kind, int tailcall)
{
	/* a tail-call frame (profile.h) is "_[t]" before that, as in folded output */
	if (kind == PROFILE_FRAME_JIT || kind == PROFILE_FRAME_AOT)
		return tailcall ? "_[t]_[j]" : "_[j]";
	if (kind == PROFILE_FRAME_INTERP)
		return tailcall ? "_[t]_[0]" : "_[0]";
	return tailcall ? "_[t]" : NULL;
}

static uint32_t add_frame_json(struct ss *s, const char *name, const char *suffix, const char *file,
			       uint32_t line)
{
	if (s->nr_frames)
		strbuf_addstr(&s->frames, ",\n");
	strbuf_addstr(&s->frames, "    {\"name\": ");
	if (suffix) {
		char *full = xasprintf("%s%s", name && *name ? name : "[unknown]", suffix);

		json_add_str(&s->frames, full);
		free(full);
	} else {
		json_add_str(&s->frames, name && *name ? name : "[unknown]");
	}
	if (file && *file) {
		strbuf_addstr(&s->frames, ", \"file\": ");
		json_add_str(&s->frames, file);
		if (line)
			strbuf_addf(&s->frames, ", \"line\": %" PRIu32, line);
	}
	strbuf_addch(&s->frames, '}');
	return s->nr_frames++;
}

static uint32_t frame_index(struct ss *s, uint32_t fid)
{
	const struct profile_frame *f = profile_frame(s->p, fid);

	if (s->frame_idx[fid] == UINT32_MAX)
		s->frame_idx[fid] =
		    add_frame_json(s, f ? profile_str(s->p, f->name) : NULL,
				   f ? kind_suffix(f->kind, f->tailcall) : NULL,
				   f ? profile_str(s->p, f->file) : NULL, f ? f->line : 0);
	return s->frame_idx[fid];
}

/* A location without frames is shown as "[libfoo.so+0x1a2b]" (or "0x..." without a module). */
static uint32_t location_index(struct ss *s, uint32_t loc)
{
	const struct profile_location *l = profile_location(s->p, loc);
	char *name;

	if (s->loc_idx[loc] != UINT32_MAX)
		return s->loc_idx[loc];
	if (l && l->module)
		name = xasprintf("[%s+0x%" PRIx64 "]", path_base(profile_str(s->p, l->module)),
				 l->addr);
	else
		name = xasprintf("0x%" PRIx64, l ? l->addr : 0);
	s->loc_idx[loc] = add_frame_json(s, name, NULL, NULL, 0);
	free(name);
	return s->loc_idx[loc];
}

static void push_idx(struct ss *s, uint32_t v)
{
	ALLOC_GROW(s->stack_data, s->stack_data_nr + 1, s->stack_data_alloc);
	s->stack_data[s->stack_data_nr++] = v;
}

/* Resolve @stack into root-first frame indexes once. */
static void resolve_stack(struct ss *s, uint32_t stack)
{
	const uint32_t *locs;
	size_t n, i, nf, j;

	if (s->stack_off[stack] != UINT32_MAX)
		return;
	s->stack_off[stack] = (uint32_t)s->stack_data_nr;
	locs = profile_stack(s->p, stack, &n);
	for (i = n; i-- > 0;) {
		const uint32_t *fr = profile_location_frames(s->p, locs[i], &nf);

		if (!nf)
			push_idx(s, location_index(s, locs[i]));
		for (j = nf; j-- > 0;) /* outermost (the real function) first */
			push_idx(s, frame_index(s, fr[j]));
	}
	s->stack_len[stack] = (uint32_t)(s->stack_data_nr - s->stack_off[stack]);
}

/* One run of identical consecutive samples. */
struct run {
	uint32_t thread, stack;
	uint64_t weight;
};

struct runs {
	struct run *v;
	size_t nr, alloc;
	uint64_t period;
};

static void add_run(struct runs *r, uint32_t thread, uint32_t stack, uint64_t weight)
{
	ALLOC_GROW(r->v, r->nr + 1, r->alloc);
	r->v[r->nr++] = (struct run){thread, stack, weight};
}

static void collect_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct runs *r = arg;

	add_run(r, thread, stack, count * r->period);
}

/* One sampled profile of the runs of @thread (UINT32_MAX: all threads). */
static void add_profile(struct ss *s, struct strbuf *out, const struct runs *r, uint32_t thread,
			const char *name, uint64_t start)
{
	struct strbuf w = STRBUF_INIT;
	uint64_t total = 0, weight = 0;
	uint32_t prev = UINT32_MAX;
	size_t i, j, n = 0;

	strbuf_addstr(out, "    {\"type\": \"sampled\", \"name\": ");
	json_add_str(out, name);
	strbuf_addstr(out, ", \"unit\": \"nanoseconds\",\n     \"samples\": [");
	for (i = 0; i <= r->nr; i++) {
		const struct run *ru = i < r->nr ? &r->v[i] : NULL;

		if (ru && thread != UINT32_MAX && ru->thread != thread)
			continue;
		if (ru && ru->stack == prev) { /* merge with the previous sample */
			weight += ru->weight;
			continue;
		}
		if (prev != UINT32_MAX) {
			strbuf_addstr(out, n ? ", [" : "[");
			for (j = 0; j < s->stack_len[prev]; j++)
				strbuf_addf(out, "%s%" PRIu32, j ? ", " : "",
					    s->stack_data[s->stack_off[prev] + j]);
			strbuf_addch(out, ']');
			strbuf_addf(&w, "%s%" PRIu64, n ? ", " : "", weight);
			total += weight;
			n++;
		}
		if (ru) {
			prev = ru->stack;
			weight = ru->weight;
		}
	}
	strbuf_addf(out, "],\n     \"weights\": [%s],\n", w.buf);
	strbuf_addf(out, "     \"startValue\": %" PRIu64 ", \"endValue\": %" PRIu64 "}", start,
		    start + total);
	strbuf_release(&w);
}

int out_speedscope_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	int multi = profile_multi_process(p);
	struct ss s = {.p = p};
	struct runs r = {.period = out_period_ns(p)};
	struct strbuf profiles = STRBUF_INIT, head = STRBUF_INIT;
	size_t nr_frames = profile_nr_frames(p), nr_locs = profile_nr_locations(p);
	size_t nr_stacks = profile_nr_stacks(p), nr_threads = profile_nr_threads(p), n, i;
	const struct profile_sample *ks = profile_samples(p, &n);
	const char *pid = profile_meta(p, "pid"), *comm = profile_meta(p, "comm");
	uint64_t base = 0, *first;
	uint32_t *order;
	char *title;
	int ret = 0;

	(void)o;
	strbuf_init(&s.frames, 0);
	s.frame_idx = xmalloc((nr_frames + 1) * sizeof(*s.frame_idx));
	memset(s.frame_idx, 0xff, (nr_frames + 1) * sizeof(*s.frame_idx));
	s.loc_idx = xmalloc((nr_locs + 1) * sizeof(*s.loc_idx));
	memset(s.loc_idx, 0xff, (nr_locs + 1) * sizeof(*s.loc_idx));
	s.stack_off = xmalloc((nr_stacks + 1) * sizeof(*s.stack_off));
	memset(s.stack_off, 0xff, (nr_stacks + 1) * sizeof(*s.stack_off));
	s.stack_len = xcalloc(nr_stacks + 1, sizeof(*s.stack_len));
	first = xcalloc(nr_threads + 1, sizeof(*first));

	if (n && n == profile_total_samples(p)) {
		/* time order: one run per sample, merged when written */
		base = ks[0].time_ns;
		for (i = 0; i < n; i++)
			if (ks[i].time_ns < base)
				base = ks[i].time_ns;
		for (i = n; i-- > 0;)
			if (ks[i].thread < nr_threads)
				first[ks[i].thread] = ks[i].time_ns - base;
		for (i = 0; i < n; i++)
			add_run(&r, ks[i].thread, ks[i].stack, r.period);
	} else {
		profile_foreach_count(p, collect_count, &r);
	}
	for (i = 0; i < r.nr; i++)
		resolve_stack(&s, r.v[i].stack);

	add_profile(&s, &profiles, &r, UINT32_MAX, "all threads", 0);
	/* threads by tid (their index order is the order they were seen) */
	order = xmalloc((nr_threads + 1) * sizeof(*order));
	for (i = 0; i < nr_threads; i++) {
		size_t k = i;

		while (k > 0 && profile_thread_get(p, order[k - 1])->tid >
				    profile_thread_get(p, (uint32_t)i)->tid) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = (uint32_t)i;
	}
	for (i = 0; i < nr_threads; i++) {
		const struct profile_thread *t = profile_thread_get(p, order[i]);
		const char *tn = profile_str(p, t->name);
		char *name;

		if (!t->samples)
			continue;
		if (multi && t->pid) {
			/* several processes (followed children): each profile names its own */
			const char *pn = profile_process_name(p, t->pid);

			name = xasprintf("%s-%d/%s (tid %d)", pn && *pn ? pn : "[unknown]",
					 (int)t->pid, tn && *tn ? tn : "[unknown]", (int)t->tid);
		} else {
			name = xasprintf("%s (tid %d)", tn && *tn ? tn : "[unknown]", (int)t->tid);
		}
		strbuf_addstr(&profiles, ",\n");
		add_profile(&s, &profiles, &r, order[i], name, first[order[i]]);
		free(name);
	}

	if (pid)
		title = xasprintf("perch %s%spid %s", comm ? comm : "", comm ? " " : "", pid);
	else
		title = xasprintf("perch%s%s", comm ? " " : "", comm ? comm : "");
	strbuf_addstr(&head,
		      "{\n  \"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
		      "  \"exporter\": \"perch\",\n  \"name\": ");
	json_add_str(&head, title);
	errno = 0;
	fprintf(f,
		"%s,\n  \"activeProfileIndex\": 0,\n  \"shared\": {\"frames\": [\n%s\n  ]},\n"
		"  \"profiles\": [\n%s\n  ]\n}\n",
		head.buf, s.frames.buf, profiles.buf);
	if (fflush(f) || ferror(f))
		ret = errno ? -errno : -EIO;

	free(title);
	free(order);
	free(first);
	free(r.v);
	free(s.frame_idx);
	free(s.loc_idx);
	free(s.stack_off);
	free(s.stack_len);
	free(s.stack_data);
	strbuf_release(&s.frames);
	strbuf_release(&profiles);
	strbuf_release(&head);
	return ret;
}
