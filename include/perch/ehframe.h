/* A lookup table over .eh_frame FDEs, for ELF files that have .eh_frame but no
 * .eh_frame_hdr (static binaries linked without --eh-frame-hdr). Parses CIEs/FDEs with their
 * pointer encodings (DW_EH_PE_*), bounds-checked: a malformed entry ends the walk. */
#ifndef PERCH_EHFRAME_H
#define PERCH_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

struct elffile;

struct ehframe_entry {
	uint64_t start; /* ELF vaddr of the first instruction the FDE covers */
	uint64_t fde;   /* ELF vaddr of the FDE (its length field) */
};

/* Build the table, sorted by start, duplicates removed. Returns the number of entries with
 * *@out malloc'ed (caller frees), or -ENOENT (no .eh_frame) / -ENOEXEC (nothing parseable). */
int ehframe_build_table(const struct elffile *ef, struct ehframe_entry **out);

/* The same over raw section bytes loaded at @vaddr, for fixtures and fuzzing. */
int ehframe_parse(const uint8_t *data, size_t size, uint64_t vaddr, int is_64,
		  struct ehframe_entry **out);

#endif
