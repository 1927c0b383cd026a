/* libFuzzer harness for the zip reader: find the stored entry at a few offsets. */
#include <stddef.h>
#include <stdint.h>

#include "perch/symbols/zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zip_entry ze;

	for (uint64_t off = 0; off < size; off += size / 8 + 1)
		zip_find_stored(data, size, off, &ze);
	return 0;
}
