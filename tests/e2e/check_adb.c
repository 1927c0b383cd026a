/* e2e: scripts/perch-adb against tests/fake-adb, a stand-in adb whose "device" is a directory
 * here and whose run-as runs as the same user in the app's data directory. The device binary
 * is the real perch, the app a real target: recording pulls a profile with the target's known
 * stack; the prompt opens on the "device"; every failing step says what is wrong. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define PKG "com.example.chain"
#define PKG_RELEASE "com.example.release"
#define PKG_ABSENT "com.example.absent"

static char repo[PATH_MAX];

static void put_file(const char *name, const char *text)
{
	const char *path = harness_fmt("%s/adb/%s", harness_tmpdir(), name);
	FILE *f = fopen(path, "w");

	H_ASSERT(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
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
	setenv("PERCH_BIN", harness_perch(), 1);
}

/* Start the app (as if from its launcher) and tell the fake device its pid. */
static pid_t start_app(void)
{
	struct harness_proc *app = harness_spawn("app", HARNESS_ARGV(harness_target("chain-fp"),
								     "30"));
	pid_t pid = harness_proc_wait_ready(app, 10);

	put_file("pids/" PKG, harness_fmt("%d\n", pid));
	return pid;
}

static struct harness_proc *perch_adb(const char *const argv[])
{
	const char *full[16] = { harness_fmt("%s/scripts/perch-adb", repo) };
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
	H_ASSERT(stat(harness_fmt("%s/adb/root/data/user/0/%s/perch", harness_tmpdir(), PKG),
		      &st) < 0,
		 "perch left in the app's data directory");
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

START_TEST(errors_explained)
{
	const char *out = harness_tmpfile("x.folded");

	fake_device("");
	expect_failure(HARNESS_ARGV("record", PKG, "-o", out), 2, "no device connected");
	put_file("devices", "emulator-5554\nR58M12345\n");
	expect_failure(HARNESS_ARGV("record", PKG, "-o", out), 2,
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
	tcase_add_test(tc, shell_opens_prompt);
	tcase_add_test(tc, errors_explained);
	suite_add_tcase(s, tc);
	return s;
}
