/* faults-fork target: `faults-fork NCHILDREN`. Forks NCHILDREN children one after the other
 * while a second thread burns CPU; each child checks that nobody traces it (TracerPid 0 in its
 * own /proc/self/status), computes a fixed value and exits 0 when both are right, 3 when it is
 * traced, 4 when the value is wrong. The parent also runs /bin/true through posix_spawn (vfork
 * semantics) once per 10 children. Prints "fork children N ok K traced T wrong W spawn S"
 * and exits 0. */
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target_common.h"

extern char **environ;

static volatile int stop;
static volatile uint64_t fork_seed = 1469598103934665603ULL;
static volatile unsigned long fork_sink;

static __attribute__((noinline)) uint64_t fork_hash(void)
{
	uint64_t h = fork_seed;

	for (uint32_t i = 0; i < 100000; i++)
		h = (h ^ i) * 1099511628211ULL;
	return h;
}

static int tracer_pid(void)
{
	char line[256];
	int tp = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tp) == 1)
			break;
	fclose(f);
	return tp;
}

static void *fork_burner(void *arg)
{
	(void)arg;
	while (!stop)
		fork_sink += fork_hash() & 1;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = (long)target_arg(argc, argv, 1, 50), ok = 0, traced = 0, wrong = 0, other = 0;
	uint64_t want = fork_hash();
	long spawned = 0;
	pthread_t th;

	target_allow_ptrace();
	pthread_create(&th, NULL, fork_burner, NULL);
	target_ready();
	for (long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			if (tracer_pid() != 0)
				_exit(3);
			_exit(fork_hash() == want ? 0 : 4);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			other++;
		else if (WEXITSTATUS(status) == 0)
			ok++;
		else if (WEXITSTATUS(status) == 3)
			traced++;
		else
			wrong++;
		if (i % 10 == 0) {
			char *args[] = {"true", NULL};
			pid_t sp;

			if (!posix_spawn(&sp, "/bin/true", NULL, NULL, args, environ) &&
			    waitpid(sp, &status, 0) == sp && WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0)
				spawned++;
			else
				other++;
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("fork children %ld ok %ld traced %ld wrong %ld other %ld spawn %ld\n", n, ok, traced,
	       wrong, other, spawned);
	return 0;
}
