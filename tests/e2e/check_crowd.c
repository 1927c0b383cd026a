/* e2e: `perch dump` of a process of 2,000 blocked threads (the crowd target) names every
 * thread's stack. The truths come from outside perch: the thread list and names are the
 * kernel's (/proc/PID/task/TID/comm, read while the threads stay put), and where each thread
 * waits is the target's design (thread "cN" waits in crowd_cond, crowd_pipe or crowd_sleep by
 * N % 3). Every thread must be dumped under its name, reach its start (clone3, or _start for
 * the main thread) and hold the function it waits in. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define CROWD 2000

static int has_frame(const struct harness_bt_thread *t, const char *func)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->frames[i].func, func))
			return 1;
	return 0;
}

/* The kernel's name of thread @tid of @pid, in @buf ("" when it is gone). */
static const char *kernel_comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
	FILE *f = fopen(harness_fmt("/proc/%d/task/%d/comm", (int)pid, (int)tid), "r");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

START_TEST(dump_crowd)
{
	static const char *const place[3] = {"crowd_cond", "crowd_pipe", "crowd_sleep"};
	struct harness_proc *t, *perch;
	struct harness_bt bt = {0};
	size_t kernel = 0, named = 0;
	struct dirent *de;
	char name[32];
	DIR *d;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("crowd"), "2000", "120"));
	pid = harness_proc_wait_ready(t, 120);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 120) == 0, "perch dump did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch dump exited %d: %s",
		 harness_proc_exit_code(perch), perch->err.buf);
	H_ASSERT(harness_bt_parse_perch(&bt, perch->out.buf) == 0 && !bt.nr_bad,
		 "the dump does not parse: %s", bt.bad.buf);
	d = opendir(harness_fmt("/proc/%d/task", (int)pid));
	H_ASSERT(d, "no /proc/%d/task", (int)pid);
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		const struct harness_bt_thread *th;
		long n;

		if (tid <= 0)
			continue;
		kernel++;
		kernel_comm(pid, tid, name, sizeof(name));
		th = harness_bt_find(&bt, tid);
		H_ASSERT(th, "thread %d (%s) is not in the dump", (int)tid, name);
		H_ASSERT(th->name && !strcmp(th->name, name),
			 "thread %d is \"%s\" in the dump, "
			 "\"%s\" to the kernel",
			 (int)tid, th->name ? th->name : "", name);
		H_ASSERT(th->nr >= 2, "thread %d (%s) has %zu frames", (int)tid, name, th->nr);
		if (tid == pid) {
			H_ASSERT(has_frame(th, "main") && has_frame(th, "_start"),
				 "the main thread's stack does not reach main and _start");
			continue;
		}
		H_ASSERT(sscanf(name, "c%ld", &n) == 1, "a thread named %s", name);
		H_ASSERT(has_frame(th, place[n % 3]) && has_frame(th, "clone3"),
			 "thread %d (%s): no %s ... clone3 in its stack (leaf %s)", (int)tid, name,
			 place[n % 3], th->frames[0].func);
		named++;
	}
	closedir(d);
	H_ASSERT(kernel == CROWD + 1 && named == CROWD, "%zu threads in /proc, %zu checked", kernel,
		 named);
	H_ASSERT(bt.nr == kernel, "%zu threads in the dump, %zu in /proc", bt.nr, kernel);
	harness_bt_release(&bt);
	harness_proc_kill(t, SIGKILL);
}
END_TEST

/* `perch record` of the same crowd at 100 Hz for 2 s: every thread sampled (the kernel's
 * thread list) and every sample of thread "cN" in the function it waits in (none of them
 * stopped: blocked threads are read from /proc). --allow-partial: on a loaded machine perch
 * may keep fewer than 90% of its ticks (e2e-overload tests that exit), the ticks it missed
 * are credited to the next samples, so the counts hold all the same. */
START_TEST(record_crowd)
{
	static const char *const place[3] = {"crowd_cond", "crowd_pipe", "crowd_sleep"};
	const char *out = harness_tmpfile("crowd.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	char name[32];
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("crowd"), "2000", "120"));
	pid = harness_proc_wait_ready(t, 120);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
					   "-d", "2", "--allow-partial", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 120) == 0, "perch record did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	for (long n = 0; n < CROWD; n++) {
		unsigned long all, at;

		snprintf(name, sizeof(name), "c%ld", n);
		all = harness_folded_count(&f, name, harness_pred_any, NULL);
		at = harness_folded_count(&f, name, harness_pred_has, place[n % 3]);
		H_ASSERT(all >= 150 && all <= 260 && at == all,
			 "thread %s: %lu samples, %lu in %s (want 150-260, "
			 "all there)",
			 name, all, at, place[n % 3]);
	}
	harness_folded_release(&f);
	harness_proc_kill(t, SIGKILL);
}
END_TEST

Suite *crowd_suite(void)
{
	Suite *s = suite_create("e2e-crowd");
	TCase *tc = tcase_create("crowd");

	harness_tcase_init(tc, 300);
	tcase_add_test(tc, dump_crowd);
	tcase_add_test(tc, record_crowd);
	suite_add_tcase(s, tc);
	return s;
}
