/* Dalvik executable (dex) parsing: which method holds a dex pc, and its source line.
 * Reads standard dex 035-039 (and 040), compact dex ("cdex001") and the 041 container format
 * (docs/design/android-art.md 2.3/2.4). The kind of file is detected from its magic and header
 * size, never from an Android version. All input is hostile: every offset, size and count is
 * checked. */
#ifndef PERCH_DEX_H
#define PERCH_DEX_H

#include <stddef.h>
#include <stdint.h>

#define DEX_MAX_SIZE	  (256u << 20) /* largest dex (or container) accepted */
#define DEX_CHUNK	  (16u << 10)  /* what a lazily read dex file reads at a time */
#define DEX_MAX_METHODS	  (1u << 22)   /* methods with code indexed per dex; the rest are ignored */
#define DEX_MAX_POSITIONS (1u << 16)   /* line-program rows decoded per method */

struct dex_file; /* opaque */

/* What a dex pc names. */
struct dex_method {
	char name[256];	      /* "pkg.Class.method", as dex_java_name() gives every Java frame */
	char signature[256];  /* its parameters in Java notation, "(int, java.lang.String[])" */
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

/* Where the bytes of a dex file perch does not hold come from (a dex file in a target's
 * memory): copy @len bytes at byte @off of the dex (for 041: of the container) into @buf.
 * 0 or -errno. */
struct dex_source {
	int (*read)(void *ctx, uint64_t off, void *buf, size_t len);
	void *ctx;
};

/* As dex_open() for the @size bytes behind @src, without copying them: the header now, the
 * rest DEX_CHUNK bytes at a time the first time a lookup needs them (address space for @size
 * bytes is reserved, memory is used only for what was read). @src is copied, its context
 * borrowed until dex_close(). A chunk that cannot be read leaves what needs it unknown
 * (-ENOENT from dex_lookup()), never an error. 0, -EINVAL, -ENOMEM. */
int dex_open_source(const struct dex_source *src, uint64_t size, struct dex_file **out);
/* Bytes read through the source so far (dex_open(): the whole size). */
uint64_t dex_bytes_read(const struct dex_file *d);
void dex_close(struct dex_file *d);

enum dex_kind {
	DEX_KIND_STANDARD,  /* dex 035-040 */
	DEX_KIND_COMPACT,   /* "cdex001" */
	DEX_KIND_CONTAINER, /* dex 041 (a container of one or more dex files) */
};

/* What the header at @hdr (@avail bytes readable there) says about where the dex's bytes are,
 * before reading more than the header. Offsets count from the start of the span dex_open()
 * needs, which is @back bytes before the header:
 *   standard: the file (back 0, size file_size);
 *   compact:  the header up to the end of its data section (max(file_size, data_off +
 *             data_size): in a vdex the data section is shared by all its dex files and lies
 *             after them), code in the part of it this dex owns (owned_data_begin/end);
 *   041:      the whole container (back = header_offset, size = container_size).
 * 0, or -EINVAL when dex_open() could not accept it. */
struct dex_header_info {
	enum dex_kind kind;
	uint64_t back, size;
	uint64_t code_start, code_end; /* where the dex's method code can lie */
};
int dex_header_info(const uint8_t *hdr, size_t avail, struct dex_header_info *out);

/* The method whose code holds byte @offset of the file (a dex pc minus the file's start) and the
 * line for that pc (debug info line program). 0, or -ENOENT. */
int dex_lookup(struct dex_file *d, uint64_t offset, struct dex_method *out);

/* dex_header_info()'s @back and @size alone. */
int dex_span(const uint8_t *hdr, size_t avail, uint64_t *back, uint64_t *size);

/* The one name perch gives a Java method, whatever ART component produced it: the class and
 * the method, without return type or parameters ("com.example.Main.fib"). ART's JIT and AOT
 * symbols (MiniDebugInfo: "com.example.Main.fib"; full debug info: "int
 * com.example.Main.fib(int)") and dex method ids (dex.c builds ART's full PrettyMethod form and
 * passes it here) all come out the same, as simpleperf and libunwindstack show them. A
 * "[DEDUPED] " prefix is kept; a name that is not a Java method (an ART stub such as
 * "art_jni_trampoline", a C++ name) is copied unchanged. Cut to @size - 1 bytes. Returns
 * @out. */
const char *dex_java_name(const char *art_name, char *out, size_t size);

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
