/* faults-exec target: `faults-exec SECONDS` runs a worker thread and main for a while, then the
 * WORKER thread execs this program again as `faults-exec --after SECONDS` (a non-leader exec:
 * the kernel kills the other threads and the exec'ing thread takes over the leader's pid).
 * The new image computes a fixed value in exec_after_work() for SECONDS and prints
 * "exec after value HEX pid P" then exits 0; "exec failed" and exit 1 if execv fails. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "target_common.h"

static volatile uint64_t exec_seed = 1469598103934665603ULL;
static char *self_path, *seconds_arg;
static double switch_time;
static volatile unsigned long exec_sink;

static __attribute__((noinline)) uint64_t exec_hash(void)
{
	uint64_t h = exec_seed;

	for (uint32_t i = 0; i < 65536; i++)
		h = (h ^ i) * 1099511628211ULL;
	return h;
}

static __attribute__((noinline)) void exec_before_work(void)
{
	while (target_now() < switch_time)
		exec_sink += exec_hash() & 1;
}

static void *exec_worker(void *arg)
{
	char *args[] = {self_path, "--after", seconds_arg, NULL};

	(void)arg;
	exec_before_work();
	execv(self_path, args);
	printf("exec failed: %s\n", strerror(errno));
	fflush(stdout);
	_exit(1);
}

static __attribute__((noinline)) int exec_after_work(double seconds)
{
	double end = target_now() + seconds;
	uint64_t first = exec_hash();
	long bad = 0;

	while (target_now() < end)
		bad += exec_hash() != first;
	printf("exec after value %016" PRIx64 " bad %ld pid %d\n", first, bad, (int)getpid());
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc == 3 && !strcmp(argv[1], "--after"))
		return exec_after_work(target_arg(argc, argv, 2, 1));
	self_path = argv[0];
	seconds_arg = argc > 1 ? argv[1] : "1";
	switch_time = target_now() + target_arg(argc, argv, 1, 1);
	target_allow_ptrace();
	pthread_create(&th, NULL, exec_worker, NULL);
	target_ready();
	exec_before_work();
	for (;;)
		exec_sink += exec_hash() & 1; /* until the worker's exec ends this thread */
}
