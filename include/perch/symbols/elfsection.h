/* Compressed ELF sections, as the program that reads them wants them: SHF_COMPRESSED sections
 * (an Elf32_Chdr/Elf64_Chdr, then a zlib or zstd stream: `gcc -gz=zlib`,
 * `objcopy --compress-debug-sections=zstd`, ld/lld --compress-debug-sections) and GNU
 * ".zdebug_*" sections ("ZLIB", the size as 8 big-endian bytes, then a zlib stream:
 * `-gz=zlib-gnu`). One place for every reader of debug sections: DWARF (debuginfo.c) and
 * CFI (.debug_frame, Go's default is compressed). Knows nothing of DWARF. */
#ifndef PERCH_ELFSECTION_H
#define PERCH_ELFSECTION_H

#include <stddef.h>
#include <stdint.h>

struct elffile;

/* Largest uncompressed section accepted by default (a header can claim any size). */
#define ELFSECTION_MAX_SIZE (1ULL << 30)

enum elfsection_comp {
	ELFSECTION_PLAIN = 0,
	ELFSECTION_ZLIB,
	ELFSECTION_ZSTD,
};

/* What a section holds, read from its header alone. */
struct elfsection_info {
	int comp;      /* enum elfsection_comp */
	uint64_t size; /* uncompressed size (sh_size for a plain section) */
	size_t skip;   /* bytes of header before the stream */
};

/* Is section @name (with section header flags @sh_flags) compressed, how, and how big is it
 * uncompressed? @data and @size are its raw bytes in the file (the header is all that is
 * read); @is_64: ELFCLASS64; @big_endian: ELFDATA2MSB. 0; -ENOEXEC for a header that does
 * not fit or says nothing sensible, -EOPNOTSUPP for a ch_type other than zlib and zstd. */
int elfsection_probe(const uint8_t *data, size_t size, uint64_t sh_flags, const char *name,
		     int is_64, int big_endian, struct elfsection_info *out);

/* The uncompressed contents of a compressed section in a malloc'ed buffer (*@out, at least one
 * byte allocated; *@out_size bytes of data). Same arguments as elfsection_probe(); @limit caps
 * the uncompressed size. 0; -EINVAL for a section that is not compressed; -ENOEXEC,
 * -EOPNOTSUPP as elfsection_probe(); -E2BIG over @limit; -EBADMSG for a corrupt stream or
 * one whose length differs from the header's. */
int elfsection_decompress(const uint8_t *data, size_t size, uint64_t sh_flags, const char *name,
			  int is_64, int big_endian, size_t limit, uint8_t **out, size_t *out_size);

/* Progressive decompression, for readers that need only a prefix of a big section (a cold
 * `perch dump` reads a few of glibc's 2000 CUs; inflating all of its .debug_info is most of
 * the work). The output buffer has the whole uncompressed size from the start (a large malloc:
 * pages cost nothing until written), so pointers into it stay valid; only its first
 * elfsection_stream_ready() bytes hold data. */
struct elfsection_stream;

/* Take @raw (malloc'ed; owned by the stream from now on, even on error), the raw bytes of a
 * compressed section, with the arguments of elfsection_probe(). 0 with *@out set; -EINVAL for
 * a section that is not compressed; elfsection_decompress()'s errors otherwise. */
int elfsection_stream_new(uint8_t *raw, size_t size, uint64_t sh_flags, const char *name, int is_64,
			  int big_endian, size_t limit, struct elfsection_stream **out);
/* The output buffer (elfsection_stream_size() bytes, one spare byte after them). */
uint8_t *elfsection_stream_data(const struct elfsection_stream *st);
size_t elfsection_stream_size(const struct elfsection_stream *st);
/* Bytes decompressed so far: a prefix of the section. */
size_t elfsection_stream_ready(const struct elfsection_stream *st);
/* Decompress until at least @upto bytes (capped at the size) are ready. 0; -EBADMSG for a
 * corrupt stream or one whose length differs from the header's (then it stays failed). */
int elfsection_stream_ensure(struct elfsection_stream *st, size_t upto);
/* Free the stream; with @keep_data the output buffer is returned to the caller instead of
 * freed (else NULL). NULL @st does nothing. */
uint8_t *elfsection_stream_free(struct elfsection_stream *st, int keep_data);

/* Section contents, borrowed from a file image or owned. */
struct elfsection_buf {
	const uint8_t *data;
	size_t size;
	uint8_t *owned_; /* private: freed by elfsection_buf_release() */
};

/* The contents of section @name of @ef, decompressed when it is compressed: for a name that
 * starts with ".debug_", ".zdebug_<rest>" is taken when there is no ".debug_<rest>". @out
 * borrows @ef's image when the section is stored plain. 0; -ENOENT (no such section, or it is
 * SHT_NOBITS), -ENOEXEC (out of the file), or elfsection_decompress()'s errors with @limit. */
int elfsection_get(const struct elffile *ef, const char *name, size_t limit,
		   struct elfsection_buf *out);
void elfsection_buf_release(struct elfsection_buf *b);

#endif
