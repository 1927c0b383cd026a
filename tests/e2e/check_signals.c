/* e2e: signals reach a target perch samples. Every SIGUSR1 is delivered exactly once (perch
 * must re-inject signals it sees in signal-delivery-stop), and SIGSTOP/SIGCONT stop and resume
 * the whole target while perch samples it. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define USR1_COUNT 200

/* '.' characters the target wrote after its ready line (one per SIGUSR1 handled). */
static size_t dots(const struct harness_proc *t)
{
	const char *s = strstr(t->out.buf, "ready ");
	size_t n = 0;

	if (!s || !(s = strchr(s, '\n')))
		return 0;
	for (; *s; s++)
		n += *s == '.';
	return n;
}

/* The target's final "count N" line. */
static long final_count(struct harness_proc *t)
{
	const char *line = harness_proc_wait_line(t, "count ", 0);

	return line ? strtol(line, NULL, 10) : -1;
}

START_TEST(signals_usr1_exact)
{
	const char *out = harness_tmpfile("signals.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	double deadline;
	pid_t pid;
	int k;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("signals"), "10"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach within 5 s");
	/* One signal at a time, 1 ms apart once the previous one was handled: standard signals
	 * do not queue, so two pending SIGUSR1 would merge without any fault of perch's. */
	for (k = 1; k <= USR1_COUNT; k++) {
		H_ASSERT(kill(pid, SIGUSR1) == 0, "kill(SIGUSR1) failed");
		deadline = harness_now() + 2;
		while (dots(t) < (size_t)k && harness_now() < deadline)
			harness_proc_pump(t, 0.002);
		H_ASSERT(dots(t) == (size_t)k,
			 "SIGUSR1 number %d was not handled within 2 s "
			 "(%zu handled)",
			 k, dots(t));
		harness_sleep(0.001);
	}
	/* SIGTERM ends the target's loop; perch stops when its target exits. */
	H_ASSERT(kill(pid, SIGTERM) == 0, "kill(SIGTERM) failed");
	H_ASSERT(harness_proc_wait(t, 5) == 0, "target did not exit after SIGTERM");
	H_ASSERT(harness_proc_exit_code(t) == 0, "target exited with %d",
		 harness_proc_exit_code(t));
	H_ASSERT(final_count(t) == USR1_COUNT, "target counted %ld SIGUSR1, sent %d",
		 final_count(t), USR1_COUNT);
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not exit after its target");
	H_CHECK_RECORD(perch, 0, out, &f);
	harness_folded_release(&f);
}
END_TEST

/* All tasks of @pid stopped ('T', or 't' since a traced task's group-stop is a ptrace stop)? */
static int all_stopped(pid_t pid, char *states, size_t size)
{
	int n = harness_task_states(pid, states, size);

	return n > 0 && strspn(states, "Tt") == (size_t)n;
}

START_TEST(signals_stop_cont)
{
	const char *out = harness_tmpfile("signals.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	long long cpu0, cpu1;
	double deadline;
	char states[64];
	int stable = 0;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("signals"), "10"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach within 5 s");
	harness_sleep(0.2);

	H_ASSERT(kill(pid, SIGSTOP) == 0, "kill(SIGSTOP) failed");
	/* Stopped: every task in T/t for 5 reads in a row (perch's own brief sampling stops are
	 * 't' too, hence the run), within 1 s. */
	deadline = harness_now() + 1;
	while (stable < 5) {
		stable = all_stopped(pid, states, sizeof(states)) ? stable + 1 : 0;
		H_ASSERT(harness_now() < deadline, "after SIGSTOP the task states are \"%s\"",
			 states);
		harness_sleep(0.01);
	}
	cpu0 = harness_cpu_ticks(pid);
	harness_sleep(0.25);
	cpu1 = harness_cpu_ticks(pid);
	H_ASSERT(all_stopped(pid, states, sizeof(states)), "the target left its stop: \"%s\"",
		 states);
	H_ASSERT(cpu0 >= 0 && cpu1 - cpu0 <= 1,
		 "a stopped target used %lld clock ticks of CPU in "
		 "250 ms",
		 cpu1 - cpu0);

	H_ASSERT(kill(pid, SIGCONT) == 0, "kill(SIGCONT) failed");
	deadline = harness_now() + 1;
	while (all_stopped(pid, states, sizeof(states))) {
		H_ASSERT(harness_now() < deadline, "1 s after SIGCONT the task states are \"%s\"",
			 states);
		harness_sleep(0.01);
	}
	cpu0 = harness_cpu_ticks(pid);
	harness_sleep(0.25);
	cpu1 = harness_cpu_ticks(pid);
	H_ASSERT(cpu1 - cpu0 >= 5, "after SIGCONT the target used only %lld clock ticks in 250 ms",
		 cpu1 - cpu0);

	H_ASSERT(kill(pid, SIGTERM) == 0, "kill(SIGTERM) failed");
	H_ASSERT(harness_proc_wait(t, 5) == 0, "target did not exit after SIGTERM");
	H_ASSERT(harness_proc_exit_code(t) == 0 && final_count(t) == 0,
		 "target exited with %d, count %ld", harness_proc_exit_code(t), final_count(t));
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not exit after its target");
	H_CHECK_RECORD(perch, 0, out, &f);
	harness_folded_release(&f);
}
END_TEST

Suite *signals_suite(void)
{
	Suite *s = suite_create("e2e-signals");
	TCase *tc = tcase_create("signals");

	harness_tcase_init(tc, 20);
	tcase_add_test(tc, signals_usr1_exact);
	tcase_add_test(tc, signals_stop_cont);
	suite_add_tcase(s, tc);
	return s;
}
