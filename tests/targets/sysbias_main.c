/* sysbias target (also `make bench`'s bench-syscall): the system-call bias target. After -d MS
 * (a profiler may attach meanwhile), runs for -s SEC alternating
 * sys_user() (about -u US microseconds of computing) and sys_io() (-n preads of 4 KiB from a
 * file it wrote itself, so they hit the page cache and are cheap system calls), and measures
 * the truth itself: "truth_io P user_s U io_s I calls N" where P = 100 * I / (U + I) and U, I
 * are CLOCK_MONOTONIC seconds spent inside each function (call included). A profiler is right
 * when its share of sys_io() among the samples in either function is P. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

#define SYS_BLOCK    4096
#define SYS_NOINLINE __attribute__((noipa, noinline))

static volatile uint64_t sink;

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double num(const char *opt, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0) {
		fprintf(stderr, "sysbias: bad %s '%s'\n", opt, s);
		exit(64);
	}
	return v;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

SYS_NOINLINE uint64_t sys_user(uint64_t ns, uint64_t x);
SYS_NOINLINE uint64_t sys_user(uint64_t ns, uint64_t x)
{
	uint64_t end = now_ns() + ns;

	do {
		for (int i = 0; i < 200; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	} while (now_ns() < end);
	return x;
}

SYS_NOINLINE long sys_io(int fd, char *buf, int n, uint64_t *rng);
SYS_NOINLINE long sys_io(int fd, char *buf, int n, uint64_t *rng)
{
	long got = 0;

	for (int i = 0; i < n; i++)
		got += pread(fd, buf, SYS_BLOCK, (off_t)(xorshift(rng) % 256) * SYS_BLOCK);
	return got;
}

int main(int argc, char **argv)
{
	double delay_ms = 300, secs = 10, user_us = 100, nio = 3;
	uint64_t rng = 0x853c49e6748fea9bULL ^ (uint64_t)getpid(), x = 1, tu = 0, ti = 0, calls = 0;
	char path[] = "/tmp/perch-sysbias-XXXXXX";
	static char buf[256 * SYS_BLOCK];
	uint64_t stop;
	long got = 0;
	int fd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-d") && i + 1 < argc)
			delay_ms = num("-d", argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			secs = num("-s", argv[++i]);
		else if (!strcmp(argv[i], "-u") && i + 1 < argc)
			user_us = num("-u", argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			nio = num("-n", argv[++i]);
		else {
			fprintf(stderr, "usage: sysbias [-d MS] [-s SEC] [-u US] [-n PREADS]\n");
			return 64;
		}
	}
	fd = mkstemp(path);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
		perror("sysbias: cannot write its file");
		return 70;
	}
	unlink(path);
	target_allow_ptrace();
	target_ready();
	{
		struct timespec ts = {(time_t)(delay_ms / 1000),
				      (long)((delay_ms - 1000 * (time_t)(delay_ms / 1000)) * 1e6)};

		while (nanosleep(&ts, &ts))
			;
	}
	stop = now_ns() + (uint64_t)(secs * 1e9);
	for (uint64_t t = now_ns(); t < stop;) {
		uint64_t t1, t2;

		x = sys_user((uint64_t)(user_us * 1000), x);
		t1 = now_ns();
		got += sys_io(fd, buf, (int)nio, &rng);
		t2 = now_ns();
		tu += t1 - t;
		ti += t2 - t1;
		calls += (uint64_t)nio;
		t = t2;
	}
	sink = x + (uint64_t)got;
	printf("truth_io %.4f user_s %.6f io_s %.6f calls %llu\n",
	       100.0 * (double)ti / (double)(tu + ti), (double)tu / 1e9, (double)ti / 1e9,
	       (unsigned long long)calls);
	return 0;
}
