/* faults-kill: perch ends badly at a random moment, 30 times each: killed with SIGKILL, or
 * crashing by itself (perch-fault, built with -DPERCH_FAULT_INJECTION: PERCH_CRASH_AFTER_US
 * makes its tracer thread take a SIGSEGV, or abort(), wherever it is). The moment falls
 * anywhere from before the attach to deep in sampling at 1000 Hz. Each time the target must
 * be released by the kernel (TracerPid 0, no task in 't' or 'T'), keep running, and finish
 * with a sound result. The seed is printed with a failure (FAULTS_SEED=N replays it). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"

static void check_survivor(struct harness_proc *t, pid_t pid)
{
	faults_assert_released(pid, 1, 0);
	faults_assert_runs(pid, 3, 2);
	faults_victim_check(t, 1, 1);
}

START_TEST(kill_sigkill_random)
{
	uint64_t delay_us = faults_rand(0, 300000);
	struct harness_proc *t, *perch;
	pid_t pid;

	harness_context_add("SIGKILL %.1f ms after perch started\n", (double)delay_us / 1e3);
	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-victim"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-o",
						    harness_tmpfile("kill.folded"), "-p",
						    harness_fmt("%d", pid)));
	harness_sleep((double)delay_us / 1e6);
	harness_proc_kill(perch, SIGKILL);
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch survived SIGKILL");
	H_ASSERT(harness_proc_exit_code(perch) == 128 + SIGKILL ||
		     harness_proc_exit_code(perch) == 2,
		 "perch exited with %d", harness_proc_exit_code(perch));
	check_survivor(t, pid);
}
END_TEST

START_TEST(kill_crash_random)
{
	uint64_t delay_us = faults_rand(1, 300000);
	int abort_mode = _i % 2;
	struct harness_proc *t, *perch;
	int code;
	pid_t pid;

	harness_context_add("perch-fault %s %.1f ms after start\n",
			    abort_mode ? "abort()" : "SIGSEGV", (double)delay_us / 1e3);
	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-victim"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	setenv("PERCH_CRASH_AFTER_US", harness_fmt("%llu", (unsigned long long)delay_us), 1);
	setenv("PERCH_CRASH_HOW", abort_mode ? "abort" : "segv", 1);
	perch =
	    harness_spawn("perch-fault", HARNESS_ARGV(faults_perch_fault(), "record", "-F", "1000",
						      "-o", harness_tmpfile("crash.folded"), "-p",
						      harness_fmt("%d", pid)));
	unsetenv("PERCH_CRASH_AFTER_US");
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch-fault did not crash within 5 s");
	code = harness_proc_exit_code(perch);
	H_ASSERT(code == 128 + (abort_mode ? SIGABRT : SIGSEGV),
		 "perch-fault ended with %d, want death by %s", code,
		 abort_mode ? "SIGABRT" : "SIGSEGV");
	H_ASSERT(access(harness_tmpfile("crash.folded"), F_OK) != 0,
		 "a crashed perch left an output file");
	check_survivor(t, pid);
}
END_TEST

Suite *faults_kill_suite(void)
{
	Suite *s = suite_create("faults-kill");
	TCase *tc = tcase_create("kill");

	harness_tcase_init(tc, 30);
	tcase_add_loop_test(tc, kill_sigkill_random, 0, 30);
	tcase_add_loop_test(tc, kill_crash_random, 0, 30);
	suite_add_tcase(s, tc);
	return s;
}
