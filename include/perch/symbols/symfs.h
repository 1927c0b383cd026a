/* A symfs directory for report time (like simpleperf's binary cache): unstripped copies of the
 * modules of a recording, found by build-id anywhere below the directory, or by path. Only
 * finds files; symbolize.h names addresses in them. */
#ifndef PERCH_SYMFS_H
#define PERCH_SYMFS_H

#define SYMFS_MAX_FILES 100000 /* files looked at below the directory */
#define SYMFS_MAX_DEPTH 32

struct symfs;

/* NULL with errno set (ENOENT, ENOTDIR, ...) when @dir cannot be opened as a directory. */
struct symfs *symfs_new(const char *dir);
void symfs_free(struct symfs *s);

/* An ELF file under the symfs for the module @path whose GNU build-id is @build_id_hex
 * (lower-case hex; "" or NULL when the recording has none). Tried in order:
 * <dir>/.build-id/xx/rest[.debug], <dir>/<path>, then every file below <dir> (same file name
 * first). With a build-id only a file with that build-id is taken; without one, the same
 * file name. Returns a malloc'ed path or NULL. The tree is walked once, on the first miss. */
char *symfs_find(struct symfs *s, const char *path, const char *build_id_hex);

#endif
