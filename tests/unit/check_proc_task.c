/* Unit tests for proc-task: stat/status parsers on real captures, thread listing and comm
 * on fixture directories, hostile and truncated input. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "testutil.h"

START_TEST(test_stat_comm_with_paren)
{
	char *text = testutil_fixture_text("proc/threaded/task/3059/stat", NULL);
	struct proc_stat st;

	ck_assert_int_eq(proc_stat_parse(text, &st), 0);
	ck_assert_int_eq(st.pid, 3059);
	ck_assert_str_eq(st.comm, "work) x (1");
	ck_assert_int_eq(st.state, 'S');
	ck_assert_int_eq(st.ppid, 1);
	ck_assert_uint_eq(st.num_threads, 4);
	ck_assert_uint_eq(st.starttime, 25126);
	ck_assert_uint_eq(st.utime, 0);
	ck_assert_int_eq(st.processor, 0);
	free(text);

	text = testutil_fixture_text("proc/threaded/stat", NULL);
	ck_assert_int_eq(proc_stat_parse(text, &st), 0);
	ck_assert_int_eq(st.pid, 3057);
	ck_assert_str_eq(st.comm, "cap (main) z");
	free(text);
}
END_TEST

START_TEST(test_stat_busy)
{
	char *text = testutil_fixture_text("proc/traced-busy/stat", NULL);
	struct proc_stat st;

	ck_assert_int_eq(proc_stat_parse(text, &st), 0);
	ck_assert_int_eq(st.pid, 3120);
	ck_assert_str_eq(st.comm, "sh");
	ck_assert_int_eq(st.state, 'R');
	ck_assert_int_eq(st.ppid, 1);
	ck_assert_uint_eq(st.utime, 243);
	ck_assert_uint_eq(st.stime, 0);
	ck_assert_uint_eq(st.num_threads, 1);
	ck_assert_uint_eq(st.starttime, 25727);
	ck_assert_int_eq(st.processor, 1);
	free(text);
}
END_TEST

START_TEST(test_stat_hostile)
{
	static const char *const bad[] = {
	    "",
	    "123",
	    "123 (abc",
	    "abc (x) S 1",
	    "123 (x)S 1 2 3",
	    "-5 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
	    "0 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
	    "99999999999 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
	    /* too few fields for starttime (22) */
	    "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18",
	    /* state must be one letter */
	    "1 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
	    /* utime not a number, utime overflow, ppid negative */
	    "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 13 14 15 16 17 18 19 20",
	    "1 (x) S 1 2 3 4 5 6 7 8 9 10 99999999999999999999999 12 13 14 15 16 17 18 19 20",
	    "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 1x 20",
	    "1 (x) S -1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
	    /* empty field (utime) */
	    "1 (x) S 1 2 3 4 5 6 7 8 9 10  12 13 14 15 16 17 18 19 20",
	};
	struct proc_stat st;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(proc_stat_parse(bad[i], &st) == -EINVAL, "accepted: %s", bad[i]);
	/* the minimum: up to starttime, processor absent */
	ck_assert_int_eq(
	    proc_stat_parse("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", &st), 0);
	ck_assert_uint_eq(st.ppid, 1);
	ck_assert_uint_eq(st.utime, 11);
	ck_assert_uint_eq(st.stime, 12);
	ck_assert_uint_eq(st.num_threads, 17);
	ck_assert_uint_eq(st.starttime, 19);
	ck_assert_int_eq(st.processor, -1);
	/* an over-long comm is truncated, not overflowed */
	{
		char text[512], want[64];

		memset(want, 'c', sizeof(want) - 1);
		want[sizeof(want) - 1] = '\0';
		snprintf(text, sizeof(text),
			 "7 (%s%s) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", want,
			 "tail)) more");
		ck_assert_int_eq(proc_stat_parse(text, &st), 0);
		ck_assert_str_eq(st.comm, want);
		ck_assert_int_eq(st.state, 'R');
	}
}
END_TEST

/* Every prefix of a real stat line: rejected until starttime (field 22) is there, accepted
 * from then on, no crash anywhere. */
START_TEST(test_stat_truncated)
{
	char *text = testutil_fixture_text("proc/threaded/task/3059/stat", NULL);
	size_t len = strlen(text), cut, start;
	struct proc_stat st;

	ck_assert_ptr_nonnull(strstr(text, " 25126 "));
	start = (size_t)(strstr(text, " 25126 ") - text) + 1; /* the only field equal to it */
	for (cut = 0; cut <= len; cut++) {
		char *prefix = xstrndup(text, cut);
		int ret = proc_stat_parse(prefix, &st);

		if (cut <= start) {
			ck_assert_int_eq(ret, -EINVAL);
		} else {
			ck_assert_int_eq(ret, 0);
			ck_assert_str_eq(st.comm, "work) x (1");
			ck_assert_uint_eq(st.num_threads, 4);
			if (cut >= start + 5)
				ck_assert_uint_eq(st.starttime, 25126);
		}
		free(prefix);
	}
	free(text);
}
END_TEST

START_TEST(test_status)
{
	char *text = testutil_fixture_text("proc/threaded/status", NULL);
	struct proc_status st;

	ck_assert_int_eq(proc_status_parse(text, &st), 0);
	ck_assert_str_eq(st.name, "cap (main) z");
	ck_assert_int_eq(st.state, 'S');
	ck_assert_int_eq(st.tgid, 3057);
	ck_assert_int_eq(st.tracer_pid, 0);
	ck_assert_uint_eq(st.uid_real, 0);
	ck_assert_uint_eq(st.uid_effective, 0);
	ck_assert_int_eq(st.threads, 4);
	ck_assert_uint_eq(st.cap_eff, 0x1fffeffffffULL);
	free(text);

	text = testutil_fixture_text("proc/threaded/task/3059/status", NULL);
	ck_assert_int_eq(proc_status_parse(text, &st), 0);
	ck_assert_str_eq(st.name, "work) x (1");
	ck_assert_int_eq(st.tgid, 3057);
	free(text);

	text = testutil_fixture_text("proc/traced-busy/status", NULL);
	ck_assert_int_eq(proc_status_parse(text, &st), 0);
	ck_assert_str_eq(st.name, "sh");
	ck_assert_int_eq(st.state, 'R');
	ck_assert_int_eq(st.tgid, 3120);
	ck_assert_int_eq(st.tracer_pid, 3504);
	ck_assert_uint_eq(st.uid_real, 65534);
	ck_assert_uint_eq(st.uid_effective, 65534);
	ck_assert_int_eq(st.threads, 1);
	ck_assert_uint_eq(st.cap_eff, 0);
	ck_assert_int_eq(st.ns_pid, 3120);
	free(text);

	/* a process in its own PID namespace: NSpid lists the host's id, then its own */
	text = testutil_fixture_text("proc/pidns/status", NULL);
	ck_assert_int_eq(proc_status_parse(text, &st), 0);
	ck_assert_int_eq(st.tgid, 4172);
	ck_assert_int_eq(st.ns_pid, 1);
	free(text);
}
END_TEST

START_TEST(test_status_hostile)
{
	static const char *const bad[] = {
	    "",
	    "garbage without colon\n",
	    "Name:\tx\nState:\tR (running)\n",	 /* no Tgid */
	    "Name:\tx\nState:\tR\nTgid:\tabc\n", /* bad Tgid */
	    "Name:\tx\nState:\tR\nTgid:\t1\nTracerPid:\t-1\n",
	    "Name:\tx\nState:\tR\nTgid:\t1\nUid:\t1\n", /* one uid only */
	    "Name:\tx\nState:\tR\nTgid:\t1\nUid:\t1\tz\n",
	    "Name:\tx\nState:\tR\nTgid:\t1\nUid:\t99999999999\t0\n",
	    "Name:\tx\nState:\tR\nTgid:\t1\nCapEff:\t00000000000000001\n", /* 17 digits */
	    "Name:\tx\nState:\tR\nTgid:\t1\nCapEff:\t0000zz00\n",
	    "Name:\tx\nState:\t\nTgid:\t1\n",
	    "Name:\tx\nTgid:\t1\n", /* no State */
	};
	struct proc_status st;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(proc_status_parse(bad[i], &st) == -EINVAL, "accepted: %s", bad[i]);
	/* minimal, no trailing newline; Threads absent is -1 */
	ck_assert_int_eq(proc_status_parse("Name:\tx y\nState:\tZ (zombie)\nTgid:\t9", &st), 0);
	ck_assert_str_eq(st.name, "x y");
	ck_assert_int_eq(st.state, 'Z');
	ck_assert_int_eq(st.tgid, 9);
	ck_assert_int_eq(st.threads, -1);
	/* a key that only starts like a known one is not it */
	ck_assert_int_eq(proc_status_parse("Name:\tx\nState:\tS\nTgid:\t9\nThreadsX:\tq\n", &st),
			 0);
}
END_TEST

START_TEST(test_status_truncated)
{
	char *text = testutil_fixture_text("proc/traced-busy/status", NULL);
	size_t len = strlen(text), cut, tgid;
	struct proc_status st;

	ck_assert_ptr_nonnull(strstr(text, "Tgid:\t3120\n"));
	tgid = (size_t)(strstr(text, "Tgid:\t3120\n") - text);
	for (cut = 0; cut <= len; cut++) {
		char *prefix = xstrndup(text, cut);
		int ret = proc_status_parse(prefix, &st);

		ck_assert(ret == 0 || ret == -EINVAL);
		if (cut <= tgid + strlen("Tgid:\t"))
			ck_assert_int_eq(ret, -EINVAL);
		if (!ret)
			ck_assert_str_eq(st.name, "sh");
		free(prefix);
	}
	ck_assert_int_eq(proc_status_parse(text, &st), 0);
	free(text);
}
END_TEST

START_TEST(test_task_list_fixture)
{
	char *dir = testutil_fixture_path("proc/threaded/task");
	pid_t *tids = NULL;
	int n;

	n = proc_task_list_dir(dir, &tids);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(tids[0], 3057);
	ck_assert_int_eq(tids[1], 3059);
	ck_assert_int_eq(tids[2], 3060);
	ck_assert_int_eq(tids[3], 3061);
	free(tids);
	free(dir);

	tids = (pid_t *)1;
	ck_assert_int_eq(proc_task_list_dir("/nonexistent/perch/task", &tids), -ENOENT);
	ck_assert_ptr_null(tids);
}
END_TEST

/* Sorting is numeric and names that are not thread ids are skipped. */
START_TEST(test_task_list_sorting)
{
	static const char *const names[] = {"100", "9",	 "20",		"abc", "12x",
					    "0",   "-3", "99999999999", "1"};
	char *dir = testutil_tmpdir_new(), *p;
	pid_t *tids;
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		p = xasprintf("%s/%s", dir, names[i]);
		ck_assert_int_eq(mkdir(p, 0755), 0);
		free(p);
	}
	n = proc_task_list_dir(dir, &tids);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(tids[0], 1);
	ck_assert_int_eq(tids[1], 9);
	ck_assert_int_eq(tids[2], 20);
	ck_assert_int_eq(tids[3], 100);
	free(tids);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		p = xasprintf("%s/%s", dir, names[i]);
		rmdir(p);
		free(p);
	}
	/* an empty directory: 0 threads */
	n = proc_task_list_dir(dir, &tids);
	ck_assert_int_eq(n, 0);
	free(tids);
	ck_assert_int_eq(rmdir(dir), 0);
	free(dir);
}
END_TEST

START_TEST(test_comm)
{
	char *path = testutil_fixture_path("proc/threaded/task/3060/comm");
	char buf[64], small[5];

	ck_assert_int_eq(proc_task_comm_file(path, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "io pool 2");
	ck_assert_int_eq(proc_task_comm_file(path, small, sizeof(small)), 0);
	ck_assert_str_eq(small, "io p");
	ck_assert_int_eq(proc_task_comm_file(path, buf, 0), -EINVAL);
	ck_assert_int_eq(proc_task_comm_file("/nonexistent/perch/comm", buf, sizeof(buf)), -ENOENT);
	free(path);
}
END_TEST

START_TEST(test_read_file)
{
	char *path = testutil_fixture_path("proc/android-memorylab/maps");
	struct stat sb;
	size_t len = 0;
	char *text;

	/* bigger than the first read buffer, so the loop grows it */
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_gt(sb.st_size, 4096);
	text = proc_read_file(path, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(len, (size_t)sb.st_size);
	ck_assert_uint_eq(strlen(text), len);
	free(text);
	free(path);

	errno = 0;
	ck_assert_ptr_null(proc_read_file("/nonexistent/perch/file", &len));
	ck_assert_int_eq(errno, ENOENT);
	errno = 0;
	ck_assert_ptr_null(proc_read_file("/", &len)); /* a directory: EISDIR on read */
	ck_assert_int_eq(errno, EISDIR);
}
END_TEST

/* A thread that says its tid, then waits to be told to end. */
struct spinner {
	volatile pid_t tid;
	volatile int stop;
};

static void *spin_until_told(void *arg)
{
	struct spinner *sp = arg;

	sp->tid = (pid_t)syscall(SYS_gettid);
	while (!sp->stop)
		usleep(1000);
	return NULL;
}

/* Kept stat files: the same numbers as a fresh read, one file per thread, closed for a thread
 * that exited or is no longer listed. */
START_TEST(test_stat_files)
{
	pid_t self = (pid_t)syscall(SYS_gettid), other;
	struct proc_stat_files sf;
	struct spinner spin = {0, 0};
	struct proc_stat a, b;
	pthread_t t;

	proc_stat_files_init(&sf, getpid());
	ck_assert_int_eq(proc_stat_files_read(&sf, self, &a), 0);
	ck_assert_int_eq(proc_stat_read(getpid(), self, &b), 0);
	ck_assert_int_eq(a.pid, self);
	ck_assert_str_eq(a.comm, b.comm);
	ck_assert_uint_eq(sf.nr, 1);
	ck_assert_int_eq(proc_stat_files_read(&sf, self, &a), 0);
	ck_assert_uint_eq(sf.nr, 1);
	ck_assert_int_eq(proc_stat_files_read(&sf, 0x7ffffff0, &a), -ENOENT);
	ck_assert_uint_eq(sf.nr, 1);

	ck_assert_int_eq(pthread_create(&t, NULL, spin_until_told, &spin), 0);
	/* its own word for its tid (under qemu-user the process has threads of qemu's too) */
	for (int i = 0; i < 500 && !spin.tid; i++)
		usleep(10000);
	other = spin.tid;
	ck_assert_int_gt(other, 0);
	ck_assert_int_eq(proc_stat_files_read(&sf, other, &a), 0);
	ck_assert_int_eq(a.pid, other);
	ck_assert_uint_eq(sf.nr, 2);
	ck_assert_int_eq(sf.f[0].tid < sf.f[1].tid, 1);
	spin.stop = 1;
	pthread_join(t, NULL);
	/* exited: the kept file reads nothing, and it is closed. pthread_join() returns when the
	 * thread's tid word is cleared, a little before the kernel has let the task go: wait for
	 * that, at most 5 s */
	for (int i = 0; i < 500 && proc_stat_files_read(&sf, other, &a) == 0; i++)
		usleep(10000);
	ck_assert_int_lt(proc_stat_files_read(&sf, other, &a), 0);
	ck_assert_uint_eq(sf.nr, 1);
	ck_assert_int_eq(sf.f[0].tid, self);

	proc_stat_files_keep(&sf, NULL, 0);
	ck_assert_uint_eq(sf.nr, 0);
	ck_assert_int_eq(proc_stat_files_read(&sf, self, &a), 0);
	proc_stat_files_keep(&sf, &self, 1);
	ck_assert_uint_eq(sf.nr, 1);
	proc_stat_files_release(&sf);
}
END_TEST

static int has_tid(const pid_t *tids, int n, pid_t tid)
{
	for (int i = 0; i < n; i++)
		if (tids[i] == tid)
			return 1;
	return 0;
}

/* The threads to read: the kept files' own while the count matches, /proc/PID/task listed
 * again otherwise. */
START_TEST(test_stat_files_tids)
{
	pid_t self = (pid_t)syscall(SYS_gettid), *tids;
	struct proc_stat_files sf;
	struct spinner spin = {0, 0}, spin2 = {0, 0};
	struct proc_stat a;
	pthread_t t;
	int n, n0;

	proc_stat_files_init(&sf, getpid());
	n0 = proc_stat_files_tids(&sf, 0, &tids); /* nothing kept yet: listed */
	ck_assert_int_ge(n0, 1);
	ck_assert(has_tid(tids, n0, self));
	for (int i = 0; i < n0; i++)
		ck_assert_int_eq(proc_stat_files_read(&sf, tids[i], &a), 0);
	free(tids);
	ck_assert_uint_eq(sf.nr, (size_t)n0);

	ck_assert_int_eq(pthread_create(&t, NULL, spin_until_told, &spin), 0);
	for (int i = 0; i < 500 && !spin.tid; i++)
		usleep(10000);
	ck_assert_int_gt(spin.tid, 0);
	/* told the old count: the kept threads, without listing (so without the new one) */
	n = proc_stat_files_tids(&sf, (uint64_t)n0, &tids);
	ck_assert_int_eq(n, n0);
	ck_assert(!has_tid(tids, n, spin.tid));
	free(tids);
	/* the process's own count, one more: listed, the new thread is there */
	ck_assert_int_eq(proc_stat_read(getpid(), 0, &a), 0);
	n = proc_stat_files_tids(&sf, a.num_threads, &tids);
	ck_assert_int_eq(n, n0 + 1);
	ck_assert(has_tid(tids, n, spin.tid));
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(proc_stat_files_read(&sf, tids[i], &a), 0);
	free(tids);

	/* it exits and another starts: the same count, so the kept list comes back (the one gone
	 * still in it) until a read of the one gone fails and closes its file; then the counts
	 * differ and the next call lists again */
	spin.stop = 1;
	pthread_join(t, NULL);
	ck_assert_int_eq(pthread_create(&t, NULL, spin_until_told, &spin2), 0);
	for (int i = 0; i < 500 && !spin2.tid; i++)
		usleep(10000);
	ck_assert_int_gt(spin2.tid, 0);
	for (int i = 0; i < 500 && proc_stat_read(getpid(), spin.tid, &a) == 0; i++)
		usleep(10000); /* the kernel lets the task go a little after pthread_join() */
	n = proc_stat_files_tids(&sf, (uint64_t)n0 + 1, &tids);
	ck_assert_int_eq(n, n0 + 1);
	ck_assert(has_tid(tids, n, spin.tid));
	ck_assert(!has_tid(tids, n, spin2.tid));
	ck_assert_int_lt(proc_stat_files_read(&sf, spin.tid, &a), 0);
	free(tids);
	n = proc_stat_files_tids(&sf, (uint64_t)n0 + 1, &tids);
	ck_assert_int_eq(n, n0 + 1);
	ck_assert(!has_tid(tids, n, spin.tid));
	ck_assert(has_tid(tids, n, spin2.tid));
	free(tids);
	spin2.stop = 1;
	pthread_join(t, NULL);
	proc_stat_files_release(&sf);
}
END_TEST

/* se.exec_start of a real sched file, and text that is not one */
START_TEST(test_sched_exec_start)
{
	char *text = testutil_fixture_text("proc/sched/sleeping", NULL);
	uint64_t ns = 0;
	static const char *const bad[] = {
	    "",
	    "se.exec_start : 1.5\n",
	    "x\nse.exec_start\n",
	    "x\nse.exec_start : \n",
	    "x\nse.exec_start : abc\n",
	    "x\nse.exec_start : 12.34567\n",
	    "x\nse.exec_start : 12.3456789\n",
	    "x\nse.exec_start : 99999999999999999999999.000000\n",
	};

	ck_assert_int_eq(proc_sched_exec_start(text, &ns), 0);
	ck_assert_uint_eq(ns, 1626622275467ULL); /* "1626622.275467" in the capture */
	free(text);
	ck_assert_int_eq(proc_sched_exec_start("x\nse.exec_start\t:  0.000001\nse.vruntime", &ns),
			 0);
	ck_assert_uint_eq(ns, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(proc_sched_exec_start(bad[i], &ns), -EINVAL);
}
END_TEST

Suite *proc_task_suite(void)
{
	Suite *s = suite_create("proc_task");
	TCase *tc = tcase_create("stat");

	tcase_add_test(tc, test_stat_comm_with_paren);
	tcase_add_test(tc, test_stat_busy);
	tcase_add_test(tc, test_stat_hostile);
	tcase_add_test(tc, test_stat_truncated);
	tcase_add_test(tc, test_sched_exec_start);
	suite_add_tcase(s, tc);

	tc = tcase_create("status");
	tcase_add_test(tc, test_status);
	tcase_add_test(tc, test_status_hostile);
	tcase_add_test(tc, test_status_truncated);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_test(tc, test_task_list_fixture);
	tcase_add_test(tc, test_task_list_sorting);
	tcase_add_test(tc, test_comm);
	tcase_add_test(tc, test_read_file);
	tcase_add_test(tc, test_stat_files);
	tcase_add_test(tc, test_stat_files_tids);
	suite_add_tcase(s, tc);
	return s;
}
