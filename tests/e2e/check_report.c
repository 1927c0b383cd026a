/* e2e: record once (`perch record -o run.perch`), render many (`perch report`): every format
 * opened by its real consumer agrees that spin is the hottest function of the chain target; a
 * recording cut short by SIGKILL of perch still reads; the filters (--tid, --thread, --mode,
 * --start/--end) and --symfs (a stripped target re-symbolized from its unstripped copy); and
 * `perch annotate`. Consumers that are not installed are reported as "SKIP: ...". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

static const char *tmp(const char *name)
{
	return harness_fmt("%s/%s", harness_tmpdir(), name);
}

/* `perch report ARGS...` (a shell word list); must exit 0. Returns its stderr + stdout. */
static const char *report(const char *args)
{
	int code;
	const char *out = harness_sh(harness_fmt("'%s' %s", harness_perch(), args), &code, 30);

	H_ASSERT(code == 0, "perch %s exited with %d:\n%s", args, code, out);
	return out;
}

/* hottest.py KIND FILE: "NAME PERCENT" */
static void assert_hottest(const char *kind, const char *path, const char *fn, double min_pct)
{
	char name[256];
	double pct = 0;
	int code;
	const char *out = harness_sh(
	    harness_fmt("python3 tests/e2e/py/hottest.py %s '%s'", kind, path), &code, 30);

	H_ASSERT(code == 0 && sscanf(out, "%255s %lf", name, &pct) == 2,
		 "hottest.py %s %s failed:\n%s", kind, path, out);
	H_ASSERT(!strcmp(name, fn) && pct >= min_pct,
		 "%s (%s) says the hottest function is %s (%.1f%%), want %s >= %.0f%%", path, kind,
		 name, pct, fn, min_pct);
}

static const char *chain_seq[] = {"main", "f0", "f1", "f2", "f3", "spin"};

static int has_chain(const struct harness_folded_line *l, const void *unused)
{
	(void)unused;
	return harness_line_has_seq(l, chain_seq, 6);
}

/* Record the chain target by pid for @secs into run.perch (plus live.folded); returns the
 * target's pid. */
static pid_t record_chain(const char *rec, double secs, struct harness_folded *live)
{
	const char *folded = harness_tmpfile("live.folded");
	struct harness_proc *t, *perch;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-d",
						    harness_fmt("%g", secs), "-o", rec, "-o",
						    folded, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, secs + 10) == 0, "perch did not stop after -d");
	H_CHECK_RECORD(perch, 0, folded, live);
	H_ASSERT(strstr(perch->err.buf, "wrote ") && strstr(perch->err.buf, "perch recording"),
		 "no 'wrote ... (perch recording' line:\n%s", perch->err.buf);
	return pid;
}

/* The flame graph in headless Chromium: the script runs without a console message, a search
 * for the hottest function matches >= @min of @total samples, and a screenshot shows it
 * highlighted across most of the width. */
static void check_flamegraph(const char *path, const char *fn, unsigned long total)
{
	const char *browser = NULL, *out, *shot = harness_tmpfile("shot.png"), *m;
	unsigned long matched = 0;
	long run = 0;
	int code;

	if (harness_have("chromium"))
		browser = "chromium";
	if (!browser)
		return;
#define CHROMIUM                                                                                   \
	"HOME=%s timeout 60 %s --headless --no-sandbox --disable-gpu --no-first-run "              \
	"--disable-extensions --enable-logging=stderr --v=0 --user-data-dir=%s/chromium "
	out = harness_sh(harness_fmt(CHROMIUM "--dump-dom 'file://%s#selftest=all/^%s$'",
				     harness_tmpdir(), browser, harness_tmpdir(), path, fn),
			 &code, 70);
	H_ASSERT(code == 0, "chromium --dump-dom %s failed (%d):\n%.2000s", path, code, out);
	H_ASSERT(!strstr(out, ":CONSOLE"), "console message from %s:\n%.2000s", path,
		 strstr(out, ":CONSOLE"));
	m = strstr(out, ";matched=");
	H_ASSERT(m && sscanf(m, ";matched=%lu", &matched) == 1,
		 "the self-test did not run:\n%.2000s", out);
	H_ASSERT(matched * 100 >= total * 90, "search for %s matched %lu of %lu samples", fn,
		 matched, total);
	out = harness_sh(harness_fmt(CHROMIUM "--window-size=1200,500 --screenshot=%s "
					      "'file://%s#selftest=all/^%s$'",
				     harness_tmpdir(), browser, harness_tmpdir(), shot, path, fn),
			 &code, 70);
	H_ASSERT(code == 0, "chromium --screenshot failed (%d):\n%.2000s", code, out);
	/* search hits are drawn in rgb(230,0,230): the hottest frame is a wide magenta bar */
	out = harness_sh(
	    harness_fmt("python3 tests/e2e/py/hottest.py png-run '%s' 230 0 230", shot), &code, 60);
	H_ASSERT(
	    code == 0 && sscanf(out, "%ld", &run) == 1 && run >= 1000,
	    "the screenshot of %s has a highlighted run of %ld px, want >= 1000 (of 1180):\n%s",
	    path, run, out);
}

START_TEST(report_every_format)
{
	const char *rec = harness_tmpfile("run.perch"), *out, *line;
	struct harness_folded live, back;
	double sum = 0;
	int code;

	record_chain(rec, 2, &live);
	/* folded from the recording == folded written live */
	report(harness_fmt("report -q '%s' -o '%s'", rec, tmp("back.folded")));
	H_ASSERT(harness_folded_load(&back, tmp("back.folded")) == 0, "no back.folded");
	H_ASSERT(back.total == live.total && back.nr == live.nr,
		 "report gives %lu samples in %zu lines, record wrote %lu in %zu", back.total,
		 back.nr, live.total, live.nr);
	assert_hottest("folded", tmp("back.folded"), "spin", 90);

	report(harness_fmt("report -q '%s' -o %s -o %s -o %s -o %s -o %s -o %s -o %s", rec,
			   tmp("r.speedscope.json"), tmp("r.trace.json"), tmp("r.sentry.json"),
			   tmp("r.pb.gz"), tmp("r.trace"), tmp("r.txt"), tmp("r.svg")));
	/* .html is the report page (tests/report); the flame graph page by --format */
	report(harness_fmt("report -q '%s' --format flamegraph-html -o '%s'", rec, tmp("r.htm")));
	rename(tmp("r.htm"), tmp("r.html"));
	assert_hottest("speedscope", tmp("r.speedscope.json"), "spin", 90);
	assert_hottest("chrome", tmp("r.trace.json"), "spin", 90);
	assert_hottest("sentry", tmp("r.sentry.json"), "spin", 90);
	if (harness_have("go")) {
		out = harness_sh(
		    harness_fmt("HOME=%s go tool pprof -symbolize=none -top -nodecount=1 '%s'",
				harness_tmpdir(), tmp("r.pb.gz")),
		    &code, 120);
		line = strstr(out, "flat%");
		line = line ? strchr(line, '\n') : NULL;
		H_ASSERT(code == 0 && line && strstr(line, " spin\n"),
			 "go tool pprof -top does not put spin first:\n%s", out);
	}
	if (harness_have("dmtracedump")) {
		/* the exclusive-time table: the first method after (toplevel) is spin */
		out =
		    harness_sh(harness_fmt("dmtracedump '%s' | grep -m2 '^ *[0-9].*\\[[0-9]*\\]' | "
					   "grep -v toplevel | head -1",
					   tmp("r.trace")),
			       &code, 60);
		H_ASSERT(code == 0 && strstr(out, ".spin ()V"),
			 "dmtracedump's hottest method is not spin:\n%s", out);
	}
	out = harness_sh(harness_fmt("grep -A2 'functions by self' '%s' | tail -1", tmp("r.txt")),
			 &code, 10);
	H_ASSERT(strstr(out, " spin ("), "the text report's top self row is not spin:\n%s", out);
	check_flamegraph(tmp("r.html"), "spin", live.total);
	check_flamegraph(tmp("r.svg"), "spin", live.total);

	/* annotate: the instructions of spin share its samples */
	out = report(harness_fmt("annotate spin '%s'", rec));
	H_ASSERT(strstr(out, "<spin>:"), "no disassembly header:\n%s", out);
	for (line = out; (line = strchr(line, '\n')); line++) {
		double pct;

		if (sscanf(line + 1, "%lf :", &pct) == 1)
			sum += pct;
	}
	H_ASSERT(sum > 99.0 && sum < 101.0, "annotate's shares add up to %.2f%%:\n%s", sum, out);
	harness_folded_release(&live);
	harness_folded_release(&back);
}
END_TEST

/* perch killed with SIGKILL while recording: the target runs on, and the recording reads up
 * to its last complete chunk. */
START_TEST(report_cut_short)
{
	const char *rec = harness_tmpfile("cut.perch"), *folded = harness_tmpfile("cut.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long good;
	pid_t pid;
	int code;
	const char *out;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o",
						    rec, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach");
	harness_sleep(2.6);
	harness_proc_kill(perch, SIGKILL);
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not die");
	H_ASSERT(harness_wait_traced(pid, 0, 5) == 0, "target still traced after perch died");
	out = harness_sh(harness_fmt("'%s' report '%s' -o '%s'", harness_perch(), rec, folded),
			 &code, 30);
	H_ASSERT(code == 0, "report of a cut recording exited with %d:\n%s", code, out);
	H_ASSERT(strstr(out, "cut short"), "no 'cut short' warning:\n%s", out);
	H_ASSERT(harness_folded_load(&f, folded) == 0, "no %s", folded);
	H_ASSERT_FOLDED_VALID(&f);
	good = harness_folded_count(&f, NULL, has_chain, NULL);
	/* at least the first second's chunk: 200 samples, most of them in the chain */
	H_ASSERT(f.total >= 150 && good * 100 >= f.total * 90,
		 "%lu samples, %lu with the chain, in the cut recording", f.total, good);
	harness_proc_kill(t, SIGTERM);
	harness_folded_release(&f);
}
END_TEST

static unsigned long report_total(const char *rec, const char *args, struct harness_folded *f)
{
	const char *path = tmp("filtered.folded");

	report(harness_fmt("report -q '%s' %s -o '%s'", rec, args, path));
	harness_folded_release(f);
	H_ASSERT(harness_folded_load(f, path) == 0, "no %s", path);
	return f->total;
}

/* A wait frame is "[...]" ("[lock futex]", "[sleep nanosleep]", "[stopped]"); unnamed code
 * is bracketed too ("[[vdso]+0x7a1]": a running thread stopped in the vDSO's unnamed helper)
 * and must not count: that made --mode cpu look as if it kept waiting threads (issue 15). */
static int ends_in_wait(const struct harness_folded_line *l, const void *unused)
{
	const char *leaf = l->frames[l->nr_frames - 1];
	size_t n = strlen(leaf);

	(void)unused;
	return leaf[0] == '[' && n > 1 && leaf[n - 1] == ']' && strcmp(leaf, "[unknown]") &&
	       !strstr(leaf, "+0x");
}

START_TEST(report_filters)
{
	const char *rec = harness_tmpfile("t4.perch");
	struct harness_proc *t, *perch;
	struct harness_folded f = {0};
	unsigned long all, part, a, b;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("threads4"), "6"));
	pid = harness_proc_wait_ready(t, 5);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-q", "-F", "100", "-d",
						"2", "-o", rec, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 12) == 0, "perch did not stop");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited with %d:\n%s",
		 harness_proc_exit_code(perch), perch->err.buf);
	all = report_total(rec, "", &f);
	H_ASSERT(all >= 300, "only %lu samples of threads4", all);
	H_ASSERT(harness_folded_count(&f, NULL, ends_in_wait, NULL) > 0,
		 "wall mode shows no waiting thread");

	/* --thread: only wA; --tid: only the main thread */
	part = report_total(rec, "--thread '^wA$'", &f);
	H_ASSERT(part > 0 && part < all &&
		     harness_folded_count(&f, "wA", harness_pred_any, NULL) == part,
		 "--thread '^wA$' kept %lu of %lu samples, %lu of wA", part, all,
		 harness_folded_count(&f, "wA", harness_pred_any, NULL));
	part = report_total(rec, harness_fmt("--tid %d", pid), &f);
	for (size_t i = 0; i < f.nr; i++)
		H_ASSERT(f.lines[i].tid == pid, "--tid %d kept thread %d", pid, f.lines[i].tid);
	H_ASSERT(part > 0 && part < all, "--tid kept %lu of %lu", part, all);

	/* --mode cpu: no wait frames, fewer samples */
	part = report_total(rec, "--mode cpu", &f);
	H_ASSERT(part > 0 && part < all, "--mode cpu kept %lu of %lu", part, all);
	H_ASSERT(harness_folded_count(&f, NULL, ends_in_wait, NULL) == 0,
		 "--mode cpu kept samples of waiting threads");

	/* a window and its complement add up */
	a = report_total(rec, "--end 1", &f);
	b = report_total(rec, "--start 1", &f);
	H_ASSERT(a > 0 && b > 0 && a + b == all, "--end 1: %lu, --start 1: %lu, all: %lu", a, b,
		 all);
	part = report_total(rec, "--start 0.5 --end 1", &f);
	H_ASSERT(part > 0 && part < a, "--start 0.5 --end 1 kept %lu (--end 1: %lu)", part, a);
	harness_folded_release(&f);
	H_ASSERT(harness_proc_wait(t, 10) == 0, "threads4 did not finish");
}
END_TEST

/* A stripped copy of the target recorded; --symfs finds the unstripped one by build-id below
 * a directory (under another name), and names its frames. */
START_TEST(report_symfs)
{
	const char *rec = harness_tmpfile("stripped.perch"), *bin = harness_tmpfile("chain-strip");
	const char *symfs = harness_tmpfile("symfs"), *out;
	struct harness_proc *perch;
	struct harness_folded f = {0};
	unsigned long spin;
	int code;

	if (!harness_have("strip"))
		return;
	out = harness_sh(
	    harness_fmt("strip -o '%s' '%s' && mkdir -p '%s/a/b' && cp '%s' '%s/a/b/unstripped' "
			"&& echo junk > '%s/a/junk'",
			bin, harness_target("chain-fp"), symfs, harness_target("chain-fp"), symfs,
			symfs),
	    &code, 20);
	H_ASSERT(code == 0, "cannot prepare the stripped target:\n%s", out);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-q", "-F", "200",
						    "-o", rec, "--", bin, "1.5"));
	harness_track_pid(harness_proc_wait_ready(perch, 5));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not exit");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited with %d:\n%s",
		 harness_proc_exit_code(perch), perch->err.buf);

	report_total(rec, "", &f);
	spin = harness_folded_count(&f, NULL, harness_pred_has, "spin");
	H_ASSERT(spin == 0, "the stripped target already names spin (%lu samples)", spin);
	report_total(rec, harness_fmt("--symfs '%s'", symfs), &f);
	spin = harness_folded_count(&f, NULL, has_chain, NULL);
	if (spin * 100 < f.total * 85)
		harness_folded_context(&f, NULL, 20);
	H_ASSERT(f.total >= 100 && spin * 100 >= f.total * 85,
		 "with --symfs %lu of %lu samples hold main;f0;f1;f2;f3;spin", spin, f.total);
	out = report(harness_fmt("annotate --symfs '%s' spin '%s'", symfs, rec));
	H_ASSERT(strstr(out, "<spin>:") && strstr(out, "chain-strip"),
		 "annotate --symfs did not disassemble spin:\n%s", out);
	/* without --symfs the stripped file has no symbol for it */
	harness_sh(harness_fmt("'%s' annotate spin '%s'", harness_perch(), rec), &code, 20);
	H_ASSERT(code == HARNESS_EXIT_FATAL, "annotate of a stripped module exited with %d", code);
	harness_folded_release(&f);
}
END_TEST

/* Bad input: clear messages and exit codes. */
START_TEST(report_errors)
{
	const char *junk = harness_tmpfile("junk.perch"), *out;
	int code;

	out = harness_sh(
	    harness_fmt("echo hello > '%s'; '%s' report '%s'", junk, harness_perch(), junk), &code,
	    10);
	H_ASSERT(code == HARNESS_EXIT_FATAL && strstr(out, "not a perch recording"),
		 "junk file: exit %d:\n%s", code, out);
	out = harness_sh(harness_fmt("'%s' report /nonexistent.perch", harness_perch()), &code, 10);
	H_ASSERT(code == HARNESS_EXIT_FATAL && strstr(out, "No such file"), "missing: %d:\n%s",
		 code, out);
	out =
	    harness_sh(harness_fmt("'%s' report --mode idle x.perch", harness_perch()), &code, 10);
	H_ASSERT(code == HARNESS_EXIT_USAGE, "bad --mode: exit %d", code);
	out =
	    harness_sh(harness_fmt("'%s' report --thread '(' x.perch", harness_perch()), &code, 10);
	H_ASSERT(code == HARNESS_EXIT_USAGE && strstr(out, "--thread"), "bad regex: %d:\n%s", code,
		 out);
	out = harness_sh(harness_fmt("'%s' record -o a.perch -o b.perch -p 1", harness_perch()),
			 &code, 10);
	H_ASSERT(code == HARNESS_EXIT_USAGE && strstr(out, "only one recording"),
		 "two recordings: %d:\n%s", code, out);
}
END_TEST

Suite *report_suite(void)
{
	Suite *s = suite_create("e2e-report");
	TCase *tc = tcase_create("report");

	harness_tcase_init(tc, 240);
	tcase_add_test(tc, report_every_format);
	tcase_add_test(tc, report_cut_short);
	tcase_add_test(tc, report_filters);
	tcase_add_test(tc, report_symfs);
	tcase_add_test(tc, report_errors);
	suite_add_tcase(s, tc);
	return s;
}
