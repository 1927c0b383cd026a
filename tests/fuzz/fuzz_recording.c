/* Fuzz the recording reader (src/profile/recording.c): any input gives an error or a profile whose
 * ids all resolve, and whose counts add up. Seeds: fixtures/fuzz/recording/ (a real recording,
 * written by tests/unit/check_recording.c, and cut-short copies of it). */
#include "fuzz.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"

static void sum_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	(void)thread;
	(void)stack;
	*(uint64_t *)arg += count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recording_info info;
	struct profile *p;
	uint64_t sum = 0, weights = 0;
	size_t n, i;

	if (recording_read_mem(data, size, &p, &info) < 0) {
		FUZZ_CHECK(p == NULL && info.error[0]);
		return 0;
	}
	FUZZ_CHECK(p != NULL && info.chunks > 0);
	const struct profile_sample *s = profile_samples(p, &n);

	FUZZ_CHECK(n == info.samples);
	for (i = 0; i < n; i++) {
		size_t k;
		const uint32_t *locs = profile_stack(p, s[i].stack, &k);

		FUZZ_CHECK(profile_thread_get(p, s[i].thread) != NULL);
		FUZZ_CHECK(k == 0 || locs != NULL);
		for (size_t j = 0; j < k; j++) {
			size_t nf;
			const uint32_t *fr = profile_location_frames(p, locs[j], &nf);

			FUZZ_CHECK(profile_location(p, locs[j]) != NULL);
			for (size_t f = 0; f < nf; f++)
				FUZZ_CHECK(profile_str(p, profile_frame(p, fr[f])->name) != NULL);
		}
		weights += s[i].weight;
	}
	profile_foreach_count(p, sum_count, &sum);
	FUZZ_CHECK(sum == profile_total_samples(p) && sum == weights);
	for (i = 0; i < profile_nr_meta(p); i++) {
		const char *v;

		FUZZ_CHECK(profile_meta_at(p, i, &v) != NULL && v != NULL);
	}
	profile_free(p);
	return 0;
}
