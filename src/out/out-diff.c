/* Writers of a diff (diff.h): the text table of the functions whose shares changed most, and
 * the table that picks a diff writer for an output format (folded and flame graph diffs are
 * in out-folded.c and out-flamegraph.c, next to the drawing they reuse). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/output.h"
#include "perch/out/writers.h"
#include "perch/profile/diff.h"

#define DIFF_TEXT_ROWS 20

/* Append @s with control characters as '_' and invalid UTF-8 as U+FFFD. */
static void add_clean(struct strbuf *sb, const char *s)
{
	size_t step;

	for (; s && *s; s += step) {
		uint32_t cp = json_utf8_next(s, &step);

		json_add_utf8(sb, cp < 0x20 || cp == 0x7f ? '_' : cp);
	}
}

/* "BASE% NEW% change ±margin mark" of one change. */
static void add_change(struct strbuf *sb, const struct diff_stat *st)
{
	strbuf_addf(sb, "%6.2f %6.2f %+7.2f", 100 * st->share[0], 100 * st->share[1],
		    100 * st->change);
	if (st->tested)
		strbuf_addf(sb, " ±%-5.2f %c", 100 * st->margin, st->beyond_noise ? '*' : ' ');
	else
		strbuf_addstr(sb, "          ");
}

static int beyond(const struct diff_fn *fn)
{
	return fn->total.beyond_noise || fn->self.beyond_noise;
}

static void print_group(const struct diff *d, uint32_t g, const uint32_t *first, size_t nr,
			size_t rows, struct strbuf *sb)
{
	const struct diff_group *gr = diff_group(d, g);
	size_t shown = 0, left = 0;

	strbuf_addstr(sb, "\n# thread ");
	add_clean(sb, gr->label);
	if (!gr->samples[0] || !gr->samples[1]) {
		int side = gr->samples[1] ? DIFF_NEW : DIFF_BASE;

		strbuf_addf(sb, ": only in %s (%" PRIu64 " samples, %u thread%s)\n",
			    side ? "NEW" : "BASE", gr->samples[side], gr->threads[side],
			    gr->threads[side] == 1 ? "" : "s");
		return;
	}
	strbuf_addf(
	    sb, ": BASE %" PRIu64 " samples (%u thread%s), NEW %" PRIu64 " samples (%u thread%s)\n",
	    gr->samples[0], gr->threads[0], gr->threads[0] == 1 ? "" : "s", gr->samples[1],
	    gr->threads[1], gr->threads[1] == 1 ? "" : "s");
	strbuf_addf(sb, "  %-32s%-32s%s\n", "total %", "self %", "function (module)");
	strbuf_addf(sb, "  %6s %6s %7s %-11s%6s %6s %7s\n", "BASE", "NEW", "change", "", "BASE",
		    "NEW", "change");
	/* every change beyond noise, and the largest others up to @rows */
	for (size_t i = 0; i < nr; i++) {
		const struct diff_fn *fn = diff_fn(d, first[i]);

		if (!beyond(fn) && shown >= rows) {
			left++;
			continue;
		}
		strbuf_addstr(sb, "  ");
		add_change(sb, &fn->total);
		strbuf_addstr(sb, "  ");
		add_change(sb, &fn->self);
		strbuf_addstr(sb, "  ");
		add_clean(sb, fn->name);
		if (*fn->module) {
			strbuf_addstr(sb, " (");
			add_clean(sb, fn->module);
			strbuf_addch(sb, ')');
		}
		strbuf_addch(sb, '\n');
		shown++;
	}
	if (left)
		strbuf_addf(sb, "  ... %zu more function%s, each within noise\n", left,
			    left == 1 ? "" : "s");
}

#define DIFF_PAIR_LINES 8 /* pairings listed per kind in the header */

/* "  name ~ other (how)" or "  only in BASE: name (N samples)" of one pairing, when it is
 * worth saying (the names differ, or one side has none); 1 when said. */
static int add_pairing(struct strbuf *sb, const char *const name[2], const char *how,
		       const uint64_t samples[2])
{
	if (name[0] && name[1] && !strcmp(name[0], name[1]))
		return 0;
	if (!name[0] || !name[1]) {
		int s = name[1] ? DIFF_NEW : DIFF_BASE;

		if (!samples[s])
			return 0;
		strbuf_addf(sb, "#   only in %s: ", s ? "NEW" : "BASE");
		add_clean(sb, name[s]);
		strbuf_addf(sb, " (%" PRIu64 " sample%s)\n", samples[s],
			    samples[s] == 1 ? "" : "s");
		return 1;
	}
	strbuf_addstr(sb, "#   ");
	add_clean(sb, name[0]);
	strbuf_addstr(sb, " ~ ");
	add_clean(sb, name[1]);
	strbuf_addf(sb, " (%s)\n", how);
	return 1;
}

/* The modules and threads paired under different names, or found on one side only. */
static void print_pairings(const struct diff *d, struct strbuf *sb)
{
	size_t said = 0, more = 0;

	strbuf_addstr(sb, "# modules: the main executable with the main executable, libraries "
			  "by name without version suffix\n");
	for (uint32_t i = 0; i < diff_nr_modules(d); i++) {
		const struct diff_module *m = diff_module(d, i);

		if (said < DIFF_PAIR_LINES)
			said += add_pairing(sb, m->name, m->how, m->samples);
		else
			more += (!m->name[0] || !m->name[1] || strcmp(m->name[0], m->name[1]));
	}
	if (more)
		strbuf_addf(sb, "#   ... %zu more\n", more);
	said = more = 0;
	strbuf_addstr(sb, "# threads: the main thread with the main thread, others by name "
			  "with numbers as '#' (a pool as one)\n");
	for (uint32_t i = 0; i < diff_nr_groups(d); i++) {
		const struct diff_group *g = diff_group(d, diff_groups_sorted(d)[i]);

		if (said < DIFF_PAIR_LINES)
			said += add_pairing(sb, g->name, g->how, g->samples);
		else
			more += (!g->name[0] || !g->name[1] || strcmp(g->name[0], g->name[1]));
	}
	if (more)
		strbuf_addf(sb, "#   ... %zu more\n", more);
}

/* What share of each side was compared; a warning under half. */
static void print_compared(const struct diff *d, struct strbuf *sb)
{
	double c[2];

	for (int s = 0; s < 2; s++)
		c[s] = diff_samples(d, s)
			   ? 100.0 * (double)diff_compared(d, s) / (double)diff_samples(d, s)
			   : 0;
	strbuf_addf(sb,
		    "# compared: %.1f%% of BASE's samples and %.1f%% of NEW's (thread and "
		    "module paired)\n",
		    c[0], c[1]);
	for (int s = 0; s < 2; s++)
		if (c[s] < 50)
			strbuf_addf(sb,
				    "# WARNING: only %.1f%% of %s's samples were compared: what "
				    "was not paired cannot show a change (see above; --map "
				    "OLD=NEW)\n",
				    c[s], s ? "NEW" : "BASE");
}

static void print_head(const struct diff *d, struct strbuf *sb)
{
	for (int s = 0; s < 2; s++) {
		const char *comm = diff_meta(d, s, "comm");

		strbuf_addf(sb, "# %-4s ", s ? "NEW" : "BASE");
		add_clean(sb, diff_label(d, s));
		strbuf_addf(sb, ": %" PRIu64 " samples", diff_samples(d, s));
		if (diff_nr_replicates(d, s) > 1)
			strbuf_addf(sb, " in %zu runs", diff_nr_replicates(d, s));
		if (comm) {
			strbuf_addstr(sb, " of ");
			add_clean(sb, comm);
		}
		strbuf_addch(sb, '\n');
	}
	print_pairings(d, sb);
	print_compared(d, sb);
	strbuf_addf(sb,
		    "# shares of each thread's samples; change = NEW - BASE in points\n"
		    "# ± is the noise margin at a family-wise false-positive rate of %g%% over %zu "
		    "tests, '*' a change beyond it\n",
		    100 * diff_alpha(d), diff_nr_tests(d));
	if (diff_time_ordered(d))
		strbuf_addf(sb,
			    "# (two-proportion test; variance widened for consecutive samples "
			    "of a thread, from %d batches%s)\n",
			    DIFF_BATCHES,
			    diff_nr_replicates(d, 0) > 1 || diff_nr_replicates(d, 1) > 1
				? ", and for the spread between runs"
				: "");
	else
		strbuf_addstr(sb, "# (two-proportion test; no time order in a profile: samples "
				  "taken as independent, the margin may be too small)\n");
}

int out_diff_text_write(const struct diff *d, const struct output_opts *o, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;
	const uint32_t *groups = diff_groups_sorted(d), *fns = diff_fns_sorted(d);
	size_t nf = diff_nr_fns(d), i = 0, grew = 0, shrank = 0;
	size_t rows = o && o->top > 0 ? (size_t)o->top : DIFF_TEXT_ROWS;
	int ret = 0;

	print_head(d, &sb);
	for (size_t k = 0; k < diff_nr_groups(d); k++) {
		uint32_t g = groups[k];
		size_t j;

		/* functions are sorted by group in the same order */
		for (j = i; j < nf && diff_fn(d, fns[j])->group == g; j++) {
			const struct diff_fn *fn = diff_fn(d, fns[j]);

			if (fn->total.beyond_noise && fn->total.change > 0)
				grew++;
			else if (fn->total.beyond_noise)
				shrank++;
		}
		print_group(d, g, fns + i, j - i, rows, &sb);
		i = j;
	}
	strbuf_addf(&sb, "\n%zu function%s grew and %zu shrank beyond noise (total share)\n", grew,
		    grew == 1 ? "" : "s", shrank);
	errno = 0;
	if (fwrite(sb.buf, 1, sb.len, f) != sb.len || fflush(f) || ferror(f))
		ret = errno ? -errno : -EIO;
	strbuf_release(&sb);
	return ret;
}

static const struct {
	const char *format;
	out_diff_write_fn *write;
} diff_writers[] = {
    {"text", out_diff_text_write},
    {"folded", out_folded_diff_write},
    {"svg", out_flamegraph_diff_write},
    {"html", out_flamegraph_diff_html_write},
    {"flamegraph-html", out_flamegraph_diff_html_write},
};

out_diff_write_fn *out_diff_writer(const char *format)
{
	for (size_t i = 0; i < ARRAY_SIZE(diff_writers); i++)
		if (!strcmp(diff_writers[i].format, format))
			return diff_writers[i].write;
	return NULL;
}
