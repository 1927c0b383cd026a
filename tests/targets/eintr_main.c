/* eintr target (issue 38): threads that sit in the calls a ptrace stop makes fail with EINTR,
 * counting their own EINTRs, beside one busy thread.
 *
 *   eintr [THREADS_PER_KIND]
 *
 * Per kind (default 4 threads each): epoll_wait() on an epoll set that never fires, with no
 * timeout; semtimedop() on a semaphore nobody posts, 10 s timeout; sigtimedwait() for SIGUSR2,
 * which is blocked and never sent, 10 s timeout; each goes straight back into its call and
 * counts each EINTR. One thread computes. On a line "count" on stdin the main thread (in a
 * read(), which a stop restarts unseen) prints "eintr epoll E sem S sigwait W". */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static volatile long n_epoll, n_sem, n_sigwait;
static volatile unsigned long sink;
static int semid;

static void *in_epoll(void *arg)
{
	int ep = epoll_create1(0);
	struct epoll_event ev;

	(void)arg;
	for (;;)
		if (epoll_wait(ep, &ev, 1, -1) < 0 && errno == EINTR)
			__atomic_add_fetch(&n_epoll, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *in_sem(void *arg)
{
	struct sembuf op = {.sem_num = 0, .sem_op = -1, .sem_flg = 0};
	struct timespec ts = {10, 0};

	(void)arg;
	for (;;)
		if (semtimedop(semid, &op, 1, &ts) < 0 && errno == EINTR)
			__atomic_add_fetch(&n_sem, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *in_sigwait(void *arg)
{
	struct timespec ts = {10, 0};
	sigset_t set;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	for (;;)
		if (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR)
			__atomic_add_fetch(&n_sigwait, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	for (unsigned long i = 0;; i++)
		sink += i * i;
	return NULL;
}

int main(int argc, char **argv)
{
	int per = (int)target_arg(argc, argv, 1, 4);
	void *(*kinds[])(void *) = {in_epoll, in_sem, in_sigwait};
	char line[64];
	sigset_t set;
	pthread_t t;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* (the threads inherit it) */
	semid = semget(IPC_PRIVATE, 1, 0600);
	if (semid < 0) {
		perror("eintr: semget");
		return 70;
	}
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (int i = 0; i < per; i++)
			pthread_create(&t, NULL, kinds[k], NULL);
	pthread_create(&t, NULL, busy, NULL);
	target_allow_ptrace();
	target_ready();
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "count", 5))
			continue;
		printf("eintr epoll %ld sem %ld sigwait %ld\n", n_epoll, n_sem, n_sigwait);
		fflush(stdout);
	}
	semctl(semid, 0, IPC_RMID);
	return 0;
}
