/* Why is a thread not running? A guess from /proc/PID/task/TID/{syscall,wchan} and the state
 * letter, turned into a pseudo-frame ("[lock futex]") a profile can put on top of a stack.
 * Pure data: syscall numbers come from per-architecture tables keyed by ELF e_machine, and
 * fd -> path resolution goes through a callback (waitreason_fd_path_proc() reads /proc).
 */
#ifndef PERCH_WAITREASON_H
#define PERCH_WAITREASON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum waitreason_kind {
	WAITREASON_UNKNOWN = 0, /* no usable syscall text and nothing in the state letter */
	WAITREASON_RUNNING,	/* "running", or state R outside a syscall */
	WAITREASON_LOCK,	/* futex, futex_wait(v), flock */
	WAITREASON_IO,		/* read/write/pread64/.../fsync/sendfile/splice/recvmsg/... */
	WAITREASON_SLEEP,	/* nanosleep, clock_nanosleep */
	WAITREASON_POLL,	/* poll/ppoll/select/pselect6/epoll_wait/epoll_pwait(2) */
	WAITREASON_BINDER,	/* ioctl on a binder device */
	WAITREASON_PAGEFAULT,	/* state D outside a syscall (a fault waiting for the disk) */
	WAITREASON_STOPPED,	/* state T or t outside a syscall */
	WAITREASON_OTHER,	/* any other syscall (or none): see syscall / frame */
};

/* /proc/PID/task/TID/syscall, the three shapes the kernel writes:
 *   202 0x55e3785d30c0 0x80 0x2 0x0 0x0 0x0 0x7f1fc3ffee98 0x7f1fc8c2812b
 *   nr  arg0           arg1 ... arg5        sp             pc
 *   -1 0x7fd2a1b0c0 0x7b2f8c41a4            blocked, but not in a syscall: sp pc
 *   running                                 on a CPU right now
 */
enum {
	WAITREASON_SC_SYSCALL = 0, /* nr, args, sp, pc valid */
	WAITREASON_SC_NONE,	   /* "-1": sp, pc valid */
	WAITREASON_SC_RUNNING,	   /* "running" */
};

struct waitreason_syscall {
	int what; /* WAITREASON_SC_* */
	long nr;  /* syscall number, -1 unless SYSCALL */
	uint64_t args[6];
	uint64_t sp, pc;
};

/* Parse syscall text (a trailing newline is fine). 0, or -EINVAL for anything else (empty,
 * overlong, missing fields, trailing garbage, numbers that do not fit). */
int waitreason_syscall_parse(const char *text, struct waitreason_syscall *out);

/* Resolve @fd of the classified thread's process to a path ("/data/app/x/base.apk",
 * "pipe:[65245]", "anon_inode:[eventpoll]") into @buf (NUL-terminated, truncated to @len - 1).
 * 0 or -errno; on failure the frame shows "fd N" instead. */
typedef int (*waitreason_fd_path_fn)(void *ctx, int fd, char *buf, size_t len);

#define WAITREASON_PATH_MAX 256

struct waitreason {
	enum waitreason_kind kind;
	long nr;	     /* syscall number, or -1 */
	const char *syscall; /* "read" (static), or NULL outside a syscall / unknown nr */
	int fd;		     /* the fd argument when the call has one, else -1 */
	char path[WAITREASON_PATH_MAX];	      /* @fd resolved, "" when not */
	char frame[WAITREASON_PATH_MAX + 64]; /* "[io read /x/base.apk]", "[lock futex]" ... */
	uint64_t sp, pc;		      /* from the syscall text, 0 when absent */
};

/* Classify one thread. @e_machine: EM_X86_64, EM_AARCH64 or EM_386 (others: "syscall_N");
 * @state: the stat/status state letter (0 if unknown); @syscall_text: the syscall file's
 * text or NULL; @wchan: the wchan file's text, NULL or "0" for none; @fd_path may be NULL.
 * Always fills @out. Returns 0, or -EINVAL when @syscall_text was given but malformed (then
 * only @state and @wchan were used). */
int waitreason_classify(unsigned int e_machine, char state, const char *syscall_text,
			const char *wchan, waitreason_fd_path_fn fd_path, void *ctx,
			struct waitreason *out);

/* Name of syscall @nr on @e_machine ("futex"), or NULL when unknown. */
const char *waitreason_syscall_name(unsigned int e_machine, long nr);
/* Is @nr restart_syscall on @e_machine? A sleep with a timeout (nanosleep, a timed futex
 * wait, poll) that any ptrace stop broke off goes on in it. */
int waitreason_is_restart(unsigned int e_machine, long nr);
/* Put back into syscall text @text (a buffer of @len bytes) the call @nr that a thread
 * blocked at @sp and @pc continues when @text names restart_syscall there. Returns 1 when
 * @text was rewritten, 0 when it was left alone (another call or place, or too long). */
int waitreason_unrestart(unsigned int e_machine, char *text, size_t len, long nr, uint64_t sp,
			 uint64_t pc);
/* The system call a call site makes, from the @len bytes of code that end at its pc
 * (arch.h syscall_at), or -1. */
long waitreason_site_call(unsigned int e_machine, const uint8_t *code, size_t len);
/* When syscall text @text names restart_syscall: the call it restarts, told by the code of the
 * call site (read from process @pid's memory), with *@sp and *@pc set to the site's; else -1.
 * A sleep that an earlier ptrace stop broke off (another tracer, an earlier perch run) goes
 * on as restart_syscall at the very instruction that made the call. */
long waitreason_restarted_call(unsigned int e_machine, pid_t pid, const char *text, uint64_t *sp,
			       uint64_t *pc);
/* Does a ptrace stop make call @nr on @e_machine fail with EINTR in the program, where other
 * blocking calls are restarted by the kernel unseen? Those that return -EINTR themselves when
 * a stop (not a signal handler) breaks them off: epoll_wait and its kin, semop/semtimedop,
 * rt_sigtimedwait, io_getevents and its kin, io_uring_enter (signal(7): "Interruption of
 * system calls and library functions by stop signals"). perch never stops a thread blocked in
 * one of them. */
int waitreason_stop_breaks(unsigned int e_machine, long nr);
/* "running", "lock", "io", "sleep", "poll", "binder", "pagefault", "stopped", "other",
 * "unknown". */
const char *waitreason_kind_name(enum waitreason_kind kind);

/* A waitreason_fd_path_fn reading the link /proc/PID/fd/N; @ctx points to the pid_t. */
int waitreason_fd_path_proc(void *ctx, int fd, char *buf, size_t len);
/* Read /proc/@pid/task/@tid/{stat,syscall,wchan} and classify (restart_syscall named as the
 * call it restarts: waitreason_restarted_call()) (@e_machine is the target's,
 * normally the host's). 0, or -errno when stat cannot be read (thread gone). syscall needs
 * ptrace-read access to the process; unreadable syscall or wchan count as absent. */
int waitreason_read(pid_t pid, pid_t tid, unsigned int e_machine, struct waitreason *out);

#endif
