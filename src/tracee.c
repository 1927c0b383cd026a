/* ptrace state machine for one process's threads. See include/perch/tracee.h and
 * docs/design/perf-baseline.md section 7 for the pitfalls each rule here avoids. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perch/log.h"
#include "perch/proc-task.h"
#include "perch/tracee.h"
#include "perch/xalloc.h"

#define TRACEE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)
#define TRACEE_ATTACH_ROUNDS 64
#define CAP_SYS_PTRACE_BIT 19

uint64_t tracee_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- thread table (sorted by tid) ---- */

static size_t thread_pos(const struct tracee *t, pid_t tid)
{
	size_t lo = 0, hi = t->nr_threads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->threads[mid]->tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct tracee_thread *tracee_find(const struct tracee *t, pid_t tid)
{
	size_t i = thread_pos(t, tid);

	return i < t->nr_threads && t->threads[i]->tid == tid ? t->threads[i] : NULL;
}

static struct tracee_thread *thread_add(struct tracee *t, pid_t tid)
{
	size_t i = thread_pos(t, tid);
	struct tracee_thread *th;

	if (i < t->nr_threads && t->threads[i]->tid == tid)
		return t->threads[i];
	th = xcalloc(1, sizeof(*th));
	th->tid = tid;
	th->state = TRACEE_RUNNING;
	ALLOC_GROW(t->threads, t->nr_threads + 1, t->alloc_threads);
	memmove(t->threads + i + 1, t->threads + i, (t->nr_threads - i) * sizeof(*t->threads));
	t->threads[i] = th;
	t->nr_threads++;
	t->stats.threads_seen++;
	return th;
}

/* The thread removed last; freed lazily so an event can still point to it. */
static struct tracee_thread *graveyard;
static void (*graveyard_free)(struct tracee_thread *);

static void thread_free(struct tracee *t, struct tracee_thread *th)
{
	if (th && t->on_free)
		t->on_free(th);
	free(th);
}

static void bury(struct tracee *t, struct tracee_thread *th)
{
	if (graveyard) {
		if (graveyard_free)
			graveyard_free(graveyard);
		free(graveyard);
	}
	graveyard = th;
	graveyard_free = t ? t->on_free : NULL;
}

static void thread_remove(struct tracee *t, struct tracee_thread *th)
{
	size_t i = thread_pos(t, th->tid);

	if (i < t->nr_threads && t->threads[i] == th) {
		memmove(t->threads + i, t->threads + i + 1,
			(t->nr_threads - i - 1) * sizeof(*t->threads));
		t->nr_threads--;
	}
	bury(t, th);
}

/* ---- attach ---- */

static int read_int_file(const char *path, long *out)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	*out = strtol(buf, NULL, 10);
	return 0;
}

static int in_container(void)
{
	char *cg;
	int ret;

	if (access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0)
		return 1;
	cg = proc_read_file("/proc/1/cgroup", NULL);
	ret = cg && (strstr(cg, "docker") || strstr(cg, "kubepods") || strstr(cg, "lxc"));
	free(cg);
	return ret;
}

/* Say why PTRACE_SEIZE gave EPERM, from what perch can see. */
static int explain_eperm(pid_t pid)
{
	struct proc_status self, target;
	long scope = -1;
	int have_cap = 0;

	read_int_file("/proc/sys/kernel/yama/ptrace_scope", &scope);
	if (proc_status_read(getpid(), 0, &self) == 0)
		have_cap = (self.cap_eff >> CAP_SYS_PTRACE_BIT) & 1;
	else
		memset(&self, 0, sizeof(self));
	if (proc_status_read(pid, 0, &target) < 0)
		memset(&target, 0, sizeof(target));

	if (target.tracer_pid)
		return -EBUSY; /* raced with another tracer: reported by the caller */
	if (scope == 3)
		return log_err(-EPERM, "cannot attach to %d: Operation not permitted: ptrace is "
				       "disabled (/proc/sys/kernel/yama/ptrace_scope is 3; only a "
				       "reboot can lower it)", pid);
	if (scope == 2 && !have_cap)
		return log_err(-EPERM, "cannot attach to %d: Operation not permitted: "
				       "/proc/sys/kernel/yama/ptrace_scope is 2 (admin only): run "
				       "perch with CAP_SYS_PTRACE (e.g. sudo)", pid);
	if (target.uid_real != self.uid_effective && target.uid_effective != self.uid_effective &&
	    !have_cap)
		return log_err(-EPERM, "cannot attach to %d: Operation not permitted: it belongs "
				       "to uid %u and perch runs as uid %u without CAP_SYS_PTRACE "
				       "(permission denied: run as that user, or with sudo)",
			       pid, (unsigned)target.uid_real, (unsigned)self.uid_effective);
	if (scope == 1 && !have_cap)
		return log_err(-EPERM, "cannot attach to %d: Operation not permitted: "
				       "/proc/sys/kernel/yama/ptrace_scope is 1 (only descendants): "
				       "launch the program with `perch record -- PROG`, run perch "
				       "with CAP_SYS_PTRACE, or `echo 0 > "
				       "/proc/sys/kernel/yama/ptrace_scope`", pid);
	if (in_container() && !have_cap)
		return log_err(-EPERM, "cannot attach to %d: Operation not permitted: perch "
				       "runs in a container without CAP_SYS_PTRACE (start it with "
				       "--cap-add=SYS_PTRACE)", pid);
	return log_err(-EPERM, "cannot attach to %d: Operation not permitted: the process is "
			       "not dumpable (setuid/setgid program or PR_SET_DUMPABLE 0), or a "
			       "security module (SELinux, AppArmor) denies ptrace", pid);
}

static int explain_busy(pid_t pid, pid_t tracer)
{
	char comm[64] = "?";

	proc_task_comm(tracer, tracer, comm, sizeof(comm));
	return log_err(-EBUSY, "cannot attach to %d: already traced by %d (%s): detach the "
			       "debugger or tracer first", pid, tracer, comm);
}

static int check_target(pid_t pid)
{
	struct proc_status st;
	int ret = proc_status_read(pid, 0, &st);

	if (ret == -ENOENT || ret == -ESRCH)
		return log_err(-ESRCH, "cannot attach to %d: no such process", pid);
	if (ret < 0)
		return log_errno(ret, "cannot read /proc/%d/status", pid);
	if (st.tgid != pid)
		return log_err(-EINVAL, "cannot attach to %d: it is a thread of process %d: "
					"give the process id", pid, st.tgid);
	if (st.state == 'Z' || st.state == 'X')
		return log_err(-EINVAL, "cannot attach to %d: it is a zombie (exited, not reaped "
					"by its parent)", pid);
	if (st.tracer_pid)
		return explain_busy(pid, st.tracer_pid);
	return 0;
}

static int seize(struct tracee *t, pid_t tid)
{
	struct proc_status st;

	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)TRACEE_OPTIONS) == 0) {
		thread_add(t, tid);
		return 0;
	}
	if (errno == ESRCH)
		return -ESRCH;
	/* already ours through PTRACE_O_TRACECLONE? */
	if (errno == EPERM && proc_status_read(t->pid, tid, &st) == 0 && st.tracer_pid == getpid()) {
		thread_add(t, tid)->new_stop_pending = 1;
		return 0;
	}
	if (errno == EPERM && proc_status_read(t->pid, tid, &st) == 0 && st.tracer_pid)
		return explain_busy(t->pid, st.tracer_pid);
	return -errno;
}

int tracee_attach(struct tracee *t, pid_t pid)
{
	int ret, round;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->alive = 1;
	ret = check_target(pid);
	if (ret < 0)
		return ret;

	for (round = 0; round < TRACEE_ATTACH_ROUNDS; round++) {
		pid_t *tids = NULL;
		int n = proc_task_list(pid, &tids), added = 0;

		if (n < 0) {
			ret = n == -ENOENT ? log_err(-ESRCH, "cannot attach to %d: no such process",
						     pid)
					   : log_errno(n, "cannot list threads of %d", pid);
			goto fail;
		}
		for (int i = 0; i < n; i++) {
			if (tracee_find(t, tids[i]))
				continue;
			ret = seize(t, tids[i]);
			if (ret == -ESRCH)
				continue; /* the thread exited meanwhile */
			if (ret == -EPERM && t->nr_threads == 0) {
				ret = explain_eperm(pid);
				if (ret == -EBUSY) {
					struct proc_status st;

					if (proc_status_read(pid, 0, &st) == 0 && st.tracer_pid)
						ret = explain_busy(pid, st.tracer_pid);
				}
				free(tids);
				goto fail;
			}
			if (ret < 0) {
				if (ret != -EBUSY)
					log_errno(ret, "cannot attach to thread %d of %d", tids[i],
						  pid);
				free(tids);
				goto fail;
			}
			added++;
		}
		free(tids);
		if (!added)
			break;
	}
	if (!tracee_find(t, pid)) {
		ret = log_err(-ESRCH, "cannot attach to %d: no such process", pid);
		goto fail;
	}
	return 0;
fail:
	tracee_detach_all(t, 1000);
	tracee_release(t);
	return ret;
}

int tracee_launch(struct tracee *t, char *const argv[])
{
	int go[2], err[2], child_errno = 0;
	sigset_t none;
	pid_t pid;
	ssize_t n;

	memset(t, 0, sizeof(*t));
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return log_errno(-errno, "cannot create a pipe");
	pid = fork();
	if (pid < 0)
		return log_errno(-errno, "cannot fork");
	if (pid == 0) {
		char c;

		close(go[1]);
		close(err[0]);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* wait until the parent has seized us, so the program runs traced from exec on */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		child_errno = errno;
		if (write(err[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	t->pid = pid;
	t->launched = 1;
	t->alive = 1;
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)TRACEE_OPTIONS) < 0) {
		int e = errno;

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(go[1]);
		close(err[0]);
		return log_errno(-e, "cannot trace the program it launched");
	}
	thread_add(t, pid);
	if (write(go[1], "g", 1) != 1)
		child_errno = EPIPE;
	close(go[1]);
	/* EOF: exec succeeded (close-on-exec); 4 bytes: its errno */
	do
		n = read(err[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(err[0]);
	if (n == sizeof(child_errno) && child_errno) {
		waitpid(pid, NULL, __WALL);
		t->alive = 0;
		tracee_release(t);
		return log_errno(-child_errno, "cannot run %s", argv[0]);
	}
	return 0;
}

/* ---- sampling control ---- */

int tracee_interrupt(struct tracee *t, struct tracee_thread *th, uint64_t now_ns)
{
	if (th->state != TRACEE_RUNNING)
		return -EINVAL;
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0) {
		if (errno == ESRCH)
			t->stats.thread_races++;
		return -errno;
	}
	th->state = TRACEE_INTERRUPTING;
	th->interrupt_ns = now_ns;
	return 0;
}

int tracee_resume(struct tracee *t, struct tracee_thread *th)
{
	if (th->state != TRACEE_STOPPED)
		return -EINVAL;
	th->state = TRACEE_RUNNING;
	if (ptrace(PTRACE_CONT, th->tid, 0, 0) < 0) {
		if (errno == ESRCH)
			t->stats.thread_races++;
		return -errno;
	}
	return 0;
}

static void restart(struct tracee *t, struct tracee_thread *th, int sig)
{
	if (th && th->detaching) {
		ptrace(PTRACE_DETACH, th->tid, 0, (void *)(long)sig);
		thread_remove(t, th);
		return;
	}
	if (ptrace(PTRACE_CONT, th ? th->tid : 0, 0, (void *)(long)sig) < 0 && errno == ESRCH)
		t->stats.thread_races++;
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A ptrace-stop of a known thread. Returns 1 when @ev was filled. */
static int handle_stop(struct tracee *t, struct tracee_thread *th, int status,
		       struct tracee_event *ev)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	unsigned long msg = 0;

	/* Any ptrace-stop clears a pending PTRACE_INTERRUPT (kernel/signal.c ptrace_stop():
	 * "Any trap clears pending STOP trap"): after a signal-delivery or clone/exec event stop
	 * no interrupt-stop will follow, so the thread is no longer being interrupted. */
	if (event != PTRACE_EVENT_STOP && th->state == TRACEE_INTERRUPTING)
		th->state = TRACEE_RUNNING;

	switch (event) {
	case PTRACE_EVENT_CLONE: {
		struct tracee_thread *child = NULL;

		if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg) == 0 && msg) {
			child = tracee_find(t, (pid_t)msg);
			if (!child) {
				child = thread_add(t, (pid_t)msg);
				child->new_stop_pending = 1;
				child->detaching = th->detaching;
			} else {
				child = NULL; /* its initial stop came first: already reported */
			}
		}
		restart(t, th, 0);
		if (child && !child->detaching) {
			ev->kind = TRACEE_EV_THREAD_NEW;
			ev->thread = child;
			return 1;
		}
		return 0;
	}
	case PTRACE_EVENT_EXEC: {
		/* every other thread is gone; the execing thread now has tid == pid (waitpid
		 * reported it under that tid, so @th is the leader's entry) */
		for (size_t i = t->nr_threads; i-- > 0;) {
			struct tracee_thread *o = t->threads[i];

			if (o != th && o->tid != t->pid) {
				t->nr_threads--;
				memmove(t->threads + i, t->threads + i + 1,
					(t->nr_threads - i) * sizeof(*t->threads));
				thread_free(t, o);
			}
		}
		t->stats.execs++;
		th->state = TRACEE_RUNNING;
		restart(t, th, 0);
		if (th->detaching)
			return 0;
		ev->kind = TRACEE_EV_EXEC;
		ev->thread = NULL;
		return 1;
	}
	case PTRACE_EVENT_STOP:
		if (th->detaching) {
			ptrace(PTRACE_DETACH, th->tid, 0, 0);
			thread_remove(t, th);
			return 0;
		}
		if (th->new_stop_pending) {
			th->new_stop_pending = 0;
			if (is_stop_signal(sig))
				goto group_stop;
			restart(t, th, 0);
			return 0;
		}
		if (is_stop_signal(sig)) {
group_stop:
			/* group-stop: keep the thread stopped as job control wants */
			th->state = TRACEE_GROUP_STOPPED;
			t->stats.group_stops++;
			ptrace(PTRACE_LISTEN, th->tid, 0, 0);
			return 0;
		}
		if (th->state == TRACEE_INTERRUPTING) {
			th->state = TRACEE_STOPPED;
			ev->kind = TRACEE_EV_STOPPED;
			ev->thread = th;
			return 1;
		}
		/* SIGCONT woke a listening thread, or a stale interrupt: let it run */
		th->state = TRACEE_RUNNING;
		restart(t, th, 0);
		return 0;
	case 0:
		/* signal-delivery-stop: deliver the signal now (an interrupt still pending
		 * is reported after it) */
		t->stats.signals++;
		if (th->new_stop_pending && sig == SIGSTOP)
			sig = 0; /* PTRACE_ATTACH-style initial SIGSTOP: not the program's */
		restart(t, th, sig);
		return 0;
	default:
		restart(t, th, 0);
		return 0;
	}
}

static int handle_status(struct tracee *t, pid_t tid, int status, struct tracee_event *ev)
{
	struct tracee_thread *th = tracee_find(t, tid);

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (th)
			thread_remove(t, th);
		if (tid == t->pid) {
			t->alive = 0;
			t->exit_status = status;
			ev->kind = TRACEE_EV_EXIT;
			ev->thread = th;
			return 1;
		}
		if (!th || th->detaching)
			return 0;
		ev->kind = TRACEE_EV_THREAD_GONE;
		ev->thread = th;
		return 1;
	}
	if (!WIFSTOPPED(status))
		return 0;
	if (!th) {
		/* a new thread whose stop arrived before its parent's clone event */
		th = thread_add(t, tid);
		th->new_stop_pending = 1;
		if (handle_stop(t, th, status, ev))
			return 1;
		ev->kind = TRACEE_EV_THREAD_NEW;
		ev->thread = th;
		return 1;
	}
	return handle_stop(t, th, status, ev);
}

int tracee_poll(struct tracee *t, struct tracee_event *ev)
{
	for (;;) {
		int status;
		/* __WNOTHREAD: only this (the tracer) thread's tracees and children, never a
		 * child another perch thread forked and waits for (the REPL's commands) */
		pid_t tid = waitpid(-1, &status, __WALL | __WNOTHREAD | WNOHANG);

		if (tid == 0)
			return 0;
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD) {
				if (t->alive && t->nr_threads == 0) {
					t->alive = 0;
					ev->kind = TRACEE_EV_EXIT;
					ev->thread = NULL;
					return 1;
				}
				return 0;
			}
			return -errno;
		}
		if (handle_status(t, tid, status, ev))
			return 1;
	}
}

/* ---- detach ---- */

int tracee_detach_all(struct tracee *t, int timeout_ms)
{
	uint64_t deadline = tracee_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	struct tracee_event ev;
	int left;

	for (size_t i = t->nr_threads; i-- > 0;) {
		struct tracee_thread *th = t->threads[i];

		th->detaching = 1;
		if (th->state == TRACEE_STOPPED) {
			ptrace(PTRACE_DETACH, th->tid, 0, 0);
			thread_remove(t, th);
		} else if (th->state == TRACEE_RUNNING || th->state == TRACEE_GROUP_STOPPED) {
			/* a listening thread must be interrupted to be detached; it re-reports
			 * its group-stop and stays stopped after the detach */
			if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0 && errno == ESRCH)
				thread_remove(t, th);
		}
	}
	while (t->nr_threads && tracee_now_ns() < deadline) {
		int ret = tracee_poll(t, &ev);

		if (ret < 0)
			break;
		if (ret == 0)
			usleep(200);
		else if (ev.kind == TRACEE_EV_EXIT)
			break;
	}
	left = (int)t->nr_threads;
	if (left && t->alive)
		log_warn(0, "%d thread(s) of %d did not stop to be detached; they are released "
			    "when perch exits", left, t->pid);
	while (t->nr_threads)
		thread_remove(t, t->threads[t->nr_threads - 1]);
	return left;
}

int tracee_wait_exit(struct tracee *t)
{
	int status = 0;

	if (!t->launched)
		return 0;
	if (!t->alive)
		return t->exit_status;
	while (waitpid(t->pid, &status, 0) < 0) {
		if (errno != EINTR)
			return t->exit_status;
	}
	t->alive = 0;
	t->exit_status = status;
	return status;
}

void tracee_release(struct tracee *t)
{
	for (size_t i = 0; i < t->nr_threads; i++)
		thread_free(t, t->threads[i]);
	free(t->threads);
	t->threads = NULL;
	t->nr_threads = t->alloc_threads = 0;
	bury(NULL, NULL);
}
