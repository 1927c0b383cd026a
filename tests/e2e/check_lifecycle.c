/* e2e: how perch ends. Killed (-9): the target is detached by the kernel and runs on. SIGINT or
 * SIGTERM: perch detaches, writes its output, exits 0. Target exits first: output, exit 0.
 * `perch record -- PROG`: perch exits with the program's status (128+signal if killed).
 * Each time the lifecycle target must finish its fixed work with the right result. */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* What lifecycle_round() in tests/targets/lifecycle_main.c computes: FNV-1a over 0..65535. */
static uint64_t lifecycle_expected(void)
{
	uint64_t h = 1469598103934665603ULL;

	for (uint32_t i = 0; i < 65536; i++)
		h = (h ^ i) * 1099511628211ULL;
	return h;
}

/* Both threads' "lifecycle <thread> rounds R bad 0 value <expected>" lines are there. */
static void assert_target_result(struct harness_proc *t, int want_exit)
{
	static const char *const threads[] = {"main", "lc-worker"};
	uint64_t want = lifecycle_expected(), value;
	long rounds, bad;
	size_t i;

	H_ASSERT(harness_proc_wait(t, 8) == 0, "lifecycle target did not finish");
	H_ASSERT(harness_proc_exit_code(t) == want_exit, "lifecycle target exited with %d, want %d",
		 harness_proc_exit_code(t), want_exit);
	for (i = 0; i < 2; i++) {
		const char *line =
		    harness_proc_wait_line(t, harness_fmt("lifecycle %s rounds ", threads[i]), 0);

		H_ASSERT(line &&
			     sscanf(line, "%ld bad %ld value %" SCNx64, &rounds, &bad, &value) == 3,
			 "no result line for thread %s", threads[i]);
		H_ASSERT(rounds > 0 && bad == 0 && value == want,
			 "thread %s: %ld rounds, %ld bad, value %016" PRIx64
			 " (want 0 bad, %016" PRIx64 ")",
			 threads[i], rounds, bad, value, want);
	}
}

/* Within @timeout: TracerPid 0 and no task in tracing stop 't' (or stopped 'T'). */
static void assert_released(pid_t pid, double timeout)
{
	double end = harness_now() + timeout;
	char states[64];
	int n;

	for (;;) {
		n = harness_task_states(pid, states, sizeof(states));
		if (harness_tracer_pid(pid) == 0 && n > 0 && !strpbrk(states, "tT"))
			return;
		H_ASSERT(harness_now() < end,
			 "%.1f s after perch ended: TracerPid %d, task states "
			 "\"%s\"",
			 timeout, harness_tracer_pid(pid), n > 0 ? states : "?");
		harness_sleep(0.01);
	}
}

static struct harness_proc *start_target(const char *seconds, pid_t *pid)
{
	struct harness_proc *t =
	    harness_spawn("target", HARNESS_ARGV(harness_target("lifecycle"), seconds));

	*pid = harness_proc_wait_ready(t, 5);
	return t;
}

static struct harness_proc *start_perch(const char *out, pid_t pid, const char *duration)
{
	struct harness_proc *perch;

	if (duration)
		perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-v", "-F",
							    "500", "-d", duration, "-o", out, "-p",
							    harness_fmt("%d", pid)));
	else
		perch = harness_spawn("perch",
				      HARNESS_ARGV(harness_perch(), "record", "-v", "-F", "500",
						   "-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach within 5 s");
	harness_wait_sampling(perch);
	return perch;
}

START_TEST(lifecycle_sigkill_perch)
{
	struct harness_proc *t, *perch;
	pid_t pid;

	t = start_target("3", &pid);
	perch = start_perch(harness_tmpfile("lc.folded"), pid, NULL);
	harness_sleep(0.5);
	harness_proc_kill(perch, SIGKILL);
	H_ASSERT(harness_proc_wait(perch, 2) == 0, "perch survived SIGKILL");
	assert_released(pid, 1);
	assert_target_result(t, 0);
}
END_TEST

/* _i = 0: SIGINT, 1: SIGTERM */
START_TEST(lifecycle_signal_perch)
{
	const char *out = harness_tmpfile("lc.folded");
	int sig = _i ? SIGTERM : SIGINT;
	struct harness_proc *t, *perch;
	struct harness_folded f;
	pid_t pid;

	t = start_target("3", &pid);
	perch = start_perch(out, pid, NULL);
	harness_sleep(0.7);
	harness_proc_kill(perch, sig);
	H_ASSERT(harness_proc_wait(perch, 3) == 0, "perch did not exit within 3 s of %s",
		 strsignal(sig));
	H_CHECK_RECORD(perch, 0, out, &f);
	H_ASSERT(harness_folded_count(&f, "lc-worker", harness_pred_has, "lifecycle_round") > 0,
		 "no sample of lc-worker in lifecycle_round");
	assert_released(pid, 1);
	assert_target_result(t, 0);
	harness_folded_release(&f);
}
END_TEST

/* A second SIGINT aborts, but still detaches first. */
START_TEST(lifecycle_double_sigint)
{
	struct harness_proc *t, *perch;
	pid_t pid;

	t = start_target("3", &pid);
	perch = start_perch(harness_tmpfile("lc.folded"), pid, NULL);
	harness_sleep(0.5);
	harness_proc_kill(perch, SIGINT);
	harness_proc_kill(perch, SIGINT);
	H_ASSERT(harness_proc_wait(perch, 3) == 0, "perch did not exit within 3 s of two SIGINTs");
	assert_released(pid, 1);
	assert_target_result(t, 0);
}
END_TEST

/* The target exits long before -d ends: perch writes its output and exits 0 right away. */
START_TEST(lifecycle_target_exits)
{
	const char *out = harness_tmpfile("lc.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	double start;
	pid_t pid;

	t = start_target("2.5", &pid);
	start = harness_now();
	perch = start_perch(out, pid, "20");
	assert_target_result(t, 0);
	H_ASSERT(harness_proc_wait(perch, 3) == 0, "perch still runs 3 s after its target exited");
	H_ASSERT(harness_now() - start < 6, "perch took %.1f s", harness_now() - start);
	H_CHECK_RECORD(perch, 0, out, &f);
	harness_folded_release(&f);
}
END_TEST

/* `perch record -- lifecycle 0.5 STATUS`: exit status 7 passes through; death by SIGTERM is
 * 128 + 15. _i selects the case. */
START_TEST(lifecycle_exit_status)
{
	static const char *const status[] = {"7", "-15", "0"};
	static const int want[] = {7, 128 + SIGTERM, 0};
	const char *out = harness_tmpfile("lc.folded");
	struct harness_proc *perch;
	struct harness_folded f;
	pid_t pid;

	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o", out, "--",
					   harness_target("lifecycle"), "0.5", status[_i]));
	pid = harness_proc_wait_ready(perch, 5);
	harness_track_pid(pid);
	H_ASSERT(harness_proc_wait(perch, 6) == 0, "perch did not exit after its program");
	H_CHECK_RECORD(perch, want[_i], out, &f);
	H_ASSERT(harness_proc_wait_line(perch, "lifecycle lc-worker rounds ", 0) != NULL,
		 "the program's output did not pass through perch's stdout");
	harness_folded_release(&f);
}
END_TEST

Suite *lifecycle_suite(void)
{
	Suite *s = suite_create("e2e-lifecycle");
	TCase *tc = tcase_create("lifecycle");

	harness_tcase_init(tc, 20);
	tcase_add_test(tc, lifecycle_sigkill_perch);
	tcase_add_loop_test(tc, lifecycle_signal_perch, 0, 2);
	tcase_add_test(tc, lifecycle_double_sigint);
	tcase_add_test(tc, lifecycle_target_exits);
	tcase_add_loop_test(tc, lifecycle_exit_status, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}
