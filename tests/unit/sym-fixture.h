/* Helpers shared by the symbolizer unit tests (elfsym, debugfile, symbolize): the fixtures in
 * fixtures/elf/sym/ and their `nm` golden files. Generic file helpers are in testutil.h. */
#ifndef PERCH_TESTS_SYM_FIXTURE_H
#define PERCH_TESTS_SYM_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SYMFIX_DIR "fixtures/elf/sym/"

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

/* Copy fixture file @src to @dst, creating @dst's directories; @extra bytes appended. */
static inline void symfix_copy(const char *src, const char *dst, const char *extra)
{
	size_t size, n = extra ? strlen(extra) : 0;
	uint8_t *buf = testutil_read_file(src, &size);

	buf = realloc(buf, size + n + 1);
	ck_assert_ptr_nonnull(buf);
	if (n)
		memcpy(buf + size, extra, n);
	testutil_write_file(dst, buf, size + n);
	free(buf);
}

#endif
