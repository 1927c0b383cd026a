/* A persistent cache of symbolization results on disk, one file per build-id, so that a
 * second `perch dump` (or the first sample of the next recording) names what it saw before
 * without reading the DWARF again: a distribution's debug files have compressed sections, and
 * inflating them is most of a cold lookup (60-70 ms for glibc's).
 *
 * Only results that came from DWARF are kept: they depend on the build-id alone, not on which
 * debug file or --symfs directory was found. Files live under $PERCH_CACHE_DIR, else
 * $XDG_CACHE_HOME/perch, else $HOME/.cache/perch, in symbols-v2/<first 2 hex digits>/<rest>;
 * PERCH_CACHE_DIR=off (or an empty HOME) turns the cache off. Format: a header line
 * "perch-symcache 2", then one line per answer, fields separated by tabs, addresses in hex:
 *   VADDR  N {FUNC FILE LINE INLINED}xN  ENTRY      frames of an address (symbolizer_lookup)
 *                                                  and the entry of its function ("-": none)
 *   S  PC  -  |  S  PC  1 CALL                      the call site returning to PC, or none
 *   T  ENTRY  -  |  T  ENTRY  N {CALL}xN            the tail calls of the function at ENTRY,
 *                                                  or "-": no function starts there
 *   N  ADDR  NAME                                  the function a call to NAME binds to
 *                                                  (symbolizer_find_function)
 * where CALL is "PC TAIL KIND NAME NADDRS {ADDR}xNADDRS" (struct debuginfo_call; empty FUNC,
 * FILE, NAME for none; LINE, INLINED, TAIL, KIND and counts in decimal). Version 1 (symbols-v1)
 * had no ENTRY and no S, T or N lines, and names demangled without Rust. Lines that do not parse
 * are skipped; a file over SYMCACHE_MAX_BYTES is neither read nor appended to. Appends are
 * single write(2)s with O_APPEND, so concurrent perch runs interleave whole lines. */
#ifndef PERCH_SYMCACHE_H
#define PERCH_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "perch/symbols/debuginfo.h"
#include "perch/symbols/symbolize.h"

#define SYMCACHE_MAX_BYTES (16u << 20)
#define SYMCACHE_MAX_LINE  4096

/* The cache file of build-id @id into @buf; 0, or -ENOENT when the cache is off or @id is
 * empty, -ENAMETOOLONG. */
int symcache_path(const uint8_t *id, size_t id_len, char *buf, size_t size);

/* What symcache_read() calls for each line; strings and arrays are valid during the call. */
struct symcache_ops {
	/* a frames line; @entry 0 when the function's entry is not known */
	void (*frames)(void *arg, uint64_t vaddr, const struct sym_frame *f, int n, uint64_t entry);
	/* an S (@kind 'S', @key the return pc) or T line (@kind 'T', @key the entry): @found 0
	 * for "-", else the @n call sites */
	void (*calls)(void *arg, char kind, uint64_t key, int found, const struct debuginfo_call *c,
		      size_t n);
	/* an N line */
	void (*name)(void *arg, const char *name, uint64_t addr);
};

/* Read every line of @path. 0, or -errno (-ENOENT: no cache yet, -EFBIG: too big, -EINVAL:
 * not a cache file of this version). */
int symcache_read(const char *path, const struct symcache_ops *ops, void *arg);

/* One frames line (appended to @out, a NUL-terminated growing buffer of *@len bytes in *@cap).
 * Returns 0, or -EINVAL when a name cannot be written (a tab or newline in it) or the line
 * would be longer than SYMCACHE_MAX_LINE. */
int symcache_format(uint64_t vaddr, const struct sym_frame *f, int n, uint64_t entry, char **out,
		    size_t *len, size_t *cap);
/* One N line. Same returns. */
int symcache_format_name(const char *name, uint64_t addr, char **out, size_t *len, size_t *cap);
/* One S or T line, as symcache_ops.calls() gets it back. Same returns. */
int symcache_format_calls(char kind, uint64_t key, int found, const struct debuginfo_call *c,
			  size_t n, char **out, size_t *len, size_t *cap);

/* Append @len bytes of lines to @path (creating it and its directories, with the header).
 * 0 or -errno. */
int symcache_append(const char *path, const char *lines, size_t len);

#endif
