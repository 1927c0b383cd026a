/* Address -> function, file:line and inlined callers, for a code address inside an ELF file.
 * Names come from DWARF (debuginfo.c), .symtab/.dynsym, MiniDebugInfo (.gnu_debugdata) and
 * separate debug files (build-id, .gnu_debuglink). C++ and Rust names are demangled.
 * Results are cached per (build-id, address), in memory and, for DWARF results, on disk
 * (symcache.h). No ptrace in here: it works on files. */
#ifndef PERCH_SYMBOLIZE_H
#define PERCH_SYMBOLIZE_H

#include <stdint.h>

struct cfi_table;
struct debuginfo_call;
struct elffile;

/* One source-level frame. A pc can give several: inlined functions first, then the function
 * they were inlined into. */
struct sym_frame {
	const char *func;  /* demangled name; NULL when unknown */
	const char *file;  /* source path; NULL when unknown */
	unsigned int line; /* 0 when unknown */
	int inlined;	   /* 1: this frame was inlined into the next frame in the array */
};

#define SYM_MAX_INLINE 16 /* frames one address can expand to */

struct symbolizer;

/* @sysroot: where to look for separate debug files ("<sysroot>/usr/lib/debug/.build-id/..");
 * NULL means "/". @symfs: optional directory of unstripped copies tried first (by build-id
 * and by path), NULL for none. */
struct symbolizer *symbolizer_new(const char *sysroot, const char *symfs);
void symbolizer_free(struct symbolizer *s);

/* Resolve @vaddr, an ELF virtual address in @ef (runtime pc minus load bias; callers pass
 * pc - 1 for return addresses). Fills @out innermost first, at most @max entries.
 * Returns the number of frames (>= 1), or 0 when nothing names the address.
 * Strings are borrowed and stay valid until symbolizer_free(). */
int symbolizer_lookup(struct symbolizer *s, const struct elffile *ef, uint64_t vaddr,
		      struct sym_frame *out, int max);

/* Where the function holding @vaddr starts, for code no symbol names (a stripped region):
 * the initial location of the FDE that covers @vaddr in @cfi (the module's CFI index, may be
 * NULL), else the end of the nearest symbol below it in its section (the gap between
 * symbols). 0 with *@start set, or -ENOENT when neither bounds it. Lets a profile show one
 * frame per unnamed function ("libfoo.so+0x1a20", the start's offset) instead of one per
 * pc. */
int symbolizer_func_start(struct symbolizer *s, const struct elffile *ef, uint64_t vaddr,
			  const struct cfi_table *cfi, uint64_t *start);

/* For tail-call frames (tailcall.h), on the module's DWARF (see debuginfo.h for what they
 * return; -ENOENT as well when the module has no DWARF): the call site whose return address
 * is @pc; the tail calls of the function whose entry is @entry. Borrowed until
 * symbolizer_free(). */
int symbolizer_call_site(struct symbolizer *s, const struct elffile *ef, uint64_t pc,
			 struct debuginfo_call *out);
int symbolizer_tail_calls(struct symbolizer *s, const struct elffile *ef, uint64_t entry,
			  const struct debuginfo_call **calls, size_t *n);
/* The entry of the function holding @vaddr: from DWARF (the concrete subprogram, inlined
 * code included), else the symbol that names it. 0 or -ENOENT. */
int symbolizer_func_entry(struct symbolizer *s, const struct elffile *ef, uint64_t vaddr,
			  uint64_t *entry);
/* The address of the function @name binds to in @ef (elfsym_table_find_function()). 0 or
 * -ENOENT. */
int symbolizer_find_function(struct symbolizer *s, const struct elffile *ef, const char *name,
			     uint64_t *vaddr);

/* How many modules had their symbol tables or DWARF read (the rest were answered from the
 * on-disk cache of symcache.h, or not asked about). */
int symbolizer_modules_loaded(const struct symbolizer *s);

/* Demangle a C++ (Itanium ABI) or Rust (legacy "_ZN...17h<hash>E" without its hash, or v0
 * "_R...") name, with libiberty. Returns a malloc'ed string, or NULL when @name is not a
 * mangled name. */
char *symbolize_demangle(const char *name);

#endif
