/* Fuzz the .eh_frame FDE indexer (src/symbols/ehframe.c) over raw section bytes. Byte 0 picks the
 * address size; the rest is the section, loaded at a fixed address. */
#include <errno.h>

#include "fuzz.h"
#include "perch/symbols/ehframe.h"

#define FUZZ_VADDR 0x401000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ehframe_entry *e = NULL;
	uint8_t *sec;
	int n;

	if (size < 1)
		return 0;
	/* an exact copy: a read one past the section is an ASan report, not a silent byte */
	sec = fuzz_dup(data + 1, size - 1);
	n = ehframe_parse(sec, size - 1, FUZZ_VADDR, data[0] & 1, &e);
	if (n > 0) {
		for (int i = 0; i < n; i++) {
			FUZZ_CHECK(i == 0 || e[i - 1].start < e[i].start);
			FUZZ_CHECK(e[i].fde >= FUZZ_VADDR && e[i].fde < FUZZ_VADDR + size - 1);
		}
		free(e);
	} else {
		FUZZ_CHECK(n == -ENOENT || n == -ENOEXEC || n == 0);
	}
	free(sec);
	return 0;
}
