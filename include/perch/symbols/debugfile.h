/* Finding the separate debug file of an ELF file: by build-id (<root>/.build-id/xx/rest.debug),
 * by .gnu_debuglink (name + CRC32) and in a symfs directory of unstripped copies.
 * Opening and validating only; symbolize.c decides what to read from it. */
#ifndef PERCH_DEBUGFILE_H
#define PERCH_DEBUGFILE_H

#include <stddef.h>
#include <stdint.h>

struct elffile;

/* Read the .gnu_debuglink section of @ef:
 *   "prog.debug\0" <pad to 4> <crc32, file byte order>
 * The name goes into @name (@namesz bytes with the NUL). 0, -ENOENT when there is no such
 * section, -ENOEXEC when it is malformed (no NUL, no room for the CRC, a '/' in the name, or
 * a name longer than @namesz - 1). */
int debugfile_debuglink(const struct elffile *ef, char *name, size_t namesz, uint32_t *crc);

/* "<root>/.build-id/ab/cdef....debug" for build-id @id (@len bytes), malloc'ed; @root may be
 * "" for a relative path. NULL when @len is 0. */
char *debugfile_build_id_path(const char *root, const uint8_t *id, size_t len);

/* CRC32 (zlib's, as used by .gnu_debuglink) of @size bytes. */
uint32_t debugfile_crc32(const uint8_t *data, size_t size);

/* Does @ef have DWARF: a non-empty .debug_info, or .zdebug_info (GNU's compressed form)? */
int debugfile_has_dwarf(const struct elffile *ef);

/* Find and open the separate debug file of @ef. Tried in order:
 *   <symfs>/.build-id/xx/rest.debug, <symfs>/<ef->path>            (when @symfs is not NULL)
 *   <sysroot>/usr/lib/debug/.build-id/xx/rest.debug
 *   /usr/lib/debug/.build-id/xx/rest.debug                           (with a @sysroot)
 *   .gnu_debuglink name in <dir>/, <dir>/.debug/, <sysroot>/usr/lib/debug/<dir>/
 * where <dir> is the directory of @ef->path (with a leading @sysroot removed for the last
 * one). @sysroot NULL means "/". A candidate is taken only when it has a .symtab or DWARF,
 * its build-id equals @ef's when both have one, and (for debuglink candidates) its CRC32
 * matches. Returns the opened file (caller frees with elffile_free()), or NULL with errno
 * ENOENT when none fits. */
struct elffile *debugfile_find(const struct elffile *ef, const char *sysroot, const char *symfs);

#endif
