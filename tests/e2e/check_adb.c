/* e2e: scripts/perch-adb against tests/fake-adb, a stand-in adb whose "device" is a directory
 * here and whose run-as runs as the same user in the app's data directory. The device binary
 * is the real perch, the app a real target: recording pulls a profile with the target's known
 * stack; --symfs renders the pulled recording on the host with unstripped copies; the prompt
 * opens on the "device"; every failing step says what is wrong; --user N picks the app of a
 * secondary user or work profile everywhere (run-as, am, pm, the process whose user is N). The
 * fake run-as keeps the rules of Android's (system/core run-as.cpp and the runas_app SELinux
 * domain): it cannot execute /data/local/tmp/perch, which is why perch-adb copies perch into
 * the app's data directory. The device binary is the static x86_64 build when there is a
 * fresh one (make static), else the dynamic perch. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define PKG	    "com.example.chain"
#define PKG_RELEASE "com.example.release"
#define PKG_ABSENT  "com.example.absent"

static char repo[PATH_MAX];

static void put_file(const char *name, const char *text)
{
	const char *path = harness_fmt("%s/adb/%s", harness_tmpdir(), name);
	FILE *f = fopen(path, "w");

	H_ASSERT(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

/* The device binary: the static x86_64 build (`make static`: build/static/perch, or
 * $PERCH_STATIC_BIN) when there is one at least as new as the perch under test, else that
 * perch (dynamic). Said once in the test output. With build/static/perch, perch-adb picks it
 * itself from ro.product.cpu.abi (no PERCH_BIN). */
static void choose_device_binary(void)
{
	static int said;
	const char *env = getenv("PERCH_STATIC_BIN");
	const char *path = env ? env : harness_fmt("%s/build/static/perch", repo);
	struct stat st_static, st_dyn;
	const char *why;

	if (access(path, X_OK) == 0 && stat(path, &st_static) == 0 &&
	    stat(harness_perch(), &st_dyn) == 0 && st_static.st_mtime >= st_dyn.st_mtime) {
		if (env)
			setenv("PERCH_BIN", path, 1);
		else
			unsetenv("PERCH_BIN");
		why = harness_fmt("%s (static x86_64 build)", path);
	} else {
		setenv("PERCH_BIN", harness_perch(), 1);
		why =
		    harness_fmt("%s (dynamic build; %s)", harness_perch(),
				access(path, X_OK) ? harness_fmt("no %s: make static", path)
						   : harness_fmt("%s is older: make static", path));
	}
	if (!said++)
		fprintf(stderr, "e2e-adb: device binary: %s\n", why);
}

/* A fake device with @devices ("serial\n" lines), an x86_64 ABI, a debuggable package whose
 * app is chain-fp, and a release one. */
static void fake_device(const char *devices)
{
	const char *dir = harness_fmt("%s/adb", harness_tmpdir());

	H_ASSERT(getcwd(repo, sizeof(repo)), "getcwd");
	H_ASSERT(mkdir(dir, 0700) == 0 && mkdir(harness_fmt("%s/pids", dir), 0700) == 0,
		 "cannot make %s", dir);
	put_file("devices", devices);
	put_file("props", "ro.product.cpu.abi=x86_64\nro.build.version.sdk=34\n");
	put_file("packages", harness_fmt("%s debuggable %s 30\n%s release\n", PKG,
					 harness_target("chain-fp"), PKG_RELEASE));
	setenv("FAKE_ADB_DIR", dir, 1);
	setenv("PATH", harness_fmt("%s/tests/fake-adb:%s", repo, getenv("PATH")), 1);
	setenv("PERCH_HOST", harness_perch(), 1);
	choose_device_binary();
}

/* Start the app @program (as if from its launcher) and tell the fake device its pid. */
static pid_t start_program(const char *program)
{
	struct harness_proc *app = harness_spawn("app", HARNESS_ARGV(program, "30"));
	pid_t pid = harness_proc_wait_ready(app, 10);

	put_file("pids/" PKG, harness_fmt("%d\n", pid));
	return pid;
}

static pid_t start_app(void)
{
	return start_program(harness_target("chain-fp"));
}

static struct harness_proc *perch_adb(const char *const argv[])
{
	const char *full[16] = {harness_fmt("%s/scripts/perch-adb", repo)};
	size_t n = 1;

	for (size_t i = 0; argv[i] && n < 15; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	return harness_spawn("perch-adb", full);
}

static void expect_failure(const char *const argv[], int code, const char *message)
{
	struct harness_proc *p = perch_adb(argv);

	H_ASSERT(harness_proc_wait(p, 30) == 0, "perch-adb did not finish");
	H_ASSERT(harness_proc_exit_code(p) == code, "exit %d, want %d; stderr:\n%s",
		 harness_proc_exit_code(p), code, p->err.buf);
	H_ASSERT(strstr(p->err.buf, message), "stderr lacks \"%s\":\n%s", message, p->err.buf);
}

static void check_profile(const char *path)
{
	struct harness_folded f;
	unsigned long all, f3;

	H_ASSERT(harness_folded_load(&f, path) == 0, "no profile at %s", path);
	H_ASSERT_FOLDED_VALID(&f);
	all = harness_folded_count(&f, NULL, harness_pred_any, NULL);
	f3 = harness_folded_count(&f, NULL, harness_pred_has, "f3");
	H_ASSERT(all >= 50 && f3 * 100 >= all * 80, "%lu of %lu samples in f3 (want >= 80%%)", f3,
		 all);
	harness_folded_release(&f);
}

START_TEST(record_pulls_profile)
{
	const char *out = harness_tmpfile("app.folded");
	struct harness_proc *p;
	pid_t pid;
	struct stat st;

	fake_device("emulator-5554\n");
	pid = start_app();
	p = perch_adb(HARNESS_ARGV("record", PKG, "-d", "1", "-F", "200", "-o", out));
	H_ASSERT(harness_proc_wait(p, 60) == 0, "perch-adb record did not finish");
	H_ASSERT(harness_proc_exit_code(p) == 0, "exit %d; stderr:\n%s", harness_proc_exit_code(p),
		 p->err.buf);
	check_profile(out);
	/* perch ran from the app's data directory and was removed afterwards */
	H_ASSERT(stat(harness_fmt("%s/adb/root/data/local/tmp/perch", harness_tmpdir()), &st) == 0,
		 "perch was not pushed to /data/local/tmp");
	H_ASSERT(stat(harness_fmt("%s/adb/root/data/user/0/%s/perch", harness_tmpdir(), PKG), &st) <
		     0,
		 "perch left in the app's data directory");
	H_ASSERT(harness_tracer_pid(pid) == 0, "the app is still traced");
}
END_TEST

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = 0;
	fclose(f);
	return buf;
}

static void run(const char *cmd)
{
	H_ASSERT(system(cmd) == 0, "failed: %s", cmd);
}

/* --symfs: the app on the device is stripped; perch records a .perch recording there, and the
 * host's perch report names the frames from the unstripped copy under the symfs directory
 * (found by build-id). Without --symfs the same stripped app has no f3 at all. */
START_TEST(symfs_renders_on_host)
{
	const char *stripped = harness_tmpfile("app-stripped");
	const char *symfs = harness_tmpfile("symfs");
	const char *out = harness_tmpfile("symfs.folded"), *plain = harness_tmpfile("plain.folded");
	struct harness_proc *p;
	struct harness_folded f;
	char *log;
	pid_t pid;

	fake_device("emulator-5554\n");
	run(harness_fmt("strip --strip-all -o %s %s", stripped, harness_target("chain-fp")));
	run(harness_fmt("mkdir -p %s/some/dir && cp %s %s/some/dir/chain-unstripped", symfs,
			harness_target("chain-fp"), symfs));
	pid = start_program(stripped);
	p = perch_adb(
	    HARNESS_ARGV("record", PKG, "-d", "1", "-F", "200", "--symfs", symfs, "-o", out));
	H_ASSERT(harness_proc_wait(p, 60) == 0, "perch-adb record --symfs did not finish");
	H_ASSERT(harness_proc_exit_code(p) == 0, "exit %d; stderr:\n%s", harness_proc_exit_code(p),
		 p->err.buf);
	check_profile(out);
	/* the device recorded a .perch recording, which was streamed out and rendered here */
	log = read_text(harness_fmt("%s/adb/adb.log", harness_tmpdir()));
	H_ASSERT(log && strstr(log, "./perch record -p") && strstr(log, "-o perch-adb.out.perch") &&
		     strstr(log, "exec-out run-as " PKG " cat perch-adb.out.perch"),
		 "the device did not record a .perch that was pulled; adb log:\n%s", log);
	free(log);
	/* the control: the stripped app's own symbols do not name f3 */
	p = perch_adb(HARNESS_ARGV("record", PKG, "-d", "1", "-F", "200", "-o", plain));
	H_ASSERT(harness_proc_wait(p, 60) == 0, "perch-adb record did not finish");
	H_ASSERT(harness_proc_exit_code(p) == 0, "exit %d; stderr:\n%s", harness_proc_exit_code(p),
		 p->err.buf);
	H_ASSERT(harness_folded_load(&f, plain) == 0, "no profile at %s", plain);
	H_ASSERT(harness_folded_count(&f, NULL, harness_pred_has, "f3") == 0,
		 "the stripped app was symbolized without --symfs: the test proves nothing");
	harness_folded_release(&f);
	H_ASSERT(harness_tracer_pid(pid) == 0, "the app is still traced");
}
END_TEST

START_TEST(launch_then_record)
{
	const char *out = harness_tmpfile("launched.folded");
	struct harness_proc *p;
	FILE *f;
	int pid = 0;

	fake_device("emulator-5554\n");
	/* not running: a clear message, unless --launch */
	expect_failure(HARNESS_ARGV("record", PKG, "-d", "1", "-o", out), 2,
		       "com.example.chain is not running: start the app, or pass --launch");
	p = perch_adb(HARNESS_ARGV("--launch", "record", PKG, "-d", "1", "-o", out));
	H_ASSERT(harness_proc_wait(p, 60) == 0, "perch-adb --launch record did not finish");
	f = fopen(harness_fmt("%s/adb/pids/%s", harness_tmpdir(), PKG), "r");
	if (f) {
		if (fscanf(f, "%d", &pid) == 1)
			harness_track_pid(pid);
		fclose(f);
	}
	H_ASSERT(pid > 0, "am start did not start the app");
	H_ASSERT(harness_proc_exit_code(p) == 0, "exit %d; stderr:\n%s", harness_proc_exit_code(p),
		 p->err.buf);
	check_profile(out);
}
END_TEST

START_TEST(shell_opens_prompt)
{
	struct harness_proc *p;
	pid_t pid;

	fake_device("emulator-5554\n");
	pid = start_app();
	/* stdin is not a terminal here: the device's perch reads it as a script */
	p = perch_adb(HARNESS_ARGV("shell", PKG));
	harness_proc_write(p, "threads\ndetach\n");
	close(p->in_fd);
	p->in_fd = -1;
	H_ASSERT(harness_proc_wait(p, 30) == 0, "perch-adb shell did not finish");
	H_ASSERT(harness_proc_exit_code(p) == 0, "exit %d; stderr:\n%s", harness_proc_exit_code(p),
		 p->err.buf);
	H_ASSERT(strstr(p->out.buf, harness_fmt("ok attach pid=%d", pid)) &&
		     strstr(p->out.buf, "ok threads") && strstr(p->out.buf, "ok detach"),
		 "unexpected output:\n%s", p->out.buf);
}
END_TEST

/* The adb log (every command perch-adb sent), malloc'ed. */
static char *adb_log(void)
{
	char *log = read_text(harness_fmt("%s/adb/adb.log", harness_tmpdir()));

	H_ASSERT(log, "no adb log");
	return log;
}

/* The fake run-as refuses what Android's refuses, so the perch-adb tests would catch a flow
 * that cannot work on a device: running perch from /data/local/tmp (what the old
 * instructions said), a user the package is not installed for. */
START_TEST(run_as_rules)
{
	const char *adb;
	struct harness_proc *p;

	fake_device("emulator-5554\n");
	adb = harness_fmt("%s/tests/fake-adb/adb", repo);
	run(harness_fmt("mkdir -p %s/adb/root/data/local/tmp && cp %s %s/adb/root/data/local/tmp/",
			harness_tmpdir(), harness_perch(), harness_tmpdir()));
	p = harness_spawn(
	    "adb", HARNESS_ARGV(adb, "shell", "run-as", PKG, "/data/local/tmp/perch", "--version"));
	H_ASSERT(harness_proc_wait(p, 10) == 0 && harness_proc_exit_code(p) == 1 &&
		     strstr(p->err.buf, "run-as: exec failed for /data/local/tmp/perch: "
					"Permission denied"),
		 "run-as ran a program from /data/local/tmp: exit %d, stderr:\n%s",
		 harness_proc_exit_code(p), p->err.buf);
	p = harness_spawn("adb", HARNESS_ARGV(adb, "shell", "run-as", PKG, "--user", "10", "id"));
	H_ASSERT(harness_proc_wait(p, 10) == 0 && harness_proc_exit_code(p) == 1 &&
		     strstr(p->err.buf, "couldn't stat /data/user/10/" PKG),
		 "run-as --user 10 for a package user 10 has not: exit %d, stderr:\n%s",
		 harness_proc_exit_code(p), p->err.buf);
}
END_TEST

/* Two copies of the app run, for user 0 and for user 10 (a work profile): --user 10 traces
 * user 10's through run-as --user 10 and keeps everything there; without --user, user 0's. */
START_TEST(record_for_user)
{
	const char *out = harness_tmpfile("u10.folded"), *out0 = harness_tmpfile("u0.folded");
	struct harness_proc *a0, *a10, *p;
	pid_t pid0, pid10;
	char *log;

	fake_device("emulator-5554\n");
	run(harness_fmt("mkdir -p %s/adb/root/data/user/10/%s", harness_tmpdir(), PKG));
	a0 = harness_spawn("app0", HARNESS_ARGV(harness_target("chain-fp"), "300"));
	a10 = harness_spawn("app10", HARNESS_ARGV(harness_target("chain-fp"), "300"));
	pid0 = harness_proc_wait_ready(a0, 10);
	pid10 = harness_proc_wait_ready(a10, 10);
	put_file("pids/" PKG, harness_fmt("%d 0\n%d 10\n", pid0, pid10));
	p = perch_adb(
	    HARNESS_ARGV("--user", "10", "record", PKG, "-d", "1", "-F", "200", "-o", out));
	H_ASSERT(harness_proc_wait(p, 60) == 0, "perch-adb --user 10 record did not finish");
	H_ASSERT(harness_proc_exit_code(p) == 0, "exit %d; stderr:\n%s", harness_proc_exit_code(p),
		 p->err.buf);
	check_profile(out);
	log = adb_log();
	H_ASSERT(strstr(log, "pm path --user 10 " PKG) &&
		     strstr(log, harness_fmt("run-as %s --user 10 ./perch record -p %d", PKG,
					     (int)pid10)) &&
		     strstr(log, "exec-out run-as " PKG " --user 10 cat") &&
		     !strstr(log, "run-as " PKG " /data/local/tmp"),
		 "not everything went to user 10's app; adb log:\n%s", log);
	free(log);
	H_ASSERT(access(harness_fmt("%s/adb/root/data/user/10/%s/perch", harness_tmpdir(), PKG),
			F_OK) < 0,
		 "perch left in user 10's data directory");
	/* without --user: user 0's process, through user 0's run-as */
	p = perch_adb(HARNESS_ARGV("record", PKG, "-d", "1", "-F", "200", "-o", out0));
	H_ASSERT(harness_proc_wait(p, 60) == 0 && harness_proc_exit_code(p) == 0,
		 "perch-adb record: exit %d; stderr:\n%s", harness_proc_exit_code(p), p->err.buf);
	log = adb_log();
	H_ASSERT(strstr(log, harness_fmt("run-as %s ./perch record -p %d", PKG, (int)pid0)),
		 "user 0's process was not the one recorded; adb log:\n%s", log);
	free(log);
	/* only user 10's runs: the message names it */
	put_file("pids/" PKG, harness_fmt("%d 10\n", pid10));
	expect_failure(HARNESS_ARGV("record", PKG, "-d", "1", "-o", out0), 2,
		       harness_fmt("%s is not running for user 0, only for user 10 (pid %d): pick "
				   "that user with --user",
				   PKG, (int)pid10));
	expect_failure(HARNESS_ARGV("--user", "11", "record", PKG, "-o", out0), 2,
		       "package com.example.chain is not installed for user 11 on emulator-5554");
	expect_failure(HARNESS_ARGV("--user", "work", "record", PKG, "-o", out0), 64,
		       "--user needs a user id (a number), not 'work'");
	H_ASSERT(harness_tracer_pid(pid0) == 0 && harness_tracer_pid(pid10) == 0,
		 "an app is still traced");
	harness_proc_kill(a0, SIGKILL);
	harness_proc_kill(a10, SIGKILL);
}
END_TEST

/* --launch --user 10 starts the activity for user 10 (am start --user 10) and records it. */
START_TEST(launch_for_user)
{
	const char *out = harness_tmpfile("launched10.folded");
	struct harness_proc *p;
	FILE *f;
	int pid = 0, user = -1;
	char *log;

	fake_device("emulator-5554\n");
	run(harness_fmt("mkdir -p %s/adb/root/data/user/10/%s", harness_tmpdir(), PKG));
	p = perch_adb(
	    HARNESS_ARGV("--user", "10", "--launch", "record", PKG, "-d", "1", "-o", out));
	H_ASSERT(harness_proc_wait(p, 60) == 0, "perch-adb --launch record did not finish");
	f = fopen(harness_fmt("%s/adb/pids/%s", harness_tmpdir(), PKG), "r");
	if (f) {
		if (fscanf(f, "%d %d", &pid, &user) >= 1)
			harness_track_pid(pid);
		fclose(f);
	}
	H_ASSERT(pid > 0 && user == 10, "am start did not start the app for user 10");
	H_ASSERT(harness_proc_exit_code(p) == 0, "exit %d; stderr:\n%s", harness_proc_exit_code(p),
		 p->err.buf);
	check_profile(out);
	log = adb_log();
	H_ASSERT(strstr(log, "am start --user 10 -n " PKG "/.MainActivity") &&
		     strstr(log, "resolve-activity --user 10"),
		 "the activity was not started for user 10; adb log:\n%s", log);
	free(log);
}
END_TEST

START_TEST(errors_explained)
{
	const char *out = harness_tmpfile("x.folded");

	fake_device("");
	expect_failure(HARNESS_ARGV("record", PKG, "-o", out), 2, "no device connected");
	put_file("devices", "emulator-5554\nR58M12345\n");
	expect_failure(
	    HARNESS_ARGV("record", PKG, "-o", out), 2,
	    "several devices connected (emulator-5554 R58M12345): pick one with -s SERIAL");
	expect_failure(HARNESS_ARGV("-s", "nope", "record", PKG, "-o", out), 2,
		       "device nope is not connected");
	expect_failure(HARNESS_ARGV("-s", "R58M12345", "record", PKG_ABSENT, "-o", out), 2,
		       "package com.example.absent is not installed on R58M12345");
	expect_failure(HARNESS_ARGV("-s", "R58M12345", "record", PKG_RELEASE, "-o", out), 2,
		       "com.example.release is not debuggable: run-as refused it");
	put_file("props", "ro.product.cpu.abi=armeabi-v7a\n");
	unsetenv("PERCH_BIN");
	expect_failure(HARNESS_ARGV("-s", "R58M12345", "record", PKG, "-o", out), 2,
		       "no perch build for ABI armeabi-v7a");
	/* no adb at all */
	setenv("PATH", "/nonexistent", 1);
	expect_failure(HARNESS_ARGV("record", PKG, "-o", out), 2, "adb not found in PATH");
}
END_TEST

Suite *adb_suite(void)
{
	Suite *s = suite_create("e2e-adb");
	TCase *tc = tcase_create("fake-adb");

	harness_tcase_init(tc, 90);
	tcase_add_test(tc, record_pulls_profile);
	tcase_add_test(tc, launch_then_record);
	tcase_add_test(tc, symfs_renders_on_host);
	tcase_add_test(tc, shell_opens_prompt);
	tcase_add_test(tc, errors_explained);
	tcase_add_test(tc, run_as_rules);
	tcase_add_test(tc, record_for_user);
	tcase_add_test(tc, launch_for_user);
	suite_add_tcase(s, tc);
	return s;
}
