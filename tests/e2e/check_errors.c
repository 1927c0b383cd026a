/* e2e: perch's fatal errors: no such process, another user's process, a process already
 * traced (by a helper and by gdb), usage errors, outputs that cannot be written. Exit codes 2 and
 * 64, "perch: error: " text. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define SETPRIV_PATH "/usr/bin/setpriv"
#define GDB_PATH     "/usr/bin/gdb"
#define TRACER_NAME  "e2e-tracer"

/* Run perch with @argv to its end; assert exit @code and that stderr holds "perch: error: "
 * (for code 2) and one of @needles (NULL-terminated; none means any message). */
static struct harness_proc *run_expect(const char *const argv[], int code,
				       const char *const needles[])
{
	struct harness_proc *p = harness_spawn("perch", argv);
	size_t i;

	H_ASSERT(harness_proc_wait(p, 10) == 0, "perch did not exit within 10 s");
	H_ASSERT(harness_proc_exit_code(p) == code, "perch exited with %d, want %d",
		 harness_proc_exit_code(p), code);
	if (code == HARNESS_EXIT_FATAL)
		H_ASSERT(strstr(p->err.buf, "perch: error: ") != NULL,
			 "no \"perch: error: \" message on stderr");
	for (i = 0; needles && needles[i]; i++)
		if (strstr(p->err.buf, needles[i]))
			return p;
	H_ASSERT(!needles || !needles[0], "stderr does not say \"%s\"%s", needles[0],
		 needles[1] ? " (or an alternative)" : "");
	return p;
}

static int read_pid_max(void)
{
	FILE *fp = fopen("/proc/sys/kernel/pid_max", "r");
	int max = 0;

	if (fp) {
		if (fscanf(fp, "%d", &max) != 1)
			max = 0;
		fclose(fp);
	}
	return max > 0 ? max : 4194304;
}

START_TEST(errors_pid_above_max)
{
	const char *out = harness_tmpfile("err.folded");

	run_expect(HARNESS_ARGV(harness_perch(), "record", "-d", "1", "-o", out, "-p",
				harness_fmt("%d", read_pid_max() + 1)),
		   HARNESS_EXIT_FATAL, HARNESS_ARGV("no such process"));
}
END_TEST

START_TEST(errors_reaped_pid)
{
	const char *out = harness_tmpfile("err.folded");
	pid_t child = fork();

	H_ASSERT(child >= 0, "fork: %s", strerror(errno));
	if (child == 0)
		_exit(0);
	H_ASSERT(waitpid(child, NULL, 0) == child, "waitpid: %s", strerror(errno));
	run_expect(HARNESS_ARGV(harness_perch(), "record", "-d", "1", "-o", out, "-p",
				harness_fmt("%d", child)),
		   HARNESS_EXIT_FATAL, HARNESS_ARGV("no such process"));
	run_expect(HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", child)),
		   HARNESS_EXIT_FATAL, HARNESS_ARGV("no such process"));
}
END_TEST

/* Copy perch where user nobody can run it (our temp dir is 0700, the tree may be too). */
static const char *perch_for_nobody(void)
{
	const char *copy = harness_tmpfile("perch-copy");
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open(harness_perch(), O_RDONLY | O_CLOEXEC);
	out = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	H_ASSERT(in >= 0 && out >= 0, "cannot copy perch to %s: %s", copy, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		H_ASSERT(write(out, buf, (size_t)n) == n, "write %s: %s", copy, strerror(errno));
	close(in);
	close(out);
	H_ASSERT(chmod(copy, 0755) == 0 && chmod(harness_tmpdir(), 0711) == 0, "chmod: %s",
		 strerror(errno));
	return copy;
}

START_TEST(errors_other_user)
{
	struct harness_proc *t;
	const char *perch;
	pid_t pid;

	H_ASSERT(getuid() == 0,
		 "this test runs perch as nobody against a root-owned target and "
		 "needs root (uid %d)",
		 (int)getuid());
	H_ASSERT(access(SETPRIV_PATH, X_OK) == 0, "%s is missing (util-linux)", SETPRIV_PATH);
	perch = perch_for_nobody();
	t = harness_spawn("target", HARNESS_ARGV(harness_target("lifecycle"), "5"));
	pid = harness_proc_wait_ready(t, 5);
	run_expect(HARNESS_ARGV(SETPRIV_PATH, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
				perch, "record", "-d", "1", "-o", "/dev/null", "-p",
				harness_fmt("%d", pid)),
		   HARNESS_EXIT_FATAL, HARNESS_ARGV("Operation not permitted", "permission"));
	H_ASSERT(harness_tracer_pid(pid) == 0, "target traced after a refused attach");
}
END_TEST

/* A helper process named TRACER_NAME that PTRACE_SEIZEs @pid and waits to be killed. */
static pid_t start_seize_helper(pid_t pid)
{
	int fds[2], err = 0;
	pid_t helper;

	H_ASSERT(pipe2(fds, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	helper = fork();
	H_ASSERT(helper >= 0, "fork: %s", strerror(errno));
	if (helper == 0) {
		prctl(PR_SET_NAME, TRACER_NAME, 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (ptrace(PTRACE_SEIZE, pid, 0, 0))
			err = errno;
		if (write(fds[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		for (;;)
			pause();
	}
	harness_track_pid(helper);
	close(fds[1]);
	H_ASSERT(read(fds[0], &err, sizeof(err)) == sizeof(err), "the tracer helper died");
	close(fds[0]);
	H_ASSERT(err == 0, "the helper cannot PTRACE_SEIZE %d: %s", (int)pid, strerror(err));
	return helper;
}

START_TEST(errors_already_traced)
{
	struct harness_proc *t;
	pid_t pid, helper;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("lifecycle"), "5"));
	pid = harness_proc_wait_ready(t, 5);
	helper = start_seize_helper(pid);
	H_ASSERT(harness_tracer_pid(pid) == helper, "TracerPid is %d, want the helper %d",
		 harness_tracer_pid(pid), (int)helper);
	run_expect(
	    HARNESS_ARGV(harness_perch(), "record", "-d", "1", "-o", harness_tmpfile("err.folded"),
			 "-p", harness_fmt("%d", pid)),
	    HARNESS_EXIT_FATAL,
	    HARNESS_ARGV(harness_fmt("already traced by %d (" TRACER_NAME ")", (int)helper)));
	run_expect(
	    HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)), HARNESS_EXIT_FATAL,
	    HARNESS_ARGV(harness_fmt("already traced by %d (" TRACER_NAME ")", (int)helper)));
	H_ASSERT(harness_tracer_pid(pid) == helper, "perch changed the tracer of %d", (int)pid);
}
END_TEST

START_TEST(errors_traced_by_gdb)
{
	struct harness_proc *t, *gdb;
	pid_t pid;

	H_ASSERT(access(GDB_PATH, X_OK) == 0, "%s is missing (scripts/install-deps.sh installs it)",
		 GDB_PATH);
	t = harness_spawn("target", HARNESS_ARGV(harness_target("lifecycle"), "8"));
	pid = harness_proc_wait_ready(t, 5);
	/* gdb attaches, then waits (in its own python, no extra process) until killed. */
	gdb = harness_spawn("gdb",
			    HARNESS_ARGV(GDB_PATH, "-nx", "-batch", "-p", harness_fmt("%d", pid),
					 "-ex", "python import time; time.sleep(15)"));
	H_ASSERT(harness_wait_traced(pid, 1, 10) == 0, "gdb did not attach within 10 s");
	run_expect(HARNESS_ARGV(harness_perch(), "record", "-d", "1", "-o",
				harness_tmpfile("err.folded"), "-p", harness_fmt("%d", pid)),
		   HARNESS_EXIT_FATAL,
		   HARNESS_ARGV(harness_fmt("already traced by %d (gdb)", (int)gdb->pid)));
}
END_TEST

START_TEST(errors_usage)
{
	run_expect(HARNESS_ARGV(harness_perch(), "record"), HARNESS_EXIT_USAGE, NULL);
	run_expect(HARNESS_ARGV(harness_perch(), "record", "-o", harness_tmpfile("x")),
		   HARNESS_EXIT_USAGE, NULL);
	run_expect(HARNESS_ARGV(harness_perch(), "record", "--no-such-option", "-p", "1"),
		   HARNESS_EXIT_USAGE, NULL);
	run_expect(HARNESS_ARGV(harness_perch(), "dump"), HARNESS_EXIT_USAGE, NULL);
}
END_TEST

/* An output perch could not write is refused before attaching, not after a 30 s recording:
 * a missing directory, a directory where the file should go; the target is not touched. */
START_TEST(errors_output_unwritable)
{
	struct harness_proc *t =
	    harness_spawn("target", HARNESS_ARGV(harness_target("lifecycle"), "20"));
	pid_t pid = harness_proc_wait_ready(t, 10);
	const char *missing = harness_fmt("%s/no-such-dir/out.folded", harness_tmpdir());
	double t0 = harness_now();

	run_expect(HARNESS_ARGV(harness_perch(), "record", "-d", "30", "-o", missing, "-p",
				harness_fmt("%d", pid)),
		   HARNESS_EXIT_FATAL, HARNESS_ARGV("no-such-dir"));
	run_expect(HARNESS_ARGV(harness_perch(), "record", "-d", "30", "-o", harness_tmpdir(), "-p",
				harness_fmt("%d", pid)),
		   HARNESS_EXIT_FATAL, HARNESS_ARGV("Is a directory"));
	H_ASSERT(harness_now() - t0 < 5, "perch took %.1f s to refuse the outputs",
		 harness_now() - t0);
	H_ASSERT(harness_tracer_pid(pid) == 0, "the target is traced after perch refused");
	H_ASSERT(access(missing, F_OK) < 0, "%s exists", missing);
	harness_proc_kill(t, SIGKILL);
}
END_TEST

Suite *errors_suite(void)
{
	Suite *s = suite_create("e2e-errors");
	TCase *tc = tcase_create("errors");

	harness_tcase_init(tc, 20);
	tcase_add_test(tc, errors_pid_above_max);
	tcase_add_test(tc, errors_reaped_pid);
	tcase_add_test(tc, errors_other_user);
	tcase_add_test(tc, errors_already_traced);
	tcase_add_test(tc, errors_traced_by_gdb);
	tcase_add_test(tc, errors_usage);
	tcase_add_test(tc, errors_output_unwritable);
	suite_add_tcase(s, tc);
	return s;
}
