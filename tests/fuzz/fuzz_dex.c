/* libFuzzer harness for the dex parser: open, look up every even offset, read line tables. */
#include <stddef.h>
#include <stdint.h>

#include "perch/dex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dex_position rows[16];
	struct dex_method m;
	struct dex_file *d;
	uint64_t back, span;

	dex_span(data, size, &back, &span);
	if (dex_open(data, size, &d) < 0)
		return 0;
	for (uint64_t off = 0; off < size; off += 2)
		if (dex_lookup(d, off, &m) == 0)
			dex_method_positions(d, m.code_offset, rows, 16);
	for (size_t i = 0; i < dex_method_count(d); i++)
		dex_method_get(d, i, &m, NULL);
	dex_close(d);
	return 0;
}
