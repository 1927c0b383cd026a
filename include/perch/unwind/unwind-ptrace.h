/* The reference unwinder for `perch record --verify`: libunwind-ptrace run inside the stop
 * window, reading the stopped thread's memory with ptrace, as a debugger would. Slow (tens of
 * ptrace calls per sample), so only for checking that the snapshot unwinder (unwind.h), which
 * runs after the thread was resumed, finds the same frames. Call it from the tracer thread,
 * with the thread in a ptrace-stop. */
#ifndef PERCH_UNWIND_PTRACE_H
#define PERCH_UNWIND_PTRACE_H

#include <stdint.h>
#include <sys/types.h>

struct unwind_ptrace;

struct unwind_ptrace *unwind_ptrace_new(void);
void unwind_ptrace_free(struct unwind_ptrace *up);

/* The pcs of stopped thread @tid, innermost first (pcs[0] the interrupted pc, then return
 * addresses as libunwind reports them, @pac_mask bits cleared), at most @max. Returns the
 * count (0 when libunwind cannot even start). */
int unwind_ptrace_pcs(struct unwind_ptrace *up, pid_t tid, uint64_t pac_mask, uint64_t *pcs,
		      int max);

#endif
