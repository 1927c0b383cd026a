/* A lookup table over .eh_frame FDEs, for ELF files that have .eh_frame but no
 * .eh_frame_hdr (static binaries linked without --eh-frame-hdr). Parses CIEs/FDEs with their
 * pointer encodings (DW_EH_PE_*), bounds-checked: a malformed entry ends the walk. The
 * readers and the CIE parser are shared with the CFI evaluator (cfi.c). */
#ifndef PERCH_EHFRAME_H
#define PERCH_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

struct elffile;

struct ehframe_entry {
	uint64_t start; /* ELF vaddr of the first instruction the FDE covers */
	uint64_t fde;	/* ELF vaddr of the FDE (its length field) */
};

/* Build the table, sorted by start, duplicates removed. Returns the number of entries with
 * *@out malloc'ed (caller frees), or -ENOENT (no .eh_frame) / -ENOEXEC (nothing parseable). */
int ehframe_build_table(const struct elffile *ef, struct ehframe_entry **out);

/* The same over raw section bytes loaded at @vaddr, for fixtures and fuzzing. */
int ehframe_parse(const uint8_t *data, size_t size, uint64_t vaddr, int is_64,
		  struct ehframe_entry **out);

/* A bounds-checked reader over base[pos .. end); @vaddr is the address of base[0] (for pcrel
 * pointers), @addr_size 4 or 8 (for absptr). Any read past @end sets @bad and returns 0, so a
 * parser can check @bad once after a group of reads. */
struct ehframe_cursor {
	const uint8_t *base;
	size_t pos, end;
	uint64_t vaddr;
	int addr_size;
	int bad;
};

/* Little-endian unsigned of @n (1..8) bytes. */
uint64_t ehframe_read_le(struct ehframe_cursor *c, size_t n);
uint64_t ehframe_read_uleb(struct ehframe_cursor *c);
int64_t ehframe_read_sleb(struct ehframe_cursor *c);
/* A value in the format (low nibble) of DW_EH_PE encoding @enc, sdata sign-extended; no
 * application (an FDE's address range). An unknown format sets @bad. */
uint64_t ehframe_read_format(struct ehframe_cursor *c, uint8_t enc);
/* An encoded pointer: absptr, pcrel (relative to the field's address), datarel (base 0) and
 * aligned. 0, or -1 for omit, indirect, textrel, funcrel or a short read. */
int ehframe_read_pointer(struct ehframe_cursor *c, uint8_t enc, uint64_t *out);

/* A CIE as readelf --debug-dump=frames shows it:
 * "00000000 0000000000000014 00000000 CIE  Version: 1  Augmentation: "zR"  ... data: 1b" */
struct ehframe_cie {
	uint8_t version;   /* 1, 3 or 4 */
	uint8_t addr_size; /* the cursor's, or the CIE's own for version 4 */
	uint8_t fde_enc;   /* 'R' (DW_EH_PE_absptr without it) */
	uint8_t lsda_enc;  /* 'L' (DW_EH_PE_omit without it) */
	int has_aug_data;  /* 'z': FDEs carry an augmentation length */
	int signal_frame;  /* 'S': the FDEs describe signal trampolines */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;	 /* return address column */
	size_t insns, insns_end; /* the initial instructions: base[insns .. insns_end) */
};

/* Parse a CIE whose body after the CIE id is [pos, end) of @c (end = the end of the entry).
 * 0, or -1 for a version or augmentation perch cannot read or a truncated CIE. */
int ehframe_cie_parse(struct ehframe_cursor *c, struct ehframe_cie *cie);

#endif
