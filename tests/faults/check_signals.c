/* faults-signals: signals that reach a target while perch samples it at 1000 Hz.
 * - A SIGUSR1 storm at up to 10 kHz from another process (tests/targets/faults_storm.c): the
 *   sender sends each signal once the previous one was handled, so sender and target must
 *   agree exactly; perch has to pass on every one it sees in signal-delivery-stop.
 * - SIGSTOP/SIGCONT job control: the target stops and resumes as job control says, also when
 *   perch leaves while it is stopped (it stays stopped until SIGCONT), and no thread is lost. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "faults.h"

#define STORM_COUNT 10000

START_TEST(signals_usr1_storm)
{
	const char *out = harness_tmpfile("storm.folded"), *shm = harness_tmpfile("storm.fifo");
	struct harness_proc *t, *perch, *sender;
	struct harness_folded f;
	long sent = -1, handled = -1, final = -1;
	double rate = 0;
	long long passed;
	const char *l;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-storm"), "target", shm));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach within 5 s");
	harness_sleep(0.1);
	sender = harness_spawn("sender", HARNESS_ARGV(harness_target("faults-storm"), "send",
						      harness_fmt("%d", pid), shm,
						      harness_fmt("%d", STORM_COUNT), "10000"));
	H_ASSERT(harness_proc_wait(sender, 60) == 0, "the sender did not finish in 60 s");
	l = harness_proc_wait_line(sender, "sent ", 0);
	H_ASSERT(harness_proc_exit_code(sender) == 0 && l &&
		     sscanf(l, "%ld handled %ld rate %lf", &sent, &handled, &rate) == 3,
		 "the sender failed (exit %d): %s", harness_proc_exit_code(sender),
		 sender->out.buf ? sender->out.buf : "");
	H_ASSERT(sent == STORM_COUNT && handled == STORM_COUNT, "sent %ld, target handled %ld",
		 sent, handled);
	H_ASSERT(harness_tracer_pid(pid) > 0, "perch let go of the target during the storm");

	harness_proc_kill(t, SIGTERM);
	H_ASSERT(harness_proc_wait(t, 5) == 0, "target did not exit after SIGTERM");
	l = harness_proc_wait_line(t, "handled ", 0);
	H_ASSERT(l && sscanf(l, "%ld", &final) == 1 && final == STORM_COUNT,
		 "target counted %ld SIGUSR1, the sender sent %d", final, STORM_COUNT);
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not exit after its target");
	H_CHECK_RECORD(perch, 0, out, &f);
	faults_assert_quiet(perch);
	passed = faults_field(perch->err.buf, "signals passed through ");
	H_ASSERT(passed >= STORM_COUNT, "perch passed %lld signals through, %d were sent", passed,
		 STORM_COUNT);
	/* 10 kHz is what the sender aims at; each signal costs perch a signal-delivery-stop, so
	 * the rate is what the handshake allows, but it must stay a storm */
	H_ASSERT(rate >= 1000, "only %.0f signals/s got through", rate);
	fprintf(stderr, "faults-signals: %d SIGUSR1 at %.0f/s under perch, all handled once\n",
		STORM_COUNT, rate);
	harness_folded_release(&f);
}
END_TEST

/* Every task of @pid in 'T' (or 't': a traced task's group-stop is a ptrace stop) for
 * @stable consecutive reads within @timeout. */
static int wait_all_stopped(pid_t pid, int stable, double timeout, char *states, size_t size)
{
	double end = harness_now() + timeout;
	int run = 0, n;

	while (run < stable) {
		n = harness_task_states(pid, states, size);
		run = n > 0 && strspn(states, "Tt") == (size_t)n ? run + 1 : 0;
		if (harness_now() > end)
			return -1;
		harness_sleep(0.005);
	}
	return 0;
}

static int wait_none_stopped(pid_t pid, double timeout, char *states, size_t size)
{
	double end = harness_now() + timeout;

	for (;;) {
		int n = harness_task_states(pid, states, size);

		if (n > 0 && !strchr(states, 'T'))
			return 0;
		if (harness_now() > end)
			return -1;
		harness_sleep(0.005);
	}
}

START_TEST(signals_job_control)
{
	const char *out = harness_tmpfile("jobs.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	char states[128], before[128];
	int k, ntasks;
	long long c0;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-victim"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach within 5 s");

	for (k = 0; k < 6; k++) {
		harness_sleep((double)faults_rand(20, 150) / 1e3);
		H_ASSERT(kill(pid, SIGSTOP) == 0, "kill(SIGSTOP) failed");
		H_ASSERT(wait_all_stopped(pid, 5, 2, states, sizeof(states)) == 0,
			 "stop %d: task states \"%s\" 2 s after SIGSTOP", k, states);
		c0 = harness_cpu_ticks(pid);
		harness_sleep(0.1);
		H_ASSERT(harness_cpu_ticks(pid) - c0 <= 1,
			 "stop %d: a stopped target used %lld clock ticks in 100 ms", k,
			 harness_cpu_ticks(pid) - c0);
		H_ASSERT(kill(pid, SIGCONT) == 0, "kill(SIGCONT) failed");
		H_ASSERT(wait_none_stopped(pid, 2, states, sizeof(states)) == 0,
			 "stop %d: task states \"%s\" 2 s after SIGCONT", k, states);
		faults_assert_runs(pid, 3, 2);
	}

	/* perch leaves while the target is stopped: it must stay stopped, untraced */
	ntasks = harness_task_states(pid, before, sizeof(before));
	H_ASSERT(kill(pid, SIGSTOP) == 0, "kill(SIGSTOP) failed");
	H_ASSERT(wait_all_stopped(pid, 5, 2, states, sizeof(states)) == 0,
		 "task states \"%s\" 2 s after SIGSTOP", states);
	harness_proc_kill(perch, SIGINT);
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not exit within 5 s of SIGINT");
	H_CHECK_RECORD(perch, 0, out, &f);
	faults_assert_quiet(perch);
	faults_assert_released(pid, 1, 1);
	harness_task_states(pid, states, sizeof(states));
	H_ASSERT(strspn(states, "T") == strlen(states),
		 "after perch left, the stopped target's tasks are \"%s\" (want all T)", states);
	c0 = harness_cpu_ticks(pid);
	harness_sleep(0.2);
	H_ASSERT(harness_cpu_ticks(pid) - c0 <= 1,
		 "the target ran while stopped after perch left (%lld ticks)",
		 harness_cpu_ticks(pid) - c0);
	H_ASSERT(kill(pid, SIGCONT) == 0, "kill(SIGCONT) failed");
	H_ASSERT(wait_none_stopped(pid, 2, states, sizeof(states)) == 0,
		 "task states \"%s\" 2 s after the last SIGCONT", states);
	/* the three workers (and main) are all there and the victim's result is sound */
	H_ASSERT(harness_task_states(pid, states, sizeof(states)) >= 4 && ntasks >= 4,
		 "tasks: %d before, \"%s\" after", ntasks, states);
	faults_assert_runs(pid, 5, 2);
	faults_victim_check(t, 1, 1);
	harness_folded_release(&f);
}
END_TEST

Suite *faults_signals_suite(void)
{
	Suite *s = suite_create("faults-signals");
	TCase *tc = tcase_create("signals");

	harness_tcase_init(tc, 90);
	tcase_add_test(tc, signals_usr1_storm);
	tcase_add_test(tc, signals_job_control);
	suite_add_tcase(s, tc);
	return s;
}
