/* ptrace state machine for one process's threads. See include/perch/sample/tracee.h and
 * docs/design/perf-baseline.md section 7 for the pitfalls each rule here avoids. */
#include <errno.h>
#include <pthread.h>
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

#include "perch/arch.h"
#include "perch/base/fdlimit.h"
#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "perch/sample/tracee.h"

#define TRACEE_OPTIONS	     (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)
#define TRACEE_ATTACH_ROUNDS 64
/* detach: how often to look for threads in uninterruptible sleep, which cannot stop */
#define TRACEE_D_CHECK_NS  (50 * 1000000ULL)
#define CAP_SYS_PTRACE_BIT 19

/* ---- thread table (sorted by tid) and processes ---- */

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

struct tracee_proc *tracee_proc_find(const struct tracee *t, pid_t pid)
{
	/* newest first: a pid reused by a later process is that process */
	for (size_t i = t->nr_procs; i-- > 0;)
		if (t->procs[i]->pid == pid && t->procs[i]->alive)
			return t->procs[i];
	return NULL;
}

pid_t tracee_proc_task(const struct tracee *t, const struct tracee_proc *p)
{
	struct tracee_thread *leader = tracee_find(t, p->pid);

	if (leader || !p->leader_gone)
		return p->pid;
	for (size_t i = 0; i < t->nr_threads; i++)
		if (t->threads[i]->proc == p)
			return t->threads[i]->tid;
	return p->pid;
}

char tracee_state_letter(const struct tracee_thread *th, char proc_state)
{
	return th && th->in_group_stop && (proc_state == 't' || proc_state == 'T') ? 'T'
										   : proc_state;
}

static struct tracee_thread *thread_add(struct tracee *t, struct tracee_proc *p, pid_t tid)
{
	size_t i = thread_pos(t, tid);
	struct tracee_thread *th;

	if (i < t->nr_threads && t->threads[i]->tid == tid)
		return t->threads[i];
	th = xcalloc(1, sizeof(*th));
	th->tid = tid;
	th->proc = p;
	th->state = TRACEE_RUNNING;
	th->detaching = p->detaching;
	ALLOC_GROW(t->threads, t->nr_threads + 1, t->alloc_threads);
	memmove(t->threads + i + 1, t->threads + i, (t->nr_threads - i) * sizeof(*t->threads));
	t->threads[i] = th;
	t->nr_threads++;
	p->nr_threads++;
	t->stats.threads_seen++;
	return th;
}

static struct tracee_proc *proc_add(struct tracee *t, pid_t pid, pid_t parent)
{
	struct tracee_proc *p = xcalloc(1, sizeof(*p));
	char why[160];

	p->pid = pid;
	p->parent = parent;
	p->alive = 1;
	p->arch = perch_arch_of_pid_why(pid, why, sizeof(why));
	ALLOC_GROW(t->procs, t->nr_procs + 1, t->alloc_procs);
	t->procs[t->nr_procs++] = p;
	t->nr_alive++;
	t->alive = 1;
	t->stats.procs_seen++;
	if (t->nr_procs == 1)
		t->pid = pid;
	return p;
}

/* @p is no longer traced: it exited (@status, or @exited 0 when it was let go). */
static void proc_done(struct tracee *t, struct tracee_proc *p, int exited, int status)
{
	if (exited && !p->exited) {
		p->exited = 1;
		p->exit_status = status;
		if (p == t->procs[0])
			t->exit_status = status;
	}
	if (!p->alive)
		return;
	p->alive = 0;
	t->nr_alive--;
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

/* Take @th out of the table (@later: keep it until the next removal, for an event). A process
 * left without threads while being let go is no longer traced. */
static void thread_unlink(struct tracee *t, struct tracee_thread *th, int later)
{
	size_t i = thread_pos(t, th->tid);
	struct tracee_proc *p = th->proc;

	if (i < t->nr_threads && t->threads[i] == th) {
		memmove(t->threads + i, t->threads + i + 1,
			(t->nr_threads - i - 1) * sizeof(*t->threads));
		t->nr_threads--;
		p->nr_threads--;
	}
	if (later)
		bury(t, th);
	else
		thread_free(t, th);
	if (!p->nr_threads && p->detaching)
		proc_done(t, p, 0, 0);
}

static void thread_remove(struct tracee *t, struct tracee_thread *th)
{
	thread_unlink(t, th, 1);
}

/* Mark @th in a group-stop or out of it (tracee.state_gen counts the changes). */
static void set_group_stop(struct tracee *t, struct tracee_thread *th, int on)
{
	if (th->in_group_stop != on)
		t->state_gen++;
	th->in_group_stop = on;
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
		return log_err(-EPERM,
			       "cannot attach to %d: Operation not permitted: ptrace is "
			       "disabled (/proc/sys/kernel/yama/ptrace_scope is 3; only a "
			       "reboot can lower it)",
			       pid);
	if (scope == 2 && !have_cap)
		return log_err(-EPERM,
			       "cannot attach to %d: Operation not permitted: "
			       "/proc/sys/kernel/yama/ptrace_scope is 2 (admin only): run "
			       "perch with CAP_SYS_PTRACE (e.g. sudo)",
			       pid);
	if (target.uid_real != self.uid_effective && target.uid_effective != self.uid_effective &&
	    !have_cap)
		return log_err(-EPERM,
			       "cannot attach to %d: Operation not permitted: it belongs "
			       "to uid %u and perch runs as uid %u without CAP_SYS_PTRACE "
			       "(permission denied: run as that user, or with sudo)",
			       pid, (unsigned)target.uid_real, (unsigned)self.uid_effective);
	if (scope == 1 && !have_cap)
		return log_err(-EPERM,
			       "cannot attach to %d: Operation not permitted: "
			       "/proc/sys/kernel/yama/ptrace_scope is 1 (only descendants): "
			       "launch the program with `perch record -- PROG`, run perch "
			       "with CAP_SYS_PTRACE, or `echo 0 > "
			       "/proc/sys/kernel/yama/ptrace_scope`",
			       pid);
	if (in_container() && !have_cap)
		return log_err(-EPERM,
			       "cannot attach to %d: Operation not permitted: perch "
			       "runs in a container without CAP_SYS_PTRACE (start it with "
			       "--cap-add=SYS_PTRACE)",
			       pid);
	return log_err(-EPERM,
		       "cannot attach to %d: Operation not permitted: the process is "
		       "not dumpable (setuid/setgid program or PR_SET_DUMPABLE 0), or a "
		       "security module (SELinux, AppArmor) denies ptrace",
		       pid);
}

static int explain_busy(pid_t pid, pid_t tracer)
{
	char comm[64] = "?";
	struct proc_status st;

	/* (TracerPid is the tracing thread's id: say its process) */
	if (proc_status_read(tracer, 0, &st) == 0 && st.tgid > 0)
		tracer = st.tgid;
	proc_task_comm(tracer, tracer, comm, sizeof(comm));
	return log_err(-EBUSY,
		       "cannot attach to %d: already traced by %d (%s): detach the "
		       "debugger or tracer first",
		       pid, tracer, comm);
}

/* 0 when @pid can be attached; 1 when it is a process whose main thread has exited (a zombie)
 * while other threads run on; -errno with the message printed otherwise. */
static int check_target(const struct tracee *t, pid_t pid)
{
	struct proc_status st;
	int ret = proc_status_read(pid, 0, &st);

	if (ret == -ENOENT || ret == -ESRCH)
		return log_err(-ESRCH, "cannot attach to %d: no such process", pid);
	if (ret < 0)
		return log_errno(ret, "cannot read /proc/%d/status", pid);
	if (st.tgid != pid)
		return log_err(-EINVAL,
			       "cannot attach to %d: it is a thread of process %d: "
			       "give the process id",
			       pid, st.tgid);
	if (tracee_proc_find(t, pid))
		return log_err(-EBUSY, "cannot attach to %d twice", pid);
	if (st.tracer_pid)
		return explain_busy(pid, st.tracer_pid);
	if ((st.state == 'Z' || st.state == 'X') && st.threads <= 1)
		return log_err(-EINVAL,
			       "cannot attach to %d: it is a zombie (exited, not reaped "
			       "by its parent)",
			       pid);
	return st.state == 'Z' || st.state == 'X';
}

static unsigned long seize_options(const struct tracee *t)
{
	return TRACEE_OPTIONS |
	       (t->flags & TRACEE_FOLLOW ? PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK : 0) |
	       (t->flags & TRACEE_EXIT_STOPS ? PTRACE_O_TRACEEXIT : 0);
}

static int seize(struct tracee *t, struct tracee_proc *p, pid_t tid)
{
	struct proc_status st;
	int err, ret;

	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)seize_options(t)) == 0) {
		thread_add(t, p, tid);
		return 0;
	}
	err = errno;
	if (err != EPERM)
		return -err; /* ESRCH: the thread exited meanwhile */
	ret = proc_status_read(p->pid, tid, &st);
	/* a thread on its way out cannot be traced, and is gone by now */
	if (ret == -ENOENT || ret == -ESRCH)
		return -ESRCH;
	if (ret < 0)
		return -EPERM;
	/* already ours through PTRACE_O_TRACECLONE? (TracerPid names the tracing thread) */
	if (st.tracer_pid == gettid()) {
		thread_add(t, p, tid)->new_stop_pending = 1;
		return 0;
	}
	if (st.tracer_pid)
		return explain_busy(p->pid, st.tracer_pid);
	/* an exited thread (the zombie main thread of a live process) cannot be traced */
	if (st.state == 'Z' || st.state == 'X')
		return -ESRCH;
	return -EPERM;
}

/* Seize every thread of @p, re-scanning its task list until no new one shows up. 0 or -errno
 * (message printed). */
static int seize_all(struct tracee *t, struct tracee_proc *p)
{
	for (int round = 0; round < TRACEE_ATTACH_ROUNDS; round++) {
		pid_t *tids = NULL;
		int n = proc_task_list(p->pid, &tids), added = 0, ret;

		if (n < 0)
			return n == -ENOENT
				   ? log_err(-ESRCH, "cannot attach to %d: no such process", p->pid)
				   : log_errno(n, "cannot list threads of %d", p->pid);
		for (int i = 0; i < n; i++) {
			if (tracee_find(t, tids[i]))
				continue;
			ret = seize(t, p, tids[i]);
			if (ret == -ESRCH)
				continue; /* the thread exited meanwhile */
			if (ret == -EPERM && p->nr_threads == 0) {
				ret = explain_eperm(p->pid);
				if (ret == -EBUSY) {
					struct proc_status st;

					if (proc_status_read(p->pid, 0, &st) == 0 && st.tracer_pid)
						ret = explain_busy(p->pid, st.tracer_pid);
				}
			} else if (ret < 0 && ret != -EBUSY) {
				log_errno(ret, "cannot attach to thread %d of %d", tids[i], p->pid);
			}
			if (ret < 0) {
				free(tids);
				return ret;
			}
			added++;
		}
		free(tids);
		if (!added)
			break;
	}
	if (!p->nr_threads)
		return log_err(-ESRCH, "cannot attach to %d: no such process", p->pid);
	return 0;
}

/* Forget @p, which failed to attach: detach what was seized, drop it from the set. */
static void proc_abandon(struct tracee *t, struct tracee_proc *p)
{
	uint64_t deadline = monotime_ns() + 1000 * 1000000ULL;
	struct tracee_event ev;

	tracee_detach_proc(t, p);
	while (p->nr_threads && monotime_ns() < deadline) {
		int ret = tracee_poll(t, &ev);

		if (ret < 0)
			break;
		if (ret == 0)
			usleep(200);
		/* (added while sampling, sampler_opts.join: another thread's stop goes on) */
		else if (ev.kind == TRACEE_EV_STOPPED || ev.kind == TRACEE_EV_PROC_EXITING)
			tracee_resume(t, ev.thread);
	}
	for (size_t i = t->nr_threads; i-- > 0;)
		if (t->threads[i]->proc == p)
			thread_unlink(t, t->threads[i], 0);
	proc_done(t, p, 0, 0);
	/* it was the newest: take it out of the list again */
	if (t->nr_procs && t->procs[t->nr_procs - 1] == p) {
		t->nr_procs--;
		t->stats.procs_seen--;
		if (t->on_proc_free)
			t->on_proc_free(p);
		free(p);
	}
	if (!t->nr_procs) {
		t->pid = 0;
		t->alive = 0;
	}
}

void tracee_init(struct tracee *t, unsigned int flags)
{
	memset(t, 0, sizeof(*t));
	t->flags = flags;
}

int tracee_add_pid(struct tracee *t, pid_t pid)
{
	struct tracee_proc *p;
	int ret = check_target(t, pid);

	if (ret < 0)
		return ret;
	p = proc_add(t, pid, 0);
	p->leader_gone = ret;
	if (p->leader_gone)
		log_info("the main thread of %d has exited: attaching to its other threads", pid);
	ret = seize_all(t, p);
	if (ret < 0)
		proc_abandon(t, p);
	else if (p->leader_gone)
		/* /proc/PID/exe of an exited main thread cannot be read: ask a live thread */
		p->arch = perch_arch_of_pid_why(tracee_proc_task(t, p), (char[160]){0}, 160);
	return ret;
}

int tracee_attach(struct tracee *t, pid_t pid)
{
	int ret;

	tracee_init(t, 0);
	ret = tracee_add_pid(t, pid);
	if (ret < 0)
		tracee_release(t);
	return ret;
}

int tracee_add_program(struct tracee *t, char *const argv[])
{
	int go[2], err[2], child_errno = 0;
	struct tracee_proc *p;
	sigset_t none;
	pid_t pid;
	ssize_t n;

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
		fdlimit_restore();
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
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)seize_options(t)) < 0) {
		int e = errno;

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(go[1]);
		close(err[0]);
		return log_errno(-e, "cannot trace the program it launched");
	}
	p = proc_add(t, pid, 0);
	p->launched = 1;
	if (t->nr_procs == 1)
		t->launched = 1;
	thread_add(t, p, pid);
	if (write(go[1], "g", 1) != 1)
		child_errno = EPIPE;
	close(go[1]);
	/* EOF: exec succeeded (close-on-exec); 4 bytes: its errno */
	do
		n = read(err[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(err[0]);
	if (n == sizeof(child_errno) && child_errno) {
		struct tracee_thread *th = tracee_find(t, pid);

		waitpid(pid, NULL, __WALL);
		if (th)
			thread_unlink(t, th, 0);
		proc_done(t, p, 1, 127 << 8);
		return log_errno(-child_errno, "cannot run %s", argv[0]);
	}
	/* the program that runs now decides the architecture */
	p->arch = perch_arch_of_pid_why(pid, (char[160]){0}, 160);
	return 0;
}

int tracee_launch(struct tracee *t, char *const argv[])
{
	int ret;

	tracee_init(t, 0);
	ret = tracee_add_program(t, argv);
	if (ret < 0)
		tracee_release(t);
	return ret;
}

/* ---- sampling control ---- */

int tracee_interrupt(struct tracee *t, struct tracee_thread *th, uint64_t now_ns)
{
	if (th->state != TRACEE_RUNNING && th->state != TRACEE_GROUP_STOPPED)
		return -EINVAL;
	/* on a listening thread the interrupt re-reports its group-stop (kernel/ptrace.c
	 * ptrace_interrupt(): the trap is woken even from LISTEN) */
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0) {
		if (errno == ESRCH)
			t->stats.thread_races++;
		return -errno;
	}
	th->state = TRACEE_INTERRUPTING;
	th->interrupt_ns = now_ns;
	return 0;
}

int tracee_interrupt_persist(struct tracee *t, struct tracee_thread *th, uint64_t now_ns)
{
	int ret = 0;

	if (th->state == TRACEE_STOPPED)
		return -EINVAL;
	if (th->state != TRACEE_INTERRUPTING)
		ret = tracee_interrupt(t, th, now_ns);
	if (ret == 0)
		th->persist = 1;
	return ret;
}

void tracee_interrupt_cancel(struct tracee_thread *th)
{
	th->persist = 0;
}

/* After a stop that cancelled @th's persistent interrupt was restarted: ask again (the thread
 * runs, or already sits in its next stop, where the request waits for the one after). */
static void interrupt_again(struct tracee *t, struct tracee_thread *th)
{
	if (th->state != TRACEE_RUNNING || th->detaching)
		return;
	if (tracee_interrupt(t, th, th->interrupt_ns) < 0)
		th->persist = 0;
}

int tracee_resume(struct tracee *t, struct tracee_thread *th)
{
	int listen;

	if (th->state != TRACEE_STOPPED)
		return -EINVAL;
	/* a group-stopped thread stays stopped: listening keeps job control as it was */
	listen = th->in_group_stop && !th->exit_stop;
	th->exit_stop = 0;
	th->state = listen ? TRACEE_GROUP_STOPPED : TRACEE_RUNNING;
	if (ptrace(listen ? PTRACE_LISTEN : PTRACE_CONT, th->tid, 0, 0) < 0) {
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

/* The thread-group id of task @tid (0 when it cannot be read) and its parent's. */
static pid_t tgid_of(pid_t tid, pid_t *ppid)
{
	struct proc_status st;
	struct proc_stat ps;

	if (proc_status_read(tid, 0, &st) < 0)
		return 0;
	if (ppid)
		*ppid = proc_stat_read(st.tgid, 0, &ps) == 0 ? ps.ppid : 0;
	return st.tgid;
}

/* A task auto-attached by a clone/fork/vfork in process @pp (NULL when its own first stop
 * came before the event): a new thread of @pp, or a new process, followed with TRACEE_FOLLOW
 * and let go (detached at its first stop) otherwise. Sets *@out to its entry; returns 1 with
 * @ev filled when the caller is to be told. */
static int new_task(struct tracee *t, struct tracee_proc *pp, int detaching, pid_t tid,
		    int is_process, struct tracee_event *ev, struct tracee_thread **out)
{
	struct tracee_proc *p = pp;
	struct tracee_thread *th;
	pid_t ppid = 0;

	if (is_process) {
		if (!pp)
			tgid_of(tid, &ppid);
		p = proc_add(t, tid, pp ? pp->pid : ppid);
		if (!(t->flags & TRACEE_FOLLOW) || detaching || !p->arch) {
			/* not ours to follow: it is detached at its first stop */
			p->detaching = 1;
			t->stats.procs_skipped++;
			if (!p->arch && (t->flags & TRACEE_FOLLOW) && !detaching)
				log_warn(0,
					 "not following process %d: it runs a program perch "
					 "cannot profile",
					 tid);
		}
	}
	th = thread_add(t, p, tid);
	th->new_stop_pending = 1;
	th->detaching |= detaching;
	*out = th;
	if (th->detaching)
		return 0;
	ev->kind = is_process ? TRACEE_EV_PROC_NEW : TRACEE_EV_THREAD_NEW;
	ev->thread = th;
	ev->proc = p;
	return 1;
}

/* PTRACE_EVENT_FORK/VFORK/CLONE of @th: the new task's id is the event message. */
static int on_clone(struct tracee *t, struct tracee_thread *th, int event, struct tracee_event *ev)
{
	struct tracee_thread *child = NULL;
	unsigned long msg = 0;
	int ret = 0;

	if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg) == 0 && msg &&
	    !tracee_find(t, (pid_t)msg)) {
		/* clone() without CLONE_THREAD and without SIGCHLD as its exit signal makes a
		 * process, but is reported as a clone: ask /proc */
		int is_process =
		    event != PTRACE_EVENT_CLONE || tgid_of((pid_t)msg, NULL) == (pid_t)msg;

		ret = new_task(t, th->proc, th->detaching, (pid_t)msg, is_process, ev, &child);
	}
	/* else: its initial stop came first and was already reported */
	restart(t, th, 0);
	return ret;
}

/* PTRACE_EVENT_EXEC of @th (waitpid reported it under the process id, which the execing
 * thread now has): every other thread of the process is gone. */
static int on_exec(struct tracee *t, struct tracee_thread *th, struct tracee_event *ev)
{
	struct tracee_proc *p = th->proc;
	char why[160];

	for (size_t i = t->nr_threads; i-- > 0;) {
		struct tracee_thread *o = t->threads[i];

		if (o != th && o->proc == p)
			thread_unlink(t, o, 0);
	}
	t->stats.execs++;
	p->execs++;
	p->leader_gone = 0;
	th->state = TRACEE_RUNNING;
	set_group_stop(t, th, 0);
	p->arch = perch_arch_of_pid_why(p->pid, why, sizeof(why));
	if (!p->arch && !p->detaching) {
		log_warn(0, "process %d exec'd a program perch cannot profile (%s): it is let go",
			 p->pid, why);
		t->stats.procs_skipped++;
		tracee_detach_proc(t, p);
	}
	restart(t, th, 0);
	if (p->detaching)
		return 0;
	ev->kind = TRACEE_EV_EXEC;
	ev->thread = th;
	ev->proc = p;
	return 1;
}

/* A PTRACE_EVENT_STOP: our interrupt, a group-stop, a new task's first stop, or a listening
 * thread woken by SIGCONT. Returns 1 when @ev was filled. */
static int on_event_stop(struct tracee *t, struct tracee_thread *th, int sig,
			 struct tracee_event *ev)
{
	if (th->detaching) {
		ptrace(PTRACE_DETACH, th->tid, 0, 0);
		thread_remove(t, th);
		return 0;
	}
	if (th->new_stop_pending) {
		th->new_stop_pending = 0;
		/* (an interrupt sent before the first stop merged with it: that stop is ours) */
		if (!is_stop_signal(sig) && th->state != TRACEE_INTERRUPTING) {
			restart(t, th, 0);
			return 0;
		}
	}
	if (is_stop_signal(sig)) {
		/* group-stop (entered now, or re-reported after our interrupt) */
		if (!th->in_group_stop)
			t->stats.group_stops++;
		set_group_stop(t, th, 1);
		if (th->state == TRACEE_INTERRUPTING) {
			th->state = TRACEE_STOPPED; /* tracee_resume() listens again */
			th->persist = 0;
			ev->kind = TRACEE_EV_STOPPED;
			ev->thread = th;
			ev->proc = th->proc;
			return 1;
		}
		/* keep the thread stopped as job control wants */
		th->state = TRACEE_GROUP_STOPPED;
		ptrace(PTRACE_LISTEN, th->tid, 0, 0);
		return 0;
	}
	/* SIGTRAP: our interrupt, or SIGCONT woke a listening thread */
	set_group_stop(t, th, 0);
	if (th->state == TRACEE_INTERRUPTING) {
		th->state = TRACEE_STOPPED;
		th->persist = 0;
		ev->kind = TRACEE_EV_STOPPED;
		ev->thread = th;
		ev->proc = th->proc;
		return 1;
	}
	th->state = TRACEE_RUNNING;
	restart(t, th, 0);
	return 0;
}

/* A ptrace-stop of a known thread other than a PTRACE_EVENT_STOP. Returns 1 when @ev was
 * filled. */
static int handle_other_stop(struct tracee *t, struct tracee_thread *th, int sig, int event,
			     struct tracee_event *ev)
{
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		return on_clone(t, th, event, ev);
	case PTRACE_EVENT_EXEC:
		return on_exec(t, th, ev);
	case PTRACE_EVENT_EXIT:
		/* the caller reads what it needs of a process's last thread (its maps: a sample
		 * of a short-lived child is often named after the child is gone) */
		if (!th->detaching && (th->tid == th->proc->pid || th->proc->nr_threads == 1)) {
			th->state = TRACEE_STOPPED;
			th->exit_stop = 1;
			ev->kind = TRACEE_EV_PROC_EXITING;
			ev->thread = th;
			ev->proc = th->proc;
			return 1;
		}
		restart(t, th, 0);
		return 0;
	case 0:
		/* signal-delivery-stop: deliver the signal now (an interrupt still pending
		 * is reported after it) */
		t->stats.signals++;
		set_group_stop(t, th, 0);
		if (th->new_stop_pending && sig == SIGSTOP)
			sig = 0; /* PTRACE_ATTACH-style initial SIGSTOP: not the program's */
		restart(t, th, sig);
		return 0;
	default:
		restart(t, th, 0);
		return 0;
	}
}

/* A ptrace-stop of a known thread. Returns 1 when @ev was filled. */
static int handle_stop(struct tracee *t, struct tracee_thread *th, int status,
		       struct tracee_event *ev)
{
	int sig = WSTOPSIG(status), event = status >> 16, again, ret;

	if (event == PTRACE_EVENT_STOP)
		return on_event_stop(t, th, sig, ev);
	/* Any ptrace-stop clears a pending PTRACE_INTERRUPT (kernel/signal.c ptrace_stop():
	 * "Any trap clears pending STOP trap"): after a signal-delivery or clone/exec event stop
	 * no interrupt-stop will follow, so the thread is no longer being interrupted, unless
	 * the request persists: then it is made again once the stop is restarted. */
	again = th->state == TRACEE_INTERRUPTING && th->persist && !th->detaching &&
		event != PTRACE_EVENT_EXIT;
	if (th->state == TRACEE_INTERRUPTING)
		th->state = TRACEE_RUNNING;
	ret = handle_other_stop(t, th, sig, event, ev);
	if (again)
		interrupt_again(t, th);
	return ret;
}

/* The exec of a thread whose process's main thread perch does not trace (it had exited): the
 * execing thread is reported under the process id; find it by its former id. */
static struct tracee_thread *exec_former(struct tracee *t, pid_t pid)
{
	unsigned long former = 0;
	struct tracee_thread *th;
	struct tracee_proc *p;

	if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &former) < 0 || !former)
		return NULL;
	th = tracee_find(t, (pid_t)former);
	if (!th)
		return NULL;
	p = th->proc;
	thread_unlink(t, th, 0);
	return thread_add(t, p, pid);
}

/* Task @tid exited. Returns 1 when @ev was filled. */
static int handle_exit(struct tracee *t, pid_t tid, int status, struct tracee_event *ev)
{
	struct tracee_thread *th = tracee_find(t, tid);
	struct tracee_proc *p = th ? th->proc : tracee_proc_find(t, tid);
	int gone, quiet;

	if (th)
		thread_remove(t, th);
	if (!p)
		return 0;
	/* the main thread's exit is reported last; a process perch traces without its main
	 * thread (a zombie when attached) is gone with its last thread */
	gone = tid == p->pid || (!p->nr_threads && p->leader_gone);
	if (!gone) {
		if (!th || th->detaching)
			return 0;
		ev->kind = TRACEE_EV_THREAD_GONE;
		ev->thread = th;
		ev->proc = p;
		return 1;
	}
	quiet = !p->alive || p->detaching;
	proc_done(t, p, 1, tid == p->pid ? status : -1);
	if (quiet && t->nr_alive)
		return 0;
	if (!t->nr_alive) {
		t->alive = 0;
		ev->kind = TRACEE_EV_EXIT;
	} else {
		ev->kind = TRACEE_EV_PROC_GONE;
	}
	ev->thread = th;
	ev->proc = p;
	return 1;
}

static int handle_status(struct tracee *t, pid_t tid, int status, struct tracee_event *ev)
{
	struct tracee_event ev2;
	struct tracee_thread *th;
	struct tracee_proc *p;
	int told;
	pid_t tgid;

	if (WIFEXITED(status) || WIFSIGNALED(status))
		return handle_exit(t, tid, status, ev);
	if (!WIFSTOPPED(status))
		return 0;
	th = tracee_find(t, tid);
	if (!th && status >> 16 == PTRACE_EVENT_EXEC)
		th = exec_former(t, tid);
	if (th)
		return handle_stop(t, th, status, ev);
	/* a new task whose first stop arrived before its parent's clone/fork event */
	tgid = tgid_of(tid, NULL);
	p = tgid && tgid != tid ? tracee_proc_find(t, tgid) : NULL;
	told = new_task(t, p, p && p->detaching, tid, !p, ev, &th);
	if (handle_stop(t, th, status, &ev2)) {
		*ev = ev2;
		return 1;
	}
	return told;
}

int tracee_poll(struct tracee *t, struct tracee_event *ev)
{
	for (;;) {
		int status;
		/* __WNOTHREAD: only this (the tracer) thread's tracees and children, never a
		 * child another perch thread forked and waits for (the REPL's commands) */
		pid_t tid = waitpid(-1, &status, __WALL | __WNOTHREAD | WNOHANG);

		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0 && errno != ECHILD)
			return -errno;
		if (tid < 0) {
			/* ECHILD: nothing is traced any more; entries left are stale */
			while (t->nr_threads)
				thread_unlink(t, t->threads[t->nr_threads - 1], 0);
			for (size_t i = 0; i < t->nr_procs; i++)
				proc_done(t, t->procs[i], 0, 0);
		}
		if (tid <= 0) {
			/* nothing traced is left (every process exited or was let go) */
			if (t->alive && !t->nr_alive) {
				t->alive = 0;
				ev->kind = TRACEE_EV_EXIT;
				ev->thread = NULL;
				ev->proc = NULL;
				return 1;
			}
			return 0;
		}
		if (handle_status(t, tid, status, ev))
			return 1;
	}
}

/* ---- detach ---- */

/* Ask thread @th to stop so it can be detached (tracee_poll() detaches it then). */
int tracee_poll_thread(struct tracee *t, pid_t tid, struct tracee_event *ev)
{
	for (;;) {
		int status;
		pid_t got = waitpid(tid, &status, __WALL | __WNOTHREAD | WNOHANG);

		if (got < 0 && errno == EINTR)
			continue;
		/* ECHILD: reaped already (its exit is tracee_poll()'s to report) */
		if (got < 0)
			return errno == ECHILD ? 0 : -errno;
		if (got == 0)
			return 0;
		if (handle_status(t, got, status, ev))
			return 1;
	}
}

static void detach_thread(struct tracee *t, struct tracee_thread *th)
{
	th->detaching = 1;
	t->state_gen++;
	if (th->state == TRACEE_STOPPED) {
		ptrace(PTRACE_DETACH, th->tid, 0, 0);
		thread_remove(t, th);
	} else if (th->state == TRACEE_RUNNING || th->state == TRACEE_GROUP_STOPPED) {
		/* a listening thread must be interrupted to be detached; it re-reports its
		 * group-stop and stays stopped after the detach */
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0 && errno == ESRCH)
			thread_remove(t, th);
	}
	/* TRACEE_INTERRUPTING: its stop is on the way */
}

void tracee_detach_proc(struct tracee *t, struct tracee_proc *p)
{
	p->detaching = 1;
	t->state_gen++;
	for (size_t i = t->nr_threads; i-- > 0;)
		if (i < t->nr_threads && t->threads[i]->proc == p && !t->threads[i]->detaching)
			detach_thread(t, t->threads[i]);
	if (!p->nr_threads)
		proc_done(t, p, 0, 0);
}

/* Threads left that are in uninterruptible sleep: they stop only when they wake up. */
static size_t count_in_d(const struct tracee *t)
{
	struct proc_stat ps;
	size_t n = 0;

	for (size_t i = 0; i < t->nr_threads; i++)
		n += proc_stat_read(t->threads[i]->tid, 0, &ps) == 0 && ps.state == 'D';
	return n;
}

int tracee_detach_all(struct tracee *t, int timeout_ms)
{
	uint64_t now = monotime_ns(), deadline = now + (uint64_t)timeout_ms * 1000000ULL;
	uint64_t check = now + TRACEE_D_CHECK_NS;
	struct tracee_event ev;
	size_t in_d = 0;
	int left;

	for (size_t i = 0; i < t->nr_procs; i++)
		t->procs[i]->detaching = 1;
	for (size_t i = t->nr_threads; i-- > 0;)
		if (i < t->nr_threads)
			detach_thread(t, t->threads[i]);
	while (t->nr_threads && monotime_ns() < deadline) {
		int ret = tracee_poll(t, &ev);

		if (ret < 0)
			break;
		if (ret)
			continue;
		usleep(200);
		if ((now = monotime_ns()) >= check) {
			check = now + TRACEE_D_CHECK_NS;
			in_d = count_in_d(t);
			if (in_d == t->nr_threads)
				break;
		}
	}
	left = (int)t->nr_threads;
	if (left && t->alive && (size_t)left > in_d)
		log_warn(0,
			 "%d thread(s) of %d did not stop to be detached; they are released "
			 "when perch exits",
			 left, t->pid);
	else if (left)
		log_debug("%d thread(s) in uninterruptible sleep: detached when they wake up or "
			  "perch exits",
			  left);
	/* they stay in the table, marked: tracee_poll() detaches each at its stop */
	return left;
}

struct tracer_job {
	int (*fn)(void *arg);
	void *arg;
	int ret;
};

static void *tracer_main(void *p)
{
	struct tracer_job *job = p;

	job->ret = job->fn(job->arg);
	return NULL; /* (the kernel detaches what is left as this thread exits) */
}

int tracee_run_tracer(int (*fn)(void *arg), void *arg)
{
	struct tracer_job job = {fn, arg, 0};
	pthread_t thread;
	int ret = pthread_create(&thread, NULL, tracer_main, &job);

	if (ret)
		return -ret;
	pthread_join(thread, NULL);
	return job.ret;
}

void tracee_let_go(struct tracee *t)
{
	for (size_t i = 0; i < t->nr_threads; i++)
		thread_free(t, t->threads[i]);
	t->nr_threads = 0;
	for (size_t i = 0; i < t->nr_procs; i++) {
		t->procs[i]->nr_threads = 0;
		t->procs[i]->detaching = 1;
		proc_done(t, t->procs[i], 0, 0); /* (as tracee_detach_all() leaves them) */
	}
}

int tracee_wait_exit(struct tracee *t)
{
	struct tracee_proc *p = t->nr_procs ? t->procs[0] : NULL;
	int status = 0;

	if (!t->launched || !p)
		return 0;
	if (p->exited)
		return p->exit_status;
	while (waitpid(t->pid, &status, 0) < 0) {
		if (errno != EINTR)
			return t->exit_status;
	}
	proc_done(t, p, 1, status);
	return status;
}

void tracee_free_removed(void)
{
	bury(NULL, NULL);
}

void tracee_release(struct tracee *t)
{
	for (size_t i = 0; i < t->nr_threads; i++)
		thread_free(t, t->threads[i]);
	free(t->threads);
	t->threads = NULL;
	t->nr_threads = t->alloc_threads = 0;
	bury(NULL, NULL);
	for (size_t i = 0; i < t->nr_procs; i++) {
		if (t->on_proc_free)
			t->on_proc_free(t->procs[i]);
		free(t->procs[i]);
	}
	free(t->procs);
	t->procs = NULL;
	t->nr_procs = t->alloc_procs = t->nr_alive = 0;
}
