/* The sampler's histograms: stop windows and tick lateness in 1-us buckets, and their
 * percentiles for the summary. */
#include <stdint.h>

#include "sampler-int.h"

/* Count @us in @hist (1-us buckets, the last one for @max and over) and keep *@top, the highest
 * bucket used: the percentiles read no further (sampler_stop_percentile()). */
void sampler_hist_add(uint64_t *hist, uint64_t max, uint32_t *top, uint64_t us)
{
	if (us > max)
		us = max;
	hist[us]++;
	if (us > *top)
		*top = (uint32_t)us;
}

static uint64_t hist_percentile(const uint64_t *hist, size_t last, double pct)
{
	uint64_t total = 0, acc = 0, want;

	for (size_t i = 0; i <= last; i++)
		total += hist[i];
	if (!total)
		return 0;
	want = (uint64_t)((double)total * pct / 100.0);
	if (want >= total)
		want = total - 1;
	for (size_t i = 0; i <= last; i++) {
		acc += hist[i];
		if (acc > want)
			return i;
	}
	return last;
}

uint64_t sampler_stop_percentile(const struct sampler_stats *st, double pct)
{
	return hist_percentile(st->stop_hist, st->stop_hist_top, pct);
}

uint64_t sampler_tick_percentile(const struct sampler_stats *st, double pct)
{
	return hist_percentile(st->tick_hist, st->tick_hist_top, pct);
}
