/* `perch report`: render a recording (perch record -o run.perch) in any output format, with
 * filters and re-symbolization from a symfs directory. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/cmd.h"
#include "perch/framestats.h"
#include "perch/log.h"
#include "perch/output.h"
#include "perch/profile.h"
#include "perch/recording.h"
#include "perch/report-diff.h"
#include "perch/report.h"
#include "perch/writers.h"

#define REPORT_MAX_OUTPUTS 8

static const char report_usage[] =
    "usage: perch report [options] RECORDING\n"
    "       perch report --diff BASE [options] RECORDING\n"
    "\n"
    "Render a recording made with 'perch record -o FILE.perch'. Without -o, the call tree\n"
    "and the top functions go to stdout as text.\n"
    "\n"
    "  -o, --output FILE      write to FILE ('-' for stdout); the ending picks the format as\n"
    "                         in perch record: .folded, .svg, .html (the report page: summary,\n"
    "                         thread timeline, CPU and memory, flame graph), .pb.gz,\n"
    "                         .speedscope.json, .trace.json, .sentry.json, .trace, .txt,\n"
    "                         .perch; up to 8 -o\n"
    "      --format NAME      format for stdout and for -o files with another ending:\n"
    "                         folded svg html flamegraph-html pprof speedscope chrome sentry\n"
    "                         arttrace text top perch (default text)\n"
    "      --symfs DIR        re-symbolize from unstripped copies of the modules below DIR,\n"
    "                         found by build-id (or by path)\n" REPORT_FILTER_USAGE
    "      --lines            add ' (file:line)' to folded frames when known\n"
    "      --top N            rows of the top table (text, top)\n"
    "      --frames FILE      merge Android frame timings into the recording: the output of\n"
    "                         'dumpsys gfxinfo PKG framestats', one or several polls (perch-adb\n"
    "                         record --frames writes it); slow and frozen frames go to the\n"
    "                         summary, the Chrome trace, the Sentry chunk and the report "
    "page\n" REPORT_DIFF_USAGE "  -q, --quiet            no messages but errors\n"
    "  -v, --verbose          more messages\n"
    "\n"
    "Exit status: 0 ok, 2 the recording cannot be read or an output cannot be written,\n"
    "3 a --fail-if rule tripped, 64 usage.\n";

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

static int parse_args(struct report *rep, int argc, char **argv)
{
	enum {
		OPT_FORMAT = 256,
		OPT_SYMFS,
		OPT_LINES,
		OPT_TOP,
		OPT_HELP,
		OPT_TID,
		OPT_THREAD,
		OPT_MODE,
		OPT_START,
		OPT_END,
		OPT_DIFF,
		OPT_FAIL_IF,
		OPT_ALPHA,
		OPT_MERGE,
		OPT_FRAMES
	};
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, OPT_FORMAT},
	    {"symfs", required_argument, NULL, OPT_SYMFS},
	    {"lines", no_argument, NULL, OPT_LINES},
	    {"top", required_argument, NULL, OPT_TOP},
	    {"tid", required_argument, NULL, OPT_TID},
	    {"thread", required_argument, NULL, OPT_THREAD},
	    {"mode", required_argument, NULL, OPT_MODE},
	    {"start", required_argument, NULL, OPT_START},
	    {"end", required_argument, NULL, OPT_END},
	    {"diff", required_argument, NULL, OPT_DIFF},
	    {"fail-if", required_argument, NULL, OPT_FAIL_IF},
	    {"alpha", required_argument, NULL, OPT_ALPHA},
	    {"merge-threads", no_argument, NULL, OPT_MERGE},
	    {"frames", required_argument, NULL, OPT_FRAMES},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, OPT_HELP},
	    {0},
	};
	int c, idx;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qv", opts, &idx)) != -1) {
		switch (c) {
		case 'o':
			if (rep->nr_outputs == REPORT_MAX_OUTPUTS)
				return log_err(-EINVAL, "at most %d -o options",
					       REPORT_MAX_OUTPUTS);
			rep->outputs[rep->nr_outputs++].path = optarg;
			break;
		case OPT_FORMAT:
			rep->fmt = output_format_by_name(optarg);
			if (!rep->fmt)
				return log_err(-EINVAL,
					       "unknown --format '%s' (see perch report --help)",
					       optarg);
			break;
		case OPT_SYMFS:
			rep->symfs = optarg;
			break;
		case OPT_LINES:
			rep->oo.lines = 1;
			break;
		case OPT_TOP:
			rep->oo.top = atoi(optarg);
			if (rep->oo.top <= 0)
				return log_err(-EINVAL, "--top wants a positive number, not '%s'",
					       optarg);
			break;
		case OPT_TID:
		case OPT_THREAD:
		case OPT_MODE:
		case OPT_START:
		case OPT_END:
			if (report_filter_option(&rep->filter, opts[idx].name, optarg) < 0)
				return -EINVAL;
			break;
		case OPT_DIFF:
			rep->diff_base = optarg;
			break;
		case OPT_FRAMES:
			rep->frames = optarg;
			break;
		case OPT_FAIL_IF:
		case OPT_ALPHA:
		case OPT_MERGE:
			if (report_diff_option(&rep->dargs, opts[idx].name, optarg) < 0)
				return -EINVAL;
			rep->diff_opts = 1;
			break;
		case 'q':
			rep->quiet = 1;
			log_level = LOG_LEVEL_QUIET;
			break;
		case 'v':
			log_level++;
			break;
		case OPT_HELP:
			fputs(report_usage, stdout);
			exit(PERCH_EXIT_OK);
		default:
			return log_err(-EINVAL, "unknown or incomplete option '%s'",
				       argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return log_err(-EINVAL, optind < argc ? "one recording at a time"
						      : "which recording? give RECORDING");
	rep->in = argv[optind];
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
			       "--fail-if, --alpha and --merge-threads go with --diff BASE");
	if (rep->diff_base && rep->filter.nr_tids)
		return log_err(-EINVAL, "--tid does not go with --diff (thread ids differ between "
					"runs): use --thread REGEX");
	return 0;
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

static int report_run(int argc, char **argv)
{
	struct report rep = {0};
	struct report_symfs *rs = NULL;
	struct profile *src = NULL, *p = NULL;
	int code = PERCH_EXIT_OK;

	report_filter_init(&rep.filter);
	report_diff_args_init(&rep.dargs);
	if (parse_args(&rep, argc, argv) < 0) {
		fprintf(stderr, "\n%s", report_usage);
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
    .usage = report_usage,
    .run = report_run,
    .flags = CMD_NO_PTRACE,
};
