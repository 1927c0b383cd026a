/* states target: where its threads and children wait or spin (see states.h). */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "states.h"
#include "target_common.h"

volatile long states_sink;

STATES_NOINLINE long states_spin(double until)
{
	long n = 0;

	while (!until || target_now() < until)
		for (int i = 0; i < 100000; i++)
			n += i ^ (n >> 3);
	states_sink += n;
	return n;
}

STATES_NOINLINE long states_child_spin(double until)
{
	long n = 0;

	while (target_now() < until)
		for (int i = 0; i < 100000; i++)
			n += i ^ (n >> 3);
	states_sink += n;
	return n;
}

STATES_NOINLINE int states_reader_wait(int fd)
{
	char c;
	ssize_t r;

	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	return (int)r;
}

STATES_NOINLINE void states_helper_wait(volatile int *stop)
{
	while (!*stop) {
		struct timespec ts = {10, 0};

		nanosleep(&ts, NULL);
	}
}

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;

STATES_NOINLINE void states_idle_wait(void)
{
	pthread_mutex_lock(&idle_lock);
	for (;;)
		pthread_cond_wait(&idle_cond, &idle_lock);
}

/* "child PID\n" with write(2) only: the child of vfork() shares the parent's memory and must not
 * touch stdio's buffers. */
static void say_child(void)
{
	char buf[32] = "child ", digits[16];
	int n = 0, len = 6;
	pid_t pid = getpid();

	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) && n < 15);
	while (n)
		buf[len++] = digits[--n];
	buf[len++] = '\n';
	if (write(1, buf, (size_t)len) < 0)
		_exit(126);
}

STATES_NOINLINE int states_vfork_parent(const char *self)
{
	pid_t c = vfork();

	if (c == 0) {
		/* the parent sleeps in D until this child execs: it waits for a byte first */
		say_child();
		states_reader_wait(0);
		execl(self, self, "exec-child", (char *)NULL);
		_exit(127);
	}
	return c;
}
