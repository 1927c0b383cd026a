/* Unit tests for elfcompress and elffile_section_data(): sections compressed by binutils and
 * lld (ld, objcopy: zlib, zstd, the GNU .zdebug form) decompress to the bytes objcopy
 * --decompress-debug-sections gives (binutils is the oracle), and hostile headers and streams
 * give errors, never more than the limit, never a crash. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "perch/elfcompress.h"
#include "perch/elffile.h"
#include "perch/xalloc.h"
#include "testutil.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

static const char src[] =
	"#include <stdio.h>\n"
	"__attribute__((noinline)) int f(int x) { return x * 3 + 1; }\n"
	"int main(int argc, char **argv) { printf(\"%s %d\\n\", argv[0], f(argc)); return 0; }\n";

/* packed: made by @how (from "orig", linked without compression, or from the source); plain:
 * what objcopy --decompress-debug-sections makes of it */
static void build_pair(const char *how, char **plain, char **packed)
{
	char *c = testutil_tmp_file("p.c", src, sizeof(src) - 1);
	char *cmd;
	char *log;
	int status;

	*plain = testutil_tmp_path("plain");
	*packed = testutil_tmp_path("packed");
	cmd = xasprintf("cd %s && gcc -O1 -g -fno-asynchronous-unwind-tables -o orig p.c && %s && "
			"objcopy --decompress-debug-sections packed plain",
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
	"objcopy --compress-debug-sections=zlib orig packed",
	"objcopy --compress-debug-sections=zstd orig packed",
	"objcopy --compress-debug-sections=zlib-gnu orig packed",
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

/* An Elf64_Chdr of @type and @size, then @stream. */
static uint8_t *chdr64(uint32_t type, uint64_t size, const void *stream, size_t len, size_t *out)
{
	Elf64_Chdr h = {.ch_type = type, .ch_size = size, .ch_addralign = 1};
	uint8_t *b = xmalloc(sizeof(h) + len);

	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), stream, len);
	*out = sizeof(h) + len;
	return b;
}

START_TEST(test_hostile)
{
	uint8_t plain[5000], z[6000], *sec, *out;
	size_t zlen, slen, out_size;
	uLongf zl = sizeof(z);

	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 7 / 13);
	ck_assert_int_eq(compress2(z, &zl, plain, sizeof(plain), 9), Z_OK);
	zlen = zl;

	/* good, both classes */
	sec = chdr64(ELFCOMPRESS_ZLIB, sizeof(plain), z, zlen, &slen);
	ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_CHDR, sec, slen, 1, 0, 1 << 20, &out,
					     &out_size), 0);
	ck_assert_uint_eq(out_size, sizeof(plain));
	ck_assert(!memcmp(out, plain, sizeof(plain)));
	free(out);
	/* the header says more or less than the stream holds */
	((Elf64_Chdr *)sec)->ch_size = sizeof(plain) + 1;
	ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_CHDR, sec, slen, 1, 0, 1 << 20, &out,
					     &out_size), -EBADMSG);
	ck_assert_ptr_null(out);
	((Elf64_Chdr *)sec)->ch_size = sizeof(plain) - 1;
	ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_CHDR, sec, slen, 1, 0, 1 << 20, &out,
					     &out_size), -EBADMSG);
	/* over the limit: refused before any allocation */
	((Elf64_Chdr *)sec)->ch_size = UINT64_MAX;
	ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_CHDR, sec, slen, 1, 0, 1 << 20, &out,
					     &out_size), -E2BIG);
	((Elf64_Chdr *)sec)->ch_size = sizeof(plain);
	/* every truncation and a flipped byte anywhere: an error or the right bytes */
	for (size_t n = 0; n < slen; n++) {
		int ret = elfcompress_section(ELFCOMPRESS_CHDR, sec, n, 1, 0, 1 << 20, &out,
					      &out_size);

		ck_assert_int_lt(ret, 0);
		ck_assert_ptr_null(out);
	}
	for (size_t n = sizeof(Elf64_Chdr); n < slen; n += 3) {
		int ret;

		sec[n] ^= 0x55;
		ret = elfcompress_section(ELFCOMPRESS_CHDR, sec, slen, 1, 0, 1 << 20, &out,
					  &out_size);
		if (ret == 0) {
			ck_assert_uint_eq(out_size, sizeof(plain));
			free(out);
		}
		sec[n] ^= 0x55;
	}
	/* unknown algorithm */
	((Elf64_Chdr *)sec)->ch_type = 77;
	ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_CHDR, sec, slen, 1, 0, 1 << 20, &out,
					     &out_size), -EOPNOTSUPP);
	free(sec);

	/* zstd: good, then its stream cut short */
	{
		size_t cap = ZSTD_compressBound(sizeof(plain)), n;
		uint8_t *zs = xmalloc(cap);

		n = ZSTD_compress(zs, cap, plain, sizeof(plain), 3);
		ck_assert(!ZSTD_isError(n));
		sec = chdr64(ELFCOMPRESS_ZSTD, sizeof(plain), zs, n, &slen);
		ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_CHDR, sec, slen, 1, 0, 1 << 20,
						     &out, &out_size), 0);
		ck_assert(out_size == sizeof(plain) && !memcmp(out, plain, sizeof(plain)));
		free(out);
		ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_CHDR, sec, slen - 1, 1, 0,
						     1 << 20, &out, &out_size), -EBADMSG);
		free(sec);
		free(zs);
	}

	/* .zdebug: "ZLIB" and a big-endian size */
	{
		uint8_t zd[12 + sizeof(z)];

		memcpy(zd, "ZLIB", 4);
		for (int i = 0; i < 8; i++)
			zd[4 + i] = (uint8_t)((uint64_t)sizeof(plain) >> (8 * (7 - i)));
		memcpy(zd + 12, z, zlen);
		ck_assert_int_eq(elfcompress_kind_of(".zdebug_frame", 0, zd, 12 + zlen),
				 ELFCOMPRESS_ZDEBUG);
		ck_assert_int_eq(elfcompress_kind_of(".debug_frame", 0, zd, 12 + zlen),
				 ELFCOMPRESS_NONE);
		ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_ZDEBUG, zd, 12 + zlen, 1, 0,
						     1 << 20, &out, &out_size), 0);
		ck_assert(out_size == sizeof(plain) && !memcmp(out, plain, sizeof(plain)));
		free(out);
		ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_ZDEBUG, zd, 11, 1, 0, 1 << 20,
						     &out, &out_size), -EBADMSG);
	}
	ck_assert_int_eq(elfcompress_section(ELFCOMPRESS_NONE, z, zlen, 1, 0, 1 << 20, &out,
					     &out_size), -EINVAL);
}
END_TEST

Suite *elfcompress_suite(void)
{
	Suite *s = suite_create("elfcompress");
	TCase *tc = tcase_create("sections");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_binutils, 0, (int)ARRAY_SIZE(hows));
	tcase_add_test(tc, test_hostile);
	suite_add_tcase(s, tc);
	return s;
}
