/* e2e: safe and honest defaults (issue 37). A zombie main thread's maps and memory are read
 * through a live thread and compared with the kernel's own /proc/PID/task/TID files; the
 * commands' "attached to" note goes to stderr; outputs through links, /dev/stdout and FIFOs
 * land where they point; usage errors are short; nothing to write is a usage error. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* Run perch with @argv to its end (@timeout s). */
static struct harness_proc *run(const char *const argv[], double timeout)
{
	struct harness_proc *p = harness_spawn("perch", argv);

	H_ASSERT(harness_proc_wait(p, timeout) == 0, "perch did not exit within %g s", timeout);
	return p;
}

static int lines_of(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static char task_state(pid_t pid, pid_t tid)
{
	int code;
	const char *st = harness_sh(harness_fmt("cat /proc/%d/task/%d/stat", pid, tid), &code, 5);
	const char *p = strrchr(st, ')');

	return p && p[1] ? p[2] : '?';
}

/* ---- a zombie main thread (main called pthread_exit) ---- */

START_TEST(zombie_leader_maps_and_memory)
{
	struct harness_proc *t, *perch;
	const char *truth, *line;
	double rss = 0;
	pid_t pid;
	int want, code;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "zombie-main"));
	pid = harness_proc_wait_ready(t, 5);
	for (double end = harness_now() + 3; task_state(pid, pid) != 'Z';) {
		H_ASSERT(harness_now() < end, "the main thread did not exit");
		harness_sleep(0.01);
	}
	/* the kernel's truth: a live thread's maps (the leader's own file is empty) */
	truth = harness_sh(harness_fmt("wc -l < /proc/%d/maps; ls /proc/%d/task | grep -vx %d | "
				       "head -1 | xargs -I T wc -l /proc/%d/task/T/maps",
				       pid, pid, pid, pid),
			   &code, 5);
	H_ASSERT(sscanf(truth, "0 %d", &want) == 1 && want > 5,
		 "the leader's maps is not empty, or the live thread's is: %s", truth);

	perch = run(HARNESS_ARGV(harness_perch(), "maps", "-p", harness_fmt("%d", pid)), 20);
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch maps exit %d",
		 harness_proc_exit_code(perch));
	H_ASSERT(lines_of(perch->out.buf) == want, "perch maps printed %d lines, the kernel %d:\n%s",
		 lines_of(perch->out.buf), want, perch->out.buf);
	H_ASSERT(strstr(perch->out.buf, "targets/states"), "no mapping of the program");
	/* the note goes to stderr: stdout is the command's own output */
	H_ASSERT(!strstr(perch->out.buf, "attached to"), "\"attached to\" on stdout");
	H_ASSERT(strstr(perch->err.buf, harness_fmt("attached to %d", pid)),
		 "no \"attached to\" note on stderr:\n%s", perch->err.buf);

	perch = run(HARNESS_ARGV(harness_perch(), "mem", "-p", harness_fmt("%d", pid)), 20);
	H_ASSERT(harness_proc_exit_code(perch) == 0 && strstr(perch->out.buf, "MEMINFO"),
		 "perch mem of a zombie leader: exit %d\n%s%s", harness_proc_exit_code(perch),
		 perch->out.buf, perch->err.buf);

	perch = run(HARNESS_ARGV(harness_perch(), "stat", "-p", harness_fmt("%d", pid), "-d", "1"),
		    20);
	line = strstr(perch->out.buf, "memory: RSS ");
	H_ASSERT(line && sscanf(line, "memory: RSS %lf MiB", &rss) == 1 && rss > 0.1,
		 "perch stat reads no memory for a zombie leader:\n%s", perch->out.buf);

	perch = run(HARNESS_ARGV(harness_perch(), "threads", "-p", harness_fmt("%d", pid)), 20);
	H_ASSERT(harness_proc_exit_code(perch) == 0 && strstr(perch->out.buf, "spinner") &&
		     !strstr(perch->out.buf, "attached to"),
		 "perch threads:\n%s", perch->out.buf);
	harness_proc_write(t, "q");
	H_ASSERT(harness_proc_wait(t, 5) == 0, "the target did not exit");
}
END_TEST

Suite *defaults_suite(void)
{
	Suite *s = suite_create("e2e-defaults");
	TCase *tc = tcase_create("defaults");

	harness_tcase_init(tc, 90);
	tcase_add_test(tc, zombie_leader_maps_and_memory);
	suite_add_tcase(s, tc);
	return s;
}
