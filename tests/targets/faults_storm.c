/* faults-storm: a SIGUSR1 storm whose every signal is accounted for.
 *   faults-storm target FIFO    make the named pipe FIFO; count SIGUSR1s and acknowledge each
 *                               with one byte into FIFO (write() is async-signal-safe) while
 *                               two threads burn CPU; on SIGTERM print "handled N" and exit 0
 *   faults-storm send PID FIFO COUNT RATE
 *                               send COUNT SIGUSR1s to PID at up to RATE per second, each after
 *                               the previous one was acknowledged (standard signals do not
 *                               queue: two pending SIGUSR1 merge without anyone's fault), and
 *                               print "sent N handled M rate R"; exits 1 when a signal is not
 *                               acknowledged within 2 s ("lost signal K") */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target_common.h"

static atomic_long handled;
static int ack_fd = -1;
static volatile sig_atomic_t stop;
static volatile unsigned long storm_sink;

static void on_usr1(int sig)
{
	int saved = errno;

	(void)sig;
	atomic_fetch_add(&handled, 1);
	if (write(ack_fd, "+", 1) != 1)
		storm_sink++;
	errno = saved;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static __attribute__((noinline)) void storm_work(void)
{
	unsigned long x = 7;

	while (!stop) {
		for (int i = 0; i < 10000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		storm_sink += x & 1;
	}
}

static void *burner(void *arg)
{
	(void)arg;
	storm_work();
	return NULL;
}

static int run_target(const char *path)
{
	struct sigaction sa;
	pthread_t th;

	if (mkfifo(path, 0600) && errno != EEXIST) {
		perror(path);
		return 2;
	}
	/* O_RDWR: never blocks for a reader, and the pipe never sees EOF */
	ack_fd = open(path, O_RDWR | O_CLOEXEC);
	if (ack_fd < 0) {
		perror(path);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	target_allow_ptrace();
	pthread_create(&th, NULL, burner, NULL);
	target_ready();
	storm_work();
	pthread_join(th, NULL);
	printf("handled %ld\n", atomic_load(&handled));
	return 0;
}

static int run_sender(pid_t pid, const char *path, long count, double rate)
{
	struct pollfd pfd = {.events = POLLIN};
	double start;
	long k, acked = 0;
	char c;

	pfd.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pfd.fd < 0) {
		perror(path);
		return 2;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	start = target_now();
	for (k = 1; k <= count; k++) {
		while (target_now() < start + (double)(k - 1) / rate)
			; /* pacing at 10 kHz is finer than nanosleep's slack */
		if (kill(pid, SIGUSR1)) {
			printf("kill failed at %ld: %s\n", k, strerror(errno));
			return 1;
		}
		if (poll(&pfd, 1, 2000) != 1 || read(pfd.fd, &c, 1) != 1) {
			printf("lost signal %ld: sent %ld handled %ld\n", k, k, acked);
			return 1;
		}
		acked++;
	}
	/* nothing more than one acknowledgement per signal */
	if (poll(&pfd, 1, 50) != 0) {
		printf("extra acknowledgement after %ld signals\n", count);
		return 1;
	}
	printf("sent %ld handled %ld rate %.0f\n", count, acked,
	       (double)count / (target_now() - start));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "target"))
		return run_target(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "send"))
		return run_sender(atoi(argv[2]), argv[3], atol(argv[4]), atof(argv[5]));
	fprintf(stderr, "usage: faults-storm target FILE | send PID FILE COUNT RATE\n");
	return 64;
}
