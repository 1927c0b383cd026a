/* The session thread: owns the attached target and runs the jobs the REPL posts; see
 * include/perch/record/session.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perch/base/log.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "perch/record/session.h"

#define SESSION_IDLE_MS	  200 /* longest idle sleep without a SIGCHLD */
#define SESSION_DETACH_MS 2000

void session_block_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void session_notice(struct session *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->lock);
	va_start(ap, fmt);
	strbuf_vaddf(&s->notices, fmt, ap);
	va_end(ap);
	strbuf_addch(&s->notices, '\n');
	pthread_mutex_unlock(&s->lock);
	if (write(s->notify[1], "n", 1) < 0) {
		/* the pipe is full: the REPL has not read the earlier bytes yet, which is enough */
	}
}

size_t session_take_notices(struct session *s, struct strbuf *out)
{
	char drain[64];
	size_t n;

	while (read(s->notify[0], drain, sizeof(drain)) > 0)
		;
	pthread_mutex_lock(&s->lock);
	n = s->notices.len;
	strbuf_add(out, s->notices.buf, s->notices.len);
	strbuf_reset(&s->notices);
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* Forget the target (session thread): it exited, or it was detached. Threads that could not
 * be detached yet (asleep in 'D') stay in @s->t, marked: service() detaches each when it
 * stops, so none is left stopped while the session lives on. */
static void forget(struct session *s)
{
	s->attached = 0;
	if (s->t.nr_threads && s->t.alive)
		return;
	tracee_release(&s->t);
	memset(&s->t, 0, sizeof(s->t));
}

void session_target_gone(struct session *s)
{
	if (!s->attached || s->t.alive)
		return;
	session_notice(s, "target %d (%s) exited", s->pid, s->comm);
	forget(s);
}

/* Between jobs: restart the target's signal stops and follow its threads (tracee_poll does
 * both); a stop of ours cannot be pending here, but one would be resumed. */
static void service(struct session *s)
{
	struct tracee_event ev;

	while ((s->attached || s->t.nr_threads) && tracee_poll(&s->t, &ev) > 0) {
		if (ev.kind == TRACEE_EV_STOPPED)
			tracee_resume(&s->t, ev.thread);
		else if (ev.kind == TRACEE_EV_EXIT)
			session_target_gone(s);
	}
}

static void idle_wait(void)
{
	struct timespec ts = {0, SESSION_IDLE_MS * 1000000L};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigtimedwait(&set, NULL, &ts);
}

static void *session_main(void *arg);

/* The session thread that takes over from one that ends to let the target go: it waits for
 * that one to be gone first (the kernel detaches as it exits), then serves the jobs. */
struct session_next {
	struct session *s;
	pthread_t prev;
};

static void *session_successor(void *arg)
{
	struct session_next *n = arg;
	struct session *s = n->s;

	pthread_join(n->prev, NULL);
	free(n);
	return session_main(s);
}

/* detach: this thread is to exit, letting the target go without a stop (tracee_run_tracer()
 * says why); a new session thread carries on with the jobs (@s->lock held). */
static void successor(struct session *s)
{
	struct session_next *n = xmalloc(sizeof(*n));
	pthread_t next;

	n->s = s;
	n->prev = pthread_self();
	if (pthread_create(&next, NULL, session_successor, n) == 0) {
		s->thread = next;
	} else {
		free(n);
		s->quit = 1; /* (no thread to carry on: the next jobs are not served) */
	}
}

/* The target is let go as the calling thread exits: forget it now. */
static void let_go(struct session *s)
{
	if (s->attached) {
		tracee_let_go(&s->t);
		s->attached = 0;
	}
	tracee_release(&s->t);
	memset(&s->t, 0, sizeof(s->t));
}

static void *session_main(void *arg)
{
	struct session *s = arg;
	int leaving = 0;

	pthread_mutex_lock(&s->lock);
	while (!leaving) {
		session_job_fn *fn = s->job;
		void *job_arg = s->job_arg;
		int ret;

		if (!fn) {
			if (s->quit)
				break;
			pthread_mutex_unlock(&s->lock);
			service(s);
			idle_wait();
			pthread_mutex_lock(&s->lock);
			continue;
		}
		s->job = NULL;
		s->job_running = 1;
		pthread_mutex_unlock(&s->lock);
		ret = fn(s, job_arg);
		service(s);
		if ((leaving = s->let_go))
			let_go(s);
		pthread_mutex_lock(&s->lock);
		s->job_running = 0;
		s->job_background = 0;
		s->job_ret = ret;
		if (leaving) {
			s->let_go = 0;
			if (!s->quit)
				successor(s);
		}
		s->done_seq++;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	if (!leaving)
		let_go(s);
	return NULL;
}

struct session *session_new(void)
{
	struct session *s = xcalloc(1, sizeof(*s));
	int ret;

	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	strbuf_init(&s->notices, 0);
	if (pipe2(s->notify, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(s);
		return NULL;
	}
	ret = pthread_create(&s->thread, NULL, session_main, s);
	if (ret) {
		close(s->notify[0]);
		close(s->notify[1]);
		free(s);
		errno = ret;
		return NULL;
	}
	return s;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	s->stop_bg = 1;
	s->stop_fg = 1;
	pthread_mutex_lock(&s->lock);
	s->quit = 1;
	pthread_mutex_unlock(&s->lock);
	pthread_kill(s->thread, SIGCHLD);
	pthread_join(s->thread, NULL);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	strbuf_release(&s->notices);
	close(s->notify[0]);
	close(s->notify[1]);
	free(s);
}

/* Post a job; the caller holds @s->lock. Its sequence number, or 0 when busy. */
static unsigned long post(struct session *s, session_job_fn *fn, void *arg, int background)
{
	if (s->job || s->job_running)
		return 0;
	s->job = fn;
	s->job_arg = arg;
	s->job_background = background;
	pthread_kill(s->thread, SIGCHLD);
	return ++s->job_seq;
}

int session_call(struct session *s, session_job_fn *fn, void *arg)
{
	unsigned long seq;
	int ret;

	pthread_mutex_lock(&s->lock);
	seq = post(s, fn, arg, 0);
	if (!seq) {
		pthread_mutex_unlock(&s->lock);
		return -EBUSY;
	}
	while (s->done_seq < seq)
		pthread_cond_wait(&s->cond, &s->lock);
	ret = s->job_ret;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int session_start(struct session *s, session_job_fn *fn, void *arg)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = post(s, fn, arg, 1) ? 0 : -EBUSY;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int session_busy(struct session *s)
{
	int busy;

	pthread_mutex_lock(&s->lock);
	busy = s->job_background;
	pthread_mutex_unlock(&s->lock);
	return busy;
}

int session_wait(struct session *s, const volatile sig_atomic_t *intr)
{
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	while (s->job_background) {
		struct timespec ts;

		if (intr && *intr) {
			ret = -EINTR;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		if (!s->job_background)
			ret = s->job_ret;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static int attach_job(struct session *s, void *arg)
{
	pid_t pid = *(pid_t *)arg;
	struct proc_stat ps;
	int ret;

	if (s->attached) {
		tracee_detach_all(&s->t, SESSION_DETACH_MS);
		forget(s);
	}
	/* a thread still to detach (asleep in 'D') reports its stop to the new set as an unknown
	 * task, which is let go at once (tracee.c new_task()) */
	tracee_release(&s->t);
	memset(&s->t, 0, sizeof(s->t));
	ret = tracee_attach(&s->t, pid);
	if (ret < 0) {
		memset(&s->t, 0, sizeof(s->t));
		return ret;
	}
	pthread_mutex_lock(&s->lock);
	s->pid = pid;
	if (proc_stat_read(pid, 0, &ps) == 0)
		snprintf(s->comm, sizeof(s->comm), "%s", ps.comm);
	else
		snprintf(s->comm, sizeof(s->comm), "?");
	pthread_mutex_unlock(&s->lock);
	s->attached = 1;
	return 0;
}

int session_attach(struct session *s, pid_t pid)
{
	return session_call(s, attach_job, &pid);
}

static int detach_job(struct session *s, void *arg)
{
	if (!s->attached)
		return -ENOENT;
	s->let_go = 1; /* (session_main() ends this thread: the kernel detaches) */
	return 0;
}

int session_detach(struct session *s)
{
	return session_call(s, detach_job, NULL);
}
