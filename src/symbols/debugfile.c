/* Separate debug files: build-id and .gnu_debuglink lookups, symfs copies, and the checks that
 * a candidate belongs to the file (same build-id, debuglink CRC32). */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "perch/base/log.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/symbols/debugfile.h"
#include "perch/symbols/elffile.h"

#define DEBUGFILE_NAME_MAX 256

int debugfile_debuglink(const struct elffile *ef, char *name, size_t namesz, uint32_t *crc)
{
	struct elffile_section sec;
	const uint8_t *nul;
	size_t len, crc_off;
	uint32_t v;

	if (elffile_section(ef, ".gnu_debuglink", &sec) < 0 || !sec.data)
		return -ENOENT;
	nul = memchr(sec.data, '\0', sec.size);
	if (!nul)
		return -ENOEXEC;
	len = (size_t)(nul - sec.data);
	crc_off = (len + 1 + 3) & ~(size_t)3;
	if (!len || len >= namesz || crc_off > sec.size || sec.size - crc_off < 4 ||
	    memchr(sec.data, '/', len))
		return -ENOEXEC;
	memcpy(name, sec.data, len);
	name[len] = '\0';
	memcpy(&v, sec.data + crc_off, 4);
	if (ef->size > EI_DATA &&
	    (ef->image[EI_DATA] == ELFDATA2MSB) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		v = __builtin_bswap32(v);
	*crc = v;
	return 0;
}

char *debugfile_build_id_path(const char *root, const uint8_t *id, size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	if (!len)
		return NULL;
	strbuf_addf(&sb, "%s/.build-id/%02x/", root, id[0]);
	for (size_t i = 1; i < len; i++)
		strbuf_addf(&sb, "%02x", id[i]);
	strbuf_addstr(&sb, ".debug");
	return strbuf_detach(&sb, NULL);
}

uint32_t debugfile_crc32(const uint8_t *data, size_t size)
{
	uLong crc = crc32(0L, Z_NULL, 0);

	while (size) {
		uInt n = size > (1u << 30) ? (1u << 30) : (uInt)size;

		crc = crc32(crc, data, n);
		data += n;
		size -= n;
	}
	return (uint32_t)crc;
}

static int same_inode(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int debugfile_has_dwarf(const struct elffile *ef)
{
	struct elffile_section sec;

	return ef->has_debug_info ||
	       (elffile_section(ef, ".zdebug_info", &sec) == 0 && sec.data && sec.size);
}

/* Open @path and keep it if it fits @ef (see debugfile_find()). @crc is checked when @check_crc. */
static struct elffile *try_candidate(const struct elffile *ef, const char *path, int check_crc,
				     uint32_t crc)
{
	struct elffile *d;
	const char *why = NULL;

	if (same_inode(path, ef->path))
		return NULL;
	d = elffile_open(path);
	if (!d)
		return NULL;
	if (!d->has_symtab && !debugfile_has_dwarf(d))
		why = "no symbols or DWARF";
	else if (ef->build_id_len && d->build_id_len &&
		 (ef->build_id_len != d->build_id_len ||
		  memcmp(ef->build_id, d->build_id, ef->build_id_len)))
		why = "build-id differs";
	else if (check_crc && debugfile_crc32(d->image, d->size) != crc)
		why = "debuglink CRC differs";
	if (why) {
		log_debug("debugfile: ignoring %s for %s: %s", path, ef->path, why);
		elffile_free(d);
		return NULL;
	}
	log_debug("debugfile: %s for %s", path, ef->path);
	return d;
}

static struct elffile *try_build_id(const struct elffile *ef, const char *root)
{
	char *path = debugfile_build_id_path(root, ef->build_id, ef->build_id_len);
	struct elffile *d = path ? try_candidate(ef, path, 0, 0) : NULL;

	free(path);
	return d;
}

static struct elffile *try_path(const struct elffile *ef, char *path, int check_crc, uint32_t crc)
{
	struct elffile *d = try_candidate(ef, path, check_crc, crc);

	free(path);
	return d;
}

struct elffile *debugfile_find(const struct elffile *ef, const char *sysroot, const char *symfs)
{
	char link[DEBUGFILE_NAME_MAX], *root, *dir, *slash, *dbgroot;
	const char *rel;
	struct elffile *d = NULL;
	uint32_t crc;
	size_t rlen;

	/* "" for "/", no trailing slash otherwise */
	root = xstrdup(sysroot ? sysroot : "");
	rlen = strlen(root);
	while (rlen && root[rlen - 1] == '/')
		root[--rlen] = '\0';
	dbgroot = xasprintf("%s/usr/lib/debug", root);

	if (symfs) {
		d = try_build_id(ef, symfs);
		if (!d)
			d = try_path(
			    ef, xasprintf("%s%s%s", symfs, ef->path[0] == '/' ? "" : "/", ef->path),
			    0, 0);
	}
	if (!d)
		d = try_build_id(ef, dbgroot);
	/* a sysroot that lacks it: the host's, by build-id (gdb's debug-file-directory list) */
	if (!d && rlen)
		d = try_build_id(ef, "/usr/lib/debug");
	if (!d && debugfile_debuglink(ef, link, sizeof(link), &crc) == 0) {
		dir = xstrdup(ef->path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			strcpy(dir, ".");
		rel = dir;
		if (rlen && !strncmp(dir, root, rlen) && dir[rlen] == '/')
			rel = dir + rlen;
		d = try_path(ef, xasprintf("%s/%s", dir, link), 1, crc);
		if (!d)
			d = try_path(ef, xasprintf("%s/.debug/%s", dir, link), 1, crc);
		if (!d)
			d = try_path(
			    ef, xasprintf("%s%s%s/%s", dbgroot, *rel == '/' ? "" : "/", rel, link),
			    1, crc);
		free(dir);
	}
	free(dbgroot);
	free(root);
	if (!d)
		errno = ENOENT;
	return d;
}
