/* Unit tests for elfsection: debug sections compressed by objcopy (zlib, zstd, GNU .zdebug)
 * decompress to the bytes of the same sections stored plain (objcopy --dump-section of the
 * uncompressed build); hostile headers and streams are refused. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perch/elffile.h"
#include "perch/elfsection.h"
#include "perch/xalloc.h"
#include "testutil.h"

static void run_ok(const char *cmd)
{
	int status;
	char *out = testutil_run(cmd, &status);

	ck_assert_msg(status == 0, "%s: %s", cmd, out);
	free(out);
}

/* Built with -fno-asynchronous-unwind-tables so that there is a .debug_frame (the CFI the
 * unwinder reads from this module too). */
START_TEST(test_objcopy)
{
	static const char *const kinds[] = { "zlib", "zlib-gnu", "zstd" };
	static const char *const sections[] = { ".debug_info", ".debug_line", ".debug_abbrev",
						".debug_str", ".debug_frame" };
	char *src = testutil_fixture_path("elf/lines"), *cmd;
	size_t k, i;

	if (!testutil_have_tool("gcc") || !testutil_have_tool("objcopy"))
		return;
	cmd = xasprintf("gcc -O2 -g -fno-asynchronous-unwind-tables -o %s/plain %s/lines.c "
			"%s/lines2.c",
			testutil_tmp, src, src);
	run_ok(cmd);
	free(cmd);
	for (i = 0; i < ARRAY_SIZE(sections); i++) {
		cmd = xasprintf("objcopy --dump-section %s=%s/want%s %s/plain %s/junk", sections[i],
				testutil_tmp, sections[i], testutil_tmp, testutil_tmp);
		run_ok(cmd);
		free(cmd);
	}
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		char *bin = xasprintf("%s/%s", testutil_tmp, kinds[k]);
		struct elffile *ef;

		cmd = xasprintf("objcopy --compress-debug-sections=%s %s/plain %s", kinds[k],
				testutil_tmp, bin);
		run_ok(cmd);
		free(cmd);
		ef = elffile_open(bin);
		ck_assert_ptr_nonnull(ef);
		for (i = 0; i < ARRAY_SIZE(sections); i++) {
			char *path = xasprintf("%s/want%s", testutil_tmp, sections[i]);
			struct elfsection_buf b;
			struct elffile_section raw;
			uint8_t *want;
			size_t size;

			want = testutil_read_file(path, &size);
			ck_assert_uint_gt(size, 0);
			ck_assert_int_eq(elfsection_get(ef, sections[i], ELFSECTION_MAX_SIZE, &b), 0);
			ck_assert_msg(b.size == size && !memcmp(b.data, want, size),
				      "%s %s: %zu bytes, want %zu", kinds[k], sections[i], b.size,
				      size);
			/* it was stored compressed: smaller, and not the same bytes */
			if (elffile_section(ef, sections[i], &raw) < 0) {
				char z[64];

				snprintf(z, sizeof(z), ".zdebug_%s", sections[i] + 7);
				ck_assert_int_eq(elffile_section(ef, z, &raw), 0);
			}
			ck_assert(raw.data != b.data);
			elfsection_buf_release(&b);
			elfsection_buf_release(&b); /* twice: harmless */
			free(want);
			free(path);
		}
		elffile_free(ef);
		free(bin);
	}
	/* a plain section is borrowed from the image */
	{
		char *bin = xasprintf("%s/plain", testutil_tmp);
		struct elffile *ef = elffile_open(bin);
		struct elfsection_buf b;
		struct elffile_section raw;

		ck_assert_ptr_nonnull(ef);
		ck_assert_int_eq(elfsection_get(ef, ".debug_info", ELFSECTION_MAX_SIZE, &b), 0);
		ck_assert_int_eq(elffile_section(ef, ".debug_info", &raw), 0);
		ck_assert_ptr_eq(b.data, raw.data);
		ck_assert_uint_eq(b.size, raw.size);
		elfsection_buf_release(&b);
		ck_assert_int_eq(elfsection_get(ef, ".debug_nonesuch", ELFSECTION_MAX_SIZE, &b),
				 -ENOENT);
		ck_assert_int_eq(elfsection_get(ef, ".bss", ELFSECTION_MAX_SIZE, &b), -ENOENT);
		elffile_free(ef);
		free(bin);
	}
	free(src);
}
END_TEST

/* An Elf64_Chdr (little-endian) followed by @n stream bytes. */
static size_t chdr64(uint8_t *out, uint32_t type, uint64_t size, const uint8_t *s, size_t n)
{
	memset(out, 0, 24);
	memcpy(out, &type, 4);
	memcpy(out + 8, &size, 8);
	memcpy(out + 24, s, n);
	return 24 + n;
}

START_TEST(test_hostile)
{
	static const uint8_t text[] = "perch perch perch perch perch perch perch perch";
	uint8_t z[128], sec[256], *out;
	uLongf zlen = sizeof(z);
	size_t len, out_size;
	struct elfsection_info info;

	ck_assert_int_eq(compress2(z, &zlen, text, sizeof(text), 9), Z_OK);

	/* good, as a reference */
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text), z, zlen);
	ck_assert_int_eq(elfsection_decompress(sec, len, SHF_COMPRESSED, ".debug_info", 1, 0,
					       1024, &out, &out_size),
			 0);
	ck_assert_uint_eq(out_size, sizeof(text));
	ck_assert_mem_eq(out, text, sizeof(text));
	free(out);

	/* the header claims more or less than the stream holds */
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text) + 1, z, zlen);
	ck_assert_int_eq(elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out,
					       &out_size),
			 -EBADMSG);
	ck_assert_ptr_null(out);
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text) - 1, z, zlen);
	ck_assert_int_eq(elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out,
					       &out_size),
			 -EBADMSG);
	/* a truncated stream, a corrupt one */
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text), z, zlen / 2);
	ck_assert_int_eq(elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out,
					       &out_size),
			 -EBADMSG);
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text), z, zlen);
	sec[24 + 5] ^= 0xff;
	ck_assert_int_eq(elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out,
					       &out_size),
			 -EBADMSG);
	/* a zstd header over a zlib stream */
	len = chdr64(sec, 2, sizeof(text), z, zlen);
	ck_assert_int_eq(elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out,
					       &out_size),
			 -EBADMSG);
	/* a decompression bomb by its header: refused before any allocation */
	len = chdr64(sec, ELFCOMPRESS_ZLIB, UINT64_MAX, z, zlen);
	ck_assert_int_eq(elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0,
					       ELFSECTION_MAX_SIZE, &out, &out_size),
			 -E2BIG);
	/* unknown type, a header cut short, not compressed at all */
	len = chdr64(sec, 77, sizeof(text), z, zlen);
	ck_assert_int_eq(elfsection_probe(sec, len, SHF_COMPRESSED, NULL, 1, 0, &info),
			 -EOPNOTSUPP);
	ck_assert_int_eq(elfsection_probe(sec, 23, SHF_COMPRESSED, NULL, 1, 0, &info), -ENOEXEC);
	ck_assert_int_eq(elfsection_probe(sec, 11, SHF_COMPRESSED, NULL, 0, 0, &info), -ENOEXEC);
	ck_assert_int_eq(elfsection_decompress(sec, len, 0, ".debug_info", 1, 0, 1024, &out,
					       &out_size),
			 -EINVAL);
	ck_assert_int_eq(elfsection_probe(sec, len, 0, ".debug_info", 1, 0, &info), 0);
	ck_assert_int_eq(info.comp, ELFSECTION_PLAIN);
	ck_assert_uint_eq(info.size, len);

	/* GNU .zdebug: "ZLIB" + big-endian size */
	memcpy(sec, "ZLIB", 4);
	for (int i = 0; i < 8; i++)
		sec[4 + i] = (uint8_t)((uint64_t)sizeof(text) >> (56 - 8 * i));
	memcpy(sec + 12, z, zlen);
	ck_assert_int_eq(elfsection_decompress(sec, 12 + zlen, 0, ".zdebug_line", 1, 0, 1024,
					       &out, &out_size),
			 0);
	ck_assert_mem_eq(out, text, sizeof(text));
	free(out);
	ck_assert_int_eq(elfsection_probe(sec, 11, 0, ".zdebug_line", 1, 0, &info), -ENOEXEC);
	memcpy(sec, "ZLIX", 4);
	ck_assert_int_eq(elfsection_probe(sec, 12 + zlen, 0, ".zdebug_line", 1, 0, &info),
			 -ENOEXEC);

	/* an Elf32_Chdr, big-endian: type(4) size(4) align(4) */
	memset(sec, 0, 12);
	sec[3] = ELFCOMPRESS_ZLIB;
	sec[7] = sizeof(text);
	memcpy(sec + 12, z, zlen);
	ck_assert_int_eq(elfsection_decompress(sec, 12 + zlen, SHF_COMPRESSED, NULL, 0, 1, 1024,
					       &out, &out_size),
			 0);
	ck_assert_mem_eq(out, text, sizeof(text));
	free(out);
}
END_TEST

Suite *elfsection_suite(void)
{
	Suite *s = suite_create("elfsection");
	TCase *tc = tcase_create("objcopy");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_objcopy);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_test(tc, test_hostile);
	suite_add_tcase(s, tc);
	return s;
}
