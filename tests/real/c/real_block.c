/* Leaves of the C oracle program: each calls one blocking libc function and never returns. */
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "real.h"

NOINLINE void block_read(int fd)
{
	char c;

	real_sink += (int)read(fd, &c, 1);
}

NOINLINE int block_read_tail(int fd)
{
	char c;

	return (int)read(fd, &c, 1) + real_sink;
}

NOINLINE void block_sleep(void)
{
	struct timespec ts = { 100000, 0 };

	while (nanosleep(&ts, &ts))
		;
	real_sink++;
}

NOINLINE void block_sem(void)
{
	while (sem_wait(&real_sem))
		;
	real_sink++;
}

NOINLINE void block_cond(void)
{
	pthread_mutex_lock(&real_mu);
	for (;;)
		pthread_cond_wait(&real_cv, &real_mu);
}

NOINLINE void block_poll(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	real_sink += poll(&p, 1, -1);
}
