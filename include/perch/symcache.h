/* A persistent cache of symbolization results on disk, one file per build-id, so that a
 * second `perch dump` (or the first sample of the next recording) names what it saw before
 * without reading the DWARF again: a distribution's debug files have compressed sections, and
 * inflating them is most of a cold lookup (60-70 ms for glibc's).
 *
 * Only results that came from DWARF (a frame with a source file) are kept: they depend on the
 * build-id alone, not on which debug file or --symfs directory was found. Files live under
 * $PERCH_CACHE_DIR, else $XDG_CACHE_HOME/perch, else $HOME/.cache/perch, in
 * symbols-v1/<first 2 hex digits>/<rest>; PERCH_CACHE_DIR=off (or an empty HOME) turns the
 * cache off. Format: a header line "perch-symcache 1", then one line per address:
 *   VADDR-hex <TAB> N {<TAB> FUNC <TAB> FILE <TAB> LINE <TAB> INLINED}xN
 * (empty FUNC/FILE for unknown). Lines that do not parse are skipped; a file over
 * SYMCACHE_MAX_BYTES is neither read nor appended to. Appends are single write(2)s with
 * O_APPEND, so concurrent perch runs interleave whole lines. */
#ifndef PERCH_SYMCACHE_H
#define PERCH_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "perch/symbolize.h"

#define SYMCACHE_MAX_BYTES (16u << 20)
#define SYMCACHE_MAX_LINE 4096

/* The cache file of build-id @id into @buf; 0, or -ENOENT when the cache is off or @id is
 * empty, -ENAMETOOLONG. */
int symcache_path(const uint8_t *id, size_t id_len, char *buf, size_t size);

/* Called for each entry; the strings are only valid during the call. */
typedef void symcache_entry_fn(void *arg, uint64_t vaddr, const struct sym_frame *f, int n);

/* Read every entry of @path. 0, or -errno (-ENOENT: no cache yet, -EFBIG: too big). */
int symcache_read(const char *path, symcache_entry_fn *fn, void *arg);

/* One entry as a line (appended to @out, a NUL-terminated growing buffer of *@len bytes in
 * *@cap). Returns 0, or -EINVAL when a name cannot be written (a tab or newline in it). */
int symcache_format(uint64_t vaddr, const struct sym_frame *f, int n, char **out, size_t *len,
		    size_t *cap);

/* Append @len bytes of lines to @path (creating it and its directories, with the header).
 * 0 or -errno. */
int symcache_append(const char *path, const char *lines, size_t len);

#endif
