/* Fuzz the /proc/PID/maps parser (src/proc/proc-maps.c): any text parses into a sorted,
 * non-overlapping table, and lookups agree with it. */
#include "fuzz.h"
#include "perch/proc/proc-maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	size_t bad = 0;
	struct proc_maps *m = proc_maps_parse(text, &bad);

	FUZZ_CHECK(m);
	for (size_t i = 0; i < m->nr; i++) {
		const struct proc_map *pm = &m->maps[i];

		FUZZ_CHECK(pm->start < pm->end);
		FUZZ_CHECK(pm->path);
		FUZZ_CHECK(i == 0 || m->maps[i - 1].end <= pm->start);
		FUZZ_CHECK(proc_maps_find(m, pm->start) == pm);
		FUZZ_CHECK(proc_maps_find(m, pm->end - 1) == pm);
		FUZZ_CHECK(proc_map_basename(pm) != NULL);
		(void)strlen(pm->path);
	}
	if (m->nr)
		FUZZ_CHECK(!proc_maps_find(m, m->maps[m->nr - 1].end) ||
			   proc_maps_find(m, m->maps[m->nr - 1].end) != &m->maps[m->nr - 1]);
	proc_maps_free(m);
	free(text);
	return 0;
}
