/* Dalvik executable (dex) parsing: which method holds a dex pc, and its source line.
 * Reads standard dex 035-039 (and 040), compact dex ("cdex001") and the 041 container format
 * (docs/design/android-art.md 2.3/2.4). The kind of file is detected from its magic and header
 * size, never from an Android version. All input is hostile: every offset, size and count is
 * checked. */
#ifndef PERCH_DEX_H
#define PERCH_DEX_H

#include <stddef.h>
#include <stdint.h>

#define DEX_MAX_SIZE (256u << 20)   /* largest dex (or container) accepted */
#define DEX_MAX_METHODS (1u << 22)  /* methods with code indexed per dex; the rest are ignored */
#define DEX_MAX_POSITIONS (1u << 16) /* line-program rows decoded per method */

struct dex_file; /* opaque */

/* What a dex pc names. */
struct dex_method {
	char name[256];	      /* "pkg.Class.method(args)" in Java notation, e.g.
			       * "com.example.Foo.bar(int, java.lang.String)" */
	char file[128];	      /* source file from the class def ("Foo.java"), "" when unknown */
	uint32_t line;	      /* 0 when unknown */
	uint32_t code_offset; /* file offset of the method's insns */
};

/* Parse dex bytes (standard dex 035-039, compact dex "cdex001", the 041 container); @data is
 * copied. 0 or -EINVAL (malformed: message at debug level), every offset/size/count
 * bounds-checked.
 * 041: every offset in a container is relative to the container's start, so @data must be the
 * whole container (starting at its first header, header_offset 0): all its dex files are
 * indexed and dex_lookup() offsets are relative to the container. dex_span() tells what to read.
 * Compact dex: @data starts at the cdex header and must reach the end of its data section
 * (header + data_off + data_size), which in a vdex may lie past file_size. */
int dex_open(const uint8_t *data, size_t size, struct dex_file **out);
void dex_close(struct dex_file *d);

/* The method whose code holds byte @offset of the file (a dex pc minus the file's start) and the
 * line for that pc (debug info line program). 0, or -ENOENT. */
int dex_lookup(struct dex_file *d, uint64_t offset, struct dex_method *out);

/* Which bytes to read for the dex whose header starts @hdr (@avail bytes readable there, at
 * least 0x70 needed): they start @back bytes before the header and are @size bytes long
 * (standard dex: 0 and file_size; 041: the container; cdex: up to the end of the data section).
 * 0, or -EINVAL when the header is not one dex_open() could accept. */
int dex_span(const uint8_t *hdr, size_t avail, uint64_t *back, uint64_t *size);

/* Number of methods with code (after the lazy index is built) and the @i-th in code-offset
 * order: fills @out for the method's first instruction (line = first line-table row at or
 * before pc 0, as dex_lookup would report). 0, or -ENOENT when @i is out of range. For tests
 * and tools. */
size_t dex_method_count(struct dex_file *d);
int dex_method_get(struct dex_file *d, size_t i, struct dex_method *out, uint32_t *insns_bytes);

/* One line-table row of a method, as dexdump prints it ("0x0003 line=12"): @address in 16-bit
 * code units from the method's insns. */
struct dex_position {
	uint32_t address;
	uint32_t line;
};

/* The line-table rows of the method whose insns start at file offset @code_offset, in program
 * order, at most @max of them. Returns the number of rows (may exceed @max: the rest are not
 * stored), or -ENOENT when no method starts there. */
int dex_method_positions(struct dex_file *d, uint32_t code_offset, struct dex_position *out,
			 size_t max);

#endif
