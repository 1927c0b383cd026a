/* Helpers shared by the symbolizer unit tests (elfsym, debugfile, symbolize): reading the
 * fixtures in fixtures/elf/sym/, `nm` golden files, and throw-away directory trees. */
#ifndef PERCH_TESTS_SYM_FIXTURE_H
#define PERCH_TESTS_SYM_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYMFIX_DIR "fixtures/elf/sym/"

/* The whole file in a malloc'ed buffer of exactly its size (so overreads show under ASan). */
static inline uint8_t *symfix_read(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	ck_assert_msg(f, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc(n ? (size_t)n : 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* Address of @name in an `nm` listing ("0000000000001139 t sym_local_helper"); 0 if absent. */
static inline uint64_t symfix_nm_addr(const char *nm_path, const char *name)
{
	FILE *f = fopen(nm_path, "r");
	char line[1024], sym[1000], type;
	unsigned long long addr;
	uint64_t found = 0;

	ck_assert_msg(f, "cannot open %s", nm_path);
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %999s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}

static inline void symfix_write(const char *path, const void *data, size_t size)
{
	char *dir = strdup(path), *p;
	FILE *f;

	/* mkdir -p of the parent */
	for (p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		ck_assert_msg(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s", dir);
		*p = '/';
	}
	free(dir);
	f = fopen(path, "wb");
	ck_assert_msg(f, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(data, 1, size, f), size);
	ck_assert_int_eq(fclose(f), 0);
}

/* Copy fixture file @src to @dst, creating @dst's directories; @extra bytes appended. */
static inline void symfix_copy(const char *src, const char *dst, const char *extra)
{
	size_t size, n = extra ? strlen(extra) : 0;
	uint8_t *buf = symfix_read(src, &size);

	buf = realloc(buf, size + n + 1);
	ck_assert_ptr_nonnull(buf);
	if (n)
		memcpy(buf + size, extra, n);
	symfix_write(dst, buf, size + n);
	free(buf);
}

static inline char *symfix_tmpdir(void)
{
	char *d = strdup("/tmp/perch-sym-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static inline int symfix_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void symfix_rmtree(char *dir)
{
	if (dir)
		nftw(dir, symfix_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

#endif
