/* e2e: a rate perch cannot keep is said, not hidden. threads4 (four busy threads) recorded at
 * 20,000 Hz: no machine here stops four threads every 50 us, so perch serves a fraction of
 * its ticks. The headline says how many it kept, the run ends with a clear message and exit
 * 4 (the outputs written all the same), and --allow-partial accepts it with exit 0. The share
 * of ticks kept is perch's own count (no outside truth: what matters is that it is said). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct harness_proc *record_fast(const char *out, int allow)
{
	struct harness_proc *perch;

	perch = harness_spawn(
	    "perch", allow ? HARNESS_ARGV(harness_perch(), "record", "-F", "20000", "-d", "1",
					  "--allow-partial", "-o", out, "--",
					  harness_target("threads4"), "3")
			   : HARNESS_ARGV(harness_perch(), "record", "-F", "20000", "-d", "1", "-o",
					  out, "--", harness_target("threads4"), "3"));
	H_ASSERT(harness_proc_wait(perch, 60) == 0, "perch did not finish");
	return perch;
}

START_TEST(overload_exits_partial)
{
	const char *out = harness_tmpfile("overload.folded");
	struct harness_proc *perch;

	unsetenv("PERCH_ALLOW_PARTIAL"); /* (the harness sets it for the other suites) */
	perch = record_fast(out, 0);
	struct harness_folded f;

	H_CHECK_RECORD(perch, 4, out, &f);
	H_ASSERT(strstr(perch->err.buf, "but perch kept only "),
		 "the headline does not say how many ticks perch kept");
	H_ASSERT(strstr(perch->err.buf, "a partial recording"), "no partial-recording error");
	H_ASSERT(f.total > 0, "the output of a partial recording is empty");
	harness_folded_release(&f);
}
END_TEST

START_TEST(overload_allowed)
{
	const char *out = harness_tmpfile("overload-ok.folded");
	struct harness_proc *perch = record_fast(out, 1);
	struct harness_folded f;

	H_CHECK_RECORD(perch, 0, out, &f);
	H_ASSERT(strstr(perch->err.buf, "but perch kept only "),
		 "with --allow-partial the headline still says how many ticks perch kept");
	harness_folded_release(&f);
}
END_TEST

Suite *overload_suite(void)
{
	Suite *s = suite_create("e2e-overload");
	TCase *tc = tcase_create("overload");

	harness_tcase_init(tc, 120);
	tcase_add_test(tc, overload_exits_partial);
	tcase_add_test(tc, overload_allowed);
	suite_add_tcase(s, tc);
	return s;
}
