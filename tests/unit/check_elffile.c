/* Unit tests for elffile: elffile_section_data() on sections compressed by the linkers (ld:
 * zstd, lld: zlib) gives the bytes objcopy --decompress-debug-sections gives (binutils is the
 * oracle), decompressed once and kept; MiniDebugInfo opened once, with the symbols and
 * .debug_frame the Android-style strip put in it. The decompressor itself (elfsection.c) is
 * tested by check_elfsection.c: objcopy's zlib, zstd and .zdebug forms, hostile headers and
 * streams. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "testutil.h"

static const char src[] =
    "#include <stdio.h>\n"
    "__attribute__((noinline)) int f(int x) { return x * 3 + 1; }\n"
    "int main(int argc, char **argv) { printf(\"%s %d\\n\", argv[0], f(argc)); return 0; }\n";

/* packed: linked by @how from the source; plain: what objcopy --decompress-debug-sections
 * makes of it */
static void build_pair(const char *how, char **plain, char **packed)
{
	char *c = testutil_tmp_file("p.c", src, sizeof(src) - 1);
	char *cmd;
	char *log;
	int status;

	*plain = testutil_tmp_path("plain");
	*packed = testutil_tmp_path("packed");
	cmd = xasprintf("cd %s && %s && objcopy --decompress-debug-sections packed plain",
			testutil_tmp, how);
	log = testutil_run(cmd, &status);
	ck_assert_msg(status == 0, "%s:\n%s", cmd, log);
	free(log);
	free(cmd);
	free(c);
}

static const char *const sections[] = {".debug_frame", ".debug_info", ".debug_line",
				       ".debug_abbrev", ".debug_str"};

static const char *const hows[] = {
    "gcc -O1 -g -fno-asynchronous-unwind-tables -Wl,--compress-debug-sections=zstd -o packed "
    "p.c",
    "gcc -O1 -g -fno-asynchronous-unwind-tables -fuse-ld=lld "
    "-Wl,--compress-debug-sections=zlib -o packed p.c",
};

START_TEST(test_binutils)
{
	char *plain, *packed;
	struct elffile *a, *b;
	int compressed = 0;

	build_pair(hows[_i], &plain, &packed);
	a = elffile_open(plain);
	b = elffile_open(packed);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		struct elffile_section want, got, raw;

		ck_assert_int_eq(elffile_section(a, sections[i], &want), 0);
		ck_assert_msg(elffile_section_data(b, sections[i], &got) == 0, "%s: %s", hows[_i],
			      sections[i]);
		ck_assert_uint_eq(got.size, want.size);
		ck_assert_msg(!memcmp(got.data, want.data, (size_t)want.size), "%s: %s differs",
			      hows[_i], sections[i]);
		/* stored compressed, and the second look-up gives the kept copy */
		if (elffile_section(b, sections[i], &raw) < 0 || (raw.flags & SHF_COMPRESSED))
			compressed++;
		ck_assert_int_eq(elffile_section_data(b, sections[i], &raw), 0);
		ck_assert_ptr_eq(raw.data, got.data);
	}
	ck_assert_int_ge(compressed, 3);
	elffile_free(a);
	elffile_free(b);
	free(plain);
	free(packed);
}
END_TEST

/* MiniDebugInfo: the stripped file has neither .symtab nor .debug_frame, its .gnu_debugdata
 * an ELF file with both (scripts/android-strip.sh, as Android's build strips), opened once. */
START_TEST(test_minidebuginfo)
{
	char *c = testutil_tmp_file("p.c", src, sizeof(src) - 1);
	char *cwd = getcwd(NULL, 0);
	char *cmd = xasprintf("cd %s && gcc -O1 -g -fno-asynchronous-unwind-tables -o full p.c && "
			      "sh %s/scripts/android-strip.sh full stripped",
			      testutil_tmp, cwd);
	char *path = testutil_tmp_path("stripped"), *full = testutil_tmp_path("full"), *log;
	struct elffile *ef, *mdi;
	struct elffile_section sec;
	int status;

	log = testutil_run(cmd, &status);
	ck_assert_msg(status == 0, "%s:\n%s", cmd, log);
	ef = elffile_open(path);
	ck_assert_ptr_nonnull(ef);
	ck_assert(!ef->has_symtab);
	ck_assert_int_eq(elffile_section(ef, ".debug_frame", &sec), -ENOENT);
	mdi = elffile_minidebuginfo(ef);
	ck_assert_ptr_nonnull(mdi);
	ck_assert_ptr_eq(elffile_minidebuginfo(ef), mdi);
	ck_assert(mdi->has_symtab);
	ck_assert_int_eq(elffile_section_data(mdi, ".debug_frame", &sec), 0);
	ck_assert_uint_gt(sec.size, 40);
	elffile_free(ef);
	/* none: NULL, and asked again still NULL */
	ef = elffile_open(full);
	ck_assert_ptr_nonnull(ef);
	ck_assert_ptr_null(elffile_minidebuginfo(ef));
	ck_assert_ptr_null(elffile_minidebuginfo(ef));
	elffile_free(ef);
	free(log);
	free(full);
	free(path);
	free(cmd);
	free(cwd);
	free(c);
}
END_TEST

Suite *elffile_suite(void)
{
	Suite *s = suite_create("elffile");
	TCase *tc = tcase_create("sections");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_binutils, 0, (int)ARRAY_SIZE(hows));
	tcase_add_test(tc, test_minidebuginfo);
	suite_add_tcase(s, tc);
	return s;
}
