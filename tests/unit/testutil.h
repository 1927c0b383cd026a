/* Helpers shared by the unit suites: fixture paths and files, golden files, writer output in
 * memory, throw-away directories. Each helper fails the running test (ck_assert) on error. */
#ifndef PERCH_TESTS_TESTUTIL_H
#define PERCH_TESTS_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "perch/out/output.h"

struct profile;

/* $PERCH_FIXTURES (default "fixtures": the tests run from the repository root) joined with
 * the path @fmt formats, e.g. testutil_fixture_path("elf/dw/%s", name). Malloc'ed. */
char *testutil_fixture_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The fixture file @rel (relative to the fixtures folder) as malloc'ed NUL-terminated text,
 * its length without the NUL in *@len (may be NULL). */
char *testutil_fixture_text(const char *rel, size_t *len);

/* The whole file @path in a malloc'ed buffer of exactly its size, so that an overread shows
 * under ASan (an empty file gives a 1-byte buffer and *@size 0). */
uint8_t *testutil_read_file(const char *path, size_t *size);
/* Write @size bytes to @path (replacing it), creating its missing parent directories. */
void testutil_write_file(const char *path, const void *data, size_t size);

/* Compare @len bytes with the golden file fixtures/golden/@rel, or (re)write that file
 * instead when PERCH_UPDATE_GOLDEN=1. A difference fails the test, naming the byte, the line
 * and both versions of that line. */
void testutil_check_golden(const char *rel, const char *data, size_t len);

/* The output of @writer for @p and @o (may be NULL) in a malloc'ed NUL-terminated buffer,
 * its length in *@len (may be NULL). The writer must succeed. */
char *testutil_render(output_write_fn *writer, const struct profile *p, const struct output_opts *o,
		      size_t *len);

/* @writer on a full disk (/dev/full) must report -ENOSPC, not succeed or crash. */
void testutil_check_enospc(output_write_fn *writer, const struct profile *p);

/* Is @tool on PATH? When not, prints "SKIP: <tool> not installed ..." so a skipped consumer
 * check is visible in the output. */
int testutil_have_tool(const char *tool);
/* Run @cmd with sh, stdout and stderr together into a malloc'ed string; *@status is its exit
 * status (128 when it did not exit normally). */
char *testutil_run(const char *cmd, int *status);

/* A new empty directory /tmp/perch-check-XXXXXX. Malloc'ed. */
char *testutil_tmpdir_new(void);
/* Remove @dir and everything below it (links are not followed), then free @dir. NULL: no-op. */
void testutil_tmpdir_free(char *dir);

/* A fresh testutil_tmpdir_new() per test, for tcase_add_checked_fixture(tc,
 * testutil_tmp_setup, testutil_tmp_teardown); NULL outside such a test. */
extern char *testutil_tmp;
void testutil_tmp_setup(void);
void testutil_tmp_teardown(void);
/* "<testutil_tmp>/@rel". Malloc'ed. */
char *testutil_tmp_path(const char *rel);
/* Write @size bytes to <testutil_tmp>/@rel (as testutil_write_file()); returns that path,
 * malloc'ed. */
char *testutil_tmp_file(const char *rel, const void *data, size_t size);

#endif
