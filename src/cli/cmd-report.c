/* `perch report`: render a recording (perch record -o run.perch) in any output format, with
 * filters and re-symbolization from a symfs directory. */
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
#include "perch/proc/framestats.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"
#include "perch/report/report-diff.h"
#include "perch/report/report.h"

#define REPORT_MAX_OUTPUTS 8

enum { OPT_FORMAT = 256, OPT_SYMFS, OPT_LINES, OPT_TOP, OPT_FRAMES, OPT_HELP };

/* In the order of --help: output, the filters, more output, the comparison, messages. */
static const struct opt_spec report_opts_out[] = {
    {"output", 'o', "FILE",
     "write to FILE ('-' for stdout); the ending picks the format as\n"
     "in perch record: .folded, .svg, .html (the report page: summary,\n"
     "thread timeline, CPU and memory, flame graph), .pb.gz,\n"
     ".speedscope.json, .trace.json, .sentry.json, .trace, .txt,\n"
     ".perch; up to 8 -o",
     0},
    {"format", OPT_FORMAT, "NAME",
     "format for stdout and for -o files with another ending:\n"
     "folded svg html flamegraph-html pprof speedscope chrome sentry\n"
     "arttrace text top perch (default text)",
     0},
    {"symfs", OPT_SYMFS, "DIR",
     "re-symbolize from unstripped copies of the modules below DIR,\n"
     "found by build-id (or by path)",
     0},
};
static const struct opt_spec report_opts_more[] = {
    {"lines", OPT_LINES, NULL, "add ' (file:line)' to folded frames when known", 0},
    {"top", OPT_TOP, "N", "rows of the top table (text, top)", 0},
    {"frames", OPT_FRAMES, "FILE",
     "merge Android frame timings into the recording: the output of\n"
     "'dumpsys gfxinfo PKG framestats', one or several polls (perch-adb\n"
     "record --frames writes it); slow and frozen frames go to the\n"
     "summary, the Chrome trace, the Sentry chunk and the report page",
     0},
};
static const struct opt_spec report_opts_msg[] = {
    {"quiet", 'q', NULL, "no messages but errors", 0},
    {"verbose", 'v', NULL, "more messages", 0},
    {"help", OPT_HELP, NULL, NULL, 0},
};

#define REPORT_SCOPE (REPORT_FILTER_TIDS | REPORT_DIFF_BASE)

static const struct opt_table out_table = OPT_TABLE(report_opts_out),
			      more_table = OPT_TABLE(report_opts_more),
			      msg_table = OPT_TABLE(report_opts_msg);
static const struct opt_table *const report_tables[] = {
    &out_table, &report_filter_table, &more_table, &report_diff_table, &msg_table,
};

static void report_complete_options(void (*add)(void *arg, const char *word), void *arg)
{
	opts_complete_list(report_tables, ARRAY_SIZE(report_tables), REPORT_SCOPE, add, arg);
}

static void report_help(struct strbuf *sb)
{
	strbuf_addstr(
	    sb,
	    "usage: perch report [options] RECORDING\n"
	    "       perch report --diff BASE [options] RECORDING\n"
	    "\n"
	    "Render a recording made with 'perch record -o FILE.perch'. Without -o, the call tree\n"
	    "and the top functions go to stdout as text.\n"
	    "\n");
	opts_help_list(sb, report_tables, ARRAY_SIZE(report_tables), REPORT_SCOPE, 25);
	strbuf_addstr(sb, "\n"
			  "Exit status: 0 ok, 2 the recording cannot be read, an output cannot be "
			  "written\n"
			  "or a --fail-if rule matches no function, 3 a --fail-if rule tripped, 64 "
			  "usage.\n");
}

struct report {
	const char *in;
	struct report_output {
		const char *path;
		const struct output_format *fmt;
		const char *diff_fmt; /* --diff: the diff writer's format */
	} outputs[REPORT_MAX_OUTPUTS];
	int nr_outputs;
	const struct output_format *fmt; /* --format */
	const char *symfs;
	const char *frames; /* --frames FILE */
	struct report_filter filter;
	struct output_opts oo;
	int quiet;
	const char *diff_base; /* --diff BASE */
	int diff_opts;	       /* an option that goes with --diff was given */
	struct report_diff_args dargs;
};

/* One option of the command line (@c, getopt's answer) into @rep. 0, or -EINVAL (message
 * printed). */
static int parse_option(struct report *rep, int c, const char *arg, const char *word)
{
	const struct opt_spec *s;

	if ((s = report_filter_opt(c)))
		return report_filter_option(&rep->filter, s->name, arg) < 0 ? -EINVAL : 0;
	if (c == REPORT_DIFF_KEY) {
		rep->diff_base = arg;
		return 0;
	}
	if ((s = report_diff_opt(c))) {
		rep->diff_opts = 1;
		return report_diff_option(&rep->dargs, s->name, arg) < 0 ? -EINVAL : 0;
	}
	switch (c) {
	case 'o':
		if (rep->nr_outputs == REPORT_MAX_OUTPUTS)
			return log_err(-EINVAL, "at most %d -o options", REPORT_MAX_OUTPUTS);
		rep->outputs[rep->nr_outputs++].path = arg;
		return 0;
	case OPT_FORMAT:
		rep->fmt = output_format_by_name(arg);
		if (!rep->fmt)
			return log_err(-EINVAL, "unknown --format '%s' (see perch report --help)",
				       arg);
		return 0;
	case OPT_SYMFS:
		rep->symfs = arg;
		return 0;
	case OPT_LINES:
		rep->oo.lines = 1;
		return 0;
	case OPT_TOP:
		rep->oo.top = atoi(arg);
		if (rep->oo.top <= 0)
			return log_err(-EINVAL, "--top wants a positive number, not '%s'", arg);
		return 0;
	case OPT_FRAMES:
		rep->frames = arg;
		return 0;
	case 'q':
		rep->quiet = 1;
		log_level = LOG_LEVEL_QUIET;
		return 0;
	case 'v':
		log_level++;
		return 0;
	case OPT_HELP:
		cmd_print_help(&cmd_report, stdout);
		exit(PERCH_EXIT_OK);
	default:
		return log_err(-EINVAL, "unknown or incomplete option '%s'", word);
	}
}

/* The outputs' formats, and the options that do not go together. 0 or -EINVAL. */
static int check_args(struct report *rep)
{
	if (rep->filter.end_s >= 0 && rep->filter.end_s <= rep->filter.start_s)
		return log_err(-EINVAL, "--end must come after --start");
	if (!rep->nr_outputs)
		rep->outputs[rep->nr_outputs++].path = "-";
	for (int i = 0; i < rep->nr_outputs; i++) {
		struct report_output *ro = &rep->outputs[i];

		ro->fmt = strcmp(ro->path, "-") ? output_format_for_path(ro->path) : NULL;
		if (!ro->fmt)
			ro->fmt = rep->fmt ? rep->fmt : output_format_by_name("text");
		if (!strcmp(ro->path, "-") && ro->fmt->write == out_recording_write &&
		    !rep->diff_base)
			return log_err(-EINVAL, "a recording is written to a file, not to stdout");
		if (rep->diff_base && !(ro->diff_fmt = report_diff_format(
					    ro->path, rep->fmt ? rep->fmt->name : "text")))
			return -EINVAL;
	}
	if (rep->frames && rep->diff_base)
		return log_err(-EINVAL, "--frames does not go with --diff");
	if (rep->diff_opts && !rep->diff_base)
		return log_err(-EINVAL,
			       "--fail-if, --alpha, --merge-threads and --map go with --diff BASE");
	if (rep->diff_base && rep->filter.nr_tids)
		return log_err(-EINVAL, "--tid does not go with --diff (thread ids differ between "
					"runs): use --thread REGEX");
	return 0;
}

static int parse_args(struct report *rep, int argc, char **argv)
{
	struct opts_getopt g;
	int c;

	opts_getopt_init(&g, 0);
	opts_getopt_add_list(&g, report_tables, ARRAY_SIZE(report_tables), REPORT_SCOPE);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1)
		if (parse_option(rep, c, optarg, argv[optind - 1]) < 0)
			return -EINVAL;
	if (optind != argc - 1)
		return log_err(-EINVAL, optind < argc ? "one recording at a time"
						      : "which recording? give RECORDING");
	rep->in = argv[optind];
	return check_args(rep);
}
static void print_trip(const struct diff_rule *r, const struct diff_fn *fn, void *arg)
{
	char *text = report_diff_trip_text(arg, r, fn);

	fprintf(stderr, "perch: %s\n", text);
	free(text);
}

/* perch report --diff BASE NEW: compare, write, judge the --fail-if rules. */
static int report_diff_run(struct report *rep, struct report_symfs *rs)
{
	struct report_diff_run run;
	int code;

	rep->dargs.path[DIFF_BASE] = rep->diff_base;
	rep->dargs.path[DIFF_NEW] = rep->in;
	rep->dargs.filter = &rep->filter;
	rep->dargs.rs = rs;
	rep->dargs.quiet = rep->quiet;
	code = report_diff_open(&run, &rep->dargs);
	if (code)
		return code;
	for (int i = 0; i < rep->nr_outputs; i++)
		if (report_diff_write(run.d, &rep->oo, rep->outputs[i].path,
				      rep->outputs[i].diff_fmt, rep->quiet))
			code = PERCH_EXIT_FATAL;
	if (!code && report_diff_trips(run.d, &rep->dargs, print_trip, run.d))
		code = PERCH_EXIT_REGRESSION;
	report_diff_close(&run);
	return code;
}

static int write_one(struct report *rep, const struct profile *p, const struct report_output *ro)
{
	struct output_file of;
	int ret;

	ret = output_open(&of, ro->path);
	if (ret < 0)
		return log_errno(ret, "cannot create %s", ro->path);
	ret = ro->fmt->write(p, &rep->oo, of.f);
	if (ret < 0) {
		output_abort(&of);
		return log_errno(ret, "cannot write %s", ro->path);
	}
	ret = output_commit(&of);
	if (ret < 0)
		return log_errno(ret, "cannot write %s", ro->path);
	if (!rep->quiet && strcmp(ro->path, "-"))
		fprintf(stderr, "perch: wrote %s (%s)\n", ro->path, ro->fmt->name);
	return 0;
}

/* --frames FILE: the framestats polls into @p's meta "frames". 0 or -errno (said). */
static int merge_frames(const char *path, struct profile *p)
{
	struct framestats fs;
	int ret;

	framestats_init(&fs);
	ret = framestats_load(&fs, path);
	if (ret < 0) {
		log_err(ret, "cannot merge frames from %s: %s", path, fs.error);
	} else {
		framestats_fill_budget(&fs, 0);
		framestats_store(&fs, p);
	}
	framestats_release(&fs);
	return ret;
}

/* The frame summary on stderr, times from the first kept sample. */
static void print_frames(const struct profile *p)
{
	size_t n;
	const struct profile_sample *s = profile_samples(p, &n);
	uint64_t base = UINT64_MAX;

	for (size_t i = 0; i < n; i++)
		base = s[i].time_ns < base ? s[i].time_ns : base;
	framestats_print_summary(p, 10, n ? base : 0, "perch: ", stderr);
}

/* The filters kept none of @src's samples: say what the recording holds, write nothing. */
static int filtered_out(const struct profile *src, const char *path)
{
	const char *dur = profile_meta(src, "duration_ns");
	char span[48] = "";

	if (dur)
		snprintf(span, sizeof(span), " over %.2f s", strtod(dur, NULL) / 1e9);
	log_err(0,
		"the filters match none of the %llu samples in %s (%zu threads%s): nothing "
		"written ('perch report %s' shows them all)",
		(unsigned long long)profile_total_samples(src), path, profile_nr_threads(src), span,
		path);
	return PERCH_EXIT_EMPTY;
}

static int report_run(int argc, char **argv)
{
	struct report rep = {0};
	struct report_symfs *rs = NULL;
	struct profile *src = NULL, *p = NULL;
	int code = PERCH_EXIT_OK;

	report_filter_init(&rep.filter);
	report_diff_args_init(&rep.dargs);
	if (parse_args(&rep, argc, argv) < 0) {
		cmd_print_help(&cmd_report, stderr);
		report_filter_release(&rep.filter);
		report_diff_args_release(&rep.dargs);
		return PERCH_EXIT_USAGE;
	}
	if (rep.symfs) {
		rs = report_symfs_new(rep.symfs);
		if (!rs) {
			code = PERCH_EXIT_USAGE;
			goto out;
		}
	}
	if (rep.diff_base) {
		code = report_diff_run(&rep, rs);
		goto out;
	}
	code = report_load(rep.in, &src, rep.quiet);
	if (code)
		goto out;
	if (rep.frames && merge_frames(rep.frames, src) < 0) {
		code = PERCH_EXIT_FATAL;
		goto out;
	}
	if (!rep.quiet)
		print_frames(src);
	if (rs || !report_filter_is_empty(&rep.filter))
		p = report_apply(src, &rep.filter, rs);
	if (!rep.quiet)
		log_info("%s: %llu samples, %zu threads; %llu after the filters", rep.in,
			 (unsigned long long)profile_total_samples(src), profile_nr_threads(src),
			 (unsigned long long)profile_total_samples(p ? p : src));
	if (p && !profile_total_samples(p) && profile_total_samples(src)) {
		code = filtered_out(src, rep.in);
		goto out;
	}
	for (int i = 0; i < rep.nr_outputs; i++)
		if (write_one(&rep, p ? p : src, &rep.outputs[i]) < 0)
			code = PERCH_EXIT_FATAL;
out:
	profile_free(p);
	profile_free(src);
	report_symfs_free(rs);
	report_filter_release(&rep.filter);
	report_diff_args_release(&rep.dargs);
	return code;
}

const struct cmd cmd_report = {
    .name = "report",
    .summary = "render a recording (perch record -o FILE.perch) in any format",
    .help = report_help,
    .run = report_run,
    .flags = CMD_NO_PTRACE,
    .prompt = &repl_report,
    .complete_options = report_complete_options,
};
