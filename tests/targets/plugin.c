/* libplugin.so for the dlopen target: plugin_hot() burns CPU for a while. */
#include <time.h>

__attribute__((visibility("default"), noinline)) unsigned long plugin_hot(double seconds);

static volatile unsigned long plugin_sink;

static double plugin_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

unsigned long plugin_hot(double seconds)
{
	double end = plugin_now() + seconds;
	unsigned long x = 99;

	do {
		for (int i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	} while (plugin_now() < end);
	plugin_sink += x;
	return x & 0xff;
}
