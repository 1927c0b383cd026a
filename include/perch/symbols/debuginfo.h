/* DWARF line tables and inlined-subroutine chains, through libdwarf. The only file that
 * includes libdwarf.h is src/symbols/debuginfo.c (Debian 12 ships libdwarf 20210528; the API
 * changed in later releases, so keep every libdwarf call there). */
#ifndef PERCH_DEBUGINFO_H
#define PERCH_DEBUGINFO_H

#include <stdint.h>

#include "perch/symbols/symbolize.h"

struct debuginfo;

/* Open the DWARF of the ELF file at @path. NULL with errno set: ENOENT when the file has no
 * DWARF, ENOEXEC when it is malformed, or open()'s errno. */
struct debuginfo *debuginfo_open(const char *path);
void debuginfo_free(struct debuginfo *di);

/* Frames for ELF virtual address @vaddr, innermost first: out[0] is the innermost inlined
 * function with the file:line of @vaddr; each next entry is the function that inlined the
 * previous one, with the call site's file:line (DW_AT_call_file/line); the last entry is the
 * concrete subprogram (inlined = 0). Names as in DWARF (linkage name preferred, mangled;
 * the symbolizer demangles; a C++ function without one is qualified with its enclosing
 * namespaces and classes, e.g. "ns::hot_inline"). Returns the number of frames, 0 when the DWARF
 * does not cover
 * @vaddr. Strings are owned by @di. */
int debuginfo_lookup(struct debuginfo *di, uint64_t vaddr, struct sym_frame *out, int max);

/* A call site (DW_TAG_call_site, DW_TAG_GNU_call_site) as gdb reads it for its tail-call
 * frames (dwarf2/read.c read_call_site_scope, dwarf2/loc.c call_site_find_chain). */
enum debuginfo_target {
	DEBUGINFO_TARGET_NONE,	/* unknown or computed (DW_AT_call_target): no chain through it */
	DEBUGINFO_TARGET_ADDRS, /* the callee's entry: @addrs (ELF vaddrs of this file) */
	DEBUGINFO_TARGET_NAME,	/* a declaration: the function named @name, in some module */
};

struct debuginfo_call {
	uint64_t pc;	       /* return address: DW_AT_call_return_pc, or DW_AT_low_pc (GNU) */
	int tail;	       /* DW_AT_call_tail_call / DW_AT_GNU_tail_call: a jump, no return */
	int kind;	       /* enum debuginfo_target */
	const uint64_t *addrs; /* ADDRS: the start of each range of the callee */
	size_t nr_addrs;
	const char *name; /* NAME: the declaration's linkage name, else its DW_AT_name */
};

/* The call site whose return address is @pc (a caller frame's pc). 0, or -ENOENT. The
 * pointers in @out are owned by @di. */
int debuginfo_call_site(struct debuginfo *di, uint64_t pc, struct debuginfo_call *out);

/* The entry (start of the first range) of the concrete function whose code holds @vaddr.
 * 0, or -ENOENT. */
int debuginfo_func_entry(struct debuginfo *di, uint64_t vaddr, uint64_t *entry);

/* The tail-call sites of the function whose entry is exactly @entry: *@calls and *@n (none when
 * the function does not say it lists all its calls, DW_AT_call_all_calls: gdb then does not
 * look through it). 0, or -ENOENT when no function starts at @entry. Owned by @di. */
int debuginfo_tail_calls(struct debuginfo *di, uint64_t entry, const struct debuginfo_call **calls,
			 size_t *n);

/* How much of .debug_info the lookups so far have decompressed (*@ready) out of its
 * uncompressed size (*@size); both the size for a section stored plain. For tests and
 * benchmarks: a lookup decompresses only up to the end of the units it reads. */
void debuginfo_info_ready(struct debuginfo *di, uint64_t *ready, uint64_t *size);

#endif
