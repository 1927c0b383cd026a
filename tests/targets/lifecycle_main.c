/* lifecycle target: `lifecycle SECONDS [STATUS]`. Main and thread "lc-worker" repeat a fixed
 * computation (FNV-1a over 0..65535, seeded from a volatile) until SECONDS have passed and count
 * rounds whose result differs from the first; a tracer that corrupts registers or memory shows
 * up as bad rounds or a wrong value. Prints
 *   lifecycle <thread> rounds <R> bad <B> value <hex>
 * then exits with STATUS (0-255), or kills itself with signal -STATUS when STATUS < 0. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "target_common.h"

struct lc_result {
	const char *name;
	long rounds, bad;
	uint64_t value;
};

static volatile uint64_t lifecycle_seed = 1469598103934665603ULL;
static pthread_barrier_t start_barrier;
static double end_time;

static __attribute__((noinline)) uint64_t lifecycle_round(void)
{
	uint64_t h = lifecycle_seed;

	for (uint32_t i = 0; i < 65536; i++)
		h = (h ^ i) * 1099511628211ULL;
	return h;
}

static void lifecycle_work(struct lc_result *r)
{
	r->value = lifecycle_round();
	r->rounds = 1;
	while (target_now() < end_time) {
		if (lifecycle_round() != r->value)
			r->bad++;
		r->rounds++;
	}
}

static void *worker_main(void *arg)
{
	pthread_setname_np(pthread_self(), "lc-worker");
	pthread_barrier_wait(&start_barrier);
	lifecycle_work(arg);
	return NULL;
}

static void print_result(const struct lc_result *r)
{
	printf("lifecycle %s rounds %ld bad %ld value %016" PRIx64 "\n", r->name, r->rounds, r->bad,
	       r->value);
}

int main(int argc, char **argv)
{
	struct lc_result main_res = {.name = "main"}, worker_res = {.name = "lc-worker"};
	int status = (int)target_arg(argc, argv, 2, 0);
	pthread_t worker;

	end_time = target_now() + target_arg(argc, argv, 1, 2.0);
	target_allow_ptrace();
	pthread_barrier_init(&start_barrier, NULL, 2);
	pthread_create(&worker, NULL, worker_main, &worker_res);
	pthread_barrier_wait(&start_barrier);
	target_ready();
	lifecycle_work(&main_res);
	pthread_join(worker, NULL);
	print_result(&main_res);
	print_result(&worker_res);
	fflush(stdout);
	if (status < 0) {
		signal(-status, SIG_DFL);
		raise(-status);
	}
	return status;
}
