/* states target: process states perch must handle (tests/e2e/check_states.c and
 * check_children.c). Every mode prints "ready <pid>" once its threads are where they should be.
 *
 *   states zombie-main   threads "spinner" (states_spin) and "reader" (states_reader_wait on
 *                        stdin: a byte or EOF exits) run on after main calls pthread_exit()
 *   states vfork         thread "helper" sleeps (states_helper_wait); main vfork()s: the
 *                        child prints "child PID" and waits for a byte on stdin, then execs
 *                        `states exec-child`; the parent sleeps in D meanwhile, then prints
 *                        "parent resumed" and exits at EOF on stdin
 *   states threads N     N idle threads (64 KiB stacks) in states_idle_wait; exits at EOF
 *   states spin SECONDS  spins in states_spin
 *   states exec-child    prints "exec'd PID", spins 0.3 s, exits 0
 *   states forker        reads commands on stdin: "fork SECONDS" (a child prints "child PID"
 *                        and spins in states_child_spin), "exec PATH [ARG]" (a child prints
 *                        "child PID" and execs PATH), "vfork-exec PATH [ARG]" (vfork, exec;
 *                        the parent prints "vchild PID"), "quit" (waits for its children) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "states.h"
#include "target_common.h"

static pthread_barrier_t started;

static void *spinner_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "spinner");
	pthread_barrier_wait(&started);
	states_spin(0);
	return NULL;
}

static void *reader_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	pthread_barrier_wait(&started);
	states_reader_wait(0);
	exit(0);
}

static int zombie_main(void)
{
	pthread_t a, b;

	pthread_barrier_init(&started, NULL, 3);
	pthread_create(&a, NULL, spinner_main, NULL);
	pthread_create(&b, NULL, reader_main, NULL);
	pthread_barrier_wait(&started);
	target_ready();
	pthread_exit(NULL);
}

static volatile int helper_stop;

static void *helper_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "helper");
	pthread_barrier_wait(&started);
	states_helper_wait(&helper_stop);
	return NULL;
}

static int vfork_main(const char *self)
{
	pthread_t h;
	pid_t c;
	int status;

	pthread_barrier_init(&started, NULL, 2);
	pthread_create(&h, NULL, helper_main, NULL);
	pthread_barrier_wait(&started);
	target_ready();
	c = states_vfork_parent(self);
	if (c < 0) {
		perror("vfork");
		return 1;
	}
	waitpid(c, &status, 0);
	printf("parent resumed, child status %d\n", status);
	fflush(stdout);
	while (states_reader_wait(0) > 0)
		;
	return 0;
}

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static int nr_started;

static void *idle_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&count_lock);
	nr_started++;
	pthread_mutex_unlock(&count_lock);
	states_idle_wait();
	return NULL;
}

static int threads_main(int n)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, idle_main, NULL)) {
			fprintf(stderr, "cannot create thread %d\n", i);
			return 1;
		}
	}
	for (;;) {
		int k;

		pthread_mutex_lock(&count_lock);
		k = nr_started;
		pthread_mutex_unlock(&count_lock);
		if (k == n)
			break;
		usleep(1000);
	}
	target_ready();
	while (states_reader_wait(0) > 0)
		;
	return 0;
}

/* "exec PATH [ARG]" and "vfork-exec PATH [ARG]": split the rest of the line. */
static void split_cmd(char *rest, char **path, char **arg)
{
	*path = strtok(rest, " \n");
	*arg = strtok(NULL, " \n");
}

static int forker_main(void)
{
	char line[512];

	target_ready();
	while (fgets(line, sizeof(line), stdin)) {
		char *path, *arg;
		pid_t c;

		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		fflush(stdout);
		if (!strncmp(line, "fork ", 5)) {
			double until = target_now() + atof(line + 5);

			if ((c = fork()) == 0) {
				printf("child %d\n", (int)getpid());
				fflush(stdout);
				states_child_spin(until);
				_exit(0);
			}
		} else if (!strncmp(line, "exec ", 5)) {
			split_cmd(line + 5, &path, &arg);
			if (path && (c = fork()) == 0) {
				printf("child %d\n", (int)getpid());
				fflush(stdout);
				execl(path, path, arg, (char *)NULL);
				_exit(127);
			}
		} else if (!strncmp(line, "vfork-exec ", 11)) {
			split_cmd(line + 11, &path, &arg);
			if (path && (c = vfork()) == 0) {
				execl(path, path, arg, (char *)NULL);
				_exit(127);
			}
			printf("vchild %d\n", (int)c);
			fflush(stdout);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	target_allow_ptrace();
	if (!strcmp(mode, "zombie-main"))
		return zombie_main();
	if (!strcmp(mode, "vfork"))
		return vfork_main(argv[0]);
	if (!strcmp(mode, "threads"))
		return threads_main(argc > 2 ? atoi(argv[2]) : 2000);
	if (!strcmp(mode, "spin")) {
		double until = target_now() + target_arg(argc, argv, 2, 10.0);

		target_ready();
		states_spin(until);
		return 0;
	}
	if (!strcmp(mode, "exec-child")) {
		printf("exec'd %d\n", (int)getpid());
		fflush(stdout);
		states_spin(target_now() + 0.3);
		return 0;
	}
	if (!strcmp(mode, "forker"))
		return forker_main();
	fprintf(stderr, "usage: states zombie-main|vfork|threads N|spin S|exec-child|forker\n");
	return 64;
}
