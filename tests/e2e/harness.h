/* Helpers for the end-to-end suites: start perch and the targets with pipes, wait for their
 * ready lines, read /proc, parse folded output and `perch dump`/gdb backtraces, and on a failed
 * assertion print the context (perch's stderr, offending lines) and kill every child. */
#ifndef PERCH_E2E_HARNESS_H
#define PERCH_E2E_HARNESS_H

#include <check.h>
#include <stddef.h>
#include <sys/types.h>

#include "perch/base/strbuf.h"

/* Exit codes of perch (eu-stack's policy). */
#define HARNESS_EXIT_OK		   0
#define HARNESS_EXIT_SAMPLE_ERRORS 1
#define HARNESS_EXIT_FATAL	   2
#define HARNESS_EXIT_USAGE	   64

/* A NULL-terminated argv built in place: HARNESS_ARGV("a", "b") */
#define HARNESS_ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Like ck_assert_msg, but prints the context (children's output, harness_context_add() text)
 * and kills the children first: Check runs no teardown after a failure in fork mode. */
#define H_ASSERT(cond, ...)                                                                        \
	do {                                                                                       \
		if (!(cond))                                                                       \
			harness_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                      \
	} while (0)

/* Checked fixture for every e2e TCase: checks PERCH/TARGETS, makes a private temp directory,
 * becomes a child subreaper (so a target orphaned by a killed perch is ours to reap). */
void harness_setup(void);
/* Kill and reap every child still alive, remove the temp directory. Safe to call twice. */
void harness_teardown(void);
/* Tag, timeout and fixture for an e2e TCase. */
void harness_tcase_init(TCase *tc, double timeout);

__attribute__((noreturn, format(printf, 4, 5))) void
harness_fail(const char *file, int line, const char *expr, const char *fmt, ...);
/* Text printed with the context of the next failure (e.g. the folded lines that did not match). */
void harness_context_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void harness_context_reset(void);

/* printf into a string owned by the harness (valid until harness_teardown()). */
const char *harness_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Paths: $PERCH, $TARGETS/<name>, <tempdir>/<name>. Valid until harness_teardown(). */
const char *harness_perch(void);
const char *harness_target(const char *name);
const char *harness_tmpfile(const char *name);
/* Run @cmd with sh, killed after @timeout s: its stdout and stderr (kept like harness_fmt()'s
 * strings, and added to the failure context), its exit code in *@code (128: killed). */
const char *harness_sh(const char *cmd, int *code, double timeout);
/* Is @tool on PATH? When not, says so on stderr ("SKIP: ...") for the check that needs it. */
int harness_have(const char *tool);
const char *harness_tmpdir(void);

/* A child started with pipes on stdin, stdout and stderr. */
struct harness_proc {
	char *label;   /* "perch", "target", ... for the failure context */
	char *cmdline; /* argv joined by spaces, for the failure context */
	pid_t pid;
	int in_fd, out_fd, err_fd; /* -1 once closed */
	struct strbuf out, err;	   /* everything read so far */
	int status;		   /* wait status, valid once reaped */
	int reaped;
};

/* Fork and exec @argv[0] (a path) with pipes; the harness owns the result and kills it in
 * teardown. Fails the test if fork/exec plumbing fails. */
struct harness_proc *harness_spawn(const char *label, const char *const argv[]);
/* Read what the child wrote, for up to @timeout seconds or until something arrives. */
void harness_proc_pump(struct harness_proc *p, double timeout);
/* Wait until the child's stdout holds a line starting with @prefix; returns that line's text
 * after the prefix (inside p->out, valid until the next read), or NULL on timeout or EOF. */
const char *harness_proc_wait_line(struct harness_proc *p, const char *prefix, double timeout);
/* Wait for "ready <pid>" and return the pid (fails the test at @file:@line on timeout). */
pid_t harness_proc_wait_ready_at(struct harness_proc *p, double timeout, const char *file,
				 int lineno);
#define harness_proc_wait_ready(p, timeout)                                                        \
	harness_proc_wait_ready_at((p), (timeout), __FILE__, __LINE__)
/* Wait for the child to exit, collecting its output. 0, or -ETIMEDOUT (child still running). */
int harness_proc_wait(struct harness_proc *p, double timeout);
/* Exit code, 128+signal for a killed child, -1 if not reaped. */
int harness_proc_exit_code(const struct harness_proc *p);
/* Write @s to the child's stdin. */
void harness_proc_write(struct harness_proc *p, const char *s);
/* perch -v prints "perch: sampling ..." as its sampling starts (its first tick follows at
 * once): a test that signals perch or lets the target exit waits for it, so that a slow start
 * (a sanitizer build on a loaded machine) is not a recording without samples. */
void harness_wait_sampling(struct harness_proc *perch);
/* Send @sig to the child (only if it is not reaped yet). */
void harness_proc_kill(struct harness_proc *p, int sig);
/* Also kill @pid in teardown (a grandchild such as perch's `-- PROG` target). */
void harness_track_pid(pid_t pid);

/* Can this kernel run the program @path (e.g. a 32-bit x86 build: kernels may be built or booted
 * without ia32 emulation)? 1 when execve() succeeds (the probe is killed at once), 0 when it
 * fails with ENOEXEC, and a message naming the reason goes to stderr. Called while suites are
 * made, before any fixture: no harness state is used. */
int harness_can_exec(const char *path, const char *suite);
/* The same for the program @name in $TARGETS. */
int harness_can_exec_target(const char *name, const char *suite);

/* Sleep @seconds in the test (not in a target). */
void harness_sleep(double seconds);
double harness_now(void);

/* /proc readers; -1 or -errno when the process is gone. The process tracing @pid (TracerPid
 * names the tracing thread: its thread group), 0 when none. */
int harness_tracer_pid(pid_t pid);
/* State letters of every task of @pid into @states (NUL-terminated); number of tasks. */
int harness_task_states(pid_t pid, char *states, size_t size);
/* utime + stime of the whole process, in clock ticks. */
long long harness_cpu_ticks(pid_t pid);
/* Poll until TracerPid of @pid is non-zero (@traced) or zero (!@traced). 0 or -ETIMEDOUT. */
int harness_wait_traced(pid_t pid, int traced, double timeout);

/* Folded output, one line per stack: "<thread>-<tid>;<root>;...;<leaf> <count>", e.g.
 *   "wA-1235;clone3;start_thread;worker_main;burn_a 812" */
struct harness_folded_line {
	char *thread; /* thread name, without "-<tid>" */
	pid_t tid;
	char **frames; /* root first */
	size_t nr_frames;
	unsigned long count;
};

struct harness_folded {
	struct harness_folded_line *lines;
	size_t nr, alloc;
	unsigned long total; /* sum of the counts of the well-formed lines */
	size_t nr_bad;	     /* lines that did not match the folded format */
	struct strbuf bad;   /* the first few of them, for the failure message */
};

/* Parse @text; malformed lines are counted in nr_bad, never fatal. 0 or -EINVAL (NULL). */
int harness_folded_parse(struct harness_folded *f, const char *text);
/* harness_folded_parse() of a file; -errno when it cannot be read. */
int harness_folded_load(struct harness_folded *f, const char *path);
void harness_folded_release(struct harness_folded *f);

/* The share (percent) of its ticks perch missed, from its summary on stderr @err ("ticks: N
 * (...)  missed ticks: M"); 0 when the summary has no such line. */
double harness_missed_ticks_pct(const char *err);
/* The common structural checks: no malformed line, sorted, unique, at least one line. */
void harness_folded_assert_valid(const struct harness_folded *f, const char *file, int line);
#define H_ASSERT_FOLDED_VALID(f) harness_folded_assert_valid((f), __FILE__, __LINE__)
/* Sum of counts of the lines of thread @name (NULL: every thread) for which @pred holds. */
unsigned long harness_folded_count(const struct harness_folded *f, const char *name,
				   int (*pred)(const struct harness_folded_line *, const void *),
				   const void *arg);
/* Add the lines of thread @name (NULL: all) to the failure context, at most @max of them. */
void harness_folded_context(const struct harness_folded *f, const char *name, size_t max);

/* @frame names function @fn: equal, or followed by '(' (parameters) or " (" (--lines). */
int harness_frame_is(const char *frame, const char *fn);
/* @frame is @fn with --lines' " (FILE:LINE)" suffix, FILE ending in @file, LINE >= 1. */
int harness_frame_in_file(const char *frame, const char *fn, const char *file);
/* Index of the first frame of @l that harness_frame_is(@fn), or -1. */
int harness_line_find(const struct harness_folded_line *l, const char *fn);
/* @l holds @seq[0..n-1] as consecutive frames. */
int harness_line_has_seq(const struct harness_folded_line *l, const char *const *seq, size_t n);
/* Predicates for harness_folded_count(): @arg is a function name. */
int harness_pred_has(const struct harness_folded_line *l, const void *fn);
int harness_pred_any(const struct harness_folded_line *l, const void *unused);

/* After `perch record -o @path` exited: exit code @want_exit, the folded file is valid, and
 * its counts add up to the summary's "samples: N". Loads the file into @f. */
void harness_check_record(struct harness_proc *perch, int want_exit, const char *path,
			  struct harness_folded *f, const char *file, int line);
#define H_CHECK_RECORD(perch, want_exit, path, f)                                                  \
	harness_check_record((perch), (want_exit), (path), (f), __FILE__, __LINE__)

/* perch's end-of-run summary on stderr: "samples: N", "unwound to root: P%". -1 if absent. */
long harness_summary_samples(const char *err);
double harness_summary_unwound(const char *err);

/* One backtrace per thread, from `perch dump` or from gdb's `thread apply all bt`. A frame:
 *   perch: "#1  0x000055d0c3a01234 f3 (chain) at chain_f3.c:12 [inlined]"
 *          "#2  0x00007f90f1c63cff do_futex_wait (libc.so.6) at sem_waitcommon.c:111 (tail call)"
 *   gdb:   "#2  0x0000555e6ca6c527 in f3 (x=1) at tests/targets/chain_f3.c:12"
 *          "#5  0x00007fbb6ce7a8ec in clone3 () from /lib/x86_64-linux-gnu/libc.so.6" */
struct harness_bt_frame {
	char *func;   /* as printed */
	char *module; /* perch: module basename; gdb: basename of "from LIB", or NULL */
	char *file;   /* "at FILE:LINE": FILE, or NULL */
	int line;
	int inlined;  /* perch's "[inlined]" */
	int tailcall; /* perch's "(tail call)" (a frame gdb shows as a TAILCALL_FRAME) */
	uint64_t pc;  /* as printed; 0 when gdb printed none */
};

/* perch: "TID 1234 \"name\" (S)"; gdb: "Thread 3 (Thread 0x7fbb6c56c6c0 (LWP 1236) \"name\"):" */
struct harness_bt_thread {
	pid_t tid;
	char *name;
	char state; /* perch only */
	struct harness_bt_frame *frames;
	size_t nr, alloc;
	/* perch only: its indented lines, "[sleep clock_nanosleep]" (why it waits, above the
	 * frames), "[stopped early: ...]", "(no stack: ...)" (below them) */
	char **notes;
	size_t nr_notes;
};

/* perch: "PID 1234 (comm)" followed by the threads, a blank line between them */
struct harness_bt {
	pid_t pid;
	char *comm;
	struct harness_bt_thread *threads;
	size_t nr, alloc;
	size_t nr_bad;	   /* lines not understood */
	struct strbuf bad; /* the first few of them */
};

int harness_bt_parse_perch(struct harness_bt *bt, const char *text);
int harness_bt_parse_gdb(struct harness_bt *bt, const char *text);
void harness_bt_release(struct harness_bt *bt);
struct harness_bt_thread *harness_bt_find(const struct harness_bt *bt, pid_t tid);
/* The comparison rule of the dump test: strip "@..." suffixes and "(...)" parameters, then
 * repeatedly a leading "__GI_", "__libc_" or '_'. Result in @buf. */
const char *harness_func_normalize(const char *func, char *buf, size_t size);

#endif
