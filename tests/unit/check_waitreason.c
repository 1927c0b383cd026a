/* Unit tests for waitreason: syscall lines captured on x86_64 (threads blocked in read on a
 * FIFO, futex, nanosleep, epoll_wait, pause; a busy loop), hand-written aarch64 ones, the
 * syscall tables, and malformed input. fd paths come from each fixture's "fd" file. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "perch/proc/waitreason.h"
#include "testutil.h"

/* fixtures/syscall/<case>/{syscall,wchan,stat or state,fd} */
struct wr_fixture {
	char *syscall, *wchan, *fds;
	char state;
};

static char *read_opt(const char *dir, const char *name)
{
	char *path = testutil_fixture_path("syscall/%s/%s", dir, name);
	char *text = proc_read_file(path, NULL);

	free(path);
	return text;
}

static void load_fixture(const char *dir, struct wr_fixture *f)
{
	char *stat = read_opt(dir, "stat"), *state = read_opt(dir, "state");

	memset(f, 0, sizeof(*f));
	f->syscall = read_opt(dir, "syscall");
	ck_assert_msg(f->syscall, "no fixtures/syscall/%s/syscall (run from the repository root)",
		      dir);
	f->wchan = read_opt(dir, "wchan");
	f->fds = read_opt(dir, "fd");
	if (stat) {
		struct proc_stat st;

		ck_assert_int_eq(proc_stat_parse(stat, &st), 0);
		f->state = st.state;
	} else {
		ck_assert_ptr_nonnull(state);
		f->state = state[0];
	}
	free(stat);
	free(state);
}

static void release_fixture(struct wr_fixture *f)
{
	free(f->syscall);
	free(f->wchan);
	free(f->fds);
}

/* A waitreason_fd_path_fn over "N path" lines; -ENOENT for fds not listed. */
static int fd_from_lines(void *ctx, int fd, char *buf, size_t len)
{
	const char *p = ctx;

	for (; p && *p; p = strchrnul(p, '\n'), p += *p == '\n') {
		char *end;
		long n = strtol(p, &end, 10);
		size_t l;

		if (end == p || *end != ' ' || n != fd)
			continue;
		l = strcspn(end + 1, "\n");
		if (l >= len)
			l = len - 1;
		memcpy(buf, end + 1, l);
		buf[l] = '\0';
		return 0;
	}
	return -ENOENT;
}

static const struct {
	const char *dir;
	unsigned int e_machine;
	enum waitreason_kind kind;
	long nr;
	const char *syscall;
	int fd;
	const char *frame;
} cases[] = {
    /* captured on this x86_64 host (see fixtures/syscall/README) */
    {"x86_64-read-fifo", EM_X86_64, WAITREASON_IO, 0, "read", 3, "[io read /tmp/mi/cap/fifo]"},
    {"x86_64-futex", EM_X86_64, WAITREASON_LOCK, 202, "futex", -1, "[lock futex]"},
    /* glibc's nanosleep() is clock_nanosleep(CLOCK_REALTIME, 0, ...) */
    {"x86_64-nanosleep", EM_X86_64, WAITREASON_SLEEP, 230, "clock_nanosleep", -1,
     "[sleep clock_nanosleep]"},
    {"x86_64-epoll_wait", EM_X86_64, WAITREASON_POLL, 232, "epoll_wait", 4, "[poll epoll_wait]"},
    {"x86_64-pause", EM_X86_64, WAITREASON_OTHER, 34, "pause", -1, "[wait other: pause]"},
    {"x86_64-running", EM_X86_64, WAITREASON_RUNNING, -1, NULL, -1, "[running]"},
    /* hand-written aarch64 lines (asm-generic numbers) */
    {"aarch64-read-apk", EM_AARCH64, WAITREASON_IO, 63, "read", 42,
     "[io read /data/app/~~abc==/com.example-xyz==/base.apk]"},
    {"aarch64-futex", EM_AARCH64, WAITREASON_LOCK, 98, "futex", -1, "[lock futex]"},
    {"aarch64-nanosleep", EM_AARCH64, WAITREASON_SLEEP, 101, "nanosleep", -1, "[sleep nanosleep]"},
    {"aarch64-epoll_pwait", EM_AARCH64, WAITREASON_POLL, 22, "epoll_pwait", 92,
     "[poll epoll_pwait]"},
    {"aarch64-binder", EM_AARCH64, WAITREASON_BINDER, 29, "ioctl", 7, "[binder ioctl]"},
    {"aarch64-ioctl-other", EM_AARCH64, WAITREASON_OTHER, 29, "ioctl", 9,
     "[wait other: ioctl /dev/pts/0]"},
    {"aarch64-wait4", EM_AARCH64, WAITREASON_OTHER, 260, "wait4", -1, "[wait other: wait4]"},
    {"aarch64-pagefault", EM_AARCH64, WAITREASON_PAGEFAULT, -1, NULL, -1,
     "[pagefault folio_wait_bit_common]"},
    {"aarch64-running", EM_AARCH64, WAITREASON_RUNNING, -1, NULL, -1, "[running]"},
};

START_TEST(test_fixtures)
{
	struct wr_fixture f;
	struct waitreason w;

	load_fixture(cases[_i].dir, &f);
	ck_assert_int_eq(waitreason_classify(cases[_i].e_machine, f.state, f.syscall, f.wchan,
					     fd_from_lines, f.fds, &w),
			 0);
	ck_assert_int_eq(w.kind, cases[_i].kind);
	ck_assert_int_eq(w.nr, cases[_i].nr);
	if (cases[_i].syscall)
		ck_assert_str_eq(w.syscall, cases[_i].syscall);
	else
		ck_assert_ptr_null(w.syscall);
	ck_assert_int_eq(w.fd, cases[_i].fd);
	ck_assert_str_eq(w.frame, cases[_i].frame);
	release_fixture(&f);
}
END_TEST

START_TEST(test_parse_real)
{
	struct waitreason_syscall sc;
	struct wr_fixture f;

	/* 202 0x55e3785d30c0 0x80 0x2 0x0 0x0 0x0 0x7f1fc3ffee98 0x7f1fc8c2812b */
	load_fixture("x86_64-futex", &f);
	ck_assert_int_eq(waitreason_syscall_parse(f.syscall, &sc), 0);
	ck_assert_int_eq(sc.what, WAITREASON_SC_SYSCALL);
	ck_assert_int_eq(sc.nr, 202);
	ck_assert_uint_eq(sc.args[0], 0x55e3785d30c0);
	ck_assert_uint_eq(sc.args[1], 0x80); /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
	ck_assert_uint_eq(sc.args[2], 2);
	ck_assert_uint_eq(sc.sp, 0x7f1fc3ffee98);
	ck_assert_uint_eq(sc.pc, 0x7f1fc8c2812b);
	release_fixture(&f);

	load_fixture("aarch64-pagefault", &f);
	ck_assert_int_eq(waitreason_syscall_parse(f.syscall, &sc), 0);
	ck_assert_int_eq(sc.what, WAITREASON_SC_NONE);
	ck_assert_int_eq(sc.nr, -1);
	ck_assert_uint_eq(sc.sp, 0x7fd2a1b0c0);
	ck_assert_uint_eq(sc.pc, 0x7b2f8c41a4);
	release_fixture(&f);

	ck_assert_int_eq(waitreason_syscall_parse("running", &sc), 0);
	ck_assert_int_eq(sc.what, WAITREASON_SC_RUNNING);
}
END_TEST

/* A sleep that a ptrace stop broke off goes on in restart_syscall: the text captured on this
 * machine (sleep 100, stopped and continued) before and after, same SP and PC */
START_TEST(test_unrestart)
{
	static const char before[] = "230 0x0 0x0 0x7ffd39068650 0x7ffd39068690 0x0 0x0 "
				     "0x7ffd39068638 0x7fc725609503\n";
	char text[128] = "219 0x0 0x0 0x7ffd39068650 0x7ffd39068690 0x0 0x0 0x7ffd39068638 "
			 "0x7fc725609503\n";
	char arm[128] = "128 0x0 0x0 0x7fe0 0x0 0x0 0x0 0x7fe0 0x4a0";
	char small[sizeof("219 0x0 0x0 0x0 0x0 0x0 0x0 0x10 0x20")] =
	    "219 0x0 0x0 0x0 0x0 0x0 0x0 0x10 0x20";
	struct waitreason w;

	ck_assert(waitreason_is_restart(EM_X86_64, 219));
	ck_assert(waitreason_is_restart(EM_AARCH64, 128));
	ck_assert(waitreason_is_restart(EM_386, 0));
	ck_assert(!waitreason_is_restart(EM_X86_64, 230));
	ck_assert(!waitreason_is_restart(EM_X86_64, -1));
	/* another place: left alone */
	ck_assert_int_eq(waitreason_unrestart(EM_X86_64, text, sizeof(text), 230, 0x7ffd39068638,
					      0x7fc725609504),
			 0);
	ck_assert_int_eq(waitreason_unrestart(EM_X86_64, text, sizeof(text), 230, 0x7ffd39068630,
					      0x7fc725609503),
			 0);
	ck_assert_int_eq(waitreason_unrestart(EM_X86_64, text, sizeof(text), 230, 0x7ffd39068638,
					      0x7fc725609503),
			 1);
	ck_assert_str_eq(text, before);
	/* not restart_syscall (any more): left alone */
	ck_assert_int_eq(
	    waitreason_unrestart(EM_X86_64, text, sizeof(text), 35, 0x7ffd39068638, 0x7fc725609503),
	    0);
	ck_assert_int_eq(waitreason_classify(EM_X86_64, 'S', text, NULL, NULL, NULL, &w), 0);
	ck_assert_str_eq(w.frame, "[sleep clock_nanosleep]");
	/* a shorter number on aarch64 (clock_nanosleep is 115) */
	ck_assert_int_eq(waitreason_unrestart(EM_AARCH64, arm, sizeof(arm), 115, 0x7fe0, 0x4a0), 1);
	ck_assert_str_eq(arm, "115 0x0 0x0 0x7fe0 0x0 0x0 0x0 0x7fe0 0x4a0");
	/* no room for a longer number: left alone */
	ck_assert_int_eq(waitreason_unrestart(EM_X86_64, small, sizeof(small), 1000, 0x10, 0x20),
			 0);
	ck_assert_str_eq(small, "219 0x0 0x0 0x0 0x0 0x0 0x0 0x10 0x20");
	ck_assert_int_eq(waitreason_unrestart(EM_X86_64, small, sizeof(small), 35, 0x10, 0x20), 1);
	ck_assert_str_eq(small, "35 0x0 0x0 0x0 0x0 0x0 0x0 0x10 0x20");
}
END_TEST

START_TEST(test_parse_malformed)
{
	static const char *const bad[] = {
	    "",
	    "\n",
	    "running\n\n",
	    "runningx",
	    "202",
	    "202 0x1 0x2 0x3 0x4 0x5 0x6 0x7",	       /* one short */
	    "202 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9", /* one too many */
	    "202 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 ",
	    "202 1 0x2 0x3 0x4 0x5 0x6 0x7 0x8", /* no 0x */
	    "202 0x 0x2 0x3 0x4 0x5 0x6 0x7 0x8",
	    "202 0x12345678901234567 0x2 0x3 0x4 0x5 0x6 0x7 0x8", /* 17 hex digits */
	    "202  0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8",
	    "1234567 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8",
	    "-2 0x1 0x2",
	    "-1 0x1",
	    "-1 0x1 0x2 0x3",
	    "-1",
	    "x 0x1 0x2",
	    "202 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0xg",
	};
	struct waitreason_syscall sc;
	struct waitreason w;
	char *longline;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_msg(waitreason_syscall_parse(bad[i], &sc) == -EINVAL, "accepted \"%s\"",
			      bad[i]);
		/* the classifier falls back to the state letter */
		ck_assert_int_eq(
		    waitreason_classify(EM_X86_64, 'S', bad[i], "do_wait", NULL, NULL, &w),
		    -EINVAL);
		ck_assert_int_eq(w.kind, WAITREASON_OTHER);
		ck_assert_str_eq(w.frame, "[wait other: do_wait]");
	}
	longline = xmalloc(100000);
	memset(longline, '7', 99999);
	longline[99999] = '\0';
	ck_assert_int_eq(waitreason_syscall_parse(longline, &sc), -EINVAL);
	free(longline);
}
END_TEST

START_TEST(test_state_fallback)
{
	struct waitreason w;

	ck_assert_int_eq(waitreason_classify(EM_X86_64, 'R', NULL, NULL, NULL, NULL, &w), 0);
	ck_assert_int_eq(w.kind, WAITREASON_RUNNING);
	ck_assert_int_eq(waitreason_classify(EM_X86_64, 'D', NULL, "0", NULL, NULL, &w), 0);
	ck_assert_int_eq(w.kind, WAITREASON_PAGEFAULT);
	ck_assert_str_eq(w.frame, "[pagefault]");
	ck_assert_int_eq(
	    waitreason_classify(EM_X86_64, 't', "-1 0x10 0x20\n", "0\n", NULL, NULL, &w), 0);
	ck_assert_int_eq(w.kind, WAITREASON_STOPPED);
	ck_assert_uint_eq(w.pc, 0x20);
	ck_assert_int_eq(
	    waitreason_classify(EM_X86_64, 'S', "-1 0x10 0x20\n", NULL, NULL, NULL, &w), 0);
	ck_assert_str_eq(w.frame, "[wait other: state S]");
	ck_assert_int_eq(waitreason_classify(EM_X86_64, 0, NULL, NULL, NULL, NULL, &w), 0);
	ck_assert_int_eq(w.kind, WAITREASON_UNKNOWN);
	ck_assert_str_eq(w.frame, "[wait unknown]");
}
END_TEST

START_TEST(test_fd_edge_cases)
{
	struct waitreason w;

	/* read with the resolver failing: the fd number stands in for the path */
	ck_assert_int_eq(waitreason_classify(EM_X86_64, 'S',
					     "0 0x5 0x7f00 0x1 0x0 0x0 0x0 0x7ffd0 0x7f10\n", NULL,
					     fd_from_lines, "", &w),
			 0);
	ck_assert_str_eq(w.frame, "[io read fd 5]");
	ck_assert_int_eq(w.fd, 5);
	ck_assert_str_eq(w.path, "");
	/* an fd register with garbage upper bits is still fd 5; a negative one is no fd */
	ck_assert_int_eq(waitreason_classify(EM_X86_64, 'S',
					     "0 0xdead00000005 0x7f00 0x1 0x0 0x0 0x0 0x1 0x2\n",
					     NULL, NULL, NULL, &w),
			 0);
	ck_assert_int_eq(w.fd, 5);
	ck_assert_int_eq(
	    waitreason_classify(EM_X86_64, 'S',
				"0 0xffffffffffffff9c 0x7f00 0x1 0x0 0x0 0x0 0x1 0x2\n", NULL, NULL,
				NULL, &w),
	    0);
	ck_assert_int_eq(w.fd, -1);
	ck_assert_str_eq(w.frame, "[io read]");
	/* binder by its ioctl command when the fd cannot be resolved */
	ck_assert_int_eq(waitreason_classify(EM_AARCH64, 'S',
					     "29 0x7 0xc0306201 0x7fd2a1b2d8 0x0 0x0 0x0 0x1 0x2\n",
					     NULL, NULL, NULL, &w),
			 0);
	ck_assert_int_eq(w.kind, WAITREASON_BINDER);
	/* ... but a resolved non-binder path wins over the command number */
	ck_assert_int_eq(waitreason_classify(EM_AARCH64, 'S',
					     "29 0x7 0xc0306201 0x7fd2a1b2d8 0x0 0x0 0x0 0x1 0x2\n",
					     NULL, fd_from_lines, "7 /dev/other", &w),
			 0);
	ck_assert_int_eq(w.kind, WAITREASON_OTHER);
	/* an overlong path is truncated, never overflows */
	{
		char *fds = xmalloc(2000);

		memset(fds, 'p', 1999);
		fds[0] = '3';
		fds[1] = ' ';
		fds[1999] = '\0';
		ck_assert_int_eq(waitreason_classify(EM_X86_64, 'S',
						     "0 0x3 0x0 0x1 0x0 0x0 0x0 0x1 0x2\n", NULL,
						     fd_from_lines, fds, &w),
				 0);
		ck_assert_uint_eq(strlen(w.path), WAITREASON_PATH_MAX - 1);
		ck_assert_int_eq(w.frame[strlen(w.frame) - 1], ']');
		free(fds);
	}
	/* unknown number and unknown arch */
	ck_assert_int_eq(waitreason_classify(EM_X86_64, 'S',
					     "9999 0x0 0x0 0x0 0x0 0x0 0x0 0x1 0x2\n", NULL, NULL,
					     NULL, &w),
			 0);
	ck_assert_str_eq(w.frame, "[wait other: syscall_9999]");
	ck_assert_ptr_null(w.syscall);
	ck_assert_int_eq(waitreason_classify(EM_RISCV, 'S', "0 0x3 0x0 0x1 0x0 0x0 0x0 0x1 0x2\n",
					     NULL, NULL, NULL, &w),
			 0);
	ck_assert_str_eq(w.frame, "[wait other: syscall_0]");
}
END_TEST

START_TEST(test_tables)
{
	/* spot checks against the kernel's tables, both directions differ per arch */
	ck_assert_str_eq(waitreason_syscall_name(EM_X86_64, 0), "read");
	ck_assert_str_eq(waitreason_syscall_name(EM_X86_64, 7), "poll");
	ck_assert_str_eq(waitreason_syscall_name(EM_X86_64, 35), "nanosleep");
	ck_assert_str_eq(waitreason_syscall_name(EM_X86_64, 61), "wait4");
	ck_assert_str_eq(waitreason_syscall_name(EM_X86_64, 281), "epoll_pwait");
	ck_assert_str_eq(waitreason_syscall_name(EM_X86_64, 441), "epoll_pwait2");
	ck_assert_str_eq(waitreason_syscall_name(EM_X86_64, 455), "futex_wait");
	ck_assert_str_eq(waitreason_syscall_name(EM_AARCH64, 56), "openat");
	ck_assert_str_eq(waitreason_syscall_name(EM_AARCH64, 64), "write");
	ck_assert_str_eq(waitreason_syscall_name(EM_AARCH64, 67), "pread64");
	ck_assert_str_eq(waitreason_syscall_name(EM_AARCH64, 82), "fsync");
	ck_assert_str_eq(waitreason_syscall_name(EM_AARCH64, 115), "clock_nanosleep");
	ck_assert_str_eq(waitreason_syscall_name(EM_AARCH64, 449), "futex_waitv");
	/* aarch64 has no poll/select/epoll_wait: holes are NULL */
	ck_assert_ptr_null(waitreason_syscall_name(EM_AARCH64, 244));
	ck_assert_ptr_null(waitreason_syscall_name(EM_AARCH64, -1));
	ck_assert_ptr_null(waitreason_syscall_name(EM_AARCH64, 100000));
	ck_assert_ptr_null(waitreason_syscall_name(EM_RISCV, 0));
	/* i386: a 32-bit task's numbers (arch/x86/entry/syscalls/syscall_32.tbl) */
	{
		static const struct {
			long nr;
			const char *name;
		} i386[] = {
		    {3, "read"},
		    {4, "write"},
		    {5, "open"},
		    {6, "close"},
		    {7, "waitpid"},
		    {29, "pause"},
		    {54, "ioctl"},
		    {82, "select"},
		    {114, "wait4"},
		    {117, "ipc"},
		    {118, "fsync"},
		    {142, "_newselect"},
		    {145, "readv"},
		    {146, "writev"},
		    {148, "fdatasync"},
		    {162, "nanosleep"},
		    {168, "poll"},
		    {177, "rt_sigtimedwait"},
		    {179, "rt_sigsuspend"},
		    {180, "pread64"},
		    {181, "pwrite64"},
		    {240, "futex"},
		    {256, "epoll_wait"},
		    {267, "clock_nanosleep"},
		    {284, "waitid"},
		    {308, "pselect6"},
		    {309, "ppoll"},
		    {319, "epoll_pwait"},
		    {333, "preadv"},
		    {334, "pwritev"},
		    {362, "connect"},
		    {364, "accept4"},
		    {369, "sendto"},
		    {370, "sendmsg"},
		    {371, "recvfrom"},
		    {372, "recvmsg"},
		    {407, "clock_nanosleep_time64"},
		    {413, "pselect6_time64"},
		    {414, "ppoll_time64"},
		    {421, "rt_sigtimedwait_time64"},
		    {422, "futex_time64"},
		    {441, "epoll_pwait2"},
		    {447, "memfd_secret"},
		    {449, "futex_waitv"},
		};

		for (size_t i = 0; i < sizeof(i386) / sizeof(i386[0]); i++)
			ck_assert_str_eq(waitreason_syscall_name(EM_386, i386[i].nr), i386[i].name);
		/* 222 and 223 are holes of the i386 table; 453 is x86_64's only */
		ck_assert_ptr_null(waitreason_syscall_name(EM_386, 222));
		ck_assert_ptr_null(waitreason_syscall_name(EM_386, 453));
	}
	/* i386 wait frames: the numbers name the calls, the time64 twins classify alike */
	{
		static const struct {
			const char *line, *frame;
		} w386[] = {
		    {"240 0xf7d2a0c4 0x80 0x2 0x0 0x0 0x0 0xffd0bf3c 0xf7f35e49", "[lock futex]"},
		    {"422 0xf7d2a0c4 0x80 0x2 0x0 0x0 0x0 0xffd0bf3c 0xf7f35e49",
		     "[lock futex_time64]"},
		    {"407 0x0 0x0 0xffd0bf40 0xffd0bf40 0x0 0x0 0xffd0bf3c 0xf7f35e49",
		     "[sleep clock_nanosleep_time64]"},
		    {"142 0x4 0xffd0bf40 0x0 0x0 0x0 0x0 0xffd0bf3c 0xf7f35e49",
		     "[poll _newselect]"},
		    {"3 0x5 0xffd0bf40 0x100 0x0 0x0 0x0 0xffd0bf3c 0xf7f35e49", "[io read fd 5]"},
		};

		for (size_t i = 0; i < sizeof(w386) / sizeof(w386[0]); i++) {
			struct waitreason w;

			ck_assert_int_eq(
			    waitreason_classify(EM_386, 'S', w386[i].line, NULL, NULL, NULL, &w),
			    0);
			ck_assert_str_eq(w.frame, w386[i].frame);
		}
	}
	ck_assert_str_eq(waitreason_kind_name(WAITREASON_BINDER), "binder");
	ck_assert_str_eq(waitreason_kind_name((enum waitreason_kind)99), "unknown");
}
END_TEST

START_TEST(test_garbage)
{
	unsigned int seed = 4242;
	int round;

	for (round = 0; round < 2000; round++) {
		static const char alphabet[] = "0123456789abcdefx -\nrunig";
		char buf[96];
		size_t len = (size_t)rand_r(&seed) % (sizeof(buf) - 1), i;
		struct waitreason w;
		int ret;

		for (i = 0; i < len; i++)
			buf[i] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		buf[len] = '\0';
		ret = waitreason_classify(round & 1 ? EM_X86_64 : EM_AARCH64, "RSDtZ"[round % 5],
					  buf, buf, fd_from_lines, buf, &w);
		ck_assert(ret == 0 || ret == -EINVAL);
		ck_assert_int_eq(w.frame[0], '[');
		ck_assert_int_eq(w.frame[strlen(w.frame) - 1], ']');
	}
}
END_TEST

Suite *waitreason_suite(void)
{
	Suite *s = suite_create("waitreason");
	TCase *tc = tcase_create("classify");

	tcase_add_loop_test(tc, test_fixtures, 0, ARRAY_SIZE(cases));
	tcase_add_test(tc, test_parse_real);
	tcase_add_test(tc, test_state_fallback);
	tcase_add_test(tc, test_fd_edge_cases);
	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_unrestart);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_test(tc, test_parse_malformed);
	tcase_add_test(tc, test_garbage);
	suite_add_tcase(s, tc);
	return s;
}
