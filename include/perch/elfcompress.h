/* Decompression of ELF section contents: SHF_COMPRESSED sections (an Elf32/Elf64_Chdr, then a
 * zlib or zstd stream: gcc -gz, ld/objcopy --compress-debug-sections, Go's default), the older
 * GNU .zdebug_* sections ("ZLIB", a big-endian 8-byte size, a zlib stream) and xz streams
 * (MiniDebugInfo's .gnu_debugdata). Knows nothing about ELF beyond these headers: elffile.c
 * finds the sections (elffile_section_data()), debuginfo.c may hand its own to it. The input
 * is hostile: every size is checked, the output never exceeds the caller's limit. */
#ifndef PERCH_ELFCOMPRESS_H
#define PERCH_ELFCOMPRESS_H

#include <stddef.h>
#include <stdint.h>

/* Is the section compressed, and how: from its sh_flags and name. */
enum elfcompress_kind {
	ELFCOMPRESS_NONE,
	ELFCOMPRESS_CHDR,   /* SHF_COMPRESSED: Elf32/Elf64_Chdr first */
	ELFCOMPRESS_ZDEBUG, /* a .zdebug_* section that starts with "ZLIB" */
};
enum elfcompress_kind elfcompress_kind_of(const char *name, uint64_t sh_flags,
					  const uint8_t *data, size_t size);

/* Decompress the contents @data (@size bytes, as stored in the file) of a section of kind
 * @kind, in an ELF file of class @is_64 (ELFCLASS64) and byte order @big_endian. On success
 * 0 with a malloc'ed buffer in *@out (the caller frees it) of *@out_size bytes (the size the
 * header gives: ch_size, or the .zdebug size). Errors: -EINVAL for ELFCOMPRESS_NONE,
 * -EOPNOTSUPP for an unknown ch_type, -EBADMSG for a truncated header, a corrupt stream or
 * one whose length differs from the header's, -E2BIG when the header's size exceeds @limit,
 * -ENOMEM. */
int elfcompress_section(enum elfcompress_kind kind, const uint8_t *data, size_t size, int is_64,
			int big_endian, size_t limit, uint8_t **out, size_t *out_size);

/* Decompress a whole xz stream into a malloc'ed buffer of at most @limit bytes.
 * 0 with *@out and *@out_size set, -EBADMSG for a corrupt or truncated stream, -E2BIG when the
 * output would exceed @limit, -ENOMEM. */
int elfcompress_xz(const uint8_t *in, size_t size, size_t limit, uint8_t **out, size_t *out_size);

#endif
