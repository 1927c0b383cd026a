/* Unit tests for debugfile: .gnu_debuglink parsing and the build-id / debuglink / symfs search,
 * on copies of fixtures/elf/sym files laid out in a throw-away sysroot (testutil_tmp). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/debugfile.h"
#include "perch/symbols/elffile.h"
#include "sym-fixture.h"

/* Copy fixture @fix to <testutil_tmp>/@rel (with @extra appended); returns the new path. */
static char *place(const char *fix, const char *rel, const char *extra)
{
	char *dst = testutil_tmp_path(rel);

	symfix_copy(fix, dst, extra);
	return dst;
}

static char *build_id_rel(const char *fix)
{
	struct elffile *ef = elffile_open(fix);
	char *p;

	ck_assert_ptr_nonnull(ef);
	ck_assert_uint_gt(ef->build_id_len, 1);
	p = debugfile_build_id_path("usr/lib/debug", ef->build_id, ef->build_id_len);
	elffile_free(ef);
	return p;
}

/* debugfile_find() on <testutil_tmp>/@rel; returns the found path (malloc'ed) or NULL. */
static char *find(const char *rel, const char *symfs)
{
	char *path = testutil_tmp_path(rel), *found = NULL;
	struct elffile *ef = elffile_open(path), *d;

	ck_assert_ptr_nonnull(ef);
	d = debugfile_find(ef, testutil_tmp, symfs);
	if (d) {
		found = xstrdup(d->path);
		ck_assert(d->has_symtab || d->has_debug_info);
		ck_assert_mem_eq(d->build_id, ef->build_id, ef->build_id_len);
		elffile_free(d);
	} else {
		ck_assert_int_eq(errno, ENOENT);
	}
	elffile_free(ef);
	free(path);
	return found;
}

static void assert_found(const char *rel, const char *symfs, const char *want_rel)
{
	char *got = find(rel, symfs), *want = testutil_tmp_path(want_rel);

	ck_assert_msg(got, "no debug file for %s (want %s)", rel, want);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
}

START_TEST(test_debuglink_section)
{
	struct elffile *ef = elffile_open(SYMFIX_DIR "prog.dbglink");
	char name[64];
	uint32_t crc;
	size_t size;
	uint8_t *dbg = testutil_read_file(SYMFIX_DIR "prog.debug", &size);

	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(debugfile_debuglink(ef, name, sizeof(name), &crc), 0);
	ck_assert_str_eq(name, "prog.debug");
	/* the CRC objcopy stored is zlib's CRC32 of the whole debug file */
	ck_assert_uint_eq(crc, (uint32_t)crc32(0, dbg, (uInt)size));
	ck_assert_uint_eq(debugfile_crc32(dbg, size), crc);
	ck_assert_int_eq(debugfile_debuglink(ef, name, 5, &crc), -ENOEXEC); /* name too long */
	elffile_free(ef);
	free(dbg);

	ef = elffile_open(SYMFIX_DIR "prog.stripped");
	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(debugfile_debuglink(ef, name, sizeof(name), &crc), -ENOENT);
	elffile_free(ef);

	ef = elffile_open(SYMFIX_DIR "prog.badlink");
	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(debugfile_debuglink(ef, name, sizeof(name), &crc), -ENOEXEC);
	elffile_free(ef);
}
END_TEST

START_TEST(test_build_id_path)
{
	static const uint8_t id[] = {0xab, 0xcd, 0xef, 0x01};
	char *p = debugfile_build_id_path("/r", id, sizeof(id));

	ck_assert_str_eq(p, "/r/.build-id/ab/cdef01.debug");
	free(p);
	p = debugfile_build_id_path("", id, 1);
	ck_assert_str_eq(p, "/.build-id/ab/.debug");
	free(p);
	ck_assert_ptr_null(debugfile_build_id_path("/r", id, 0));
}
END_TEST

START_TEST(test_debuglink_same_dir)
{
	free(place(SYMFIX_DIR "prog.dbglink", "bin/prog", NULL));
	ck_assert_ptr_null(find("bin/prog", NULL));
	free(place(SYMFIX_DIR "prog.debug", "bin/prog.debug", NULL));
	assert_found("bin/prog", NULL, "bin/prog.debug");
}
END_TEST

START_TEST(test_debuglink_subdir)
{
	free(place(SYMFIX_DIR "prog.dbglink", "bin/prog", NULL));
	free(place(SYMFIX_DIR "prog.debug", "bin/.debug/prog.debug", NULL));
	assert_found("bin/prog", NULL, "bin/.debug/prog.debug");
}
END_TEST

START_TEST(test_debuglink_global)
{
	/* <sysroot>/usr/lib/debug/<dir of the file, without the sysroot>/<name> */
	free(place(SYMFIX_DIR "prog.dbglink", "bin/prog", NULL));
	free(place(SYMFIX_DIR "prog.debug", "usr/lib/debug/bin/prog.debug", NULL));
	assert_found("bin/prog", NULL, "usr/lib/debug/bin/prog.debug");
}
END_TEST

START_TEST(test_debuglink_bad_crc)
{
	/* same build-id, one byte more: the CRC no longer matches */
	free(place(SYMFIX_DIR "prog.dbglink", "bin/prog", NULL));
	free(place(SYMFIX_DIR "prog.debug", "bin/prog.debug", "!"));
	ck_assert_ptr_null(find("bin/prog", NULL));
}
END_TEST

START_TEST(test_build_id)
{
	char *rel = build_id_rel(SYMFIX_DIR "prog.dbglink");

	free(place(SYMFIX_DIR "prog.dbglink", "opt/prog", NULL));
	free(place(SYMFIX_DIR "prog.debug", rel, NULL));
	assert_found("opt/prog", NULL, rel);
	free(rel);
}
END_TEST

START_TEST(test_build_id_mismatch)
{
	/* a file with another build-id at the build-id path is not taken */
	char *rel = build_id_rel(SYMFIX_DIR "prog.dbglink");

	free(place(SYMFIX_DIR "prog.stripped", "opt/prog", NULL));
	free(place(SYMFIX_DIR "cxx", rel, NULL));
	ck_assert_ptr_null(find("opt/prog", NULL));
	free(rel);
}
END_TEST

/* With a sysroot that has no debug file, the host's /usr/lib/debug is searched by build-id
 * (as gdb does with debug-file-directory "SYSROOT/usr/lib/debug:/usr/lib/debug"): the C
 * library's debug file from libc6-dbg. */
START_TEST(test_build_id_host_fallback)
{
	struct elffile *ef = elffile_open("/lib/x86_64-linux-gnu/libc.so.6"), *d;
	char *want;

	if (!ef) {
		printf("SKIP build_id_host_fallback: no /lib/x86_64-linux-gnu/libc.so.6\n");
		return;
	}
	want = debugfile_build_id_path("/usr/lib/debug", ef->build_id, ef->build_id_len);
	if (!want || access(want, R_OK) < 0) {
		printf("SKIP build_id_host_fallback: no libc6-dbg (%s)\n",
		       want ? want : "no build-id");
		free(want);
		elffile_free(ef);
		return;
	}
	d = debugfile_find(ef, testutil_tmp, NULL);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d->path, want);
	ck_assert_mem_eq(d->build_id, ef->build_id, ef->build_id_len);
	elffile_free(d);
	free(want);
	elffile_free(ef);
}
END_TEST

START_TEST(test_symfs)
{
	char *bin = place(SYMFIX_DIR "prog.stripped", "bin/prog", NULL);
	char *symfs = testutil_tmp_path("symfs"), *copy = xasprintf("symfs%s", bin);
	char *rel = build_id_rel(SYMFIX_DIR "prog"), *idrel;

	/* <symfs>/<path of the module>: an unstripped copy */
	free(place(SYMFIX_DIR "prog", copy, NULL));
	assert_found("bin/prog", symfs, copy);
	/* <symfs>/.build-id/xx/rest.debug comes first */
	idrel = xasprintf("symfs/%s", rel + strlen("usr/lib/debug/"));
	free(place(SYMFIX_DIR "prog.debug", idrel, NULL));
	assert_found("bin/prog", symfs, idrel);
	free(idrel);
	free(rel);
	free(copy);
	free(symfs);
	free(bin);
}
END_TEST

START_TEST(test_symfs_stripped_copy)
{
	/* a copy without symbols or DWARF is no use: skipped */
	char *bin = place(SYMFIX_DIR "prog.stripped", "bin/prog", NULL);
	char *symfs = testutil_tmp_path("symfs"), *copy = xasprintf("symfs%s", bin);

	free(place(SYMFIX_DIR "prog.stripped", copy, NULL));
	ck_assert_ptr_null(find("bin/prog", symfs));
	free(copy);
	free(symfs);
	free(bin);
}
END_TEST

START_TEST(test_bad_debuglink)
{
	free(place(SYMFIX_DIR "prog.badlink", "bin/prog", NULL));
	free(place(SYMFIX_DIR "prog.debug", "bin/prog.debug", NULL));
	ck_assert_ptr_null(find("bin/prog", NULL));
}
END_TEST

Suite *debugfile_suite(void)
{
	Suite *s = suite_create("debugfile");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_debuglink_section);
	tcase_add_test(tc, test_build_id_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("find");
	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_debuglink_same_dir);
	tcase_add_test(tc, test_debuglink_subdir);
	tcase_add_test(tc, test_debuglink_global);
	tcase_add_test(tc, test_debuglink_bad_crc);
	tcase_add_test(tc, test_build_id);
	tcase_add_test(tc, test_build_id_mismatch);
	tcase_add_test(tc, test_build_id_host_fallback);
	tcase_add_test(tc, test_symfs);
	tcase_add_test(tc, test_symfs_stripped_copy);
	tcase_add_test(tc, test_bad_debuglink);
	suite_add_tcase(s, tc);
	return s;
}
