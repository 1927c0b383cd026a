/* The REPL's `diff` command: perch report --diff's comparison with one result (a JSON object
 * in scripted --json mode) for test harnesses. `diff [options] BASE.perch [NEW.perch]`;
 * without NEW, BASE is compared with the session's last recording. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/cli/repl.h"
#include "perch/out/output.h"
#include "perch/out/writers.h"
#include "perch/profile/diff.h"
#include "perch/report/report-diff.h"
#include "perch/report/report.h"

#define DIFF_MAX_OUTPUTS 8
#define DIFF_ROWS	 20

static const char diff_usage[] =
    "    diff [options] BASE.perch [NEW.perch]   compare two recordings, or BASE with the\n"
    "                                            last recording of this session\n"
    "    JSON: base_*, new_*, tests, threads[], functions[] (every change beyond noise and\n"
    "          the largest others), fail_if[] (the functions that tripped a rule), failed\n";

enum { O_TOP = 256 };

/* With the comparison and filter options of report-diff.h and report.h, but --diff (BASE is
 * a word here) and --tid (thread ids differ between runs). */
static const struct opt_spec diff_own_opts[] = {
    {"top", O_TOP, "N", "rows per thread", 0},
    {"output", 'o', "FILE",
     "also write the comparison to FILE (.txt, .folded, .svg,\n"
     ".html; up to 8)",
     0},
};

static const struct opt_table own_table = OPT_TABLE(diff_own_opts);
static const struct opt_table *const diff_tables[] = {&report_diff_table, &own_table,
						      &report_filter_table};

static void diff_help_options(struct strbuf *sb)
{
	strbuf_addstr(sb, "    options:\n");
	opts_help_list(sb, diff_tables, ARRAY_SIZE(diff_tables), 0, 25);
}

static void diff_complete_options(void (*add)(void *arg, const char *word), void *arg)
{
	opts_complete_list(diff_tables, ARRAY_SIZE(diff_tables), 0, add, arg);
}

struct diff_cmd {
	struct report_diff_args a;
	struct report_filter filter;
	const char *out[DIFF_MAX_OUTPUTS];
	int nr_out, top;
};

static int parse(struct diff_cmd *c, int argc, char **argv)
{
	const struct opt_spec *s;
	struct opts_getopt g;
	int ch;

	opts_getopt_init(&g, 0);
	opts_getopt_add_list(&g, diff_tables, ARRAY_SIZE(diff_tables), 0);
	optind = 0; /* 0: getopt starts afresh (the REPL parses many command lines) */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		if ((s = report_diff_opt(ch))) {
			if (report_diff_option(&c->a, s->name, optarg) < 0)
				return -EINVAL;
			continue;
		}
		if ((s = report_filter_opt(ch))) {
			if (report_filter_option(&c->filter, s->name, optarg) < 0)
				return -EINVAL;
			continue;
		}
		switch (ch) {
		case O_TOP:
			c->top = atoi(optarg);
			if (c->top <= 0)
				return log_err(-EINVAL, "--top wants a positive number, not '%s'",
					       optarg);
			break;
		case 'o':
			if (c->nr_out == DIFF_MAX_OUTPUTS)
				return log_err(-EINVAL, "at most %d -o", DIFF_MAX_OUTPUTS);
			c->out[c->nr_out++] = optarg;
			break;
		default:
			return log_err(-EINVAL, "diff: unknown or incomplete option '%s'",
				       argv[optind - 1]);
		}
	}
	if (optind >= argc || argc - optind > 2)
		return log_err(-EINVAL, "usage: diff [options] BASE.perch [NEW.perch]");
	c->a.path[DIFF_BASE] = argv[optind];
	c->a.path[DIFF_NEW] = optind + 1 < argc ? argv[optind + 1] : NULL;
	for (int i = 0; i < c->nr_out; i++)
		if (!report_diff_format(c->out[i], "text"))
			return -EINVAL;
	return 0;
}

static void field_change(struct repl *r, const char *what, const struct diff_stat *st)
{
	char key[32];

	snprintf(key, sizeof(key), "%s_base", what);
	repl_field_double(r, key, 100 * st->share[DIFF_BASE]);
	snprintf(key, sizeof(key), "%s_new", what);
	repl_field_double(r, key, 100 * st->share[DIFF_NEW]);
	snprintf(key, sizeof(key), "%s_change", what);
	repl_field_double(r, key, 100 * st->change);
	snprintf(key, sizeof(key), "%s_margin", what);
	repl_field_double(r, key, 100 * st->margin);
	snprintf(key, sizeof(key), "%s_beyond_noise", what);
	repl_field_bool(r, key, st->beyond_noise);
}

static void json_result(struct repl *r, const struct diff *d, const struct diff_cmd *c)
{
	const uint32_t *groups = diff_groups_sorted(d), *fns = diff_fns_sorted(d);
	size_t rows = c->top > 0 ? (size_t)c->top : DIFF_ROWS, shown = 0;
	uint32_t cur = UINT32_MAX;

	for (int s = 0; s < 2; s++) {
		repl_field_str(r, s ? "new" : "base", diff_label(d, s));
		repl_field_int(r, s ? "new_samples" : "base_samples",
			       (long long)diff_samples(d, s));
	}
	repl_field_double(r, "alpha", diff_alpha(d));
	repl_field_int(r, "tests", (long long)diff_nr_tests(d));
	repl_field_bool(r, "time_ordered", diff_time_ordered(d));
	repl_array_begin(r, "threads");
	for (size_t i = 0; i < diff_nr_groups(d); i++) {
		const struct diff_group *g = diff_group(d, groups[i]);

		repl_object_begin(r);
		repl_field_str(r, "name", g->label);
		repl_field_int(r, "base_samples", (long long)g->samples[DIFF_BASE]);
		repl_field_int(r, "new_samples", (long long)g->samples[DIFF_NEW]);
		repl_field_int(r, "base_threads", g->threads[DIFF_BASE]);
		repl_field_int(r, "new_threads", g->threads[DIFF_NEW]);
		repl_object_end(r);
	}
	repl_array_end(r);
	/* as the text: every change beyond noise, and the largest others up to @rows a thread */
	repl_array_begin(r, "functions");
	for (size_t i = 0; i < diff_nr_fns(d); i++) {
		const struct diff_fn *fn = diff_fn(d, fns[i]);

		if (fn->group != cur) {
			cur = fn->group;
			shown = 0;
		}
		if (!fn->total.tested ||
		    (!fn->total.beyond_noise && !fn->self.beyond_noise && shown >= rows))
			continue;
		shown++;
		repl_object_begin(r);
		repl_field_str(r, "thread", diff_group(d, fn->group)->label);
		repl_field_str(r, "function", fn->name);
		repl_field_str(r, "module", fn->module);
		field_change(r, "total", &fn->total);
		field_change(r, "self", &fn->self);
		repl_object_end(r);
	}
	repl_array_end(r);
}

struct trip_ctx {
	struct repl *r;
	const struct diff *d;
};

static void on_trip(const struct diff_rule *rule, const struct diff_fn *fn, void *arg)
{
	struct trip_ctx *t = arg;
	char *text = report_diff_trip_text(t->d, rule, fn);

	repl_object_begin(t->r);
	repl_field_str(t->r, "rule", rule->text);
	repl_field_str(t->r, "thread", diff_group(t->d, fn->group)->label);
	repl_field_str(t->r, "function", fn->name);
	repl_field_double(t->r, "change", 100 * fn->total.change);
	repl_field_double(t->r, "margin",
			  100 * diff_rule_margin(t->d, fn, diff_rule_family(t->d, rule)));
	repl_object_end(t->r);
	/* the result's "error" is the last error line */
	log_err(0, "%s", text);
	free(text);
}

static int text_result(struct repl *r, const struct diff *d, const struct diff_cmd *c)
{
	struct output_opts oo = {.top = c->top};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return log_errno(-errno, "cannot render the diff"), PERCH_EXIT_FATAL;
	ret = out_diff_text_write(d, &oo, f);
	fclose(f);
	if (ret >= 0)
		repl_printf(r, "%.*s", (int)len, buf);
	free(buf);
	return ret < 0 ? PERCH_EXIT_FATAL : 0;
}

static int c_diff(struct repl *r, int argc, char **argv)
{
	struct diff_cmd c = {0};
	struct report_diff_run run;
	struct trip_ctx t = {.r = r};
	struct output_opts oo;
	int code = 0;
	size_t trips;

	report_diff_args_init(&c.a);
	report_filter_init(&c.filter);
	if (parse(&c, argc, argv) < 0) {
		code = PERCH_EXIT_USAGE;
		goto out;
	}
	if (!c.a.path[DIFF_NEW] && !(c.a.live = repl_last_profile(r))) {
		code = PERCH_EXIT_FATAL;
		goto out;
	}
	c.a.filter = &c.filter;
	c.a.quiet = 1;
	code = report_diff_open(&run, &c.a);
	if (code)
		goto out;
	oo = (struct output_opts){.top = c.top};
	json_result(r, run.d, &c);
	for (int i = 0; i < c.nr_out; i++) {
		if (report_diff_write(run.d, &oo, c.out[i], report_diff_format(c.out[i], "text"),
				      1))
			code = PERCH_EXIT_FATAL;
		else
			repl_printf(r, "wrote %s\n", c.out[i]);
	}
	if (!c.nr_out && !code)
		code = text_result(r, run.d, &c);
	t.d = run.d;
	repl_array_begin(r, "fail_if");
	trips = report_diff_trips(run.d, &c.a, on_trip, &t);
	repl_array_end(r);
	repl_field_bool(r, "failed", trips > 0);
	if (!code && trips)
		code = PERCH_EXIT_REGRESSION;
	report_diff_close(&run);
out:
	report_filter_release(&c.filter);
	report_diff_args_release(&c.a);
	return code;
}

const struct cmd cmd_diff = {
    .name = "diff",
    .prompt = &(const struct repl_cmd){
	.args = "[options] BASE.perch [NEW.perch]",
	.summary = "what changed: compare two recordings (or BASE with the last one)",
	.usage = diff_usage,
	.complete = REPL_COMPLETE_FILE,
	.fn = c_diff,
	.help_options = diff_help_options,
	.complete_options = diff_complete_options,
    }};
