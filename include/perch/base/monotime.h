/* The one clock perch times itself and its samples by: CLOCK_MONOTONIC in nanoseconds. */
#ifndef PERCH_MONOTIME_H
#define PERCH_MONOTIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
