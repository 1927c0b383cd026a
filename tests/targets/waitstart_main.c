/* A process for `perch record --wait` to catch as it starts (tests/e2e/check_wait.c, the
 * benchmark's --wait rows).
 *
 *   waitstart [-n NAME] [-u MS] [-s MS] [-r MS] [-t FILE]
 *
 * In this order: -t writes "start <CLOCK_MONOTONIC ns>" to FILE first thing (the outside
 * clock of when it began); -u makes it not dumpable (PR_SET_DUMPABLE 0: perch without
 * CAP_SYS_PTRACE may not attach); -n renames it the way Android's zygote names an app
 * process: argv[0]'s memory (what /proc/PID/cmdline shows) becomes NAME and its comm the
 * last 15 characters of NAME (art SetThreadName); with -u it then spins MS ms in
 * before_dumpable() and becomes dumpable again (zygote's EnableDebugger); it prints
 * "ready PID"; then it spins in
 * startup_work() for -s MS (default 300) and in steady_work() for -r MS (default 700), and
 * exits 0. Every phase is busy on the CPU, on the wall clock. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static volatile unsigned long sink;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void spin_ms(double ms)
{
	double end = target_now() + ms / 1e3;

	while (target_now() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) void before_dumpable(double ms)
{
	spin_ms(ms);
}

__attribute__((noinline)) void startup_work(double ms)
{
	spin_ms(ms);
}

__attribute__((noinline)) void steady_work(double ms)
{
	spin_ms(ms);
}

/* What Android does: the name over argv's memory, and the thread name (comm) */
static void rename_to(char **argv, int argc, const char *arg)
{
	size_t room = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]);
	char *name = strdup(arg); /* @arg lives in the memory overwritten here */
	size_t n = strlen(name);

	memset(argv[0], 0, room + 1);
	memcpy(argv[0], name, n < room ? n : room);
	prctl(PR_SET_NAME, n > 15 ? name + n - 15 : name, 0, 0, 0);
	free(name);
}

int main(int argc, char **argv)
{
	uint64_t t0 = mono_ns();
	const char *name = NULL, *tfile = NULL;
	double undump = -1, start_ms = 300, run_ms = 700;
	int c;

	while ((c = getopt(argc, argv, "+n:u:s:r:t:")) != -1) {
		switch (c) {
		case 'n':
			name = optarg;
			break;
		case 'u':
			undump = atof(optarg);
			break;
		case 's':
			start_ms = atof(optarg);
			break;
		case 'r':
			run_ms = atof(optarg);
			break;
		case 't':
			tfile = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: waitstart [-n NAME] [-u MS] [-s MS] [-r MS] [-t FILE]\n");
			return 64;
		}
	}
	if (tfile) {
		FILE *f = fopen(tfile, "w");

		if (f) {
			fprintf(f, "start %llu\n", (unsigned long long)t0);
			fclose(f);
		}
	}
	target_allow_ptrace();
	if (undump >= 0)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (name)
		rename_to(argv, argc, name);
	if (undump >= 0) {
		before_dumpable(undump);
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		target_allow_ptrace();
	}
	target_ready();
	startup_work(start_ms);
	steady_work(run_ms);
	return 0;
}
