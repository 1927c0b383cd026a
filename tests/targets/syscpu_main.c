/* syscpu target (issue 36): the truth of a short system call's share of a thread's CPU time,
 * measured by the thread itself, for cpu mode where threads share CPUs.
 *
 *   syscpu -k clock|getppid|pread [-u US] [-n CALLS] [-i LOOPS] [-s SEC] [-d MS]
 *
 * After -d MS (a profiler may attach meanwhile), runs for -s SEC alternating sys_burn() (about
 * -u microseconds of computing, a loop count calibrated on the thread's CPU clock at start)
 * and sys_calls() (-n system calls of the kind -k, all through syscall(2): clock_gettime of
 * the process CPU clock, a real system call on every kernel; getppid; pread of 4 KiB of a
 * file it wrote, so in the page cache). Each part is timed with the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID), which counts only the time the thread ran: a CPU shared with
 * other threads does not change the truth. Those clock reads are themselves system calls
 * (clock_gettime, not syscall()); their cost, measured on back-to-back pairs all through the
 * run, is taken out of both parts. It prints
 *   "truth_sys P user_s U sys_s S calls N clock_us C"
 * where P = 100 * S / (U + S): a profiler is right when its share of the samples in syscall()
 * among the samples in sys_burn() and syscall() (clock_gettime left out) is P.
 *
 * With -i LOOPS the calls are spread through the computing instead: sys_burn() makes one every
 * LOOPS rounds of its loop (a program that reads a clock that is a real system call all the
 * time), so that a stop at the next system call's exit is never more than a few microseconds
 * away. The parts cannot be timed call by call then (a clock read costs as much as a call):
 * the calls' time is their count times their cost, measured on batches of 64 back-to-back
 * calls all through the run, and the computing is the rest of the thread's CPU time. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

#define SC_BLOCK    4096
#define SC_NOINLINE __attribute__((noipa, noinline))

static volatile uint64_t sink;
static int kind, fd;
static uint64_t spread; /* -i: one call every this many rounds of sys_burn() */
static uint64_t spread_calls;

static long one_call(uint64_t *rng);
static char buf[64 * SC_BLOCK];

SC_NOINLINE uint64_t sys_burn(uint64_t loops, uint64_t x);
SC_NOINLINE uint64_t sys_burn(uint64_t loops, uint64_t x)
{
	uint64_t rng = x | 1;

	for (uint64_t i = 0; i < loops; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (spread && i % spread == spread - 1) {
			x += (uint64_t)one_call(&rng);
			spread_calls++;
		}
	}
	return x;
}

static long one_call(uint64_t *rng)
{
	struct timespec ts;

	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	if (kind == 0)
		return syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &ts);
	if (kind == 1)
		return syscall(SYS_getppid);
	return syscall(SYS_pread64, fd, buf, SC_BLOCK, (off_t)(*rng % 64) * SC_BLOCK);
}

SC_NOINLINE long sys_calls(int n, uint64_t *rng);
SC_NOINLINE long sys_calls(int n, uint64_t *rng)
{
	long got = 0;

	for (int i = 0; i < n; i++)
		got += one_call(rng);
	return got;
}

static double num(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0) {
		fprintf(stderr, "syscpu: bad number '%s'\n", s);
		exit(64);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: syscpu -k clock|getppid|pread [-u US] [-n CALLS] [-i LOOPS] "
			"[-s SEC] [-d MS]\n");
	exit(64);
}

/* Loops of sys_burn() per microsecond of this thread's CPU time. */
static double calibrate(void)
{
	uint64_t loops = 1000;
	double t0, t1;

	for (;;) {
		t0 = target_thread_cpu();
		sink = sys_burn(loops, sink | 1);
		t1 = target_thread_cpu();
		if (t1 - t0 > 0.02)
			return (double)loops / ((t1 - t0) * 1e6);
		loops *= 2;
	}
}

/* -i: the calls spread through sys_burn(); their time from batches of 64 measured calls. */
static int run_spread(double secs, double user_us, double delay_ms, double per_us)
{
	uint64_t rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid(), x = 1, batches = 0, saved;
	double t0, per_call = 0, a, total;
	unsigned long long stop;

	target_allow_ptrace();
	target_ready();
	target_sleep_until_ns(target_now_ns() + (unsigned long long)(delay_ms * 1e6));
	stop = target_now_ns() + (unsigned long long)(secs * 1e9);
	t0 = target_thread_cpu();
	while (target_now_ns() < stop) {
		x = sys_burn((uint64_t)(user_us * per_us), x);
		if (spread_calls / 8192 >= batches) { /* a batch now and then: the cost of one */
			saved = spread_calls;
			a = target_thread_cpu();
			for (int i = 0; i < 64; i++)
				x += (uint64_t)one_call(&rng);
			per_call += (target_thread_cpu() - a) / 64;
			batches++;
			spread_calls = saved; /* (the batches' calls are not in the count) */
		}
	}
	total = target_thread_cpu() - t0;
	per_call = batches ? per_call / (double)batches : 0;
	sink = x;
	/* (the batches' own time is in neither part: sys_burn()'s samples do not hold it) */
	total -= (double)batches * 64 * per_call;
	printf("truth_sys %.4f user_s %.6f sys_s %.6f calls %llu clock_us %.3f\n",
	       100.0 * (double)spread_calls * per_call / total,
	       total - (double)spread_calls * per_call, (double)spread_calls * per_call,
	       (unsigned long long)spread_calls, per_call * 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = 8, user_us = 100, delay_ms = 300, ncalls = 3, per_us;
	double tu = 0, ts = 0, tclk = 0, a, b, c;
	uint64_t rng = 0x853c49e6748fea9bULL ^ (uint64_t)getpid(), x = 1, iters = 0, pairs = 0;
	long got = 0;
	unsigned long long stop;
	char path[] = "/tmp/perch-syscpu-XXXXXX";
	int opt;

	kind = -1;
	while ((opt = getopt(argc, argv, "k:u:n:i:s:d:")) != -1) {
		if (opt == 'k')
			kind = !strcmp(optarg, "clock")	    ? 0
			       : !strcmp(optarg, "getppid") ? 1
			       : !strcmp(optarg, "pread")   ? 2
							    : -1;
		else if (opt == 'u')
			user_us = num(optarg);
		else if (opt == 'n')
			ncalls = num(optarg);
		else if (opt == 'i')
			spread = (uint64_t)num(optarg);
		else if (opt == 's')
			secs = num(optarg);
		else if (opt == 'd')
			delay_ms = num(optarg);
		else
			usage();
	}
	if (kind < 0 || optind != argc)
		usage();
	fd = mkstemp(path);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
		perror("syscpu: cannot write its file");
		return 70;
	}
	unlink(path);
	per_us = calibrate();
	if (spread)
		return run_spread(secs, user_us, delay_ms, per_us);
	target_allow_ptrace();
	target_ready();
	target_sleep_until_ns(target_now_ns() + (unsigned long long)(delay_ms * 1e6));
	stop = target_now_ns() + (unsigned long long)(secs * 1e9);
	a = target_thread_cpu();
	while (target_now_ns() < stop) {
		x = sys_burn((uint64_t)(user_us * per_us), x);
		b = target_thread_cpu();
		got += sys_calls((int)ncalls, &rng);
		c = target_thread_cpu();
		tu += b - a;
		ts += c - b;
		/* every 16th round: what one clock read costs (two back to back) */
		if (++iters % 16 == 0) {
			a = target_thread_cpu();
			tclk += target_thread_cpu() - a;
			pairs++;
		}
		a = target_thread_cpu();
	}
	/* each part holds one whole clock read (half of the two that bound it) */
	tclk = pairs ? tclk / (double)pairs : 0;
	tu -= (double)iters * tclk;
	ts -= (double)iters * tclk;
	sink = x + (uint64_t)got;
	printf("truth_sys %.4f user_s %.6f sys_s %.6f calls %llu clock_us %.3f\n",
	       100.0 * ts / (tu + ts), tu, ts, (unsigned long long)(iters * (uint64_t)ncalls),
	       tclk * 1e6);
	return 0;
}
