/* waits target: `waits SECONDS FIFO [SLEEP_MS]`. Threads that wait in known ways for SECONDS:
 * "reader" blocks in read() on FIFO (opened by main for writing), "locker" waits for a mutex
 * main holds, "sleeper" loops in nanosleep (SLEEP_MS at a time, 50 by default), "spinner"
 * burns CPU. Then main releases them. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *fifo;
static volatile int done;

static void *reader(void *arg)
{
	char c;
	int fd = open(fifo, O_RDONLY);

	if (fd >= 0 && read(fd, &c, 1) < 0)
		perror("read");
	return arg;
}

static void *locker(void *arg)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return arg;
}

static long sleep_ms = 50;

static void *sleeper(void *arg)
{
	struct timespec ts = {sleep_ms / 1000, sleep_ms % 1000 * 1000000};

	while (!done)
		nanosleep(&ts, NULL);
	return arg;
}

static void *spinner(void *arg)
{
	volatile double x = 0;

	while (!done)
		x += 1;
	return arg;
}

int main(int argc, char **argv)
{
	static void *(*const fn[])(void *) = {reader, locker, sleeper, spinner};
	static const char *const names[] = {"reader", "locker", "sleeper", "spinner"};
	double seconds = target_arg(argc, argv, 1, 2.0), end;
	pthread_t t[4];
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: waits SECONDS FIFO\n");
		return 2;
	}
	fifo = argv[2];
	sleep_ms = (long)target_arg(argc, argv, 3, 50);
	target_allow_ptrace();
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 4; i++) {
		pthread_create(&t[i], NULL, fn[i], NULL);
		pthread_setname_np(t[i], names[i]);
	}
	fd = open(fifo, O_WRONLY); /* returns once the reader has opened it */
	target_ready();
	end = target_now() + seconds;
	while (target_now() < end)
		usleep(10000);
	done = 1;
	pthread_mutex_unlock(&lock);
	if (write(fd, "x", 1) != 1)
		perror("write");
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
