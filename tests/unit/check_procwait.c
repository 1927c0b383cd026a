/* Unit tests for procwait's name matching (the /proc texts are written here as the kernel
 * gives them: comm without its newline, cmdline as NUL-separated arguments), and its watcher
 * against processes the test starts (the one live /proc use: what it tests is how the
 * watcher follows the kernel's process list and events). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perch/record/procwait.h"

#define CMD(s) (s), sizeof(s) - 1 /* a literal with its embedded NULs */

START_TEST(test_procwait_names)
{
	/* comm */
	ck_assert_int_eq(procwait_name_matches("server", "server", CMD("./srv\0-x\0")),
			 PROCWAIT_YES);
	/* argv[0] and its last component */
	ck_assert_int_eq(procwait_name_matches("/usr/bin/python3", "python3.11",
					       CMD("/usr/bin/python3\0a.py\0")),
			 PROCWAIT_YES);
	ck_assert_int_eq(
	    procwait_name_matches("python3", "python3.11", CMD("/usr/bin/python3\0a.py\0")),
	    PROCWAIT_YES);
	/* an argument is not the name */
	ck_assert_int_eq(
	    procwait_name_matches("a.py", "python3.11", CMD("/usr/bin/python3\0a.py\0")),
	    PROCWAIT_NO);
	/* Android: zygote writes the process name over argv (NULs after it) */
	ck_assert_int_eq(procwait_name_matches("com.example.app", "com.example.app",
					       CMD("com.example.app\0\0\0\0")),
			 PROCWAIT_YES);
	ck_assert_int_eq(procwait_name_matches("com.example.perch.waitapp", "e.perch.waitapp",
					       CMD("com.example.perch.waitapp\0\0")),
			 PROCWAIT_YES);
	/* a service process is another name */
	ck_assert_int_eq(procwait_name_matches("com.example.app", "mple.app:remote",
					       CMD("com.example.app:remote\0")),
			 PROCWAIT_NO);
	/* only the comm (cut to 15 characters, at the start or the end) matches: look again */
	ck_assert_int_eq(procwait_name_matches("com.example.perch.waitapp", "e.perch.waitapp",
					       CMD("zygote64\0")),
			 PROCWAIT_MAYBE);
	ck_assert_int_eq(procwait_name_matches("my-long-program-name", "my-long-program", CMD("")),
			 PROCWAIT_MAYBE);
	/* a short prefix is not a truncation */
	ck_assert_int_eq(procwait_name_matches("serverd", "server", CMD("server\0")), PROCWAIT_NO);
	ck_assert_int_eq(procwait_name_matches("", "", CMD("")), PROCWAIT_NO);
	ck_assert_int_eq(procwait_name_matches("x", NULL, NULL, 0), PROCWAIT_NO);
}
END_TEST

/* --app NAME: the names --wait matches, and an Android app's service processes */
START_TEST(test_procwait_app)
{
	ck_assert(
	    procwait_app_matches("com.example.app", "com.example.app", CMD("com.example.app\0")));
	ck_assert(procwait_app_matches("com.example.app", "le.app:remote",
				       CMD("com.example.app:remote\0")));
	ck_assert(procwait_app_matches("server", "server", CMD("./server\0-x\0")));
	/* a prefix, a path with a colon in it, an empty suffix: not the app's */
	ck_assert(
	    !procwait_app_matches("com.example", "com.example.app", CMD("com.example.app\0")));
	ck_assert(!procwait_app_matches("com.example.app", "sh", CMD("/x/com.example.app:y\0")));
	ck_assert(!procwait_app_matches("com.example.app", "sh", CMD("com.example.app:\0")));
	ck_assert(!procwait_app_matches("com.example.app", "sh", CMD("com.example.apps:a\0")));
	ck_assert(!procwait_app_matches("", "", CMD(":x\0")));
}
END_TEST

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* /bin/sleep under the process name (argv[0]) @name, once it runs under it */
static pid_t spawn_named(const char *name)
{
	pid_t pid = fork();
	double end = now_s() + 5;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl("/bin/sleep", name, "30", (char *)NULL);
		_exit(127);
	}
	while (procwait_check(pid, name) != PROCWAIT_YES && now_s() < end)
		usleep(1000);
	return pid;
}

/* The watcher reports each new process of the name once (as an app: NAME:SUFFIX too), never
 * one running when it began nor another name; with process events (when perch may listen to
 * them) and with /proc polling (_i & 1), by name and as an app (_i & 2). */
START_TEST(test_procwatch)
{
	struct procwatch_opts o = {.no_netlink = _i & 1, .app = !!(_i & 2)};
	char name[32], svc[40], other[40];
	int seen[4] = {0}, want[4] = {0, 1, !!(_i & 2), 0};
	pid_t pids[4], pid;
	struct procwatch *w;
	double end;

	snprintf(name, sizeof(name), "pwtest%d", (int)getpid());
	snprintf(svc, sizeof(svc), "%s:svc", name);
	snprintf(other, sizeof(other), "%sx", name);
	o.name = name;
	pids[0] = spawn_named(name);
	usleep(30000); /* started in an earlier clock tick than the watch: an old one */
	w = procwatch_open(&o);
	ck_assert_int_eq(procwatch_result(w)->ignored, 1);
	pids[1] = spawn_named(name);
	pids[2] = spawn_named(svc);
	pids[3] = spawn_named(other);
	/* until the last one is due, then as long again for any second report */
	end = now_s() + 3;
	while (now_s() < end) {
		while (procwatch_next(w, 0, &pid) == 1) {
			for (int i = 0; i < 4; i++)
				seen[i] += pid == pids[i];
			if (seen[1] + seen[2] == 1 + !!(_i & 2) && end > now_s() + 0.5)
				end = now_s() + 0.5;
		}
		usleep(1000);
	}
	for (int i = 0; i < 4; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	for (int i = 0; i < 4; i++)
		ck_assert_msg(seen[i] == want[i], "process %d (%s) reported %d times, want %d (%s)",
			      i,
			      i == 2   ? svc
			      : i == 3 ? other
				       : name,
			      seen[i], want[i],
			      procwatch_result(w)->how == PROCWAIT_NETLINK ? "events" : "polling");
	procwatch_close(w);
}
END_TEST

Suite *procwait_suite(void)
{
	Suite *s = suite_create("procwait");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, test_procwait_names);
	tcase_add_test(tc, test_procwait_app);
	suite_add_tcase(s, tc);
	tc = tcase_create("watch");
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, test_procwatch, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
