/* e2e: `perch record --wait NAME` (issue 19, section 1) catches a process as it starts.
 *
 * The truth is the target's own: waitstart (tests/targets/waitstart_main.c) spins known
 * functions for known times by its own clock (startup_work() first, for 200 ms), renames
 * itself the way Android's zygote names an app process (argv[0]'s memory and the last 15
 * characters of the name as comm), and can stay not dumpable for a while (as an app process
 * is until zygote's EnableDebugger). A recording that began late has few startup_work()
 * samples; one that attached before the process could be traced would have failed. Cases run
 * with the kernel's process events (perch as root) and with /proc polling (PERCH_WAIT_POLL, or
 * perch as an unprivileged user, who may not listen to them). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define APP_NAME "com.example.perch.waitapp" /* 25 characters: comm holds its last 15 */
#define START_MS 200

/* Wait until perch says it is waiting (processes started from then on are new to it). */
static void wait_waiting(struct harness_proc *perch)
{
	double end = harness_now() + 20;

	while (harness_now() < end &&
	       !strstr(perch->err.buf ? perch->err.buf : "", "waiting for a"))
		harness_proc_pump(perch, 0.2);
	H_ASSERT(perch->err.buf && strstr(perch->err.buf, "waiting for a"),
		 "perch did not say it was waiting");
}

/* The first-sample latency of the summary, in ms (-1 when absent). */
static double first_sample_ms(const char *err)
{
	const char *s = err ? strstr(err, "first sample ") : NULL;

	return s ? atof(s + strlen("first sample ")) : -1;
}

/* Samples of the target in startup_work() below main(): near START_MS at -F 200 when perch
 * was there from the start; also no frame of @absent (NULL: none checked). */
static void check_startup(const struct harness_folded *f, const char *absent)
{
	static const char *const seq[] = {"main", "startup_work", "spin_ms"};
	unsigned long n = 0, want = (unsigned long)(START_MS / 5 * 0.5);

	for (size_t i = 0; i < f->nr; i++) {
		H_ASSERT(!absent || harness_line_find(&f->lines[i], absent) < 0,
			 "a sample in %s(): perch attached while it could not", absent);
		if (harness_line_has_seq(&f->lines[i], seq, 3))
			n += f->lines[i].count;
	}
	if (getenv("PERCH_TEST_SANITIZED"))
		want = want * 6 / 10;
	harness_folded_context(f, NULL, 20);
	H_ASSERT(n >= want,
		 "%lu samples of main;startup_work;spin_ms (%d ms at 200 Hz), want >= %lu:"
		 " perch began late",
		 n, START_MS, want);
}

/* perch record --wait @name ... (@env: "VAR=VALUE" or NULL), then the target with @targs;
 * both exit by themselves. */
static struct harness_proc *run_wait(const char *name, const char *env, const char *out,
				     const char *const targs[])
{
	const char *argv[16];
	struct harness_proc *perch, *t;
	size_t n = 0;

	if (env) {
		argv[n++] = "/usr/bin/env";
		argv[n++] = env;
	}
	argv[n++] = harness_perch();
	argv[n++] = "record";
	argv[n++] = "-F";
	argv[n++] = "200";
	argv[n++] = "--wait";
	argv[n++] = name;
	argv[n++] = "--wait-timeout";
	argv[n++] = "30";
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n] = NULL;
	perch = harness_spawn("perch", argv);
	wait_waiting(perch);
	t = harness_spawn("target", targs);
	H_ASSERT(harness_proc_wait(t, 30) == 0 && harness_proc_exit_code(t) == 0,
		 "the target did not end well");
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch did not finish");
	return perch;
}

/* By comm (= the program's name), with the kernel's process events when perch may. */
START_TEST(test_wait_comm)
{
	const char *out = harness_tmpfile("comm.folded");
	struct harness_proc *perch;
	struct harness_folded f = {0};

	perch = run_wait("waitstart", NULL, out,
			 HARNESS_ARGV(harness_target("waitstart"), "-s", "200", "-r", "300"));
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	check_startup(&f, NULL);
	H_ASSERT(first_sample_ms(perch->err.buf) >= 0 && first_sample_ms(perch->err.buf) < 100,
		 "the summary gives no first-sample latency under 100 ms");
	H_ASSERT(getuid() != 0 || strstr(perch->err.buf, "kernel process event"),
		 "perch runs as root but did not use the kernel's process events");
	harness_folded_release(&f);
}
END_TEST

/* Android's process name: only argv[0] carries it whole (comm holds its last 15 characters,
 * and only after a rename); the same with /proc polling. */
static void wait_app(const char *env)
{
	const char *out = harness_tmpfile("app.folded");
	struct harness_proc *perch;
	struct harness_folded f = {0};

	perch = run_wait(
	    APP_NAME, env, out,
	    HARNESS_ARGV(harness_target("waitstart"), "-n", APP_NAME, "-s", "200", "-r", "300"));
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	check_startup(&f, NULL);
	H_ASSERT(!env || strstr(perch->err.buf, "found by polling /proc"),
		 "PERCH_WAIT_POLL=proc did not poll /proc");
	harness_folded_release(&f);
}

START_TEST(test_wait_app_name)
{
	wait_app(NULL);
}
END_TEST

START_TEST(test_wait_app_name_polling)
{
	wait_app("PERCH_WAIT_POLL=proc");
}
END_TEST

/* Not traceable at first: perch and the target run as an unprivileged user (no
 * CAP_SYS_PTRACE; perch polls /proc, as it must without CAP_NET_ADMIN before Linux 6.6, e.g.
 * on Android); the target takes the app's name,
 * stays not dumpable 300 ms (spinning in before_dumpable()), then becomes dumpable. perch
 * retries until it may attach: no sample of before_dumpable(), startup_work() from its
 * beginning. */
START_TEST(test_wait_not_dumpable_yet)
{
	struct harness_proc *perch, *t;
	struct harness_folded f = {0};
	const char *setpriv = "/usr/bin/setpriv";

	if (getuid() != 0 || access(setpriv, X_OK) != 0) {
		fprintf(stderr, "SKIP: wait_not_dumpable_yet needs root and %s\n", setpriv);
		return;
	}
#define NOBODY setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"
	perch =
	    harness_spawn("perch", HARNESS_ARGV(NOBODY, "/usr/bin/env", "PERCH_WAIT_POLL=proc",
						harness_perch(), "record", "-F", "200", "--wait",
						APP_NAME, "--wait-timeout", "30", "-o", "-"));
	wait_waiting(perch);
	t = harness_spawn("target", HARNESS_ARGV(NOBODY, harness_target("waitstart"), "-n",
						 APP_NAME, "-u", "300", "-s", "200", "-r", "300"));
#undef NOBODY
	H_ASSERT(harness_proc_wait(t, 30) == 0 && harness_proc_exit_code(t) == 0,
		 "the target did not end well");
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_OK, "perch exited %d",
		 harness_proc_exit_code(perch));
	H_ASSERT(strstr(perch->err.buf, "found by polling /proc"),
		 "PERCH_WAIT_POLL=proc did not poll /proc");
	H_ASSERT(strstr(perch->err.buf, "not attachable for"),
		 "the summary does not say the process could not be attached at first");
	H_ASSERT(harness_folded_parse(&f, perch->out.buf) == 0 && f.total > 0,
		 "no folded stacks on stdout");
	check_startup(&f, "before_dumpable");
	harness_folded_release(&f);
}
END_TEST

/* A process of that name already running is left alone; none new: --wait-timeout ends the
 * wait with exit 2, and the running one was never traced. */
START_TEST(test_wait_old_and_timeout)
{
	const char *out = harness_tmpfile("none.folded");
	struct harness_proc *perch, *t;
	pid_t pid;

	t = harness_spawn("target",
			  HARNESS_ARGV(harness_target("waitstart"), "-s", "0", "-r", "20000"));
	pid = harness_proc_wait_ready(t, 10);
	/* /proc gives its start time in clock ticks (10 ms), and a process that started in the
	 * tick the wait begins in counts as new (procwait.c): started two ticks before perch,
	 * it is old (a faster machine started perch within the target's tick) */
	harness_sleep(2.0 / (double)sysconf(_SC_CLK_TCK));
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "--wait", "waitstart",
						"--wait-timeout", "0.5", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL, "perch exited %d, want 2",
		 harness_proc_exit_code(perch));
	H_ASSERT(strstr(perch->err.buf, harness_fmt("already running left alone (pid %d)", pid)),
		 "perch did not say it left %d alone", pid);
	H_ASSERT(strstr(perch->err.buf, "no new process named 'waitstart' started within 0.5 s"),
		 "no timeout message");
	H_ASSERT(harness_tracer_pid(pid) == 0, "the running process was traced");
	H_ASSERT(access(out, F_OK) != 0, "an output was written");
	harness_proc_kill(t, SIGKILL);
}
END_TEST

/* Ctrl-C while waiting: exit 130, no output. */
START_TEST(test_wait_interrupted)
{
	const char *out = harness_tmpfile("int.perch");
	struct harness_proc *perch;

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "--wait",
						    "no-such-process-here", "-o", out));
	wait_waiting(perch);
	harness_proc_kill(perch, SIGINT);
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not stop waiting on SIGINT");
	H_ASSERT(harness_proc_exit_code(perch) == 128 + SIGINT, "perch exited %d, want 130",
		 harness_proc_exit_code(perch));
	H_ASSERT(strstr(perch->err.buf, "interrupted while waiting"), "no message");
	H_ASSERT(access(out, F_OK) != 0, "a recording was left behind");
}
END_TEST

/* Usage: one of -p, --wait and a program; --wait-timeout only with --wait. */
START_TEST(test_wait_usage)
{
	static const char *const bad[][6] = {
	    {"--wait", "x", "-p", "1"},
	    {"--wait", "x", "--", "/bin/true"},
	    {"--wait-timeout", "1", "-p", "1"},
	    {"--wait", ""},
	    {"--wait", "x", "--wait-timeout", "-1"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[10] = {harness_perch(), "record"};
		struct harness_proc *p;
		size_t n = 2;

		for (size_t j = 0; bad[i][j]; j++)
			argv[n++] = bad[i][j];
		argv[n] = NULL;
		p = harness_spawn("perch", argv);
		H_ASSERT(harness_proc_wait(p, 10) == 0, "perch did not finish");
		H_ASSERT(harness_proc_exit_code(p) == HARNESS_EXIT_USAGE,
			 "case %zu: exit %d, want 64", i, harness_proc_exit_code(p));
	}
}
END_TEST

/* scripts/perch-adb record --cold-start against tests/fake-adb (see check_adb.c): the fake
 * device's app is waitstart under the app's process name; am start -W reports when it printed
 * "ready" (its "first frame"). perch must have been waiting on the "device" before the app
 * started: startup_work() from its beginning, and am's TotalTime in the output. */
START_TEST(test_wait_adb_cold_start)
{
	const char *dir = harness_fmt("%s/adb", harness_tmpdir());
	const char *out = harness_tmpfile("cold.folded");
	char repo[PATH_MAX], *pidtext;
	int code;
	struct harness_proc *p;
	struct harness_folded f = {0};
	FILE *fp;

	H_ASSERT(getcwd(repo, sizeof(repo)), "getcwd");
	H_ASSERT(mkdir(dir, 0700) == 0 && mkdir(harness_fmt("%s/pids", dir), 0700) == 0,
		 "cannot make %s", dir);
	fp = fopen(harness_fmt("%s/devices", dir), "w");
	H_ASSERT(fp && fputs("fake-1\n", fp) >= 0 && fclose(fp) == 0, "devices");
	fp = fopen(harness_fmt("%s/props", dir), "w");
	H_ASSERT(fp && fputs("ro.product.cpu.abi=x86_64\n", fp) >= 0 && fclose(fp) == 0, "props");
	fp = fopen(harness_fmt("%s/packages", dir), "w");
	H_ASSERT(fp &&
		     fprintf(fp, "%s debuggable %s -n %s -s %d -r 4000\n", APP_NAME,
			     harness_target("waitstart"), APP_NAME, START_MS) > 0 &&
		     fclose(fp) == 0,
		 "packages");
	setenv("FAKE_ADB_DIR", dir, 1);
	setenv("PATH", harness_fmt("%s/tests/fake-adb:%s", repo, getenv("PATH")), 1);
	setenv("PERCH_BIN", harness_perch(), 1);
	p = harness_spawn("perch-adb", HARNESS_ARGV(harness_fmt("%s/scripts/perch-adb", repo),
						    "record", "--cold-start", APP_NAME, "--margin",
						    "0.5", "-F", "200", "-o", out));
	H_ASSERT(harness_proc_wait(p, 60) == 0, "perch-adb did not finish");
	pidtext =
	    (char *)harness_sh(harness_fmt("cut -d' ' -f1 %s/pids/%s", dir, APP_NAME), &code, 5);
	if (atoi(pidtext) > 0)
		harness_track_pid(atoi(pidtext));
	H_ASSERT(harness_proc_exit_code(p) == 0, "perch-adb exited %d", harness_proc_exit_code(p));
	H_ASSERT(strstr(p->err.buf, "app start: TotalTime ") &&
		     !strstr(p->err.buf, "TotalTime ? ms") &&
		     strstr(p->err.buf, "LaunchState COLD"),
		 "no app start line with am's TotalTime");
	H_ASSERT(harness_folded_load(&f, out) == 0 && f.total > 0, "no profile pulled");
	check_startup(&f, NULL);
	H_ASSERT(atoi(pidtext) > 0 && harness_tracer_pid(atoi(pidtext)) == 0,
		 "the app is still traced after the recording");
	harness_folded_release(&f);
}
END_TEST

Suite *wait_suite(void)
{
	Suite *s = suite_create("e2e-wait");
	TCase *tc = tcase_create("wait");

	harness_tcase_init(tc, 90);
	tcase_add_test(tc, test_wait_comm);
	tcase_add_test(tc, test_wait_app_name);
	tcase_add_test(tc, test_wait_app_name_polling);
	tcase_add_test(tc, test_wait_not_dumpable_yet);
	tcase_add_test(tc, test_wait_old_and_timeout);
	tcase_add_test(tc, test_wait_interrupted);
	tcase_add_test(tc, test_wait_usage);
	tcase_add_test(tc, test_wait_adb_cold_start);
	suite_add_tcase(s, tc);
	return s;
}
