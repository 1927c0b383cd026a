/* ELF symbol tables (.symtab, .dynsym, MiniDebugInfo) merged into one sorted table that maps an
 * address to the function holding it. Parses raw ELF images itself, every offset checked;
 * knows nothing about DWARF or separate debug files (symbolize.c and debugfile.c do that). */
#ifndef PERCH_ELFSYM_H
#define PERCH_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#define ELFSYM_MAX_SYMBOLS (4u << 20)  /* per symbol table; the rest is ignored */
#define ELFSYM_MAX_XZ_SIZE (64u << 20) /* decompressed .gnu_debugdata limit */

/* Which tables elfsym_table_load() reads. */
#define ELFSYM_SYMTAB 0x1 /* SHT_SYMTAB (.symtab) */
#define ELFSYM_DYNSYM 0x2 /* SHT_DYNSYM (.dynsym) */

/* One function symbol, e.g. from `readelf -s`:
 *   27: 0000000000001139    41 FUNC    LOCAL  DEFAULT   15 sym_local_helper
 *       addr                size type    bind             shndx name */
struct elfsym {
	uint64_t addr;
	uint64_t size;	  /* st_size; 0 when unknown */
	uint64_t sec_end; /* end address of the executable section holding @addr */
	const char *name; /* owned by the table; "@VERSION"/"@@VERSION" stripped */
	uint8_t type;	  /* STT_FUNC (also for STT_GNU_IFUNC) or STT_NOTYPE */
	uint8_t bind;	  /* STB_GLOBAL, STB_WEAK, STB_LOCAL */
	uint8_t hidden;	  /* a non-default version: "name@VER" in .symtab, or .dynsym's
			   * .gnu.version entry has its hidden bit (e.g. glibc's old sem_wait) */
};

struct elfsym_table;

struct elfsym_table *elfsym_table_new(void);
void elfsym_table_free(struct elfsym_table *t);

/* Add the function symbols of the tables selected by @which (ELFSYM_SYMTAB | ELFSYM_DYNSYM)
 * from the ELF image @image of @size bytes. Names are copied: @image may go away afterwards.
 * Kept: STT_FUNC/STT_GNU_IFUNC symbols with an address, STT_NOTYPE ones in an executable
 * section; skipped: empty names and aarch64/arm mapping symbols ($x, $d, $a, $t, "$x.<n>").
 * Returns the number of symbols added (0 or more), -ENOENT when the image has none of the
 * selected tables, -ENOEXEC when the ELF headers are malformed. A table with a bad sh_link or
 * sh_entsize is skipped; a symbol with a bad st_name is skipped. */
int elfsym_table_load(struct elfsym_table *t, const uint8_t *image, size_t size,
		      unsigned int which);

/* Decompress the xz stream of a .gnu_debugdata section and add its .symtab (MiniDebugInfo).
 * Returns as elfsym_table_load(), or -EBADMSG for a corrupt stream, -E2BIG when the output
 * exceeds ELFSYM_MAX_XZ_SIZE. */
int elfsym_table_load_xz(struct elfsym_table *t, const uint8_t *xz, size_t size);

/* Sort (and drop duplicates). Call once after the last load and before any find. */
void elfsym_table_finish(struct elfsym_table *t);

/* The function holding @addr: a FUNC symbol whose size covers @addr if there is one (the
 * nearest such), else the nearest symbol at or below @addr within its executable section if
 * that symbol has no size (past the end of a sized one, nothing).
 * Borrowed, valid until elfsym_table_free(); NULL when nothing fits. O(log n). */
const struct elfsym *elfsym_table_find(const struct elfsym_table *t, uint64_t addr);

/* For an address elfsym_table_find() does not name: where the gap it lies in begins, i.e. the
 * end (st_value + st_size) of the nearest sized symbol below it in the same executable
 * section. 0 when @addr is named or has no sized symbol below it in its section. */
uint64_t elfsym_table_gap_start(const struct elfsym_table *t, uint64_t addr);

/* The function a call to @name binds to, as gdb's lookup_minimal_symbol() finds it: a
 * global or weak STT_FUNC named @name first, else a local one; never a non-default version.
 * NULL when none. The first lookup builds an index by name (hence not const). */
const struct elfsym *elfsym_table_find_function(struct elfsym_table *t, const char *name);

/* First symbol named exactly @name (linear; for tests and tools), or NULL. */
const struct elfsym *elfsym_table_find_name(const struct elfsym_table *t, const char *name);

/* Number of symbols and the @i-th in address order (after elfsym_table_finish()). */
size_t elfsym_table_count(const struct elfsym_table *t);
const struct elfsym *elfsym_table_get(const struct elfsym_table *t, size_t i);

/* Decompress a whole xz stream into a malloc'ed buffer of at most @limit bytes.
 * 0 with *@out and *@out_size set, -EBADMSG for a corrupt or truncated stream, -E2BIG when the
 * output would exceed @limit, -ENOMEM. */
int elfsym_xz_decode(const uint8_t *in, size_t size, size_t limit, uint8_t **out, size_t *out_size);

#endif
