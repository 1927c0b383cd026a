/* faults-output: where perch's output goes wrong. perch writes its files only after it has
 * detached, through output_open/output_commit (a temporary name, fsync, rename):
 * - a full file system (a small tmpfs mounted in a private mount namespace; SKIP when the
 *   test may not mount): a clear error naming the file, exit 2, no partial or temporary
 *   file, and the target untouched;
 * - `-o -` to /dev/full: the same error for stdout;
 * - run as root through sudo (SUDO_UID/SUDO_GID), the files belong to the invoking user. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faults.h"

/* A private mount namespace with a tmpfs of @kb KiB at <tmpdir>/fs; NULL (after a SKIP line)
 * when this process may not do that. The namespace dies with the test process. */
static const char *small_fs(int kb)
{
	const char *dir = harness_fmt("%s/fs", harness_tmpdir());

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "SKIP faults-output full-fs: no private mount namespace: %s\n",
			strerror(errno));
		return NULL;
	}
	H_ASSERT(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
	if (mount("perch-faults", dir, "tmpfs", 0, harness_fmt("size=%dk", kb))) {
		fprintf(stderr, "SKIP faults-output full-fs: cannot mount a tmpfs: %s\n",
			strerror(errno));
		return NULL;
	}
	return dir;
}

/* Fill @dir's file system up to @leave bytes of free space. */
static void fill(const char *dir, size_t leave)
{
	const char *path = harness_fmt("%s/filler", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[4096];
	size_t total = 0;

	H_ASSERT(fd >= 0, "cannot create %s: %s", path, strerror(errno));
	memset(buf, 'x', sizeof(buf));
	while (write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf))
		total += sizeof(buf);
	close(fd);
	if (leave) {
		H_ASSERT(truncate(path, (off_t)(total > leave ? total - leave : 0)) == 0,
			 "truncate %s: %s", path, strerror(errno));
	}
}

/* Names in @dir other than "filler", space-separated, for the failure message. */
static const char *dir_listing(const char *dir)
{
	char buf[1024] = "";
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return "(unreadable)";
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "filler") &&
		    strlen(buf) + strlen(de->d_name) + 2 < sizeof(buf)) {
			strcat(buf, " ");
			strcat(buf, de->d_name);
		}
	closedir(d);
	return harness_fmt("%s", buf);
}

/* Start the victim and a perch writing @outs (NULL-terminated "-o" values) for 0.4 s. */
static struct harness_proc *record_into(const char *const *outs, struct harness_proc **target,
					pid_t *pid)
{
	const char *argv[32];
	int n = 0;

	*target = harness_spawn("target", HARNESS_ARGV(harness_target("faults-victim"), "30"));
	*pid = harness_proc_wait_ready(*target, 5);
	argv[n++] = harness_perch();
	argv[n++] = "record";
	argv[n++] = "-F";
	argv[n++] = "1000";
	argv[n++] = "-d";
	argv[n++] = "0.4";
	for (; *outs && n < 26; outs++) {
		argv[n++] = "-o";
		argv[n++] = *outs;
	}
	argv[n++] = "-p";
	argv[n++] = harness_fmt("%d", (int)*pid);
	argv[n] = NULL;
	return harness_spawn("perch", argv);
}

/* _i = 0: no space at all; 1: 8 KiB left (the small folded file may fit, the flame graph
 * and the Chrome trace do not). Every output either is complete or does not exist. */
START_TEST(output_full_fs)
{
	const char *dir = small_fs(256), *folded, *svg, *chrome;
	struct harness_proc *t, *perch;
	struct harness_folded f;
	struct stat st;
	int failed = 0;
	pid_t pid;

	if (!dir)
		return;
	fill(dir, _i ? 8192 : 0);
	folded = harness_fmt("%s/out.folded", dir);
	svg = harness_fmt("%s/out.svg", dir);
	chrome = harness_fmt("%s/out.trace.json", dir);
	perch = record_into((const char *const[]){folded, svg, chrome, NULL}, &t, &pid);
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not exit within 10 s");
	harness_context_add("files left:%s\n", dir_listing(dir));
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL,
		 "perch exited %d writing to a full file system, want 2",
		 harness_proc_exit_code(perch));
	H_ASSERT(!strstr(dir_listing(dir), ".tmp."), "a temporary file was left behind");
	/* each output: complete, or absent with an error that names it */
	if (stat(folded, &st) == 0) {
		H_ASSERT(harness_folded_load(&f, folded) == 0 && f.nr_bad == 0 && f.nr > 0,
			 "%s is there but not a complete profile", folded);
		harness_folded_release(&f);
	} else {
		failed++;
		H_ASSERT(
		    strstr(perch->err.buf, harness_fmt("cannot write %s: No space", folded)) ||
			strstr(perch->err.buf, harness_fmt("cannot create %s: No space", folded)),
		    "no clear error for %s", folded);
	}
	H_ASSERT(stat(svg, &st) != 0 && stat(chrome, &st) != 0,
		 "the flame graph or the trace was written to a full file system");
	H_ASSERT(strstr(perch->err.buf, harness_fmt("%s: No space left on device", svg)) &&
		     strstr(perch->err.buf, harness_fmt("%s: No space left on device", chrome)),
		 "perch did not say which files failed and why");
	H_ASSERT(_i || failed, "with no space at all, %s was written", folded);
	faults_assert_released(pid, 1, 0);
	faults_assert_runs(pid, 3, 2);
	faults_victim_check(t, 1, 1);
}
END_TEST

START_TEST(output_dev_full)
{
	struct harness_proc *t, *perch;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-victim"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	perch =
	    harness_spawn("perch", HARNESS_ARGV("/bin/sh", "-c",
						"exec \"$0\" record -F 1000 -d 0.4 -o - -p \"$1\" "
						"> /dev/full",
						harness_perch(), harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not exit within 10 s");
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL,
		 "perch exited %d writing to /dev/full, want 2", harness_proc_exit_code(perch));
	H_ASSERT(strstr(perch->err.buf, "cannot write -: No space left on device"),
		 "no clear error for stdout on /dev/full");
	faults_assert_released(pid, 1, 0);
	faults_assert_runs(pid, 3, 2);
	faults_victim_check(t, 1, 1);
}
END_TEST

/* As root with SUDO_UID/SUDO_GID (what sudo sets), the profile belongs to that user; without
 * them, to root. */
START_TEST(output_sudo_owner)
{
	const char *mine = harness_tmpfile("sudo.folded"), *root = harness_tmpfile("root.folded");
	struct harness_proc *t, *perch;
	struct stat st;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "SKIP faults-output sudo owner: not running as root\n");
		return;
	}
	t = harness_spawn("target", HARNESS_ARGV(harness_target("faults-victim"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	setenv("SUDO_UID", "4242", 1);
	setenv("SUDO_GID", "4343", 1);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-d", "0.2",
						"-o", mine, "-p", harness_fmt("%d", pid)));
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	H_ASSERT(harness_proc_wait(perch, 10) == 0 && harness_proc_exit_code(perch) == 0,
		 "perch (SUDO_UID set) failed");
	H_ASSERT(stat(mine, &st) == 0 && st.st_uid == 4242 && st.st_gid == 4343,
		 "%s belongs to %d:%d, want 4242:4343 (SUDO_UID/SUDO_GID)", mine, (int)st.st_uid,
		 (int)st.st_gid);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-d", "0.2",
						"-o", root, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0 && harness_proc_exit_code(perch) == 0,
		 "perch (no SUDO_UID) failed");
	H_ASSERT(stat(root, &st) == 0 && st.st_uid == 0, "%s belongs to %d, want root", root,
		 (int)st.st_uid);
	faults_victim_check(t, 1, 1);
}
END_TEST

Suite *faults_output_suite(void)
{
	Suite *s = suite_create("faults-output");
	TCase *tc = tcase_create("output");

	harness_tcase_init(tc, 30);
	tcase_add_loop_test(tc, output_full_fs, 0, 2);
	tcase_add_test(tc, output_dev_full);
	tcase_add_test(tc, output_sudo_owner);
	suite_add_tcase(s, tc);
	return s;
}
