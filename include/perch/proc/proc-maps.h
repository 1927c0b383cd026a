/* /proc/PID/maps parsed into a sorted table of mappings. Pure parsing: no ptrace.
 *
 *   55d0c3a00000-55d0c3a02000 r-xp 00002000 fe:01 1314   /usr/bin/demo
 *   start        end          prot offset   dev   inode  path (may be empty, "[stack]",
 *                                                        "/x (deleted)", "[anon:dalvik-..]")
 */
#ifndef PERCH_PROC_MAPS_H
#define PERCH_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
	PROC_MAPS_PROT_READ = 1 << 0,
	PROC_MAPS_PROT_WRITE = 1 << 1,
	PROC_MAPS_PROT_EXEC = 1 << 2,
	PROC_MAPS_PROT_SHARED = 1 << 3, /* 's' instead of 'p' */
};

struct proc_map {
	uint64_t start;	 /* first byte */
	uint64_t end;	 /* one past the last byte */
	uint64_t offset; /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t prot;	  /* PROC_MAPS_PROT_* */
	const char *path; /* "" for anonymous; owned by the table */
	int deleted;	  /* path ended in " (deleted)" (stripped from @path) */
};

/* Invariant: maps[] sorted by start, no two overlap. */
struct proc_maps {
	struct proc_map *maps;
	size_t nr;
	unsigned int generation; /* set by the caller (e.g. bumped on every reload) */
};

/* Parse one maps line, [@line, @eol) without its '\n', into @m:
 *   7f3a1c000000-7f3a1c021000 r-xp 00000000 fe:01 1314   /usr/lib/libc.so.6 (deleted)
 * The path is not copied: it is returned as [*@path, *@path + *@plen) inside the line, with a
 * trailing " (deleted)" cut off and m->deleted set; m->path is left NULL. Also reads the header
 * lines of smaps and smaps_rollup. 0, or -EINVAL for a malformed line or start >= end. */
int proc_maps_parse_line(const char *line, const char *eol, struct proc_map *m, const char **path,
			 size_t *plen);
/* Parse maps text (NUL-terminated). Malformed lines are skipped and counted in @bad_lines
 * (may be NULL). Returns NULL only on out-of-memory policy (never: xalloc dies). */
struct proc_maps *proc_maps_parse(const char *text, size_t *bad_lines);
/* Read and parse /proc/@pid/maps (a zombie leader's through a live thread). NULL with errno set
 * on failure (ENOENT, EACCES, ...). */
struct proc_maps *proc_maps_load(pid_t pid);
/* Read and parse a saved maps file. NULL with errno set on failure. */
struct proc_maps *proc_maps_load_file(const char *path);
void proc_maps_free(struct proc_maps *m);
/* The mapping holding @addr, or NULL. Borrowed; valid until proc_maps_free(). */
const struct proc_map *proc_maps_find(const struct proc_maps *m, uint64_t addr);
/* Where the stack holding @sp ends: the end of the run of adjacent private, writable, anonymous
 * mappings (no path, or a bracketed name: "[stack]", "[anon:stack_and_tls:12]") around @sp. A
 * copy of the stack from @sp stops there instead of reading on into whatever is mapped above it
 * (a library's pages, faulted in for nothing). 0 when @sp is in no such mapping. */
uint64_t proc_maps_stack_end(const struct proc_maps *m, uint64_t sp);
/* Basename of a map's path ("libc.so.6"), or the path itself for "[vdso]" etc. */
const char *proc_map_basename(const struct proc_map *map);

#endif
