/* dump target: the functions the sleeper and reader threads block in. */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "target_common.h"

DUMP_NOINLINE int dump_sleeper_wait(double until)
{
	double now;
	int n = 0;

	/* One long sleep: a thread woken every few ms could be caught outside nanosleep. */
	while ((now = target_now()) < until) {
		double left = until - now;
		struct timespec ts = {.tv_sec = (time_t)left};

		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
		n++;
	}
	return n;
}

DUMP_NOINLINE int dump_reader_wait(int fd)
{
	char c;
	ssize_t r;

	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	return (int)r;
}
