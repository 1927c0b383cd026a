/* A session: one attached target owned by one thread. ptrace requests are per tracer thread,
 * so every ptrace call on the target (attach, dump, record, top, detach) runs on the session
 * thread, and the REPL thread posts jobs to it. Between jobs the session thread restarts the
 * target's signal stops and follows its new threads, so the target runs as it would without
 * perch. The REPL, scripted mode and the session CLI commands (top, threads, maps) use it.
 *
 * Signals: create the session from a thread that has SIGCHLD, SIGINT, SIGTERM and SIGHUP
 * blocked (session_block_signals()); the session thread keeps them blocked and waits for
 * SIGCHLD only, so SIGINT & co. go to the thread that unblocks them (the REPL's). */
#ifndef PERCH_SESSION_H
#define PERCH_SESSION_H

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

#include "perch/base/strbuf.h"
#include "perch/sample/tracee.h"

struct session;

/* A job: runs on the session thread; returns a perch exit code (enum perch_exit). */
typedef int session_job_fn(struct session *s, void *arg);

struct session {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int notify[2]; /* the session writes a byte when a notice is queued (read end is
			* non-blocking, for the REPL's select loop) */

	/* under @lock */
	session_job_fn *job;
	void *job_arg;
	int job_background; /* the caller does not wait for it */
	int job_running;    /* a job (taken) is running */
	int job_ret;
	unsigned long job_seq, done_seq; /* jobs posted / finished */
	int quit;
	int let_go;	       /* the session thread exits after this job, letting the target go */
	struct strbuf notices; /* lines for the user, printed by the REPL between commands */

	/* the target: only the session thread touches @t; @pid/@comm are read by others */
	struct tracee t;
	volatile int attached;
	pid_t pid;
	char comm[64];

	/* set from signal handlers or the REPL thread */
	volatile sig_atomic_t stop_fg; /* stop the foreground job (Ctrl-C) */
	volatile sig_atomic_t stop_bg; /* stop the background job (record stop, quit) */
};

/* Block the signals the session relies on in the calling thread (before session_new()). */
void session_block_signals(sigset_t *old);

/* Start the session thread. NULL with errno set when the thread cannot be created. */
struct session *session_new(void);
/* Stop a background job, detach, end the thread, free. NULL does nothing. */
void session_free(struct session *s);

/* Run @fn on the session thread and wait for it: its result, or -EBUSY (nothing run) when a
 * background job is running. */
int session_call(struct session *s, session_job_fn *fn, void *arg);
/* Start @fn on the session thread and return at once: 0 or -EBUSY. Its result is
 * session_wait()'s. */
int session_start(struct session *s, session_job_fn *fn, void *arg);
/* 1 while a background job runs. */
int session_busy(struct session *s);
/* Wait for the background job to end: its result; -EINTR when *@intr became non-zero first
 * (checked every 50 ms); 0 when none runs. */
int session_wait(struct session *s, const volatile sig_atomic_t *intr);

/* Attach to @pid on the session thread (detaching from the current target first).
 * 0 or -errno (message printed). */
int session_attach(struct session *s, pid_t pid);
/* Detach from the target: 0, or -ENOENT when none is attached. */
int session_detach(struct session *s);

/* Queue a line for the user (printed by session_take_notices()). Any thread. */
void session_notice(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append the queued notices to @out and clear them; the number of bytes moved. */
size_t session_take_notices(struct session *s, struct strbuf *out);

/* For jobs (session thread only): detach if the target is gone, after a job saw its exit. */
void session_target_gone(struct session *s);

#endif
