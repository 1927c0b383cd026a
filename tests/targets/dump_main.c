/* dump target: `dump SECONDS`. Thread "sleeper" sleeps in dump_sleeper_wait() -> nanosleep,
 * thread "reader" blocks in dump_reader_wait() -> read() on a pipe, main blocks in
 * pthread_join(). After SECONDS the sleeper writes to the pipe and everybody exits. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "dump.h"
#include "target_common.h"

static pthread_barrier_t start_barrier;
static int pipe_fds[2];
static double end_time;

static void *sleeper_main(void *arg)
{
	int n;

	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	pthread_barrier_wait(&start_barrier);
	n = dump_sleeper_wait(end_time);
	if (write(pipe_fds[1], "x", 1) != 1)
		perror("write");
	return (void *)(long)n;
}

static void *reader_main(void *arg)
{
	int r;

	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	pthread_barrier_wait(&start_barrier);
	r = dump_reader_wait(pipe_fds[0]);
	return (void *)(long)r;
}

int main(int argc, char **argv)
{
	pthread_t sleeper, reader;
	void *ret;

	end_time = target_now() + target_arg(argc, argv, 1, 10.0);
	target_allow_ptrace();
	if (pipe(pipe_fds)) {
		perror("pipe");
		return 1;
	}
	pthread_barrier_init(&start_barrier, NULL, 3);
	pthread_create(&sleeper, NULL, sleeper_main, NULL);
	pthread_create(&reader, NULL, reader_main, NULL);
	pthread_barrier_wait(&start_barrier);
	target_ready();
	pthread_join(sleeper, &ret);
	pthread_join(reader, NULL);
	printf("slept %ld\n", (long)ret);
	return 0;
}
