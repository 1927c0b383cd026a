/* Helpers shared by the e2e target programs (see target_common.h). */
#include "target_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

void target_allow_ptrace(void)
{
#ifdef PR_SET_PTRACER
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

void target_ready(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
}

static double ts_seconds(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double target_now(void)
{
	return ts_seconds(CLOCK_MONOTONIC);
}

int target_schedstat(double *run_s, double *wait_s)
{
	char path[64], buf[128];
	unsigned long long run = 0, wait = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)gettid());
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%llu %llu", &run, &wait) != 2)
		run = wait = 0;
	fclose(f);
	*run_s = (double)run / 1e9;
	*wait_s = (double)wait / 1e9;
	return 0;
}

double target_thread_cpu(void)
{
	return ts_seconds(CLOCK_THREAD_CPUTIME_ID);
}

double target_arg(int argc, char **argv, int i, double def)
{
	char *end;
	double v;

	if (i >= argc)
		return def;
	v = strtod(argv[i], &end);
	if (end == argv[i] || *end) {
		fprintf(stderr, "%s: bad number '%s'\n", argv[0], argv[i]);
		exit(64);
	}
	return v;
}

unsigned long long target_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

void target_sleep_until_ns(unsigned long long ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}
