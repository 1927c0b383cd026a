/* Fuzz the /proc/stat parser (src/proc/cpustat.c) and the usage arithmetic on what it parsed. */
#include "fuzz.h"
#include "perch/proc/cpustat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	struct cpustat st;
	struct cpustat_usage u;

	if (cpustat_parse(text, &st) == 0) {
		FUZZ_CHECK(st.nr_cpus <= CPUSTAT_MAX_CPUS);
		for (size_t i = 0; i < st.nr_cpus; i++) {
			FUZZ_CHECK(cpustat_find(&st, st.cpus[i].id) != NULL);
			if (cpustat_usage(&st.all, &st.cpus[i].t, &u) == 0)
				FUZZ_CHECK(u.ticks > 0);
		}
		cpustat_release(&st);
	}
	free(text);
	return 0;
}
