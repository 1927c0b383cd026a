/* /proc/PID/smaps and /proc/PID/smaps_rollup parsed into per-mapping memory usage (kB).
 * Pure parsing: no ptrace. Classifying mappings into heaps is meminfo.h's job.
 *
 *   7f1fc8ba2000-7f1fc8bc8000 r--p 00000000 fe:00 332835   /usr/lib/x86_64-linux-gnu/libc.so.6
 *   Size:                152 kB        <- one "Key: N kB" line per field; keys perch does not
 *   Rss:                 148 kB           know are ignored, lines without " kB" (VmFlags:,
 *   Pss:                   6 kB           THPeligible:, Name:, ProtectionKey:) too
 *   ...
 *   VmFlags: rd mr mw me sd
 */
#ifndef PERCH_PROC_SMAPS_H
#define PERCH_PROC_SMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perch/proc/proc-maps.h"

/* Bits of proc_smaps_usage fields, for "which fields did the kernel print" masks. */
enum {
	PROC_SMAPS_HAS_SIZE = 1u << 0,
	PROC_SMAPS_HAS_RSS = 1u << 1,
	PROC_SMAPS_HAS_PSS = 1u << 2,
	PROC_SMAPS_HAS_PSS_DIRTY = 1u << 3, /* Linux 6.0+ */
	PROC_SMAPS_HAS_PSS_ANON = 1u << 4,  /* the Pss_{Anon,File,Shmem} trio: rollup only */
	PROC_SMAPS_HAS_PSS_FILE = 1u << 5,
	PROC_SMAPS_HAS_PSS_SHMEM = 1u << 6,
	PROC_SMAPS_HAS_SHARED_CLEAN = 1u << 7,
	PROC_SMAPS_HAS_SHARED_DIRTY = 1u << 8,
	PROC_SMAPS_HAS_PRIVATE_CLEAN = 1u << 9,
	PROC_SMAPS_HAS_PRIVATE_DIRTY = 1u << 10,
	PROC_SMAPS_HAS_REFERENCED = 1u << 11,
	PROC_SMAPS_HAS_ANONYMOUS = 1u << 12,
	PROC_SMAPS_HAS_LAZYFREE = 1u << 13,
	PROC_SMAPS_HAS_ANON_HUGE = 1u << 14,
	PROC_SMAPS_HAS_SWAP = 1u << 15,
	PROC_SMAPS_HAS_SWAP_PSS = 1u << 16,
	PROC_SMAPS_HAS_LOCKED = 1u << 17,
};

/* The "Key: N kB" fields of one mapping (or of the rollup), all in kB. A field the kernel
 * did not print is 0 (see the HAS mask). */
struct proc_smaps_usage {
	uint64_t size, rss, pss, pss_dirty, pss_anon, pss_file, pss_shmem;
	uint64_t shared_clean, shared_dirty, private_clean, private_dirty;
	uint64_t referenced, anonymous, lazyfree, anon_huge, swap, swap_pss, locked;
};

struct proc_smap {
	struct proc_map
	    map; /* the header line, parsed like /proc/PID/maps (" (deleted)" stripped) */
	struct proc_smaps_usage u;
};

/* Invariant: maps[] sorted by start, no two overlap (an entry that breaks it is skipped with
 * its field lines and counted as bad). @total is the saturating sum of every maps[i].u. */
struct proc_smaps {
	struct proc_smap *maps;
	size_t nr;
	struct proc_smaps_usage total;
	uint32_t has;	  /* PROC_SMAPS_HAS_* of fields seen in at least one entry */
	size_t bad_lines; /* malformed, overlong, orphan or skipped lines */
};

/* Parse smaps text (NUL-terminated). Lines longer than PROC_SMAPS_MAX_LINE, malformed header
 * or field lines, and field lines before the first header are skipped and counted. Never
 * NULL (xalloc dies on out-of-memory). */
#define PROC_SMAPS_MAX_LINE 8192
struct proc_smaps *proc_smaps_parse(const char *text);
/* Read and parse /proc/@pid/smaps (a zombie leader's through a live thread). NULL with errno
 * set on failure (ENOENT, EACCES, ...). */
struct proc_smaps *proc_smaps_load(pid_t pid);
/* Read and parse a saved smaps file. NULL with errno set on failure. */
struct proc_smaps *proc_smaps_load_file(const char *path);
void proc_smaps_free(struct proc_smaps *s);

/* USS: memory only this process maps (private clean + private dirty), kB. */
uint64_t proc_smaps_uss(const struct proc_smaps_usage *u);
/* Add @b into @a field by field (saturating). */
void proc_smaps_usage_add(struct proc_smaps_usage *a, const struct proc_smaps_usage *b);

/* /proc/PID/smaps_rollup: one header spanning the address space, then the summed fields.
 *   55783bc17000-7fff7e424000 ---p 00000000 00:00 0          [rollup]
 *   Rss:                1744 kB
 */
struct proc_smaps_rollup {
	uint64_t start, end; /* first mapping's start, last mapping's end */
	struct proc_smaps_usage u;
	uint32_t has;
	size_t bad_lines;
};

/* 0, or -EINVAL when there is no valid header line or no field at all. */
int proc_smaps_rollup_parse(const char *text, struct proc_smaps_rollup *out);
/* Read /proc/@pid/smaps_rollup (Linux 4.14+; a zombie leader's through a live thread) or a
 * saved copy. 0 or -errno. */
int proc_smaps_rollup_load(pid_t pid, struct proc_smaps_rollup *out);
int proc_smaps_rollup_load_file(const char *path, struct proc_smaps_rollup *out);

#endif
