/* Fuzz MiniDebugInfo (src/symbols/elfsym.c): a .gnu_debugdata section is an xz stream holding an
 * ELF image with a .symtab; both layers come from the target's files. */
#include "fuzz.h"
#include "perch/symbols/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym_table *t = elfsym_table_new();
	uint8_t *out = NULL;
	size_t out_size = 0;

	elfsym_table_load_xz(t, data, size);
	elfsym_table_finish(t);
	for (size_t i = 0; i < elfsym_table_count(t); i++)
		(void)strlen(elfsym_table_get(t, i)->name);
	elfsym_table_free(t);
	/* a small limit: the E2BIG path */
	if (elfsym_xz_decode(data, size, 4096, &out, &out_size) == 0) {
		FUZZ_CHECK(out_size <= 4096);
		free(out);
	}
	return 0;
}
