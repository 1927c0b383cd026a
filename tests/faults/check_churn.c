/* faults-churn: a target that creates and joins 1000 threads per second while perch samples it
 * at 1000 Hz. perch must follow every clone and exit without losing the target: no error
 * beyond the races it counts, no thread held in a tracing stop, and the target's result (a
 * hash over every thread's work) equal to the run without perch. */
#include <stdio.h>
#include <string.h>

#include "faults.h"

#define CHURN_THREADS "2000"

/* Run faults-churn (profiled or not); its "value" into @value, its thread rate into @rate. */
static void churn_result(struct harness_proc *t, char *value, size_t size, double *rate)
{
	long threads, failed;
	char v[32];
	const char *l = harness_proc_wait_line(t, "churn threads ", 0);

	H_ASSERT(harness_proc_exit_code(t) == 0, "faults-churn exited with %d",
		 harness_proc_exit_code(t));
	H_ASSERT(l && sscanf(l, "%ld failed %ld value %31s rate %lf", &threads, &failed, v, rate) ==
			  4,
		 "no result line from faults-churn");
	H_ASSERT(threads == 2000 && failed == 0, "faults-churn ran %ld threads, %ld failed",
		 threads, failed);
	snprintf(value, size, "%s", v);
}

START_TEST(churn_1000_per_second)
{
	const char *out = harness_tmpfile("churn.folded");
	char base[32], prof[32];
	double base_rate, prof_rate;
	struct harness_proc *t, *perch;
	struct harness_folded f;
	struct faults_watch w;
	long long seen;
	pid_t pid;

	/* without perch */
	t = harness_spawn("unprofiled",
			  HARNESS_ARGV(harness_target("faults-churn"), CHURN_THREADS));
	harness_proc_wait_ready(t, 5);
	H_ASSERT(harness_proc_wait(t, 20) == 0, "unprofiled faults-churn did not finish in 20 s");
	churn_result(t, base, sizeof(base), &base_rate);

	/* with perch */
	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-churn"), CHURN_THREADS));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	faults_watch_until_exit(t, pid, 40, 0.5, &w);
	churn_result(t, prof, sizeof(prof), &prof_rate);
	harness_context_add("rates: %.0f threads/s unprofiled, %.0f profiled; longest 't' %.3f s\n",
			    base_rate, prof_rate, w.longest);
	H_ASSERT(!strcmp(base, prof), "result %s under perch, %s without", prof, base);

	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not exit after its target");
	H_CHECK_RECORD(perch, 0, out, &f);
	faults_assert_quiet(perch);
	seen = faults_field(perch->err.buf, "threads seen: ");
	H_ASSERT(seen >= 500, "perch saw %lld threads of the 2000 the target made", seen);
	/* a churning target spends its time in clone/exit: many pacing rounds must still have
	 * kept near the rate (perch slows thread creation, it must not stall it) */
	H_ASSERT(prof_rate >= 250, "thread rate under perch %.0f/s (without: %.0f/s)", prof_rate,
		 base_rate);
	fprintf(stderr,
		"faults-churn: %.0f threads/s without perch, %.0f with (perch saw %lld "
		"threads), longest tracing stop %.1f ms\n",
		base_rate, prof_rate, seen, w.longest * 1e3);
	harness_folded_release(&f);
}
END_TEST

Suite *faults_churn_suite(void)
{
	Suite *s = suite_create("faults-churn");
	TCase *tc = tcase_create("churn");

	harness_tcase_init(tc, 60);
	tcase_add_test(tc, churn_1000_per_second);
	suite_add_tcase(s, tc);
	return s;
}
