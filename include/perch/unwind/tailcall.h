/* Tail-call frames: the functions a chain of tail calls (jumps, no return address left on the
 * stack) went through between a caller frame and its callee, rebuilt from DWARF call-site
 * information (DW_TAG_call_site with DW_AT_call_tail_call) where the path between the two is
 * unique, as gdb does (dwarf2/loc.c call_site_find_chain, dwarf2/frame-tailcall.c):
 *
 *   the caller's call site (the one whose return address is the caller frame's pc) names its
 *   callee; if that is not the callee frame's function, every path of tail calls from there
 *   that reaches that function is followed (through functions that list all their calls,
 *   DW_AT_call_all_calls), each call site at most once per path. One path: its call sites are
 *   the frames. Several: the call sites they all begin with and all end with. None in common,
 *   a call site whose target is unknown or computed, a target that is no function entry: no
 *   frames.
 *
 * Works on addresses of a process through a small interface, so it is tested on files. */
#ifndef PERCH_TAILCALL_H
#define PERCH_TAILCALL_H

#include <stdint.h>

struct elffile;
struct symbolizer;

#define TAILCALL_MAX 16 /* frames one chain can give; a longer path gives none */

/* The process's code: the module holding run-time address @addr, its ELF file and load bias
 * (run-time address = ELF vaddr + bias). 0 or -ENOENT. */
typedef int tailcall_locate_fn(void *arg, uint64_t addr, const struct elffile **ef, uint64_t *bias);

struct tailcall;

/* Names and DWARF come from @s; addresses are mapped by @locate(@arg, ...). */
struct tailcall *tailcall_new(struct symbolizer *s, tailcall_locate_fn *locate, void *arg);
void tailcall_free(struct tailcall *tc);
/* Forget cached chains: the process's mappings changed (exec, dlopen, dlclose). */
void tailcall_flush(struct tailcall *tc);

/* The tail-call frames between a caller frame whose pc (return address) is @caller_ret and
 * its callee frame at @callee_pc (the pc itself for the innermost frame, the return address
 * minus one for the others). Fills @out with the run-time return addresses of their call
 * sites (each frame's pc: the address after its jump), innermost first, at most @max, and
 * returns how many (0 when there are none or they cannot be told). Cached per pair. */
int tailcall_frames(struct tailcall *tc, uint64_t caller_ret, uint64_t callee_pc, uint64_t *out,
		    int max);

#endif
