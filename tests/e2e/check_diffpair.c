/* e2e: `perch report --diff` between runs that are named differently (issue 34). The truth is
 * how the targets were built and run, not perch's reading: build/targets/diff-named/app and
 * app-slow are the diffwork program built from one source under two file names, the second with
 * step_b() eight times longer; diff-lib/difflib runs with libdifflib.so.1.2 in one run and
 * libdifflib.so.1.3 in the other, its pool threads numbered worker-3.. in one and worker-7.. in
 * the other. Checked: the diff pairs the main executables, the main threads, the library by its
 * name without version and the pool as one group, says so in its header with the share
 * compared; it names step_b beyond noise and --fail-if exits 3; the same build under two names
 * exits 0; a rule that matches no function exits 2 naming the rule; three runs a side given as
 * comma lists (replicates) still find step_b. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define RATE	 "400"
#define SECS	 3.0
#define ATTEMPTS 3 /* a loaded machine can widen the margin past even this change: see below */

static const char *tmp(const char *name)
{
	return harness_tmpfile(name);
}

/* Record target @cmd (a shell command; its ready line awaited) for SECS at RATE into
 * tmp(@name), then kill it. Through the shell, not harness_spawn(): the replicates test records
 * up to twelve runs, more than the harness keeps children. The target runs at nice -10 for the
 * reason check_diff.c gives (a starved target repeats one stack). */
static void record_cmd(const char *cmd, const char *name)
{
	const char *out = tmp(harness_fmt("%s.out", name)), *res;
	int code;

	res = harness_sh(
	    harness_fmt("/usr/bin/nice -n -10 %s > '%s' & pid=$!; n=0; "
			"until grep -q ready '%s'; do n=$((n+1)); [ $n -lt 200 ] || exit 90; "
			"sleep 0.05; done; '%s' record -q -F %s -d %g -o '%s' -p $pid; st=$?; "
			"kill -9 $pid; wait $pid 2>/dev/null; exit $st",
			cmd, out, out, harness_perch(), RATE, SECS, tmp(name)),
	    &code, SECS + 40);
	H_ASSERT(code == 0, "recording %s exited %d:\n%s", cmd, code, res);
}

/* Record the diffwork build at @target ("diff-named/app", ...) into tmp(@name). */
static void record(const char *target, const char *name)
{
	record_cmd(harness_fmt("'%s' 60", harness_target(target)), name);
}

static const char *report(const char *args, int want)
{
	int code;
	const char *out =
	    harness_sh(harness_fmt("'%s' report %s", harness_perch(), args), &code, 60);

	H_ASSERT(code == want, "perch report %s exited %d, want %d:\n%s", args, code, want, out);
	return out;
}

/* The total change (points) of function @fn in the section of thread @thread, and whether it
 * is marked beyond noise; 0 when found. */
static int text_row(const char *text, const char *thread, const char *fn, double *change,
		    int *beyond)
{
	const char *sec = strstr(text, harness_fmt("\n# thread %s:", thread)), *line, *end;
	double base, new, margin;
	char mark = 0;

	if (!sec)
		return -1;
	end = strstr(sec + 1, "\n# thread ");
	for (line = strchr(sec + 1, '\n'); line && (!end || line < end);
	     line = strchr(line + 1, '\n')) {
		const char *eol = strchr(line + 1, '\n'),
			   *name = strstr(line, harness_fmt("  %s (", fn));

		if (!name || (eol && name > eol))
			continue;
		if (sscanf(line + 1, "%lf %lf %lf \xc2\xb1%lf %c", &base, &new, change, &margin,
			   &mark) < 4)
			return -1;
		*beyond = mark == '*';
		return 0;
	}
	return -1;
}

/* The header's compared shares of BASE and NEW (percent). */
static void compared(const char *text, double *base, double *new)
{
	const char *c = strstr(text, "# compared: ");

	H_ASSERT(c && sscanf(c, "# compared: %lf%% of BASE's samples and %lf%% of NEW's", base,
			     new) == 2,
		 "no compared line in the header:\n%.1500s", text);
}

/* step_b of the main thread grew beyond noise between tmp(@base) and tmp(@new) (recorded by
 * @rec, again when within noise: at most ATTEMPTS in all); the text diff. */
static const char *slower_found(void (*rec)(void), const char *base, const char *new,
				const char *test)
{
	const char *out = NULL;
	double change = 0;
	int beyond = 0;

	for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
		rec();
		out = report(harness_fmt("-q --diff %s %s --top 100", base, new), 0);
		H_ASSERT(!text_row(out, "app/app", "step_b", &change, &beyond),
			 "no step_b row in the main thread's section:\n%.3000s", out);
		H_ASSERT(change > 20, "step_b: change %+.2f points", change);
		if (beyond)
			return out;
		fprintf(stderr,
			"note: e2e-diffpair %s: step_b grew by %+.2f points but within noise (a "
			"loaded machine widens the margin); recording again\n",
			test, change);
	}
	H_ASSERT(0, "step_b: %+.2f points, within noise in %d attempts", change, ATTEMPTS);
	return out;
}

static void record_named_pair(void)
{
	record("diff-named/app", "app.perch");
	record("diff-named/app-slow", "app-slow.perch");
}

/* Two builds under two file names, one function slower. */
START_TEST(named_builds)
{
	const char *base = tmp("app.perch"), *new = tmp("app-slow.perch"), *out;
	double cb, cn, change;
	int beyond;

	out = slower_found(record_named_pair, base, new, "named_builds");
	H_ASSERT(strstr(out, "\n#   app ~ app-slow (main executable)\n"),
		 "the header does not pair the executables:\n%.1500s", out);
	H_ASSERT(strstr(out, "\n#   app/app ~ app-slow/app-slow (main thread)\n"),
		 "the header does not pair the main threads:\n%.1500s", out);
	compared(out, &cb, &cn);
	H_ASSERT(cb >= 99 && cn >= 99, "compared %.1f%% and %.1f%%", cb, cn);
	H_ASSERT(!strstr(out, "WARNING"), "a warning:\n%.1500s", out);
	/* the helper thread paired by name across the process names, unchanged */
	H_ASSERT(!text_row(out, "app/diffhelper", "helper_work", &change, &beyond) && !beyond,
		 "helper_work: %+.2f points", change);

	out = report(harness_fmt("-q --diff %s %s -o /dev/null --fail-if '^step_b$:+5'", base, new),
		     3);
	H_ASSERT(strstr(out, "step_b (app) of thread app/app grew by"), "no message naming step_b");
	out = report(harness_fmt("-q --diff %s %s -o /dev/null --fail-if '^step_b$:+5' "
				 "--fail-if '^no_such_function$:+1'",
				 base, new),
		     2);
	H_ASSERT(strstr(out, "--fail-if '^no_such_function$:+1' matches no function"),
		 "the error does not name the rule:\n%s", out);
	/* every thread as one: the functions still pair (not +100 / -100) */
	out = report(harness_fmt("-q --diff %s %s --merge-threads", base, new), 0);
	H_ASSERT(!text_row(out, "all threads", "step_a", &change, &beyond) && change > -50,
		 "step_a with --merge-threads: %+.2f points", change);
	H_ASSERT(!text_row(out, "all threads", "main", &change, &beyond) && change > -50 &&
		     change < 50,
		 "main with --merge-threads: %+.2f points", change);
	/* the flame graph draws on the pairing: step_b red */
	report(harness_fmt("-q --diff %s %s -o %s", base, new, tmp("d.svg")), 0);
	out = report(harness_fmt("-q --diff %s %s -o %s && grep -o 'data-name=\"step_b\" "
				 "data-diff=\"[^\"]*\"' %s",
				 base, new, tmp("d.html"), tmp("d.svg")),
		     0);
	H_ASSERT(strstr(out, "change +") && strstr(out, "beyond noise"), "step_b's frame: %s", out);
}
END_TEST

/* The same build under two file names: nothing grew. */
START_TEST(same_build_two_names)
{
	const char *out;
	double cb, cn;

	record("diff-base/diffwork", "diffwork.perch");
	record("diff-named/app", "app.perch");
	out = report(harness_fmt("-q --diff %s %s --fail-if '^step_[abc]$:+5'",
				 tmp("diffwork.perch"), tmp("app.perch")),
		     0);
	H_ASSERT(strstr(out, "\n#   diffwork ~ app (main executable)\n"),
		 "the header does not pair the executables:\n%.1500s", out);
	compared(out, &cb, &cn);
	H_ASSERT(cb >= 99 && cn >= 99, "compared %.1f%% and %.1f%%", cb, cn);
}
END_TEST

/* Record difflib with library version @ver and pool numbers from @first into tmp(@name). */
static void record_lib(const char *ver, const char *first, const char *name)
{
	record_cmd(harness_fmt("'%s' 60 '%s' %s", harness_target("diff-lib/difflib"),
			       harness_target(harness_fmt("diff-lib/libdifflib.so.%s", ver)),
			       first),
		   name);
}

/* A library whose versioned file name changed, pool threads numbered differently. */
START_TEST(versioned_library_and_pool)
{
	const char *out;
	double cb, cn, change;
	int beyond;

	record_lib("1.2", "3", "l12.perch");
	record_lib("1.3", "7", "l13.perch");
	out = report(harness_fmt("-q --diff %s %s --fail-if '^lib_inner$:+50'", tmp("l12.perch"),
				 tmp("l13.perch")),
		     0);
	H_ASSERT(strstr(out, "\n#   libdifflib.so.1.2 ~ libdifflib.so.1.3 (soname stem)\n"),
		 "the header does not pair the library:\n%.1500s", out);
	H_ASSERT(strstr(out, "\n#   difflib/worker-3 ~ difflib/worker-7 (numbers as #)\n"),
		 "the header does not pair the pool:\n%.1500s", out);
	H_ASSERT(strstr(out, "\n# thread difflib/worker-#: BASE ") &&
		     strstr(out, " samples (3 threads), NEW "),
		 "the pool is not one group of 3 threads a side:\n%.2500s", out);
	/* the library's functions are one row each, in both runs (not -100 / +100) */
	H_ASSERT(!text_row(out, "difflib/worker-#", "lib_inner", &change, &beyond) &&
		     change > -20 && change < 20,
		 "lib_inner: %+.2f points", change);
	compared(out, &cb, &cn);
	H_ASSERT(cb >= 99 && cn >= 99, "compared %.1f%% and %.1f%%", cb, cn);
}
END_TEST

static void record_replicates(void)
{
	for (int i = 1; i <= 3; i++) {
		record("diff-named/app", harness_fmt("a%d.perch", i));
		record("diff-named/app-slow", harness_fmt("b%d.perch", i));
	}
}

/* Three runs a side as comma lists. */
START_TEST(replicates)
{
	const char *base =
		       harness_fmt("%s,%s,%s", tmp("a1.perch"), tmp("a2.perch"), tmp("a3.perch")),
		   *new =
		       harness_fmt("%s,%s,%s", tmp("b1.perch"), tmp("b2.perch"), tmp("b3.perch")),
		   *out;

	out = slower_found(record_replicates, base, new, "replicates");
	H_ASSERT(strstr(out, "# BASE a1.perch,a2.perch,a3.perch: ") &&
		     strstr(out, "samples in 3 runs"),
		 "the header does not name both runs:\n%.1500s", out);
	H_ASSERT(strstr(out, "and for the spread between runs"),
		 "the header does not say the spread between runs counts:\n%.1500s", out);
	report(harness_fmt("-q --diff %s %s -o /dev/null --fail-if '^step_b$:+5'", base, new), 3);
}
END_TEST

Suite *diffpair_suite(void)
{
	Suite *s = suite_create("e2e-diffpair");
	TCase *tc = tcase_create("diffpair");

	harness_tcase_init(tc, 240);
	tcase_add_test(tc, named_builds);
	tcase_add_test(tc, same_build_two_names);
	tcase_add_test(tc, versioned_library_and_pool);
	tcase_add_test(tc, replicates);
	suite_add_tcase(s, tc);
	return s;
}
