/* libFuzzer harness for perf map parsing: add the text in two pieces, look up addresses named
 * by the input itself. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "perch/symbols/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm = perfmap_new_empty();
	size_t half = size / 2, used;
	uint64_t a;

	used = perfmap_add_text(pm, (const char *)data, half);
	perfmap_add_text(pm, (const char *)data + used, size - used);
	for (size_t i = 0; i + 8 <= size; i += 8) {
		memcpy(&a, data + i, 8);
		perfmap_find(pm, a);
		perfmap_find(pm, a & 0xffffffffffffULL);
	}
	perfmap_find(pm, 0);
	perfmap_free(pm);
	return 0;
}
