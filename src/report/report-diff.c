/* `perch report --diff` and the REPL's `diff`: read, filter, compare, write, judge (see
 * report-diff.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/exitcode.h"
#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/out/writers.h"
#include "perch/profile/diff.h"
#include "perch/profile/profile.h"
#include "perch/report/report-diff.h"
#include "perch/report/report.h"

void report_diff_args_init(struct report_diff_args *a)
{
	memset(a, 0, sizeof(*a));
	a->opts.alpha = DIFF_DEFAULT_ALPHA;
}

void report_diff_args_release(struct report_diff_args *a)
{
	for (size_t i = 0; i < a->nr_rules; i++)
		diff_rule_release(&a->rules[i]);
	free(a->rules);
	for (size_t i = 0; i < a->nr_maps; i++) {
		free((char *)a->maps[i].old);
		free((char *)a->maps[i].new);
	}
	free(a->maps);
	report_diff_args_init(a);
}

static const struct opt_spec report_diff_opts[] = {
    {"diff", REPORT_DIFF_KEY, "BASE",
     "compare BASE (a recording) with RECORDING, the new one: -o's\n"
     "ending picks text (.txt), folded (.folded: difffolded.pl's\n"
     "'stack BASE NEW' columns), svg or html (a differential flame\n"
     "graph on the new shape: red grew, blue shrank). Both may be\n"
     "comma lists of runs of one build (a1.perch,a2.perch,a3.perch):\n"
     "the margin then takes in the spread between the runs. Builds\n"
     "pair whatever their file names: the main executable with the\n"
     "main executable, libraries without version suffix\n"
     "(libfoo.so.1.2 ~ libfoo.so.1.3), the main thread with the\n"
     "main thread, other threads by name with numbers as '#'\n"
     "(worker-3 ~ worker-#, a pool compared as one), processes by\n"
     "name; the header says what was paired and what share of each\n"
     "side was compared (a warning under half)",
     REPORT_DIFF_BASE},
    {"fail-if", REPORT_DIFF_KEY + 1, "FUNCTION_REGEX:+POINTS",
     "with --diff: exit 3 when a function whose name matches grew in\n"
     "total share of its thread by more than POINTS beyond noise (the\n"
     "noise level over the functions the rule matches); exit 2 when\n"
     "it matches no function of either side (repeatable)",
     0},
    {"alpha", REPORT_DIFF_KEY + 2, "A",
     "with --diff: the family-wise false-positive rate of 'beyond\n"
     "noise' (default 0.01)",
     0},
    {"merge-threads", REPORT_DIFF_KEY + 3, NULL,
     "with --diff: compare all threads as one (default: threads\n"
     "paired as --diff says)",
     0},
    {"map", REPORT_DIFF_KEY + 4, "OLD=NEW",
     "with --diff: pair BASE's module (file name), thread or process\n"
     "named OLD with NEW's named NEW, where the automatic pairing is\n"
     "wrong (repeatable)",
     0},
};
const struct opt_table report_diff_table = OPT_TABLE(report_diff_opts);

const struct opt_spec *report_diff_opt(int key)
{
	return opts_by_key(report_diff_opts, ARRAY_SIZE(report_diff_opts), key);
}

/* --map OLD=NEW. 0 or -EINVAL (said). */
static int add_map(struct report_diff_args *a, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return log_err(-EINVAL,
			       "--map wants OLD=NEW (a module, thread or process name "
			       "of BASE and of NEW), not '%s'",
			       arg);
	ALLOC_GROW(a->maps, a->nr_maps + 1, a->alloc_maps);
	a->maps[a->nr_maps].old = xstrndup(arg, (size_t)(eq - arg));
	a->maps[a->nr_maps].new = xstrdup(eq + 1);
	a->nr_maps++;
	a->opts.map = a->maps;
	a->opts.nr_map = a->nr_maps;
	return 0;
}

int report_diff_option(struct report_diff_args *a, const char *name, const char *arg)
{
	if (!strcmp(name, "fail-if")) {
		ALLOC_GROW(a->rules, a->nr_rules + 1, a->alloc_rules);
		if (diff_rule_parse(&a->rules[a->nr_rules], arg) < 0)
			return -EINVAL;
		a->nr_rules++;
		return 0;
	}
	if (!strcmp(name, "alpha")) {
		char *end;

		a->opts.alpha = strtod(arg, &end);
		if (*end || end == arg || !(a->opts.alpha > 0 && a->opts.alpha <= 0.5))
			return log_err(-EINVAL,
				       "--alpha wants a rate above 0 and at most 0.5, not "
				       "'%s'",
				       arg);
		return 0;
	}
	if (!strcmp(name, "merge-threads")) {
		a->opts.merge_threads = 1;
		return 0;
	}
	if (!strcmp(name, "map"))
		return add_map(a, arg);
	return log_err(-EINVAL, "BUG: unknown diff option %s", name);
}

/* Recording @path of side @s, filtered: the profile to compare (owned by @run), or @a's live
 * one when @path is NULL. 0 or an exit code. */
static int load_one(struct report_diff_run *run, const struct report_diff_args *a, int s,
		    const char *path, const struct profile **out)
{
	const struct profile *p = a->live;
	size_t r = run->nr[s]++;
	int code;

	if (path) {
		code = report_load(path, &run->read[s][r], a->quiet);
		if (code)
			return code;
		p = run->read[s][r];
	}
	if (a->rs || (a->filter && !report_filter_is_empty(a->filter))) {
		struct report_filter none;

		report_filter_init(&none);
		run->kept[s][r] = report_apply(p, a->filter ? a->filter : &none, a->rs);
		report_filter_release(&none);
		p = run->kept[s][r];
	}
	if (!profile_total_samples(p) && !a->quiet)
		log_warn(0, "%s has no samples%s", path ? path : "the last recording",
			 run->kept[s][r] ? " after the filters" : "");
	*out = p;
	return 0;
}

/* Side @s: its recordings (a comma-separated list, unless a file has the whole name), into
 * @p; its label into @label. 0 or an exit code. */
static int load_side(struct report_diff_run *run, const struct report_diff_args *a, int s,
		     const struct profile **p, struct strbuf *label)
{
	const char *list = a->path[s], *c = list;
	int code = 0;

	if (!list)
		return strbuf_addstr(label, "the last recording"), load_one(run, a, s, NULL, p);
	if (!access(list, F_OK))
		return strbuf_addstr(label, path_base(list)), load_one(run, a, s, list, p);
	while (!code && c) {
		const char *comma = strchr(c, ',');
		char *path = comma ? xstrndup(c, (size_t)(comma - c)) : xstrdup(c);

		if (!*path)
			code = log_err(PERCH_EXIT_USAGE, "--diff: an empty name in the list '%s'",
				       list);
		else if (run->nr[s] == DIFF_MAX_REPLICATES)
			code = log_err(PERCH_EXIT_USAGE, "--diff: at most %d recordings a side",
				       DIFF_MAX_REPLICATES);
		else
			code = load_one(run, a, s, path, &p[run->nr[s]]);
		strbuf_addf(label, "%s%s", label->len ? "," : "", path_base(path));
		free(path);
		c = comma ? comma + 1 : NULL;
	}
	return code;
}

/* Every --fail-if rule names a function of BASE or NEW: a gate that compares nothing cannot
 * pass. 0 or PERCH_EXIT_FATAL (said). */
static int check_rules(const struct diff *d, const struct report_diff_args *a)
{
	for (size_t i = 0; i < a->nr_rules; i++)
		if (!diff_rule_matches(d, &a->rules[i]))
			return log_err(PERCH_EXIT_FATAL,
				       "--fail-if '%s' matches no function of BASE or NEW: the "
				       "rule can never trip (check its regex and --map)",
				       a->rules[i].text);
	return 0;
}

/* Less than half of a side compared: said once per side, even with -q (a gate that compared
 * little must not look like one that passed). */
static void warn_compared(const struct diff *d)
{
	for (int s = 0; s < 2; s++) {
		uint64_t n = diff_samples(d, s), c = diff_compared(d, s);

		if (n && 2 * c < n)
			fprintf(
			    stderr,
			    "perch: warning: only %.0f%% of %s's samples were compared (threads "
			    "or modules not paired: see the header; --map OLD=NEW pairs them by "
			    "hand)\n",
			    100.0 * (double)c / (double)n, s ? "NEW" : "BASE");
	}
}

int report_diff_open(struct report_diff_run *run, const struct report_diff_args *a)
{
	const struct profile *p[2][DIFF_MAX_REPLICATES];
	struct strbuf label[2] = {STRBUF_INIT, STRBUF_INIT};
	struct diff_opts o = a->opts;
	int code = 0;

	memset(run, 0, sizeof(*run));
	for (int s = 0; s < 2 && !code; s++)
		code = load_side(run, a, s, p[s], &label[s]);
	if (!code) {
		o.label[0] = label[0].buf;
		o.label[1] = label[1].buf;
		run->d = diff_new_replicates(p[0], run->nr[0], p[1], run->nr[1], &o);
		code = check_rules(run->d, a);
	}
	strbuf_release(&label[0]);
	strbuf_release(&label[1]);
	if (code) {
		report_diff_close(run);
		return code;
	}
	if (!diff_time_ordered(run->d) && !a->quiet)
		log_warn(0, "a profile has no samples in time order: the noise margins take "
			    "samples as independent and may be too small");
	warn_compared(run->d);
	return 0;
}

void report_diff_close(struct report_diff_run *run)
{
	diff_free(run->d);
	for (int s = 0; s < 2; s++)
		for (size_t r = 0; r < run->nr[s]; r++) {
			profile_free(run->kept[s][r]);
			profile_free(run->read[s][r]);
		}
	memset(run, 0, sizeof(*run));
}

size_t report_diff_trips(const struct diff *d, const struct report_diff_args *a,
			 report_diff_trip_fn *fn, void *arg)
{
	size_t n = 0;

	for (size_t r = 0; r < a->nr_rules; r++) {
		size_t family = diff_rule_family(d, &a->rules[r]);

		for (size_t i = 0; i < diff_nr_fns(d); i++) {
			const struct diff_fn *f = diff_fn(d, diff_fns_sorted(d)[i]);

			if (diff_rule_trips_at(d, &a->rules[r], f, family)) {
				if (fn)
					fn(&a->rules[r], f, arg);
				n++;
			}
		}
	}
	return n;
}

char *report_diff_trip_text(const struct diff *d, const struct diff_rule *r,
			    const struct diff_fn *fn)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, fn->name);
	if (*fn->module)
		strbuf_addf(&sb, " (%s)", fn->module);
	strbuf_addf(&sb, " of thread %s grew by %.2f points (±%.2f), more than %g (--fail-if '%s')",
		    diff_group(d, fn->group)->label, 100 * fn->total.change,
		    100 * diff_rule_margin(d, fn, diff_rule_family(d, r)), r->points, r->text);
	return strbuf_detach(&sb, NULL);
}

const char *report_diff_format(const char *path, const char *fallback)
{
	const struct output_format *fmt = strcmp(path, "-") ? output_format_for_path(path) : NULL;
	const char *name = fmt ? fmt->name : fallback;
	size_t len = strlen(path);

	if (name && out_diff_writer(name))
		return name;
	/* endings whose plain format is another one (a page that is not the flame graph) */
	if (len > 5 && !strcmp(path + len - 5, ".html"))
		return "html";
	if (len > 4 && !strcmp(path + len - 4, ".svg"))
		return "svg";
	log_err(0, "--diff writes text (.txt), folded, svg or html, not %s (%s)",
		name ? name : "this format", path);
	return NULL;
}

int report_diff_write(const struct diff *d, const struct output_opts *o, const char *path,
		      const char *format, int quiet)
{
	out_diff_write_fn *write = out_diff_writer(format);
	struct output_file of;
	int ret;

	if (!write)
		return log_err(PERCH_EXIT_USAGE, "BUG: no diff writer for %s", format);
	ret = output_open(&of, path);
	if (ret < 0)
		return log_errno(ret, "cannot create %s", path), PERCH_EXIT_FATAL;
	ret = write(d, o, of.f);
	if (ret < 0) {
		output_abort(&of);
		return log_errno(ret, "cannot write %s", path), PERCH_EXIT_FATAL;
	}
	ret = output_commit(&of);
	if (ret < 0)
		return log_errno(ret, "cannot write %s", path), PERCH_EXIT_FATAL;
	if (!quiet && strcmp(path, "-"))
		fprintf(stderr, "perch: wrote %s (%s diff)\n", path, format);
	return 0;
}
