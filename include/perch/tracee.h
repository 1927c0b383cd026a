/* The attached threads of one process: seize, interrupt, resume, detach, and the wait-event
 * state machine. The only module that attaches or detaches. Signal-delivery-stops are
 * restarted at once with their signal, group-stops are held with PTRACE_LISTEN so job control
 * behaves as without perch, new threads are followed (PTRACE_O_TRACECLONE) and exec is
 * reported (PTRACE_O_TRACEEXEC). PTRACE_O_EXITKILL is never set: if perch dies the kernel
 * detaches and the target runs on. */
#ifndef PERCH_TRACEE_H
#define PERCH_TRACEE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum tracee_thread_state {
	TRACEE_RUNNING,       /* not in a stop of ours */
	TRACEE_INTERRUPTING,  /* PTRACE_INTERRUPT sent, stop not reported yet */
	TRACEE_STOPPED,       /* in our interrupt-stop: the caller samples, then tracee_resume() */
	TRACEE_GROUP_STOPPED, /* in group-stop (SIGSTOP & co), held with PTRACE_LISTEN */
};

struct tracee_thread {
	pid_t tid;
	enum tracee_thread_state state;
	int detaching;          /* tracee_detach_all() is waiting for its stop */
	int new_stop_pending;   /* auto-attached: its initial PTRACE_EVENT_STOP is still to come */
	uint64_t interrupt_ns;  /* CLOCK_MONOTONIC when PTRACE_INTERRUPT was sent */
	void *user;             /* the caller's per-thread data */
};

struct tracee_stats {
	uint64_t signals;       /* signal-delivery-stops restarted with their signal */
	uint64_t group_stops;
	uint64_t threads_seen;
	uint64_t thread_races;  /* ESRCH on a thread that exited under us */
	uint64_t execs;
};

struct tracee {
	pid_t pid;
	int launched;          /* perch started it (tracee_launch) */
	int alive;             /* 0 once the whole process is gone */
	int exit_status;       /* wait(2) status of the process when !alive */
	struct tracee_thread **threads; /* sorted by tid */
	size_t nr_threads, alloc_threads;
	struct tracee_stats stats;
	/* called for every thread struct before it is freed (e.g. to free th->user) */
	void (*on_free)(struct tracee_thread *th);
};

enum tracee_event_kind {
	TRACEE_EV_STOPPED = 1, /* @thread, which we interrupted, is stopped */
	TRACEE_EV_THREAD_NEW,  /* @thread appeared (it is running) */
	TRACEE_EV_THREAD_GONE, /* @thread exited; it is freed at the next tracee call */
	TRACEE_EV_EXEC,        /* the process called execve: maps and threads changed */
	TRACEE_EV_EXIT,        /* the whole process is gone: tracee->exit_status */
};

struct tracee_event {
	enum tracee_event_kind kind;
	struct tracee_thread *thread;
};

/* Seize every thread of @pid (re-scanning /proc/PID/task until no new thread shows up).
 * On failure nothing stays attached and a clear message was printed. 0 or -errno:
 * -ESRCH no such process, -EPERM not permitted, -EBUSY already traced, -EINVAL zombie. */
int tracee_attach(struct tracee *t, pid_t pid);
/* Fork and exec @argv traced from its first instruction; stdio is inherited.
 * 0 or -errno (message printed; -ENOENT etc. when the program cannot be run). */
int tracee_launch(struct tracee *t, char *const argv[]);

/* Send PTRACE_INTERRUPT to a running thread. 0, -ESRCH (gone), -EINVAL (not running). */
int tracee_interrupt(struct tracee *t, struct tracee_thread *th, uint64_t now_ns);
/* Restart a thread that is in our interrupt-stop. 0 or -errno. */
int tracee_resume(struct tracee *t, struct tracee_thread *th);

/* Take the next event without blocking: 1 with @ev filled, 0 when there is none now,
 * -errno on error. Stops that need no caller action are handled inside. */
int tracee_poll(struct tracee *t, struct tracee_event *ev);

/* Detach every thread, leaving each as it would be without perch (running, or stopped if the
 * process is group-stopped; pending signals delivered). Waits at most @timeout_ms for threads
 * to reach a stop. Returns the number of threads that could not be detached cleanly. */
int tracee_detach_all(struct tracee *t, int timeout_ms);
/* For launched targets after detach: wait for the program to exit; its wait status. */
int tracee_wait_exit(struct tracee *t);

struct tracee_thread *tracee_find(const struct tracee *t, pid_t tid);
void tracee_release(struct tracee *t);

uint64_t tracee_now_ns(void);

#endif
