/* Wait reasons from /proc/PID/task/TID/{syscall,wchan} + the state letter: parse the syscall
 * line, name the call with a per-arch table (data, keyed by e_machine), classify, make a frame. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/base/textscan.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "perch/proc/waitreason.h"

/* Longest syscall line: 9 numbers of at most 18 characters, with margin. */
#define WAITREASON_LINE_MAX 512

/* How each interesting call waits, and which argument is its fd (-1: none). Calls not listed
 * are WAITREASON_OTHER without an fd. */
static const struct sc_class {
	const char *name;
	uint8_t kind;
	int8_t fd_arg;
} sc_classes[] = {
    {"futex", WAITREASON_LOCK, -1},
    {"futex_wait", WAITREASON_LOCK, -1},
    {"futex_waitv", WAITREASON_LOCK, -1},
    {"futex_time64", WAITREASON_LOCK, -1}, /* 32-bit targets: the 64-bit time_t variants */
    {"flock", WAITREASON_LOCK, 0},
    {"read", WAITREASON_IO, 0},
    {"write", WAITREASON_IO, 0},
    {"pread64", WAITREASON_IO, 0},
    {"pwrite64", WAITREASON_IO, 0},
    {"readv", WAITREASON_IO, 0},
    {"writev", WAITREASON_IO, 0},
    {"preadv", WAITREASON_IO, 0},
    {"pwritev", WAITREASON_IO, 0},
    {"preadv2", WAITREASON_IO, 0},
    {"pwritev2", WAITREASON_IO, 0},
    {"fsync", WAITREASON_IO, 0},
    {"fdatasync", WAITREASON_IO, 0},
    {"sync_file_range", WAITREASON_IO, 0},
    {"syncfs", WAITREASON_IO, 0},
    {"sync", WAITREASON_IO, -1},
    {"msync", WAITREASON_IO, -1},
    {"sendfile", WAITREASON_IO, 1}, /* in_fd: the file being read */
    {"splice", WAITREASON_IO, 0},
    {"tee", WAITREASON_IO, 0},
    {"vmsplice", WAITREASON_IO, 0},
    {"copy_file_range", WAITREASON_IO, 0},
    {"recvfrom", WAITREASON_IO, 0},
    {"sendto", WAITREASON_IO, 0},
    {"recvmsg", WAITREASON_IO, 0},
    {"sendmsg", WAITREASON_IO, 0},
    {"recvmmsg", WAITREASON_IO, 0},
    {"sendmmsg", WAITREASON_IO, 0},
    {"accept", WAITREASON_IO, 0},
    {"accept4", WAITREASON_IO, 0},
    {"connect", WAITREASON_IO, 0},
    {"io_getevents", WAITREASON_IO, -1},
    {"io_pgetevents", WAITREASON_IO, -1},
    {"io_pgetevents_time64", WAITREASON_IO, -1},
    {"recvmmsg_time64", WAITREASON_IO, 0},
    {"io_uring_enter", WAITREASON_IO, 0},
    {"nanosleep", WAITREASON_SLEEP, -1},
    {"clock_nanosleep", WAITREASON_SLEEP, -1},
    {"clock_nanosleep_time64", WAITREASON_SLEEP, -1},
    {"poll", WAITREASON_POLL, -1},
    {"ppoll", WAITREASON_POLL, -1},
    {"select", WAITREASON_POLL, -1},
    {"_newselect", WAITREASON_POLL, -1}, /* i386's select */
    {"pselect6", WAITREASON_POLL, -1},
    {"pselect6_time64", WAITREASON_POLL, -1},
    {"ppoll_time64", WAITREASON_POLL, -1},
    {"epoll_wait", WAITREASON_POLL, 0},
    {"epoll_pwait", WAITREASON_POLL, 0},
    {"epoll_pwait2", WAITREASON_POLL, 0},
    {"ioctl", WAITREASON_OTHER, 0}, /* BINDER when the fd is a binder device */
    {"fcntl", WAITREASON_OTHER, 0},
    {"getdents64", WAITREASON_OTHER, 0},
    {"openat", WAITREASON_OTHER, -1},
};

/* BINDER_WRITE_READ = _IOWR('b', 1, struct binder_write_read) with 64-bit binder_size_t: the
 * ioctl binder threads block in. Used only when the fd cannot be resolved ('b' is not
 * reserved to binder, so a resolved non-binder path wins). */
#define WAITREASON_BINDER_WRITE_READ 0xc0306201u

static const char *const kind_names[] = {
    [WAITREASON_UNKNOWN] = "unknown", [WAITREASON_RUNNING] = "running",
    [WAITREASON_LOCK] = "lock",	      [WAITREASON_IO] = "io",
    [WAITREASON_SLEEP] = "sleep",     [WAITREASON_POLL] = "poll",
    [WAITREASON_BINDER] = "binder",   [WAITREASON_PAGEFAULT] = "pagefault",
    [WAITREASON_STOPPED] = "stopped", [WAITREASON_OTHER] = "other",
};

const char *waitreason_kind_name(enum waitreason_kind kind)
{
	return (unsigned int)kind < ARRAY_SIZE(kind_names) ? kind_names[kind] : "unknown";
}

const char *waitreason_syscall_name(unsigned int e_machine, long nr)
{
	const struct perch_arch *a = perch_arch_by_machine(e_machine);

	if (!a || !a->syscalls || nr < 0 || (size_t)nr >= a->syscalls->nr)
		return NULL;
	return a->syscalls->names[nr];
}

int waitreason_is_restart(unsigned int e_machine, long nr)
{
	const char *name = waitreason_syscall_name(e_machine, nr);

	return name && !strcmp(name, "restart_syscall");
}

int waitreason_unrestart(unsigned int e_machine, char *text, size_t len, long nr, uint64_t sp,
			 uint64_t pc)
{
	struct waitreason_syscall sc;
	char num[24];
	size_t digits, n, rest;

	if (nr < 0 || waitreason_syscall_parse(text, &sc) < 0 || sc.what != WAITREASON_SC_SYSCALL ||
	    !waitreason_is_restart(e_machine, sc.nr) || sc.sp != sp || sc.pc != pc)
		return 0;
	digits = strcspn(text, " ");
	n = (size_t)snprintf(num, sizeof(num), "%ld", nr);
	rest = strlen(text + digits);
	if (n + rest + 1 > len)
		return 0;
	memmove(text + n, text + digits, rest + 1);
	memcpy(text, num, n);
	return 1;
}

long waitreason_site_call(unsigned int e_machine, const uint8_t *code, size_t len)
{
	const struct perch_arch *a = perch_arch_by_machine(e_machine);

	return a && a->syscall_at ? a->syscall_at(code, len) : -1;
}

/* The PERCH_SYSCALL_SITE_BYTES before @pc in process @pid (its memory file: perch traces it, or
 * may read it as its owner). 0 or -errno. */
static int read_site(pid_t pid, uint64_t pc, uint8_t *code)
{
	char path[64];
	ssize_t n;
	int fd;

	if (pc < PERCH_SYSCALL_SITE_BYTES)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, code, PERCH_SYSCALL_SITE_BYTES, (off_t)(pc - PERCH_SYSCALL_SITE_BYTES));
	close(fd);
	return n == PERCH_SYSCALL_SITE_BYTES ? 0 : -EIO;
}

long waitreason_restarted_call(unsigned int e_machine, pid_t pid, const char *text, uint64_t *sp,
			       uint64_t *pc)
{
	struct waitreason_syscall sc;
	uint8_t code[PERCH_SYSCALL_SITE_BYTES];
	long nr;

	if (!text || waitreason_syscall_parse(text, &sc) < 0 || sc.what != WAITREASON_SC_SYSCALL ||
	    !waitreason_is_restart(e_machine, sc.nr) || read_site(pid, sc.pc, code) < 0)
		return -1;
	nr = waitreason_site_call(e_machine, code, sizeof(code));
	if (nr < 0 || waitreason_is_restart(e_machine, nr) ||
	    !waitreason_syscall_name(e_machine, nr))
		return -1;
	*sp = sc.sp;
	*pc = sc.pc;
	return nr;
}

/* " 0x" and 1..16 hex digits: one argument, sp or pc. 0 or -EINVAL. */
static int parse_arg(const char **s, const char *end, uint64_t *out)
{
	if (textscan_expect(s, end, " 0x") || textscan_x64(s, end, 16, out))
		return -EINVAL;
	return 0;
}

int waitreason_syscall_parse(const char *text, struct waitreason_syscall *out)
{
	const char *p = text, *end;
	uint64_t nr;
	int i;

	memset(out, 0, sizeof(*out));
	out->nr = -1;
	end = text + strnlen(text, WAITREASON_LINE_MAX + 1);
	if (end - text > WAITREASON_LINE_MAX)
		return -EINVAL;
	/* the kernel ends the line with '\n'; tolerate its absence, nothing else */
	if (end > text && end[-1] == '\n')
		end--;
	if (end - text == 7 && !memcmp(text, "running", 7)) {
		out->what = WAITREASON_SC_RUNNING;
		return 0;
	}
	if (!textscan_expect(&p, end, "-1")) {
		if (parse_arg(&p, end, &out->sp) || parse_arg(&p, end, &out->pc) || p != end)
			return -EINVAL;
		out->what = WAITREASON_SC_NONE;
		return 0;
	}
	if (textscan_u64(&p, end, &nr) || nr > 999999)
		return -EINVAL; /* no syscall number has seven digits */
	for (i = 0; i < 6; i++)
		if (parse_arg(&p, end, &out->args[i]))
			return -EINVAL;
	if (parse_arg(&p, end, &out->sp) || parse_arg(&p, end, &out->pc) || p != end)
		return -EINVAL;
	out->what = WAITREASON_SC_SYSCALL;
	out->nr = (long)nr;
	return 0;
}

static const struct sc_class *find_class(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(sc_classes); i++)
		if (!strcmp(sc_classes[i].name, name))
			return &sc_classes[i];
	return NULL;
}

static int is_binder_path(const char *path)
{
	return !strncmp(path, "/dev/binder", 11) || !strncmp(path, "/dev/hwbinder", 13) ||
	       !strncmp(path, "/dev/vndbinder", 14) || strstr(path, "/binderfs/");
}

/* wchan text if it names a function ("0" and "" do not). */
static const char *wchan_name(const char *wchan, char *buf, size_t len)
{
	size_t n;

	if (!wchan)
		return NULL;
	n = strcspn(wchan, "\n");
	if (!n || (n == 1 && wchan[0] == '0'))
		return NULL;
	if (n >= len)
		n = len - 1;
	memcpy(buf, wchan, n);
	buf[n] = '\0';
	return buf;
}

/* Outside a syscall (or without syscall text): the state letter and wchan decide. */
static void classify_state(char state, const char *wchan, struct waitreason *out)
{
	char wbuf[64];
	const char *w = wchan_name(wchan, wbuf, sizeof(wbuf));

	switch (state) {
	case 'R':
		out->kind = WAITREASON_RUNNING;
		snprintf(out->frame, sizeof(out->frame), "[running]");
		return;
	case 'D':
		out->kind = WAITREASON_PAGEFAULT;
		snprintf(out->frame, sizeof(out->frame), w ? "[pagefault %s]" : "[pagefault]", w);
		return;
	case 'T':
	case 't':
		out->kind = WAITREASON_STOPPED;
		snprintf(out->frame, sizeof(out->frame), "[stopped]");
		return;
	case 0:
		if (!w) {
			out->kind = WAITREASON_UNKNOWN;
			snprintf(out->frame, sizeof(out->frame), "[wait unknown]");
			return;
		}
		/* fall through */
	default:
		out->kind = WAITREASON_OTHER;
		if (w)
			snprintf(out->frame, sizeof(out->frame), "[wait other: %s]", w);
		else
			snprintf(out->frame, sizeof(out->frame), "[wait other: state %c]", state);
	}
}

int waitreason_classify(unsigned int e_machine, char state, const char *syscall_text,
			const char *wchan, waitreason_fd_path_fn fd_path, void *ctx,
			struct waitreason *out)
{
	struct waitreason_syscall sc;
	const struct sc_class *cls;
	char namebuf[32], where[WAITREASON_PATH_MAX + 16];
	const char *name, *verb;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->nr = -1;
	out->fd = -1;
	if (syscall_text) {
		ret = waitreason_syscall_parse(syscall_text, &sc);
		if (!ret) {
			out->sp = sc.sp;
			out->pc = sc.pc;
		}
	}
	if (!syscall_text || ret || sc.what == WAITREASON_SC_NONE) {
		classify_state(state, wchan, out);
		return ret;
	}
	if (sc.what == WAITREASON_SC_RUNNING) {
		out->kind = WAITREASON_RUNNING;
		snprintf(out->frame, sizeof(out->frame), "[running]");
		return 0;
	}

	out->nr = sc.nr;
	out->syscall = waitreason_syscall_name(e_machine, sc.nr);
	name = out->syscall;
	if (!name) {
		snprintf(namebuf, sizeof(namebuf), "syscall_%ld", sc.nr);
		name = namebuf;
	}
	cls = find_class(out->syscall);
	out->kind = cls ? cls->kind : WAITREASON_OTHER;
	if (cls && cls->fd_arg >= 0) {
		int fd = (int)(uint32_t)sc.args[(int)cls->fd_arg]; /* an int in a 64-bit register */

		if (fd >= 0) {
			out->fd = fd;
			if (fd_path && !fd_path(ctx, fd, out->path, sizeof(out->path)))
				out->path[sizeof(out->path) - 1] = '\0';
			else
				out->path[0] = '\0';
		}
	}
	if (cls && !strcmp(cls->name, "ioctl") &&
	    (out->path[0] ? is_binder_path(out->path)
			  : (uint32_t)sc.args[1] == WAITREASON_BINDER_WRITE_READ))
		out->kind = WAITREASON_BINDER;

	where[0] = '\0';
	if (out->path[0])
		snprintf(where, sizeof(where), " %s", out->path);
	else if (out->fd >= 0)
		snprintf(where, sizeof(where), " fd %d", out->fd);

	switch (out->kind) {
	case WAITREASON_LOCK:
		verb = "lock";
		break;
	case WAITREASON_IO:
		verb = "io";
		break;
	case WAITREASON_SLEEP:
		verb = "sleep";
		where[0] = '\0';
		break;
	case WAITREASON_POLL:
		verb = "poll";
		where[0] = '\0'; /* the epoll fd's name says nothing */
		break;
	case WAITREASON_BINDER:
		verb = "binder";
		where[0] = '\0';
		break;
	default:
		verb = "wait other:";
		break;
	}
	snprintf(out->frame, sizeof(out->frame), "[%s %s%s]", verb, name, where);
	return 0;
}

int waitreason_fd_path_proc(void *ctx, int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	if (!len)
		return -EINVAL;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)*(pid_t *)ctx, fd);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int waitreason_read(pid_t pid, pid_t tid, unsigned int e_machine, struct waitreason *out)
{
	struct proc_stat st;
	char path[96], *sc, *wchan;
	uint64_t sp, pc;
	long restarted;
	int ret;

	ret = proc_stat_read(pid, tid, &st);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	sc = proc_read_file(path, NULL);
	restarted = waitreason_restarted_call(e_machine, pid, sc, &sp, &pc);
	if (restarted >= 0) { /* room for the longer number it is replaced with */
		size_t len = strlen(sc) + 24;

		sc = xrealloc(sc, len);
		waitreason_unrestart(e_machine, sc, len, restarted, sp, pc);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)pid, (int)tid);
	wchan = proc_read_file(path, NULL);
	waitreason_classify(e_machine, st.state, sc, wchan, waitreason_fd_path_proc, &pid, out);
	free(sc);
	free(wchan);
	return 0;
}

int waitreason_stop_breaks(unsigned int e_machine, long nr)
{
	static const char *const breaks[] = {
	    "epoll_wait",   "epoll_pwait",	 "epoll_pwait2",	 "semop",
	    "semtimedop",   "semtimedop_time64", "rt_sigtimedwait",	 "rt_sigtimedwait_time64",
	    "io_getevents", "io_pgetevents",	 "io_pgetevents_time64", "io_uring_enter",
	};
	const char *name = waitreason_syscall_name(e_machine, nr);

	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(breaks) / sizeof(breaks[0]); i++)
		if (!strcmp(name, breaks[i]))
			return 1;
	return 0;
}
