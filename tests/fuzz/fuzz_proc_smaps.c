/* Fuzz the smaps and smaps_rollup parsers (src/proc/proc-smaps.c): the table stays sorted and
 * non-overlapping, and the total is the saturating sum of the entries. */
#include "fuzz.h"
#include "perch/proc/proc-smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	struct proc_smaps *s = proc_smaps_parse(text);
	struct proc_smaps_rollup r;
	struct proc_smaps_usage sum;

	FUZZ_CHECK(s);
	memset(&sum, 0, sizeof(sum));
	for (size_t i = 0; i < s->nr; i++) {
		FUZZ_CHECK(s->maps[i].map.start < s->maps[i].map.end);
		FUZZ_CHECK(i == 0 || s->maps[i - 1].map.end <= s->maps[i].map.start);
		proc_smaps_usage_add(&sum, &s->maps[i].u);
	}
	FUZZ_CHECK(!memcmp(&sum, &s->total, sizeof(sum)));
	(void)proc_smaps_uss(&s->total);
	proc_smaps_free(s);
	if (proc_smaps_rollup_parse(text, &r) == 0)
		FUZZ_CHECK(r.start < r.end || r.start == r.end);
	free(text);
	return 0;
}
