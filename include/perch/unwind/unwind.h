/* Stack unwinding from a snapshot taken in the stop window (registers + a copy of the stack
 * from SP), run after the thread was resumed. DWARF CFI through libunwind with perch's own
 * accessors (stack words from the copy, unwind tables from the ELF files, anything else read
 * from the live process with process_vm_readv), and a frame-pointer walk where CFI gives up. */
#ifndef PERCH_UNWIND_H
#define PERCH_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perch/arch.h"

struct modules;
struct proc_maps;

struct unwind_snapshot {
	pid_t tid;
	uint64_t time_ns; /* CLOCK_MONOTONIC when the stop was seen */
	struct perch_regs regs;
	uint64_t stack_addr; /* target address of stack[0] (the SP at the stop) */
	size_t stack_len;    /* bytes copied */
	size_t stack_cap;
	uint8_t *stack;
	uint64_t pac_mask; /* pointer-authentication bits to clear from return addresses */
	/* Set by the caller, or NULL: the process's mappings. Copies then stop at the end of the
	 * stack that holds SP (proc_maps_stack_end()) instead of reading on into the mapping above
	 * it, a library whose pages the read would fault into the target for nothing. */
	const struct proc_maps *maps;
};

/* Copy up to @snap->stack_cap bytes of stack from SP of the stopped thread @tid (page by page,
 * so a copy that runs off the mapped stack stops at the last good page). 0 or -errno. */
int unwind_snapshot_take(pid_t pid, pid_t tid, const struct perch_arch *arch,
			 struct unwind_snapshot *snap);
/* After unwind_snapshot_take() filled its whole buffer: copy on while the stack goes on, the
 * buffer (malloc'ed, grown with realloc) up to @max bytes, the thread still stopped. For a
 * one-off dump that must see the whole stack. 0 or -errno. */
int unwind_snapshot_grow(pid_t tid, struct unwind_snapshot *snap, size_t max);
/* The stack part alone: copy up to @snap->stack_cap bytes from @sp of thread @tid, which need
 * not be stopped (a thread blocked where it cannot be stopped: its SP from /proc). 0 or -errno. */
int unwind_snapshot_read_stack(pid_t tid, uint64_t sp, struct unwind_snapshot *snap);
/* A reader of @snap's copied stack alone (no system call; -EFAULT outside the copy), for code
 * below the unwinder that reads the stack (art_proc_interp_dex_pc()). Borrows @snap. */
struct perch_mem unwind_snapshot_stack(const struct unwind_snapshot *snap);

enum {
	UNWIND_TRUNCATED = 1 << 0,     /* cut at the frame limit (there was a caller to show) */
	UNWIND_FP_USED = 1 << 1,       /* at least one frame came from the frame-pointer walk */
	UNWIND_STOPPED_EARLY = 1 << 2, /* ended before a root; unwind_result.stop says why */
	UNWIND_AT_ROOT = 1 << 3,       /* the CFI marks the last frame outermost (return address
					* undefined), or its return address is 0 */
};

/* Why a walk ended before reaching the outermost frame. */
enum unwind_stop {
	UNWIND_STOP_NONE,     /* it did not: a root, or the frame limit */
	UNWIND_STOP_NO_INFO,  /* no CFI for the pc and no frame pointer to follow */
	UNWIND_STOP_BAD_CFI,  /* CFI perch cannot use for this pc, and no frame pointer */
	UNWIND_STOP_MEMORY,   /* a stack word it needed could not be read */
	UNWIND_STOP_NOT_CODE, /* the next return address is not in executable code: what a
			       * frame pointer chain gives through code that keeps none */
	UNWIND_STOP_STACK,    /* the next frame is not above this one on the stack */
	UNWIND_STOP_NR
};

/* Short names for the summaries: "no unwind info", "bad CFI", ... ("" for NONE). */
const char *unwind_stop_name(enum unwind_stop stop);

struct unwind_result {
	unsigned int flags;    /* UNWIND_* bits */
	enum unwind_stop stop; /* set with UNWIND_STOPPED_EARLY */
	int fp_frames;	       /* frames found by a frame-pointer step (no usable CFI) */
};

/* Frame limits: the default of `perch record` and `perch dump`, and the most either takes
 * (recordings store at most RECORDING_MAX_STACK locations a stack). */
#define UNWIND_DEFAULT_FRAMES	   512
#define UNWIND_DUMP_DEFAULT_FRAMES 1024
#define UNWIND_MAX_FRAMES	   4000

struct unwinder;

/* An unwinder for process @pid whose mappings are @ms (borrowed; the caller reloads it). */
struct unwinder *unwinder_new(pid_t pid, const struct perch_arch *arch, struct modules *ms);
void unwinder_free(struct unwinder *u);
/* Drop cached unwind state (call after @ms was reloaded). */
void unwinder_flush(struct unwinder *u);

/* CFI for code that has no module (JIT-compiled code: art.h), for run-time address @pc (already
 * adjusted for return addresses) of a snapshot taken at @time_ns: a table of absolute
 * addresses (bias 0), or NULL. */
struct cfi_table;
typedef const struct cfi_table *unwind_jit_cfi_fn(void *arg, uint64_t pc, uint64_t time_ns);
/* Give @u a JIT CFI source. With one set, frames whose pc it covers are stepped with that CFI,
 * and frames of ART's runtime library (libart.so) are checked for the DEX PC marker. */
void unwinder_set_jit(struct unwinder *u, unwind_jit_cfi_fn *fn, void *arg);
/* The real return address of a frame whose return address (read from @slot on the stack) a
 * runtime replaced with a stub of its own (ART's method-tracing exit), or @ip itself. */
typedef uint64_t unwind_ret_fn(void *arg, uint64_t slot, uint64_t ip);
/* Give @u such a source (x86_64: the slot is the caller's SP - 8); NULL for none. */
void unwinder_set_ret(struct unwinder *u, unwind_ret_fn *fn, void *arg);
/* After unwinder_unwind(): dex_pcs[i] != 0 when the CFI of frame i carried ART's DEX PC
 * marker (docs/design/android-art.md 3): an interpreted Java method at that dex pc runs between
 * pcs[i] and pcs[i + 1]. As many entries as the unwind's @max, valid until the next unwind. */
const uint64_t *unwinder_dex_pcs(const struct unwinder *u);
/* The stack pointer of each frame when a JIT CFI source is set (ART is known), else only
 * where dex_pcs[i] != 0. */
const uint64_t *unwinder_dex_sps(const struct unwinder *u);

/* After unwinder_unwind(): exact[i] != 0 when pcs[i] is not a return address and names its
 * function as it is (the interrupted pc, a signal trampoline's, the pc a signal interrupted);
 * otherwise pcs[i] - 1 does. As many entries as the unwind's @max, valid until the next. */
const uint8_t *unwinder_exact_pcs(const struct unwinder *u);

/* Unwind @snap into @pcs (room for @max): pcs[0] is the interrupted pc, then return
 * addresses (not yet adjusted by -1). Returns the number of pcs (>= 1 when the pc is known);
 * @res says how the walk ended. A caller's pc outside executable code ends the walk
 * (UNWIND_STOP_NOT_CODE) rather than becoming a frame. */
int unwinder_unwind(struct unwinder *u, const struct unwind_snapshot *snap, uint64_t *pcs, int max,
		    struct unwind_result *res);

#endif
