/* Unit tests for elfsection: debug sections compressed by objcopy (zlib, zstd, GNU .zdebug)
 * decompress to the bytes of the same sections stored plain (objcopy --dump-section of the
 * uncompressed build); hostile headers and streams are refused. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/elfsection.h"
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
	static const char *const kinds[] = {"zlib", "zlib-gnu", "zstd"};
	static const char *const sections[] = {".debug_info", ".debug_line", ".debug_abbrev",
					       ".debug_str", ".debug_frame"};
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
			ck_assert_int_eq(elfsection_get(ef, sections[i], ELFSECTION_MAX_SIZE, &b),
					 0);
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

/* A stream over @n bytes of section (an Elf64_Chdr of type @type claiming @claim bytes, then
 * @z, @zn stream bytes), or NULL when elfsection_stream_new() refuses it. */
static struct elfsection_stream *stream_of(uint32_t type, uint64_t claim, const uint8_t *z,
					   size_t zn)
{
	uint8_t *raw = xmalloc(24 + zn);
	struct elfsection_stream *st;
	size_t n = chdr64(raw, type, claim, z, zn);

	if (elfsection_stream_new(raw, n, SHF_COMPRESSED, ".debug_info", 1, 0, ELFSECTION_MAX_SIZE,
				  &st) < 0)
		return NULL;
	return st;
}

/* Progressive decompression (the cold-dump path of debuginfo): every prefix asked for is the
 * data zlib's compress2() and libzstd's ZSTD_compress() were given, whatever the order of the
 * requests; the end is checked as strictly as elfsection_decompress() checks it. */
START_TEST(test_stream)
{
	size_t n = 700000, zcap = compressBound(n) + ZSTD_compressBound(n), zn, i;
	uint8_t *data = xmalloc(n), *z = xmalloc(zcap);
	static const size_t asks[] = {0,      1,      100,    65535,  65537,
				      300000, 299999, 699999, 700000, 5000000};
	uint64_t x = 88172645463325252ULL;

	/* text-like bytes: compressible, not trivially */
	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		data[i] = (uint8_t)("abcdefgh  \n_xyz"[x % 16]);
	}
	for (int kind = 0; kind < 2; kind++) {
		struct elfsection_stream *st;
		uint32_t type = kind ? 2 /* ELFCOMPRESS_ZSTD */ : ELFCOMPRESS_ZLIB;

		if (kind) {
			ZSTD_CCtx *cc = ZSTD_createCCtx();

			/* with a checksum, so that the corrupt stream below cannot pass */
			ck_assert(
			    !ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)));
			zn = ZSTD_compress2(cc, z, zcap, data, n);
			ck_assert(!ZSTD_isError(zn));
			ZSTD_freeCCtx(cc);
		} else {
			uLongf zl = zcap;

			ck_assert_int_eq(compress2(z, &zl, data, n, 6), Z_OK);
			zn = zl;
		}
		st = stream_of(type, n, z, zn);
		ck_assert_ptr_nonnull(st);
		ck_assert_uint_eq(elfsection_stream_size(st), n);
		ck_assert_uint_eq(elfsection_stream_ready(st), 0);
		for (i = 0; i < ARRAY_SIZE(asks); i++) {
			size_t want = asks[i] < n ? asks[i] : n, ready;

			ck_assert_int_eq(elfsection_stream_ensure(st, asks[i]), 0);
			ready = elfsection_stream_ready(st);
			ck_assert_uint_ge(ready, want);
			ck_assert_uint_le(ready, n);
			ck_assert_mem_eq(elfsection_stream_data(st), data, ready);
		}
		ck_assert_uint_eq(elfsection_stream_ready(st), n);
		/* only a prefix: far less than all of it */
		elfsection_stream_free(st, 0);
		st = stream_of(type, n, z, zn);
		ck_assert_int_eq(elfsection_stream_ensure(st, 1000), 0);
		ck_assert_uint_lt(elfsection_stream_ready(st), n / 2);
		ck_assert_mem_eq(elfsection_stream_data(st), data, elfsection_stream_ready(st));
		{
			uint8_t *kept = elfsection_stream_free(st, 1);

			ck_assert_ptr_nonnull(kept);
			free(kept);
		}
		/* a truncated stream: its start reads, its end fails, and stays failed */
		st = stream_of(type, n, z, zn / 2);
		ck_assert_int_eq(elfsection_stream_ensure(st, 100), 0);
		ck_assert_mem_eq(elfsection_stream_data(st), data, 100);
		ck_assert_int_eq(elfsection_stream_ensure(st, n), -EBADMSG);
		ck_assert_int_eq(elfsection_stream_ensure(st, 10), -EBADMSG);
		elfsection_stream_free(st, 0);
		/* the header claims one byte more, or one less, than the stream holds */
		st = stream_of(type, n + 1, z, zn);
		ck_assert_int_eq(elfsection_stream_ensure(st, n + 1), -EBADMSG);
		elfsection_stream_free(st, 0);
		st = stream_of(type, n - 1, z, zn);
		ck_assert_int_eq(elfsection_stream_ensure(st, 1000), 0);
		ck_assert_int_eq(elfsection_stream_ensure(st, n - 1), -EBADMSG);
		elfsection_stream_free(st, 0);
		/* corrupt bytes in the middle */
		memset(z + zn / 2, 0x5a, 64);
		st = stream_of(type, n, z, zn);
		ck_assert_int_eq(elfsection_stream_ensure(st, n), -EBADMSG);
		elfsection_stream_free(st, 0);
	}
	/* not compressed, or a bomb by its header: refused, the raw bytes freed */
	{
		struct elfsection_stream *st;
		uint8_t *raw = xmalloc(64);

		memset(raw, 0, 64);
		ck_assert_int_eq(elfsection_stream_new(raw, 64, 0, ".debug_info", 1, 0, 1024, &st),
				 -EINVAL);
		ck_assert_ptr_null(st);
		raw = xmalloc(64);
		chdr64(raw, ELFCOMPRESS_ZLIB, 1u << 20, z, 16);
		ck_assert_int_eq(
		    elfsection_stream_new(raw, 40, SHF_COMPRESSED, NULL, 1, 0, 1024, &st), -E2BIG);
	}
	elfsection_stream_free(NULL, 0);
	free(data);
	free(z);
}
END_TEST

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
	ck_assert_int_eq(elfsection_decompress(sec, len, SHF_COMPRESSED, ".debug_info", 1, 0, 1024,
					       &out, &out_size),
			 0);
	ck_assert_uint_eq(out_size, sizeof(text));
	ck_assert_mem_eq(out, text, sizeof(text));
	free(out);

	/* the header claims more or less than the stream holds */
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text) + 1, z, zlen);
	ck_assert_int_eq(
	    elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out, &out_size),
	    -EBADMSG);
	ck_assert_ptr_null(out);
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text) - 1, z, zlen);
	ck_assert_int_eq(
	    elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out, &out_size),
	    -EBADMSG);
	/* a truncated stream, a corrupt one */
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text), z, zlen / 2);
	ck_assert_int_eq(
	    elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out, &out_size),
	    -EBADMSG);
	len = chdr64(sec, ELFCOMPRESS_ZLIB, sizeof(text), z, zlen);
	sec[24 + 5] ^= 0xff;
	ck_assert_int_eq(
	    elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out, &out_size),
	    -EBADMSG);
	/* a zstd header over a zlib stream */
	len = chdr64(sec, 2, sizeof(text), z, zlen);
	ck_assert_int_eq(
	    elfsection_decompress(sec, len, SHF_COMPRESSED, NULL, 1, 0, 1024, &out, &out_size),
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
	ck_assert_int_eq(
	    elfsection_decompress(sec, len, 0, ".debug_info", 1, 0, 1024, &out, &out_size),
	    -EINVAL);
	ck_assert_int_eq(elfsection_probe(sec, len, 0, ".debug_info", 1, 0, &info), 0);
	ck_assert_int_eq(info.comp, ELFSECTION_PLAIN);
	ck_assert_uint_eq(info.size, len);

	/* GNU .zdebug: "ZLIB" + big-endian size */
	memcpy(sec, "ZLIB", 4);
	for (int i = 0; i < 8; i++)
		sec[4 + i] = (uint8_t)((uint64_t)sizeof(text) >> (56 - 8 * i));
	memcpy(sec + 12, z, zlen);
	ck_assert_int_eq(
	    elfsection_decompress(sec, 12 + zlen, 0, ".zdebug_line", 1, 0, 1024, &out, &out_size),
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
	tcase_add_test(tc, test_stream);
	suite_add_tcase(s, tc);
	return s;
}
