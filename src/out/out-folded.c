/* Folded stacks writer (docs/design/formats.md section 1): "thread-TID;root;...;leaf COUNT" per
 * line, lines aggregated and in byte order. Names are cleaned here; the profile keeps raw names.
 * A recording of several processes (followed children) puts the process first, in the form
 * of stackcollapse-perf.pl --tid: "process-PID/thread-TID;root;...;leaf COUNT". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/out/writers.h"
#include "perch/profile/diff.h"
#include "perch/profile/profile.h"

struct folded_line {
	char *text; /* the stack part, without the count */
	uint64_t count;
};

struct folded {
	const struct profile *p;
	const struct output_opts *o;
	int multi; /* profile_multi_process() */
	struct folded_line *lines;
	size_t nr, alloc;
	struct strbuf sb;
};

/* Append @s with ';', control characters (newlines included) and, when @no_spaces is set,
 * spaces replaced by '_'. Never appends nothing: an empty name becomes "[unknown]". */
static void add_clean(struct strbuf *sb, const char *s, int no_spaces)
{
	size_t start = sb->len;

	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == ';' || c < 0x20 || c == 0x7f || (no_spaces && c == ' '))
			c = '_';
		strbuf_addch(sb, (char)c);
	}
	if (sb->len == start)
		strbuf_addstr(sb, "[unknown]");
}

static void add_frame(struct folded *fo, const struct profile_frame *f)
{
	const char *file;

	add_clean(&fo->sb, profile_str(fo->p, f->name), 0);
	file = profile_str(fo->p, f->file);
	if (fo->o && fo->o->lines && file && *file &&
	    (f->line || f->kind == PROFILE_FRAME_INTERP)) {
		strbuf_addstr(&fo->sb, " (");
		add_clean(&fo->sb, path_base(file), 0);
		/* an interpreted frame whose line could not be read: ":?", never a guess */
		if (f->line)
			strbuf_addf(&fo->sb, ":%" PRIu32 ")", f->line);
		else
			strbuf_addstr(&fo->sb, ":?)");
	}
	/* a tail-call frame (profile.h): "_[t]", the same in pprof and speedscope names */
	if (f->tailcall)
		strbuf_addstr(&fo->sb, "_[t]");
	/* the palettes of flamegraph.pl look for these at the very end of a frame
	 * (docs/design/formats.md 1.4): compiled managed code, JIT or AOT (oat), is "_[j]" so
	 * --colors=java paints it as Java; interpreted code is async-profiler's "_[0]" ("_[i]"
	 * means inlined there) */
	if (f->kind == PROFILE_FRAME_JIT || f->kind == PROFILE_FRAME_AOT)
		strbuf_addstr(&fo->sb, "_[j]");
	else if (f->kind == PROFILE_FRAME_INTERP)
		strbuf_addstr(&fo->sb, "_[0]");
	else if (f->kind == PROFILE_FRAME_KERNEL)
		strbuf_addstr(&fo->sb, "_[k]");
}

/* One location, its frames outermost (the real function) first. */
static void add_location(struct folded *fo, uint32_t loc_id)
{
	const struct profile_location *loc = profile_location(fo->p, loc_id);
	const uint32_t *frames;
	size_t n, i;

	frames = profile_location_frames(fo->p, loc_id, &n);
	if (!loc || !n) {
		/* no frame at all (the sampler always gives one): still never an empty frame */
		const char *mod = loc ? profile_str(fo->p, loc->module) : NULL;

		if (mod && *mod) {
			strbuf_addch(&fo->sb, '[');
			add_clean(&fo->sb, path_base(mod), 0);
			strbuf_addf(&fo->sb, "+0x%" PRIx64 "]", loc->addr);
		} else if (loc) {
			strbuf_addf(&fo->sb, "0x%" PRIx64, loc->addr);
		} else {
			strbuf_addstr(&fo->sb, "[unknown]");
		}
		return;
	}
	for (i = n; i-- > 0;) {
		const struct profile_frame *f = profile_frame(fo->p, frames[i]);

		if (i != n - 1)
			strbuf_addch(&fo->sb, ';');
		if (f)
			add_frame(fo, f);
		else
			strbuf_addstr(&fo->sb, "[unknown]");
	}
}

static void collect(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct folded *fo = arg;
	const struct profile_thread *t = profile_thread_get(fo->p, thread);
	const uint32_t *locs;
	size_t n, i, end;

	strbuf_reset(&fo->sb);
	if (fo->multi && t && t->pid) {
		add_clean(&fo->sb, profile_process_name(fo->p, t->pid), 1);
		strbuf_addf(&fo->sb, "-%d/", (int)t->pid);
	}
	add_clean(&fo->sb, t ? profile_str(fo->p, t->name) : NULL, 1);
	strbuf_addf(&fo->sb, "-%d", t ? (int)t->tid : -1);
	locs = profile_stack(fo->p, stack, &n);
	if (!n)
		strbuf_addstr(&fo->sb, ";[no stack]");
	/* stacks are stored leaf first; folded lines go root first */
	for (i = n; i-- > 0;) {
		strbuf_addch(&fo->sb, ';');
		add_location(fo, locs[i]);
	}
	/* "...;foo 12 COUNT" would read as a differential pair: keep the text from ending
	 * in " <digits>" */
	for (end = fo->sb.len; end > 0 && fo->sb.buf[end - 1] >= '0' && fo->sb.buf[end - 1] <= '9';)
		end--;
	if (end < fo->sb.len && end > 0 && fo->sb.buf[end - 1] == ' ')
		strbuf_addch(&fo->sb, '_');

	ALLOC_GROW(fo->lines, fo->nr + 1, fo->alloc);
	fo->lines[fo->nr].text = xstrdup(fo->sb.buf);
	fo->lines[fo->nr].count = count;
	fo->nr++;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

int out_folded_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct folded fo = {.p = p, .o = o, .multi = profile_multi_process(p)};
	size_t i, j;
	int ret = 0;

	strbuf_init(&fo.sb, 256);
	profile_foreach_count(p, collect, &fo);
	if (fo.nr)
		qsort(fo.lines, fo.nr, sizeof(*fo.lines), cmp_line);
	/* two different stacks can print the same text (e.g. two addresses of one
	 * function): one line with the summed count */
	for (i = 0; i < fo.nr; i = j) {
		uint64_t count = fo.lines[i].count;

		for (j = i + 1; j < fo.nr && !strcmp(fo.lines[i].text, fo.lines[j].text); j++)
			count += fo.lines[j].count;
		if (!ret && fprintf(f, "%s %" PRIu64 "\n", fo.lines[i].text, count) < 0)
			ret = errno ? -errno : -EIO;
	}
	for (i = 0; i < fo.nr; i++)
		free(fo.lines[i].text);
	free(fo.lines);
	strbuf_release(&fo.sb);
	if (!ret && fflush(f))
		ret = -errno;
	else if (!ret && ferror(f))
		ret = -EIO;
	return ret;
}

/* ---- diffs (difffolded.pl's two-column form) ---- */

/* The text of diff node @n: its group root frame first, then its frames. */
static void diff_path(const struct diff *d, uint32_t n, struct strbuf *sb)
{
	const struct diff_node *nd = diff_node(d, n);

	if (nd->depth > 1) {
		diff_path(d, nd->parent, sb);
		strbuf_addch(sb, ';');
		add_clean(sb, nd->name, 0);
		if (nd->kind == PROFILE_FRAME_JIT || nd->kind == PROFILE_FRAME_AOT)
			strbuf_addstr(sb, "_[j]");
		else if (nd->kind == PROFILE_FRAME_INTERP)
			strbuf_addstr(sb, "_[0]");
		else if (nd->kind == PROFILE_FRAME_KERNEL)
			strbuf_addstr(sb, "_[k]");
	} else {
		add_clean(sb, nd->name, 1);
	}
}

struct diff_line {
	char *text;
	uint64_t count[2];
};

static int cmp_diff_line(const void *a, const void *b)
{
	return strcmp(((const struct diff_line *)a)->text, ((const struct diff_line *)b)->text);
}

int out_folded_diff_write(const struct diff *d, const struct output_opts *o, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;
	struct diff_line *lines = NULL;
	size_t nr = 0, alloc = 0, i, j;
	double global = diff_samples(d, DIFF_BASE)
			    ? (double)diff_samples(d, DIFF_NEW) / (double)diff_samples(d, DIFF_BASE)
			    : 1;
	int ret = 0;

	(void)o;
	for (uint32_t n = 1; n < diff_nr_nodes(d); n++) {
		const struct diff_node *nd = diff_node(d, n);
		const struct diff_group *g = diff_group(d, nd->group);
		double scale = g->samples[0] && g->samples[1]
				   ? (double)g->samples[1] / (double)g->samples[0]
				   : global;
		uint64_t base = (uint64_t)((double)nd->self[0] * scale + 0.5);
		size_t end;

		if (nd->depth < 2 || (!base && !nd->self[1]))
			continue;
		strbuf_reset(&sb);
		diff_path(d, n, &sb);
		/* "...;foo 12" would read as a count: keep the text from ending in " <digits>" */
		for (end = sb.len; end > 0 && sb.buf[end - 1] >= '0' && sb.buf[end - 1] <= '9';)
			end--;
		if (end < sb.len && end > 0 && sb.buf[end - 1] == ' ')
			strbuf_addch(&sb, '_');
		ALLOC_GROW(lines, nr + 1, alloc);
		lines[nr].text = xstrdup(sb.buf);
		lines[nr].count[0] = base;
		lines[nr].count[1] = nd->self[1];
		nr++;
	}
	if (nr)
		qsort(lines, nr, sizeof(*lines), cmp_diff_line);
	for (i = 0; i < nr; i = j) {
		uint64_t c0 = lines[i].count[0], c1 = lines[i].count[1];

		/* two paths can print alike (frames whose names clean to the same text) */
		for (j = i + 1; j < nr && !strcmp(lines[i].text, lines[j].text); j++) {
			c0 += lines[j].count[0];
			c1 += lines[j].count[1];
		}
		if (!ret && fprintf(f, "%s %" PRIu64 " %" PRIu64 "\n", lines[i].text, c0, c1) < 0)
			ret = errno ? -errno : -EIO;
	}
	for (i = 0; i < nr; i++)
		free(lines[i].text);
	free(lines);
	strbuf_release(&sb);
	if (!ret && fflush(f))
		ret = -errno;
	else if (!ret && ferror(f))
		ret = -EIO;
	return ret;
}
