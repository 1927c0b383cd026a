/* One ELF file on disk, mapped read-only: identity (build-id), load segments, and where the
 * unwind tables are. Shared by the unwinder (eh_frame) and the symbolizer (symbols, DWARF).
 * Every offset and size read from the file is bounds-checked against the file size. */
#ifndef PERCH_ELFFILE_H
#define PERCH_ELFFILE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct elffile_load { /* one PT_LOAD program header */
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	uint64_t align; /* p_align */
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

struct elffile_section {
	const char *name;
	uint32_t type;	/* SHT_* */
	uint64_t flags; /* sh_flags */
	uint64_t vaddr; /* sh_addr (0 when not allocated) */
	uint64_t offset, size;
	const uint8_t *data; /* into the file image; NULL for SHT_NOBITS */
};

struct elffile {
	char *path;	      /* as given to elffile_open() */
	const uint8_t *image; /* the whole file, mmap'ed read-only */
	size_t size;
	Elf *elf;	      /* libelf handle over @image */
	unsigned int machine; /* EM_X86_64, EM_AARCH64, ... */
	int is_64;	      /* ELFCLASS64 */
	int is_dyn;	      /* ET_DYN (PIE or shared library) */
	uint8_t build_id[64]; /* from the NT_GNU_BUILD_ID note */
	size_t build_id_len;  /* 0 when there is none */
	struct elffile_load *loads;
	size_t nr_loads;
	/* PT_GNU_EH_FRAME segment; size 0 when absent (e.g. some static binaries) */
	uint64_t eh_frame_hdr_vaddr, eh_frame_hdr_size;
	/* .eh_frame and .debug_frame sections; size 0 when absent */
	uint64_t eh_frame_vaddr, eh_frame_size;
	uint64_t debug_frame_offset, debug_frame_size;
	int has_symtab;	    /* a non-empty .symtab */
	int has_debug_info; /* a non-empty .debug_info */
	/* private: sections decompressed by elffile_section_data(), and MiniDebugInfo */
	struct elffile_unpacked *unpacked_;
	size_t nr_unpacked_;
	uint8_t *mdi_image_;
	struct elffile *mdi_;
	int mdi_state_;	 /* 0 not looked at, 1 opened, -1 none or unusable */
	int owns_map_;	 /* private: the image is our mmap */
	void *map_base_; /* private: that mmap when the image starts inside it, else NULL */
	size_t map_len_;
};

/* Open and validate @path. NULL with errno set: ENOENT/EACCES from open(), ENOEXEC for a file
 * that is not a well-formed ELF file (headers out of bounds, truncated, ...). */
struct elffile *elffile_open(const char *path);
/* The ELF file of @size bytes that starts at byte @offset of the file @path (a library stored
 * inside an APK); named @name. NULL with errno set, as elffile_open(). */
struct elffile *elffile_open_range(const char *path, uint64_t offset, uint64_t size,
				   const char *name);
/* The same over a buffer the caller keeps alive (e.g. decompressed .gnu_debugdata). */
struct elffile *elffile_open_memory(const void *image, size_t size, const char *name);
void elffile_free(struct elffile *ef);

/* Find a section by name. 0 or -ENOENT. @out->data is borrowed from the image, as stored
 * (compressed sections too: see elffile_section_data()). */
int elffile_section(const struct elffile *ef, const char *name, struct elffile_section *out);

#define ELFFILE_MAX_SECTION (1u << 30) /* decompressed size elffile_section_data() accepts */

/* The contents of section @name, decompressed when the file stores it compressed
 * (SHF_COMPRESSED with zlib or zstd: elfsection.h); a ".debug_*" name also finds the old GNU
 * ".zdebug_*" form. A decompressed section is kept with @ef (the first look-up decompresses
 * it; an elffile is used by one thread at a time), @out->data borrowed until elffile_free();
 * @out->size is then the decompressed size, the other fields the stored section's. 0, -ENOENT,
 * or elfsection_get()'s errors for a section perch cannot decompress. */
int elffile_section_data(const struct elffile *ef, const char *name, struct elffile_section *out);

/* The ELF file inside @ef's .gnu_debugdata (MiniDebugInfo: an xz-compressed ELF with .symtab
 * and often .debug_frame, the same addresses as @ef), decompressed and opened on first use and
 * kept with @ef; NULL when there is none or it is unusable. Borrowed until elffile_free(). */
struct elffile *elffile_minidebuginfo(const struct elffile *ef);

/* Pointer into the file image for @len bytes at ELF virtual address @vaddr, if they are backed
 * by the file (inside one PT_LOAD's filesz); NULL otherwise. */
const uint8_t *elffile_vaddr_ptr(const struct elffile *ef, uint64_t vaddr, size_t len);

/* The PT_LOADs a loader can have mapped as a mapping that starts at file offset @offset with
 * permissions @pf (PF_R | PF_W | PF_X, from /proc/PID/maps), best first; up to @max of them
 * into @out, returns how many. A loader maps a segment from its offset rounded down to the page
 * size, which may be anything from 4 KiB to the segment's p_align (at most 64 KiB), and
 * mprotect() may split the mapping later, so every segment with file bytes in
 * [offset rounded down that way, p_offset + p_filesz) holding @offset is a candidate. lld puts
 * the end of one segment and the start of the next in the same file page: several segments
 * then hold the offset. Order: the execute bit equal to the mapping's first (loaders never
 * change it), then the write bit equal (a read-only mapping of a writable segment is RELRO,
 * second best), then the read bit, then file order. Which one is right can need the other
 * mappings of the same load (module.c). */
size_t elffile_load_candidates(const struct elffile *ef, uint64_t offset, uint32_t pf,
			       const struct elffile_load **out, size_t max);
/* Load bias of a mapping at address @start and file offset @offset made from segment @l:
 * run-time address = ELF vaddr + bias. */
uint64_t elffile_load_bias(const struct elffile_load *l, uint64_t start, uint64_t offset);

/* Build-id as lower-case hex into @buf (at least 129 bytes); "" when there is none. */
const char *elffile_build_id_hex(const struct elffile *ef, char *buf);

#endif
