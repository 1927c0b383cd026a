/* Windows of a recording written while it runs (see include/perch/record/record-ring.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perch/base/log.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/proc/stall.h"
#include "perch/profile/profile.h"
#include "perch/record/record-opts.h"
#include "perch/record/record-ring.h"

#define PRUNE_NS (250 * 1000000ULL) /* drop old samples at most this often */
/* a window or chunk is written once a sample this much past its end came: the samples of
 * one tick reach the worker in a burst, a thread that stopped late a little after */
#define SETTLE_NS (100 * 1000000ULL)

struct save {
	int id;
	uint64_t at, lo, until;
	char why[16];
	char *note;
	int done;
};

struct record_ring {
	struct record_ring_opts o;
	struct profile *p;
	struct record_ring_stats st;
	uint64_t ring_ns, chunk_ns;
	int started; /* a sample came */
	uint64_t last_ns, pruned_ns;
	uint64_t chunk_end; /* the end of the chunk being filled (0: before the first sample) */
	struct save *saves; /* asked for and not written yet */
	size_t nr_saves, alloc_saves;
	int asked;	      /* saves asked for (the next one's id) */
	struct stall *stalls; /* found and still in the ring, in time order */
	size_t nr_stalls, alloc_stalls;
	struct series {	   /* a counter's points still in the ring, in time order */
		char *key; /* "counter:NAME" */
		struct point {
			uint64_t t;
			double v;
		} * v;
		size_t n, alloc;
	} * series;
	size_t nr_series, alloc_series;
};

struct record_ring *record_ring_new(const struct record_ring_opts *o, struct profile *p)
{
	struct record_ring *r = xcalloc(1, sizeof(*r));

	r->o = *o;
	r->p = p;
	r->ring_ns = (uint64_t)(o->ring_s * 1e9);
	r->chunk_ns = (uint64_t)(o->chunk_s * 1e9);
	profile_keep_samples(p, 1);
	return r;
}

void record_ring_free(struct record_ring *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_saves; i++)
		free(r->saves[i].note);
	free(r->saves);
	free(r->stalls);
	for (size_t i = 0; i < r->nr_series; i++) {
		free(r->series[i].key);
		free(r->series[i].v);
	}
	free(r->series);
	free(r);
}

const struct record_ring_stats *record_ring_stats(const struct record_ring *r)
{
	return &r->st;
}

/* ---- file names ---- */

/* Where @path's ending starts: its format's @ext, else the last '.' of the file name, else
 * its end. */
static size_t stem_len(const char *path, const char *ext)
{
	size_t n = strlen(path), e = ext ? strlen(ext) : 0;
	const char *base = strrchr(path, '/'), *dot;

	if (e && n > e && !strcmp(path + n - e, ext))
		return n - e;
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	return dot && dot > base ? (size_t)(dot - path) : n;
}

char *record_ring_name(const char *path, const char *ext, const char *tag)
{
	size_t at = stem_len(path, ext);

	return xasprintf("%.*s%s%s", (int)at, path, tag, path + at);
}

/* A name no file has yet: "-2", "-3" ... after @tag when two saves share a millisecond. */
static char *free_name(const char *path, const char *ext, const char *tag)
{
	char *name = record_ring_name(path, ext, tag);

	for (int i = 2; !access(name, F_OK) && i < 100; i++) {
		char *t = xasprintf("%s-%d", tag, i);

		free(name);
		name = record_ring_name(path, ext, t);
		free(t);
	}
	return name;
}

/* "-20261126-101530.123-stall": the wall-clock time of @at_ns, and why. */
static void time_tag(const struct record_ring *r, uint64_t at_ns, const char *why, char *buf,
		     size_t size)
{
	uint64_t real =
	    r->o.start_realtime_ns + (at_ns > r->st.first_ns ? at_ns - r->st.first_ns : 0);
	time_t sec = (time_t)(real / 1000000000ULL);
	struct tm tm;
	char when[32];

	localtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	snprintf(buf, size, "-%s.%03u-%s", when, (unsigned)(real / 1000000ULL % 1000), why);
}

/* ---- writing a window ---- */

static int write_file(struct record_ring *r, const struct profile *w, const char *path,
		      const struct output_format *fmt)
{
	struct output_opts oo = {.lines = r->o.lines};
	struct output_file of;
	int ret = output_open(&of, path);

	if (ret >= 0) {
		ret = fmt->write(w, &oo, of.f);
		if (ret < 0)
			output_abort(&of);
		else
			ret = output_commit(&of);
	}
	if (ret < 0) {
		r->st.failed++;
		return log_errno(ret, "cannot write %s", path);
	}
	if (r->o.msgs)
		fprintf(r->o.msgs, "perch: wrote %s (%s)\n", path, fmt->name);
	return 0;
}

/* The stalls of the ring that overlap [@lo, @hi), their stacks copied into @w. */
static void window_stalls(const struct record_ring *r, struct profile *w, uint64_t lo, uint64_t hi)
{
	struct stall *v = xcalloc(r->nr_stalls + 1, sizeof(*v));
	size_t n = 0;
	char *text;

	for (size_t i = 0; i < r->nr_stalls; i++) {
		const struct stall *s = &r->stalls[i];

		if (s->start_ns >= hi || s->start_ns + s->duration_ns <= lo)
			continue;
		v[n] = *s;
		if (s->stack != STALL_NO_STACK)
			v[n].stack = profile_copy_stack(r->p, s->stack, w);
		n++;
	}
	text = stall_meta_format(v, n);
	profile_set_meta(w, "stalls", text);
	free(text);
	free(v);
}

/* The counter points of [@lo, @hi): meta "counters" names the series that have some. */
static void window_points(const struct record_ring *r, struct profile *w, uint64_t lo, uint64_t hi)
{
	struct strbuf names = STRBUF_INIT, pts = STRBUF_INIT;

	for (size_t i = 0; i < r->nr_series; i++) {
		const struct series *se = &r->series[i];

		strbuf_reset(&pts);
		for (size_t k = 0; k < se->n; k++)
			if (se->v[k].t >= lo && se->v[k].t < hi)
				strbuf_addf(&pts, "%s%" PRIu64 "=%.17g", pts.len ? " " : "",
					    se->v[k].t, se->v[k].v);
		if (!pts.len)
			continue;
		profile_set_meta(w, se->key, pts.buf);
		strbuf_addf(&names, "%s%s", names.len ? " " : "", se->key + strlen("counter:"));
	}
	profile_set_meta(w, "counters", names.len ? names.buf : "");
	strbuf_release(&names);
	strbuf_release(&pts);
}

/* The samples of [@lo, @hi) as a profile of their own, with the meta of the window. */
static struct profile *window(const struct record_ring *r, uint64_t lo, uint64_t hi)
{
	struct profile_copy_opts co = {.lo_ns = lo, .hi_ns = hi};
	struct profile *w = profile_copy(r->p, &co);
	size_t n;
	const struct profile_sample *s = profile_samples(w, &n);
	uint64_t first = UINT64_MAX, last = 0;
	char buf[32];

	for (size_t i = 0; i < n; i++) {
		first = s[i].time_ns < first ? s[i].time_ns : first;
		last = s[i].time_ns > last ? s[i].time_ns : last;
	}
	if (!n)
		first = last = lo;
	/* the clock the writers give the first sample, and the length covered */
	snprintf(buf, sizeof(buf), "%" PRIu64,
		 r->o.start_realtime_ns + (first > r->st.first_ns ? first - r->st.first_ns : 0));
	profile_set_meta(w, "start_time_ns", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, last - first + r->o.period_ns);
	profile_set_meta(w, "duration_ns", buf);
	window_stalls(r, w, lo, hi);
	window_points(r, w, lo, hi);
	return w;
}

/* Every -o as @w, each named by @tag (NULL: the -o name itself). 0 or -1. */
static int write_window(struct record_ring *r, const struct profile *w, const char *tag)
{
	int ret = 0;

	for (int i = 0; i < r->o.nr_outputs; i++) {
		const struct record_output *ro = &r->o.outputs[i];
		char *name = tag ? free_name(ro->path, ro->fmt->ext, tag) : xstrdup(ro->path);

		if (write_file(r, w, name, ro->fmt) < 0)
			ret = -1;
		free(name);
	}
	return ret;
}

/* ---- the dump of every thread at a trigger ---- */

static void dump_stack(const struct profile *p, uint32_t stack, struct strbuf *sb)
{
	size_t nlocs, k = 0;
	const uint32_t *locs = profile_stack(p, stack, &nlocs);

	for (size_t i = 0; i < nlocs; i++) {
		const struct profile_location *loc = profile_location(p, locs[i]);
		const char *module = profile_str(p, loc->module);
		size_t nf;
		const uint32_t *fr = profile_location_frames(p, locs[i], &nf);

		for (size_t j = 0; j < nf; j++) {
			const struct profile_frame *f = profile_frame(p, fr[j]);

			strbuf_addf(sb, "  #%-3zu %s", k++, profile_str(p, f->name));
			if (*module && f->kind != PROFILE_FRAME_PSEUDO)
				strbuf_addf(sb, " (%s+0x%" PRIx64 ")",
					    strrchr(module, '/') ? strrchr(module, '/') + 1
								 : module,
					    loc->addr);
			if (f->file && f->line)
				strbuf_addf(sb, " at %s:%u", profile_str(p, f->file), f->line);
			if (f->inlined)
				strbuf_addstr(sb, " [inlined]");
			strbuf_addch(sb, '\n');
		}
	}
}

/* Every thread's sample nearest to @at (within two periods), as text: what an ANR trace
 * shows, from the samples rather than a stop of its own. */
static void write_dump(struct record_ring *r, const struct save *sv, const char *tag)
{
	const struct profile *p = r->p;
	size_t n, nt = profile_nr_threads(p);
	const struct profile_sample *s = profile_samples(p, &n);
	size_t *best = xmalloc((nt ? nt : 1) * sizeof(*best));
	uint64_t reach = 2 * r->o.period_ns;
	struct strbuf sb = STRBUF_INIT;
	struct output_file of;
	char *name, *stem;
	int ret;

	for (size_t t = 0; t < nt; t++)
		best[t] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = s[i].time_ns > sv->at ? s[i].time_ns - sv->at : sv->at - s[i].time_ns;
		size_t *b = &best[s[i].thread];

		if (d <= reach &&
		    (*b == SIZE_MAX || d < (s[*b].time_ns > sv->at ? s[*b].time_ns - sv->at
								   : sv->at - s[*b].time_ns)))
			*b = i;
	}
	strbuf_addf(&sb, "# perch: every thread at +%.3f s of the recording, when %s\n",
		    (double)(sv->at - r->st.first_ns) / 1e9, sv->note ? sv->note : sv->why);
	for (size_t t = 0; t < nt; t++) {
		const struct profile_thread *th = profile_thread_get(p, (uint32_t)t);

		strbuf_addf(&sb, "\nthread %d (%s)", (int)th->tid, profile_str(p, th->name));
		if (th->pid)
			strbuf_addf(&sb, " of process %d", (int)th->pid);
		if (best[t] == SIZE_MAX) {
			strbuf_addstr(&sb, ": no sample then (gone, not started, or not running in "
					   "cpu mode)\n");
			continue;
		}
		strbuf_addf(&sb, ", state %c, %+.1f ms from the trigger\n",
			    s[best[t]].state ? s[best[t]].state : '?',
			    ((double)s[best[t]].time_ns - (double)sv->at) / 1e6);
		dump_stack(p, s[best[t]].stack, &sb);
	}
	free(best);
	stem = record_ring_name(r->o.outputs[0].path, r->o.outputs[0].fmt->ext, "");
	stem[stem_len(r->o.outputs[0].path, r->o.outputs[0].fmt->ext)] = '\0';
	name = xasprintf("%s%s-threads.txt", stem, tag);
	ret = output_open(&of, name);
	if (ret >= 0) {
		fputs(sb.buf, of.f);
		ret = output_commit(&of);
	}
	if (ret < 0) {
		r->st.failed++;
		log_errno(ret, "cannot write %s", name);
	} else if (r->o.msgs) {
		fprintf(r->o.msgs, "perch: wrote %s (every thread's stack)\n", name);
	}
	free(name);
	free(stem);
	strbuf_release(&sb);
}

/* ---- triggers and chunks ---- */

static void save_now(struct record_ring *r, struct save *sv)
{
	char tag[64];
	struct profile *w = window(r, sv->lo, sv->until + 1);

	time_tag(r, sv->at, sv->why, tag, sizeof(tag));
	write_window(r, w, tag);
	if (sv->note)
		write_dump(r, sv, tag);
	profile_free(w);
	sv->done = 1;
	r->st.saves++;
}

int record_ring_trigger(struct record_ring *r, const char *why, uint64_t at_ns, uint64_t until_ns,
			const char *note)
{
	struct save *sv;

	if (r->o.trigger_max && r->asked >= r->o.trigger_max) {
		r->st.ignored++;
		return -1;
	}
	ALLOC_GROW(r->saves, r->nr_saves + 1, r->alloc_saves);
	sv = &r->saves[r->nr_saves++];
	memset(sv, 0, sizeof(*sv));
	sv->id = r->asked++;
	r->st.triggered++;
	sv->at = at_ns;
	sv->lo = at_ns > r->ring_ns ? at_ns - r->ring_ns : 0;
	snprintf(sv->why, sizeof(sv->why), "%s", why);
	sv->note = note ? xstrdup(note) : NULL;
	sv->until = at_ns;
	record_ring_until(r, sv->id, until_ns);
	return sv->id;
}

void record_ring_until(struct record_ring *r, int handle, uint64_t until_ns)
{
	struct save *sv = NULL;

	for (size_t i = 0; i < r->nr_saves && !sv; i++)
		if (r->saves[i].id == handle && !r->saves[i].done)
			sv = &r->saves[i];
	if (!sv)
		return;
	if (until_ns < sv->at)
		until_ns = sv->at;
	if (until_ns > sv->at + r->ring_ns)
		until_ns = sv->at + r->ring_ns;
	sv->until = until_ns;
}

void record_ring_add_stalls(struct record_ring *r, const char *text)
{
	struct stall *v;
	size_t n = stall_meta_parse(text, &v);

	ALLOC_GROW(r->stalls, r->nr_stalls + n, r->alloc_stalls);
	memcpy(r->stalls + r->nr_stalls, v, n * sizeof(*v));
	r->nr_stalls += n;
	free(v);
}

void record_ring_add_points(struct record_ring *r, const char *key, const char *text)
{
	struct series *se = NULL;
	const char *s = text;

	if (strncmp(key, "counter:", 8))
		return;
	for (size_t i = 0; i < r->nr_series && !se; i++)
		if (!strcmp(r->series[i].key, key))
			se = &r->series[i];
	if (!se) {
		ALLOC_GROW(r->series, r->nr_series + 1, r->alloc_series);
		se = &r->series[r->nr_series++];
		memset(se, 0, sizeof(*se));
		se->key = xstrdup(key);
	}
	while (*s) {
		char *end;
		unsigned long long t;
		double v;

		s += strspn(s, " ");
		t = strtoull(s, &end, 10);
		if (end == s || *end != '=')
			break;
		s = end + 1;
		v = strtod(s, &end);
		if (end == s)
			break;
		s = end;
		ALLOC_GROW(se->v, se->n + 1, se->alloc);
		se->v[se->n++] = (struct point){(uint64_t)t, v};
	}
}

/* The chunk that ended at r->chunk_end: every sample before it not written yet. */
static void write_chunk(struct record_ring *r, uint64_t end)
{
	char tag[32];
	struct profile *w = window(r, 0, end);

	snprintf(tag, sizeof(tag), ".%04" PRIu64, r->st.chunks);
	if (profile_total_samples(w)) {
		write_window(r, w, tag);
		r->st.chunks++;
	}
	profile_free(w);
	profile_drop_samples_before(r->p, end);
}

/* Forget samples and stalls no window can need any more: older than the ring and than the
 * first pending save; for chunks, the stalls before the chunk being filled (chunks drop their
 * samples as they are written: a sample of a written chunk's time that comes late goes to
 * the next one). */
static void prune(struct record_ring *r, uint64_t now)
{
	uint64_t keep = 0;
	size_t k = 0;

	if (!r->chunk_ns && now > r->ring_ns + SETTLE_NS)
		keep = now - r->ring_ns - SETTLE_NS;
	for (size_t i = 0; i < r->nr_saves; i++)
		if (!r->saves[i].done && r->saves[i].lo < keep)
			keep = r->saves[i].lo;
	profile_drop_samples_before(r->p, keep);
	for (size_t i = 0; i < r->nr_saves; i++) {
		if (r->saves[i].done)
			free(r->saves[i].note);
		else
			r->saves[k++] = r->saves[i];
	}
	r->nr_saves = k;
	if (r->chunk_ns)
		keep = r->chunk_end - r->chunk_ns;
	k = 0;
	for (size_t i = 0; i < r->nr_stalls; i++)
		if (r->stalls[i].start_ns + r->stalls[i].duration_ns > keep)
			r->stalls[k++] = r->stalls[i];
	r->nr_stalls = k;
	for (size_t i = 0; i < r->nr_series; i++) {
		struct series *se = &r->series[i];
		size_t old = 0;

		while (old < se->n && se->v[old].t < keep)
			old++;
		memmove(se->v, se->v + old, (se->n - old) * sizeof(*se->v));
		se->n -= old;
	}
	r->pruned_ns = now;
}

void record_ring_sample(struct record_ring *r, uint64_t time_ns)
{
	size_t held;

	if (!r->started) {
		r->started = 1;
		r->st.first_ns = time_ns;
		r->chunk_end = time_ns + r->chunk_ns;
	}
	if (time_ns > r->last_ns)
		r->last_ns = time_ns;
	profile_samples(r->p, &held);
	if (held > r->st.held_max)
		r->st.held_max = held;
	for (size_t i = 0; i < r->nr_saves; i++)
		if (!r->saves[i].done && r->last_ns >= r->saves[i].until + SETTLE_NS)
			save_now(r, &r->saves[i]);
	while (r->chunk_ns && r->last_ns >= r->chunk_end + SETTLE_NS) {
		write_chunk(r, r->chunk_end);
		r->chunk_end += r->chunk_ns;
	}
	if (r->last_ns - r->pruned_ns >= PRUNE_NS)
		prune(r, r->last_ns);
}

int record_ring_finish(struct record_ring *r, uint64_t end_ns)
{
	uint64_t failed = r->st.failed;

	for (size_t i = 0; i < r->nr_saves; i++)
		if (!r->saves[i].done) {
			if (r->saves[i].until > end_ns)
				r->saves[i].until = end_ns;
			save_now(r, &r->saves[i]);
		}
	if (r->chunk_ns) {
		write_chunk(r, UINT64_MAX);
	} else {
		uint64_t last = r->last_ns > end_ns ? r->last_ns : end_ns;
		struct profile *w =
		    window(r, last > r->ring_ns ? last - r->ring_ns : 0, UINT64_MAX);

		write_window(r, w, NULL);
		profile_free(w);
	}
	return r->st.failed > failed ? -1 : 0;
}
