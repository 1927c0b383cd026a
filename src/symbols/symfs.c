/* Finding unstripped copies of modules by build-id below a directory (see symfs.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/symfs.h"

struct symfs_file {
	char *path;
	char *build_id; /* hex, "" none; NULL until read */
};

struct symfs {
	char *dir;
	int walked;
	struct symfs_file *files;
	size_t nr, alloc;
};

struct symfs *symfs_new(const char *dir)
{
	struct symfs *s;
	struct stat st;

	if (stat(dir, &st))
		return NULL;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->dir = xstrdup(dir);
	return s;
}

void symfs_free(struct symfs *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr; i++) {
		free(s->files[i].path);
		free(s->files[i].build_id);
	}
	free(s->files);
	free(s->dir);
	free(s);
}

static int is_elf(const char *path)
{
	unsigned char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), ok;

	if (fd < 0)
		return 0;
	ok = read(fd, m, 4) == 4 && !memcmp(m, "\177ELF", 4);
	close(fd);
	return ok;
}

/* The build-id of the ELF file @path as hex ("" none, NULL when not an ELF file). */
static char *read_build_id(const char *path)
{
	struct elffile *ef;
	char hex[129];

	if (!is_elf(path))
		return NULL;
	ef = elffile_open(path);
	if (!ef)
		return NULL;
	elffile_build_id_hex(ef, hex);
	elffile_free(ef);
	return xstrdup(hex);
}

/* @path is an ELF file with build-id @want (any when @want is empty). */
static int matches(const char *path, const char *want)
{
	char *bid = read_build_id(path);
	int ok = bid && (!want[0] || !strcmp(bid, want));

	free(bid);
	return ok;
}

static void walk(struct symfs *s, const char *dir, int depth)
{
	DIR *d;
	struct dirent *de;

	if (depth > SYMFS_MAX_DEPTH || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)) && s->nr < SYMFS_MAX_FILES) {
		struct stat st;
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		/* lstat: links are not followed, so a loop of them cannot trap the walk */
		if (lstat(p, &st)) {
			free(p);
		} else if (S_ISDIR(st.st_mode)) {
			walk(s, p, depth + 1);
			free(p);
		} else if (S_ISREG(st.st_mode) && st.st_size >= 64) {
			ALLOC_GROW(s->files, s->nr + 1, s->alloc);
			s->files[s->nr].path = p;
			s->files[s->nr++].build_id = NULL;
		} else {
			free(p);
		}
	}
	closedir(d);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* A walked file: same file name as @path first (@pass 0), then any (@pass 1, build-id only). */
static char *search_tree(struct symfs *s, const char *path, const char *want)
{
	const char *base = base_name(path);

	if (!s->walked) {
		walk(s, s->dir, 0);
		s->walked = 1;
	}
	for (int pass = 0; pass < (want[0] ? 2 : 1); pass++) {
		for (size_t i = 0; i < s->nr; i++) {
			struct symfs_file *f = &s->files[i];
			int same = !strcmp(base_name(f->path), base);

			if (same != !pass)
				continue;
			if (!f->build_id) {
				f->build_id = read_build_id(f->path);
				if (!f->build_id)
					f->build_id = xstrdup("-"); /* not ELF: never matches */
			}
			if (!strcmp(f->build_id, "-"))
				continue;
			if (want[0] ? !strcmp(f->build_id, want) : same)
				return xstrdup(f->path);
		}
	}
	return NULL;
}

char *symfs_find(struct symfs *s, const char *path, const char *build_id_hex)
{
	const char *want = build_id_hex ? build_id_hex : "";
	char *p;

	if (strlen(want) > 2) {
		p = xasprintf("%s/.build-id/%.2s/%s.debug", s->dir, want, want + 2);
		if (matches(p, want))
			return p;
		free(p);
		p = xasprintf("%s/.build-id/%.2s/%s", s->dir, want, want + 2);
		if (matches(p, want))
			return p;
		free(p);
	}
	if (path[0] == '/') {
		p = xasprintf("%s%s", s->dir, path);
		if (matches(p, want))
			return p;
		free(p);
	}
	return search_tree(s, path, want);
}
