/* Fuzz the dex debugger interface reader (src/art/art-list.c, art-dex.c, with dex.c behind it): the
 * descriptor, the entries and the dex files they point at come from the target. Byte 0 is the
 * ABI (art_mem.h), the rest the target's memory with the descriptor at its start; dex pcs to
 * look up are taken from the input too. */
#include "art_mem.h"
#include "perch/art/art.h"
#include "perch/art/dex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct art_fuzz_mem m;
	struct perch_mem mem = {art_fuzz_read, &m};
	struct art_dex *d;
	struct dex_method out;

	if (size < 1)
		return 0;
	art_fuzz_abi(data[0], &m);
	m.p = fuzz_dup(data + 1, size - 1);
	m.size = size - 1;
	d = art_dex_new(&mem, ART_FUZZ_BASE, m.machine, m.is_64);
	if (art_dex_update(d, 1, 0) >= 0) {
		for (size_t off = 0; off + 8 <= m.size && off < 512; off += 8) {
			uint64_t pc;

			memcpy(&pc, m.p + off, 8);
			pc = ART_FUZZ_BASE + pc % (m.size + 16);
			if (art_dex_lookup(d, pc, &out) == 0) {
				FUZZ_CHECK(memchr(out.name, '\0', sizeof(out.name)) != NULL);
				FUZZ_CHECK(memchr(out.file, '\0', sizeof(out.file)) != NULL);
			}
		}
	}
	art_dex_free(d);
	free((void *)m.p);
	return 0;
}
