/* perch's file descriptor budget. The sampler keeps three /proc files open per thread it
 * samples (stat, syscall, schedstat: a pread instead of open+read+close at every tick), so a
 * target with thousands of threads needs more descriptors than a login shell's usual soft
 * limit (1024) allows, and a descriptor table that grows as they are opened: in a threaded
 * process each growth waits for an RCU grace period (expand_fdtable()), measured at up to
 * 1.2 s on a loaded 2-CPU VM in the middle of a recording. So: the soft limit is raised to
 * the hard one at start (as Go's runtime does), the programs perch launches get the original
 * back, and the table is grown at start to FDLIMIT_AT_START, while perch has one thread and
 * the growth waits for nothing, and again before sampling starts where a target has more
 * threads than that holds. (Grown only before sampling, with perch's threads running, it made
 * every recording's first sample wait for a grace period: 9-30 ms on this project's VM, where
 * `--wait` had taken its first sample 0.6-1.3 ms after the process appeared.) */
#ifndef PERCH_FDLIMIT_H
#define PERCH_FDLIMIT_H

#include <stddef.h>

/* Descriptors the table holds from the start: the sampler's files for 256 threads. */
#define FDLIMIT_AT_START 1024

/* Raise RLIMIT_NOFILE's soft limit to its hard limit (remembering the original), and grow the
 * table to FDLIMIT_AT_START: call it while the process has one thread. */
void fdlimit_raise(void);

/* In a child between fork and exec (async-signal-safe): the soft limit perch started with. */
void fdlimit_restore(void);

/* Grow the descriptor table now to hold @n descriptors (capped at the soft limit), so that
 * opening them later never waits for the table to grow. */
void fdlimit_reserve(size_t n);

/* Descriptors kept open for repeated reads (the sampler's /proc files of each thread, the
 * collector's stat files), one budget for all who keep them: what the soft limit leaves
 * beside the descriptors open when it is set, less FDLIMIT_SPARE for the files perch opens
 * and closes (ELF and debug files, maps, the recording). Two keepers sizing themselves each
 * against the whole limit (600 threads under `ulimit -n 1024`: 490 sampler files and 512
 * collector files) left perch's own files none. fdlimit_keep_budget() sets it from the
 * descriptors open now (otherwise the first fdlimit_keep() does); fdlimit_keep() says whether
 * one more may be kept and then counts it; fdlimit_unkeep() gives one back. Thread-safe. */
#define FDLIMIT_SPARE 512
void fdlimit_keep_budget(void);
int fdlimit_keep(void);
void fdlimit_unkeep(void);
size_t fdlimit_kept(void);

/* A file perch needed (a module's ELF file: its frames' names) could not be opened for lack
 * of descriptors (@err EMFILE or ENFILE; other errors are not counted). Thread-safe. */
void fdlimit_note_failure(int err);
/* How many such failures there were: a recording with unnamed frames it should have named. */
unsigned long fdlimit_failures(void);

#endif
