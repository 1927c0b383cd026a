/* faults-churn target: `faults-churn NTHREADS [RATE]`. Creates and joins NTHREADS short threads,
 * RATE per second (default 1000), four at a time; each thread hashes its own index (FNV-1a) and
 * the results are combined in index order, so the final value depends only on NTHREADS. A
 * tracer that loses a thread, leaves one stopped, or corrupts one shows up as a hang, a missing
 * thread or a wrong value. Prints "churn threads N failed F value HEX rate R" and exits 0. */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "target_common.h"

#define CHURN_BATCH 4

struct churn_job {
	uint32_t index;
	uint64_t value;
};

static __attribute__((noinline)) uint64_t churn_hash(uint32_t index)
{
	uint64_t h = 1469598103934665603ULL;

	for (uint32_t i = 0; i < 2000; i++)
		h = (h ^ (index + i)) * 1099511628211ULL;
	return h;
}

static void *churn_thread(void *arg)
{
	struct churn_job *job = arg;

	job->value = churn_hash(job->index);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = (long)target_arg(argc, argv, 1, 2000);
	double rate = target_arg(argc, argv, 2, 1000), start, elapsed;
	struct churn_job jobs[CHURN_BATCH];
	pthread_t th[CHURN_BATCH];
	uint64_t value = 0;
	long done = 0, failed = 0;

	target_allow_ptrace();
	target_ready();
	start = target_now();
	while (done < n) {
		int k, batch = n - done < CHURN_BATCH ? (int)(n - done) : CHURN_BATCH;
		int created[CHURN_BATCH] = {0};
		double due;

		for (k = 0; k < batch; k++) {
			jobs[k].index = (uint32_t)(done + k);
			jobs[k].value = 0;
			created[k] = !pthread_create(&th[k], NULL, churn_thread, &jobs[k]);
			if (!created[k])
				failed++;
		}
		for (k = 0; k < batch; k++) {
			if (created[k])
				pthread_join(th[k], NULL);
			value = (value ^ jobs[k].value) * 1099511628211ULL;
		}
		done += batch;
		/* pace to RATE: sleep until this batch is due (pacing only, no handshake) */
		due = start + (double)done / rate;
		while (target_now() < due) {
			struct timespec ts = {0, 200 * 1000};

			nanosleep(&ts, NULL);
		}
	}
	elapsed = target_now() - start;
	printf("churn threads %ld failed %ld value %016" PRIx64 " rate %.0f\n", done, failed, value,
	       elapsed > 0 ? (double)done / elapsed : 0);
	return 0;
}
