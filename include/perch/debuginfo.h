/* DWARF line tables and inlined-subroutine chains, through libdwarf. The only file that
 * includes libdwarf.h is src/debuginfo.c (Debian 12 ships libdwarf 20210528; the API changed
 * in later releases, so keep every libdwarf call there). */
#ifndef PERCH_DEBUGINFO_H
#define PERCH_DEBUGINFO_H

#include <stdint.h>

#include "perch/symbolize.h"

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
 * namespaces and classes, e.g. "ns::hot_inline"). Returns the number of frames, 0 when the DWARF does not cover
 * @vaddr. Strings are owned by @di. */
int debuginfo_lookup(struct debuginfo *di, uint64_t vaddr, struct sym_frame *out, int max);

#endif
