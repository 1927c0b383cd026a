/* faults-process: the target's own process life while perch samples it at 1000 Hz.
 * - exec: a worker thread (not the leader) execs a new image; perch follows it (samples from
 *   before and after), the new image computes the right value, everyone exits 0.
 * - fork: children forked (and a posix_spawn) by a sampled target are not traced and run
 *   normally; each checks its own TracerPid and result.
 * - short lives: many targets that exit while perch is in the middle of its interrupt/wait
 *   cycle, attached with -p or launched with `--`: perch always ends promptly, exit 0 with a
 *   consistent profile (or, when the target is gone before the attach, a clear error). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "faults.h"

START_TEST(process_exec)
{
	const char *out = harness_tmpfile("exec.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	char value[32];
	long bad = -1;
	int after_pid = -1;
	unsigned long before, after;
	const char *l;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-exec"), "1"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach within 5 s");
	H_ASSERT(harness_proc_wait(t, 20) == 0, "faults-exec did not finish in 20 s");
	l = harness_proc_wait_line(t, "exec after value ", 0);
	H_ASSERT(harness_proc_exit_code(t) == 0 && l &&
		     sscanf(l, "%31s bad %ld pid %d", value, &bad, &after_pid) == 3,
		 "faults-exec exited with %d without its result line", harness_proc_exit_code(t));
	H_ASSERT(bad == 0 && after_pid == pid, "after exec: %ld bad rounds, pid %d (want 0, %d)",
		 bad, after_pid, (int)pid);
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not exit after its target");
	H_CHECK_RECORD(perch, 0, out, &f);
	faults_assert_quiet(perch);
	before = harness_folded_count(&f, NULL, harness_pred_has, "exec_before_work");
	after = harness_folded_count(&f, NULL, harness_pred_has, "exec_after_work");
	harness_folded_context(&f, NULL, 20);
	H_ASSERT(before > 50 && after > 50,
		 "samples in exec_before_work %lu, exec_after_work %lu (want both > 50: perch "
		 "follows the exec)",
		 before, after);
	harness_folded_release(&f);
}
END_TEST

START_TEST(process_fork)
{
	const char *out = harness_tmpfile("fork.folded");
	long n, ok, traced, wrong, other, spawned;
	struct harness_proc *t, *perch;
	struct harness_folded f;
	const char *l;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-fork"), "300"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(t, 30) == 0, "faults-fork did not finish in 30 s");
	l = harness_proc_wait_line(t, "fork children ", 0);
	H_ASSERT(harness_proc_exit_code(t) == 0 && l &&
		     sscanf(l, "%ld ok %ld traced %ld wrong %ld other %ld spawn %ld", &n, &ok,
			    &traced, &wrong, &other, &spawned) == 6,
		 "faults-fork exited with %d without its result line", harness_proc_exit_code(t));
	H_ASSERT(ok == n && traced == 0 && wrong == 0 && other == 0 && spawned == (n + 9) / 10,
		 "children: %ld of %ld ok, %ld traced, %ld wrong result, %ld failed; %ld of %ld "
		 "posix_spawn ok",
		 ok, n, traced, wrong, other, spawned, (n + 9) / 10);
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not exit after its target");
	H_CHECK_RECORD(perch, 0, out, &f);
	faults_assert_quiet(perch);
	harness_folded_release(&f);
}
END_TEST

/* perch exited 0 after a short-lived target: its output is consistent, possibly empty when
 * the target was gone before the first tick. */
static void check_short_record(struct harness_proc *perch, const char *out)
{
	struct harness_folded f;
	long samples = harness_summary_samples(perch->err.buf);

	faults_assert_quiet(perch);
	H_ASSERT(harness_folded_load(&f, out) == 0, "perch exited 0 without writing %s", out);
	H_ASSERT(f.nr_bad == 0 && samples >= 0 && f.total == (unsigned long)samples,
		 "%zu malformed lines, %lu samples in the file, summary says %ld", f.nr_bad,
		 f.total, samples);
	harness_folded_release(&f);
}

/* _i even: `perch record -p` on a running target; odd: `perch record -- target`. The target
 * lives 5 to 150 ms (3 busy threads and a thread made every 5 ms) and exits on its own, often
 * while perch is between its interrupt and its wait. */
START_TEST(process_short_lived)
{
	const char *out = harness_tmpfile("short.folded");
	const char *life = harness_fmt("%.3f", (double)faults_rand(5, 150) / 1e3);
	struct harness_proc *t, *perch;
	pid_t pid;

	harness_context_add("target life %s s, %s\n", life, _i % 2 ? "launched" : "attached");
	if (_i % 2) {
		perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000",
							    "-o", out, "--",
							    harness_target("faults-victim"), life));
		H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not exit within 10 s");
		/* the target's own output is on perch's stdout; perch exits with its status */
		faults_victim_check(perch, 0, 0);
		check_short_record(perch, out);
		return;
	}
	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-victim"), life));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not exit within 10 s");
	faults_victim_check(t, 0, 0);
	if (harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL &&
	    strstr(perch->err.buf, "error: no samples: ")) {
		/* gone after the attach, before the first tick: says so, the output is written */
		H_ASSERT(strstr(perch->err.buf, "exited"),
			 "perch had no samples but does not say the target exited");
		H_ASSERT(access(out, F_OK) == 0, "perch wrote no %s", out);
		return;
	}
	if (harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL) {
		/* gone before perch attached: a clear message, nothing written */
		H_ASSERT(strstr(perch->err.buf, "cannot attach to"),
			 "perch exited 2 without saying the target was gone");
		H_ASSERT(access(out, F_OK) != 0, "perch failed but wrote %s", out);
		return;
	}
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited with %d",
		 harness_proc_exit_code(perch));
	check_short_record(perch, out);
}
END_TEST

Suite *faults_process_suite(void)
{
	Suite *s = suite_create("faults-process");
	TCase *tc = tcase_create("process");

	harness_tcase_init(tc, 40);
	tcase_add_test(tc, process_exec);
	tcase_add_test(tc, process_fork);
	tcase_add_loop_test(tc, process_short_lived, 0, 30);
	suite_add_tcase(s, tc);
	return s;
}
