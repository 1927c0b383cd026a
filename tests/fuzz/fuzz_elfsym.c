/* Fuzz the ELF symbol-table reader (src/symbols/elfsym.c) and the ELF file validator
 * (src/symbols/elffile.c) on one image: whatever the bytes, loading either fails cleanly or gives a
 * table whose lookups stay inside it. */
#include <libelf.h>

#include "fuzz.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/elfsym.h"

static void check_table(struct elfsym_table *t)
{
	size_t n;

	elfsym_table_finish(t);
	n = elfsym_table_count(t);
	for (size_t i = 0; i < n; i++) {
		const struct elfsym *s = elfsym_table_get(t, i);

		FUZZ_CHECK(s && s->name);
		FUZZ_CHECK(i == 0 || elfsym_table_get(t, i - 1)->addr <= s->addr);
		(void)strlen(s->name);
		/* the symbol itself or another one at its address */
		FUZZ_CHECK(elfsym_table_find(t, s->addr) != NULL || s->sec_end <= s->addr);
		(void)elfsym_table_find(t, s->addr + s->size);
		(void)elfsym_table_find(t, s->addr - 1);
	}
	(void)elfsym_table_find(t, 0);
	(void)elfsym_table_find(t, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym_table *t = elfsym_table_new();
	struct elffile_section sec;
	struct elffile *ef;
	char hex[129];

	elfsym_table_load(t, data, size, ELFSYM_SYMTAB | ELFSYM_DYNSYM);
	check_table(t);
	elfsym_table_free(t);

	elf_version(EV_CURRENT);
	ef = elffile_open_memory(data, size, "fuzz");
	if (ef) {
		FUZZ_CHECK(ef->image == data && ef->size == size);
		elffile_build_id_hex(ef, hex);
		FUZZ_CHECK(strlen(hex) == 2 * ef->build_id_len);
		for (size_t i = 0; i < ef->nr_loads; i++) {
			const struct elffile_load *l = &ef->loads[i];
			const uint8_t *ptr = elffile_vaddr_ptr(ef, l->vaddr, 1);

			if (ptr)
				FUZZ_CHECK(ptr >= data && ptr < data + size);
			const struct elffile_load *c[8];
			size_t nc = elffile_load_candidates(ef, l->offset, l->flags, c, 8);

			FUZZ_CHECK(nc <= 8);
			for (size_t k = 0; k < nc; k++)
				FUZZ_CHECK(c[k] >= ef->loads && c[k] < ef->loads + ef->nr_loads);
		}
		/* compressed sections and MiniDebugInfo: bounded output, no crash */
		static const char *const packed[] = {".debug_frame", ".debug_info", ".debug_line"};
		for (size_t i = 0; i < sizeof(packed) / sizeof(packed[0]); i++)
			if (elffile_section_data(ef, packed[i], &sec) == 0 && sec.data)
				FUZZ_CHECK(sec.size <= ELFFILE_MAX_SECTION);
		(void)elffile_minidebuginfo(ef);
		static const char *const names[] = {".text",   ".eh_frame",	 ".debug_frame",
						    ".symtab", ".gnu_debugdata", ".debug_info"};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (elffile_section(ef, names[i], &sec) == 0 && sec.data)
				FUZZ_CHECK(sec.data >= data && sec.data + sec.size <= data + size);
		elffile_free(ef);
	}
	return 0;
}
