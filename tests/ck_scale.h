/* Check's time limits on a busy machine: a limit is a guard against a hung test, not a
 * speed goal (speed is `make bench`'s), so a runner scales every limit by the machine's load
 * when it starts: CK_TIMEOUT_MULTIPLIER = 4 x (1-minute load per CPU, at least 1), unless the
 * caller set it. At load 13 on 2 CPUs a 60-s limit becomes 26 minutes; a test that hangs is
 * still stopped, and within .ci/run's budget. */
#ifndef PERCH_TESTS_CK_SCALE_H
#define PERCH_TESTS_CK_SCALE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void ck_scale_timeouts(void)
{
	double load = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char buf[32];
	FILE *f;

	if (getenv("CK_TIMEOUT_MULTIPLIER"))
		return;
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = 0;
		fclose(f);
	}
	load = cpus > 0 ? load / (double)cpus : load;
	snprintf(buf, sizeof(buf), "%.0f", 4 * (load > 1 ? load + 0.5 : 1));
	setenv("CK_TIMEOUT_MULTIPLIER", buf, 1);
}

#endif
