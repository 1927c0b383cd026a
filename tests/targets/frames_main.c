/* frames target: an app's UI thread drawing frames on a vsync timer, with slow and frozen
 * frames on purpose, logging each frame as hwui would time it (the truth for the framestats
 * e2e test, tests/e2e/check_frames.c).
 *
 *   frames SECONDS LOG [HZ]
 *
 * The main thread wakes at every vsync (CLOCK_MONOTONIC, period 1/HZ s, default 60 Hz) and
 * draws: draw_frame() runs 2 ms; every 30th frame jank_frame() runs 45 ms (slow); every 150th
 * frame (the 75th first) frozen_frame() runs 750 ms (frozen). A frame that overruns skips the
 * vsyncs it missed, as Choreographer does. After each frame one line goes to LOG (appended,
 * one write):
 *   FLAGS INTENDED_NS START_NS END_NS PERIOD_NS .
 * INTENDED the vsync it was drawn for, START when drawing began, END when it was done; FLAGS 1
 * for the first frame (hwui's WindowLayoutChanged), else 0. The fake adb's dumpsys serves
 * these lines as framestats rows. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static volatile uint64_t sink;

__attribute__((noinline)) static void spin(uint64_t ns)
{
	uint64_t end = target_now_ns() + ns;

	while (target_now_ns() < end)
		sink++;
}

__attribute__((noinline)) static void draw_frame(void)
{
	spin(2000000);
}

__attribute__((noinline)) static void jank_frame(void)
{
	spin(45000000);
}

__attribute__((noinline)) static void frozen_frame(void)
{
	spin(750000000);
}

int main(int argc, char **argv)
{
	double secs = target_arg(argc, argv, 1, 10), hz = target_arg(argc, argv, 3, 60);
	uint64_t period, t0, intended, start, end, stop;
	int fd;

	if (argc < 3 || hz < 1) {
		fprintf(stderr, "usage: frames SECONDS LOG [HZ]\n");
		return 64;
	}
	fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	target_allow_ptrace();
	period = (uint64_t)(1e9 / hz);
	t0 = target_now_ns();
	stop = t0 + (uint64_t)(secs * 1e9);
	target_ready();
	intended = t0 + period;
	for (unsigned long i = 0; intended < stop; i++) {
		char line[160];
		int len;

		target_sleep_until_ns(intended);
		start = target_now_ns();
		if (i % 150 == 75)
			frozen_frame();
		else if (i % 30 == 15)
			jank_frame();
		else
			draw_frame();
		end = target_now_ns();
		len = snprintf(line, sizeof(line), "%d %llu %llu %llu %llu .\n", i == 0,
			       (unsigned long long)intended, (unsigned long long)start,
			       (unsigned long long)end, (unsigned long long)period);
		if (write(fd, line, (size_t)len) != len)
			return 1;
		intended = t0 + ((end - t0) / period + 1) * period; /* the next vsync */
	}
	close(fd);
	return 0;
}
