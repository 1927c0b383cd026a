/* signals target: `signals SECONDS`. Main and a "burner" thread do CPU work in a loop; every
 * SIGUSR1 is counted and acknowledged with one '.' written to stdout (async-signal-safe write),
 * so the test can pace its signals. On SIGTERM or after SECONDS it prints "count N". */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "target_common.h"

static atomic_long usr1_count;
static volatile sig_atomic_t stop;
static pthread_barrier_t start_barrier;
static double end_time;
static volatile unsigned long signals_sink;

static void on_usr1(int sig)
{
	int saved = errno;

	(void)sig;
	atomic_fetch_add(&usr1_count, 1);
	if (write(1, ".", 1) != 1)
		signals_sink++;
	errno = saved;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static __attribute__((noinline)) void signals_work(void)
{
	unsigned long x = 5;

	while (!stop && target_now() < end_time) {
		for (int i = 0; i < 20000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		signals_sink += x & 1;
	}
}

static void *burner_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "burner");
	pthread_barrier_wait(&start_barrier);
	signals_work();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t burner;

	end_time = target_now() + target_arg(argc, argv, 1, 5.0);
	target_allow_ptrace();
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	pthread_barrier_init(&start_barrier, NULL, 2);
	pthread_create(&burner, NULL, burner_main, NULL);
	pthread_barrier_wait(&start_barrier);
	target_ready();
	signals_work();
	stop = 1;
	pthread_join(burner, NULL);
	printf("\ncount %ld\n", atomic_load(&usr1_count));
	return 0;
}
