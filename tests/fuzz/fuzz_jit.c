/* Fuzz the JIT debugger interface reader (src/art/art-list.c, art-jit.c, art-symfile.c): the
 * descriptor, its entries and the in-memory ELF symfiles all come from the target. Byte 0 is
 * the ABI (art_mem.h), the rest the target's memory with the descriptor at its start. */
#include "art_mem.h"
#include "perch/art/art.h"
#include "perch/symbols/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct art_fuzz_mem m;
	struct perch_mem mem = {art_fuzz_read, &m};
	struct art_jit *j;
	struct art_jit_sym y;
	const struct cfi_table *cfi;
	struct art_symfile *s;

	if (size < 1)
		return 0;
	art_fuzz_abi(data[0], &m);
	m.p = fuzz_dup(data + 1, size - 1);
	m.size = size - 1;
	j = art_jit_new(&mem, ART_FUZZ_BASE, m.machine, m.is_64);
	for (int i = 0; i < 2; i++) {
		int ret = art_jit_update(j, 1000 + (uint64_t)i, i);

		FUZZ_CHECK(ret >= -4095 && ret <= 1);
	}
	FUZZ_CHECK(art_jit_stats(j)->entries <= ART_MAX_ENTRIES);
	/* look up a few pcs from the input: every hit must hold the pc */
	for (size_t off = 0; off + 8 <= m.size && off < 256; off += 24) {
		uint64_t pc;

		memcpy(&pc, m.p + off, 8);
		if (art_jit_find(j, pc, 0, &y, &cfi) == 0) {
			FUZZ_CHECK(y.start <= pc && pc < y.end);
			(void)strlen(y.name);
		}
	}
	art_jit_free(j);
	/* the symfile parser on the whole image too */
	s = art_symfile_new(m.p, m.size, m.machine, m.is_64);
	if (s) {
		for (size_t i = 0; i < art_symfile_count(s); i++) {
			const struct art_jit_sym *x = art_symfile_get(s, i);

			FUZZ_CHECK(x->start < x->end);
			FUZZ_CHECK(art_symfile_find(s, x->start) != NULL);
		}
		art_symfile_free(s);
	}
	free((void *)m.p);
	return 0;
}
