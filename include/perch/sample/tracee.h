/* The attached threads of one or more processes: seize, interrupt, resume, detach, and the
 * wait-event state machine. The only module that attaches or detaches. Signal-delivery-stops
 * are restarted at once with their signal, group-stops are held with PTRACE_LISTEN so job
 * control behaves as without perch (and a group-stopped thread can still be sampled: an
 * interrupt re-reports its group-stop, and tracee_resume() listens again), new threads are
 * followed (PTRACE_O_TRACECLONE), exec is reported (PTRACE_O_TRACEEXEC), and with
 * TRACEE_FOLLOW the processes the traced ones fork, vfork or clone join the set
 * (PTRACE_O_TRACEFORK/VFORK). PTRACE_O_EXITKILL is never set: if perch dies the kernel
 * detaches and the targets run on.
 *
 * One struct tracee is the whole set: every traced thread of every process is in one table
 * (ptrace reports them all to one waitpid(-1) loop), each pointing to its process. */
#ifndef PERCH_TRACEE_H
#define PERCH_TRACEE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perch_arch;

enum tracee_thread_state {
	TRACEE_RUNNING,	      /* not in a stop of ours */
	TRACEE_INTERRUPTING,  /* PTRACE_INTERRUPT sent, stop not reported yet */
	TRACEE_STOPPED,	      /* in our interrupt-stop: the caller samples, then tracee_resume() */
	TRACEE_GROUP_STOPPED, /* in group-stop (SIGSTOP & co), held with PTRACE_LISTEN */
};

/* One traced process. Kept (with alive 0) until tracee_release() once it is gone. */
struct tracee_proc {
	pid_t pid;
	pid_t parent; /* the traced process it was forked from; 0: attached/launched */
	const struct perch_arch *arch; /* of its program, updated at exec; NULL: perch cannot
					* profile it (it is being detached) */
	int launched;		       /* perch started it (tracee_add_program) */
	int alive;		       /* traced and running: 0 once gone or detached */
	int exited;		       /* its exit was seen: @exit_status is valid */
	int exit_status;	       /* wait(2) status of its main thread (-1: the main thread
					* had exited before perch attached, so it is unknown) */
	int detaching;		       /* being detached (not followed, or unsupported program) */
	int leader_gone;	       /* its main thread had exited (zombie) when perch attached */
	size_t nr_threads;	       /* its threads in tracee.threads */
	uint64_t execs;
	void *user; /* the caller's per-process data */
};

struct tracee_thread {
	pid_t tid;
	struct tracee_proc *proc;
	enum tracee_thread_state state;
	int detaching;	       /* tracee_detach_all() is waiting for its stop */
	int new_stop_pending;  /* auto-attached: its initial PTRACE_EVENT_STOP is still to come */
	int in_group_stop;     /* its process is group-stopped (SIGSTOP & co): a stop of ours is
				* then the group-stop re-reported, and tracee_resume() listens */
	int exit_stop;	       /* TRACEE_STOPPED at its exit (TRACEE_EV_PROC_EXITING) */
	int persist;	       /* tracee_interrupt_persist(): ask again when a stop other than
				* ours cancels the interrupt, until ours is reported */
	uint64_t interrupt_ns; /* CLOCK_MONOTONIC when PTRACE_INTERRUPT was sent */
	void *user;	       /* the caller's per-thread data */
	/* the blocking call a stop of ours last broke off (sampler_snapshot()): the thread
	 * goes on in restart_syscall at this SP and PC, which /proc names instead of it.
	 * 1 + its number, 0 none */
	uint32_t broken_call;
	uint64_t broken_sp, broken_pc;
};

struct tracee_stats {
	uint64_t signals;     /* signal-delivery-stops restarted with their signal */
	uint64_t group_stops; /* threads that entered a group-stop */
	uint64_t threads_seen;
	uint64_t thread_races; /* ESRCH on a thread that exited under us */
	uint64_t execs;
	uint64_t procs_seen;	/* processes traced (attached, launched or followed) */
	uint64_t procs_skipped; /* new processes let go: not followed, or a program perch cannot
				 * profile */
};

#define TRACEE_FOLLOW 0x1 /* tracee_init(): follow fork/vfork/clone children */
/* tracee_init(): stop each process's last thread as it exits (PTRACE_O_TRACEEXIT), reported as
 * TRACEE_EV_PROC_EXITING */
#define TRACEE_EXIT_STOPS 0x2

struct tracee {
	pid_t pid; /* the first process added */
	unsigned int flags;
	int launched;			/* the first process was launched by perch */
	int alive;			/* 1 while any traced process lives */
	int exit_status;		/* wait(2) status of the first process once it is gone */
	struct tracee_thread **threads; /* every traced thread, sorted by tid */
	size_t nr_threads, alloc_threads;
	struct tracee_proc **procs; /* every process, in the order they were added */
	size_t nr_procs, alloc_procs;
	size_t nr_alive; /* procs with alive set */
	/* grows whenever a thread enters or leaves a group-stop, or a thread or process starts
	 * being let go: the caller's per-thread conclusions that depend on it are stale */
	uint64_t state_gen;
	struct tracee_stats stats;
	/* called for every thread (process) struct before it is freed (e.g. to free ->user) */
	void (*on_free)(struct tracee_thread *th);
	void (*on_proc_free)(struct tracee_proc *p);
};

enum tracee_event_kind {
	TRACEE_EV_STOPPED = 1,	/* @thread, which we interrupted, is stopped */
	TRACEE_EV_THREAD_NEW,	/* @thread appeared (it is running) */
	TRACEE_EV_THREAD_GONE,	/* @thread exited; it is freed at the next tracee call */
	TRACEE_EV_EXEC,		/* @proc called execve: maps, threads and maybe arch changed;
				 * @thread is its only thread now (tid == pid) */
	TRACEE_EV_EXIT,		/* every traced process is gone: tracee->exit_status */
	TRACEE_EV_PROC_NEW,	/* @proc was forked by a traced process and is followed;
				 * @thread is its first thread */
	TRACEE_EV_PROC_GONE,	/* @proc exited (others are still traced) */
	TRACEE_EV_PROC_EXITING, /* TRACEE_EXIT_STOPS: @thread, the last of @proc (or its main
				 * thread), is stopped on its way out with the memory still there
				 * (its maps can be read); the caller must tracee_resume() it */
};

struct tracee_event {
	enum tracee_event_kind kind;
	struct tracee_thread *thread;
	struct tracee_proc *proc;
};

/* An empty set: call before tracee_add_pid()/tracee_add_program(). @flags: TRACEE_*. */
void tracee_init(struct tracee *t, unsigned int flags);
/* Seize every thread of process @pid (re-scanning /proc/PID/task until no new thread shows
 * up) and add it to the set. On failure none of its threads stays attached, the rest of the
 * set is untouched, and a clear message was printed. 0 or -errno: -ESRCH no such process,
 * -EPERM not permitted, -EBUSY already traced (by another tracer, or already in the set),
 * -EINVAL zombie or not a process id. A process whose main thread exited (a zombie) while
 * other threads run is attached through those threads (proc->leader_gone). */
int tracee_add_pid(struct tracee *t, pid_t pid);
/* Fork and exec @argv traced from its first instruction; stdio is inherited.
 * 0 or -errno (message printed; -ENOENT etc. when the program cannot be run). */
int tracee_add_program(struct tracee *t, char *const argv[]);
/* tracee_init(@t, 0), then tracee_add_pid() / tracee_add_program(); on failure @t holds
 * nothing. */
int tracee_attach(struct tracee *t, pid_t pid);
int tracee_launch(struct tracee *t, char *const argv[]);

/* Send PTRACE_INTERRUPT to a running or group-stopped thread. 0, -ESRCH (gone), -EINVAL
 * (already interrupted or stopped). */
int tracee_interrupt(struct tracee *t, struct tracee_thread *th, uint64_t now_ns);
/* The same, but the request holds until the thread is in our stop: a signal-delivery-stop or a
 * clone/fork/exec event stop cancels a pending PTRACE_INTERRUPT (kernel/signal.c ptrace_stop():
 * "any trap clears pending STOP trap"), so after restarting such a stop (with its signal, once)
 * tracee_poll() interrupts the thread again. A new thread interrupted before its first stop is
 * reported stopped at that stop. 0 (also when already interrupting), -ESRCH, -EINVAL (already
 * stopped). tracee_interrupt_cancel() or the TRACEE_EV_STOPPED report ends it. */
int tracee_interrupt_persist(struct tracee *t, struct tracee_thread *th, uint64_t now_ns);
/* Stop asking again for @th (its interrupt, if pending, still arrives). */
void tracee_interrupt_cancel(struct tracee_thread *th);
/* Restart a thread that is in our interrupt-stop (listen again when it is group-stopped).
 * 0 or -errno. */
int tracee_resume(struct tracee *t, struct tracee_thread *th);

/* Take the next event without blocking: 1 with @ev filled, 0 when there is none now,
 * -errno on error. Stops that need no caller action are handled inside. */
int tracee_poll(struct tracee *t, struct tracee_event *ev);
/* The same for thread @tid alone: its next event, if any. Costs the same however many threads
 * are traced (waiting for any child looks at every one of them). */
int tracee_poll_thread(struct tracee *t, pid_t tid, struct tracee_event *ev);

/* Let one process go (not followed after all, or a program perch cannot profile): its
 * threads are detached as their stops arrive (tracee_poll). */
void tracee_detach_proc(struct tracee *t, struct tracee_proc *p);
/* Detach every thread, leaving each as it would be without perch (running, or stopped if the
 * process is group-stopped; pending signals delivered). Waits at most @timeout_ms for threads
 * to reach a stop, and not for threads in uninterruptible sleep (D), which stop only when
 * they wake up. Returns the number of threads not detached yet: they stay in the table,
 * marked, and tracee_poll() detaches each when its stop comes (or the kernel does when perch
 * exits). */
int tracee_detach_all(struct tracee *t, int timeout_ms);
/* Run @fn(@arg) on a thread of its own, which is then the tracer of every thread @fn attaches
 * (ptrace ties a tracee to the thread that attached it), and wait for it: @fn's result, or
 * -errno when the thread cannot be started. When @fn returns, the thread exits and the kernel
 * detaches every thread still traced without stopping any (exit_ptrace()): no interrupt,
 * so no blocked call of the target is broken off (epoll_wait() and its kin would fail with
 * EINTR), a group-stopped process stays stopped, and a signal on its way is delivered.
 * PTRACE_DETACH, in contrast, needs each thread in a ptrace stop. @fn must end with
 * tracee_let_go() on each tracee it used. */
int tracee_run_tracer(int (*fn)(void *arg), void *arg);
/* The calling tracer thread is about to exit (tracee_run_tracer()): every thread of @t counts
 * as detached from now on; its processes stay (tracee_wait_exit(), their exit status). */
void tracee_let_go(struct tracee *t);
/* For launched targets after detach: wait for the program to exit; its wait status. */
int tracee_wait_exit(struct tracee *t);

struct tracee_thread *tracee_find(const struct tracee *t, pid_t tid);
/* The live process @pid of the set, or NULL. */
struct tracee_proc *tracee_proc_find(const struct tracee *t, pid_t pid);
/* A thread id through which @p's memory and /proc files can be read: its pid, or when its
 * main thread is gone (a zombie) one of its traced threads. */
pid_t tracee_proc_task(const struct tracee *t, const struct tracee_proc *p);
/* The state letter to show for @th: 'T' for a thread in group-stop (whose /proc state reads
 * 't' while perch traces it), else @proc_state. */
char tracee_state_letter(const struct tracee_thread *th, char proc_state);
/* Free the thread removed last now (kept for the event that named it): its owner's per-thread
 * state (on_free) is let go while that owner still exists. */
void tracee_free_removed(void);
void tracee_release(struct tracee *t);

#endif
