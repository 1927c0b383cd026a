/* dumpall target: `dumpall MODE`, the programs e2e-dumpall dumps again and again.
 *   signals  thread "storm" takes a timer signal every 200 us (its own POSIX timer,
 *            SIGEV_THREAD_ID), thread "sleeper" sleeps, main waits in pthread_join(); every
 *            SIGRTMIN+1 sent to the process is counted, and SIGUSR2 prints "rt COUNT";
 *   spawn    thread "spawner" creates and joins short-lived threads ("child") without pause,
 *            thread "sleeper" sleeps, main waits in pthread_join();
 *   sleep    main sleeps in dumpall_sleep() -> nanosleep(), one long sleep.
 * Prints "ready PID" once its threads run; runs until killed. Built with glibc and with musl
 * (dumpall-musl: musl's libc has no unwind tables). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static volatile unsigned long signals_seen, children, rt_seen;

static void on_signal(int sig)
{
	(void)sig;
	signals_seen++;
}

/* a queued real-time signal: each one sent is delivered once, never merged */
static void on_rt(int sig)
{
	(void)sig;
	__atomic_fetch_add(&rt_seen, 1, __ATOMIC_RELAXED);
}

static void on_usr2(int sig)
{
	char buf[40];
	int n = snprintf(buf, sizeof(buf), "rt %lu\n", __atomic_load_n(&rt_seen, __ATOMIC_RELAXED));

	(void)sig;
	if (write(1, buf, (size_t)n) != n)
		return;
}

static void count_rt(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_rt;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
}

__attribute__((noinline)) void dumpall_sleep(void)
{
	struct timespec ts = {1000000, 0};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *sleeper_main(void *arg)
{
	(void)arg;
	dumpall_sleep();
	return NULL;
}

/* A timer that signals this thread every 200 us. */
static void start_storm(void)
{
	struct sigevent sev;
	struct itimerspec its = {{0, 200000}, {0, 200000}};
	struct sigaction sa;
	timer_t timer;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGRTMIN, &sa, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = 4; /* SIGEV_THREAD_ID */
	sev.sigev_signo = SIGRTMIN;
#ifdef sigev_notify_thread_id
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
#else
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
#endif
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0 ||
	    timer_settime(timer, 0, &its, NULL) != 0)
		perror("timer");
}

__attribute__((noinline)) void dumpall_storm_work(void)
{
	for (;;)
		pause();
}

static void *storm_main(void *arg)
{
	(void)arg;
	start_storm();
	dumpall_storm_work();
	return NULL;
}

static void *child_main(void *arg)
{
	(void)arg;
	children++;
	return NULL;
}

__attribute__((noinline)) void dumpall_spawn_loop(void)
{
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, child_main, NULL) == 0)
			pthread_join(t, NULL);
	}
}

static void *spawner_main(void *arg)
{
	(void)arg;
	dumpall_spawn_loop();
	return NULL;
}

static void start(pthread_t *t, void *(*fn)(void *), const char *name)
{
	pthread_create(t, NULL, fn, NULL);
#ifdef __GLIBC__
	pthread_setname_np(*t, name);
#else
	(void)name;
#endif
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	const char *mode = argc > 1 ? argv[1] : "signals";

	target_allow_ptrace();
	if (!strcmp(mode, "sleep")) {
		target_ready();
		dumpall_sleep();
		return 0;
	}
	count_rt();
	start(&a, sleeper_main, "sleeper");
	if (!strcmp(mode, "spawn"))
		start(&b, spawner_main, "spawner");
	else
		start(&b, storm_main, "storm");
	target_ready();
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	return 0;
}
