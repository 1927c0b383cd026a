/* Decompressing ELF sections: zlib and zstd behind an Elf*_Chdr, GNU .zdebug_*, and xz. */
#include <elf.h>
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "perch/elfcompress.h"
#include "perch/xalloc.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* not in older <elf.h> */
#endif

static uint64_t read_uint(const uint8_t *p, size_t n, int big_endian)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[big_endian ? n - 1 - i : i] << (8 * i);
	return v;
}

enum elfcompress_kind elfcompress_kind_of(const char *name, uint64_t sh_flags,
					  const uint8_t *data, size_t size)
{
	if (sh_flags & SHF_COMPRESSED)
		return ELFCOMPRESS_CHDR;
	if (name && !strncmp(name, ".zdebug", 7) && data && size >= 12 && !memcmp(data, "ZLIB", 4))
		return ELFCOMPRESS_ZDEBUG;
	return ELFCOMPRESS_NONE;
}

/* zlib into @out, which has room for @out_size + 1 bytes (one more tells a stream longer than
 * its header said): exactly @out_size bytes, or -EBADMSG. */
static int inflate_exact(const uint8_t *in, size_t size, uint8_t *out, size_t out_size)
{
	size_t in_left = size, out_left = out_size + 1;
	z_stream zs;
	int zr = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.next_out = out;
	/* z_stream counts in uInt: big sections go in slices */
	while (zr == Z_OK) {
		if (zs.avail_in == 0) {
			zs.avail_in = in_left > UINT32_MAX ? UINT32_MAX : (uInt)in_left;
			in_left -= zs.avail_in;
		}
		if (zs.avail_out == 0) {
			if (!out_left)
				break;
			zs.avail_out = out_left > UINT32_MAX ? UINT32_MAX : (uInt)out_left;
			out_left -= zs.avail_out;
		}
		zr = inflate(&zs, Z_NO_FLUSH);
	}
	inflateEnd(&zs);
	if (zr == Z_MEM_ERROR)
		return -ENOMEM;
	return zr == Z_STREAM_END && zs.total_out == out_size ? 0 : -EBADMSG;
}

static int zstd_exact(const uint8_t *in, size_t size, uint8_t *out, size_t out_size)
{
	size_t got = ZSTD_decompress(out, out_size, in, size);

	if (ZSTD_isError(got))
		return ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation ? -ENOMEM : -EBADMSG;
	return got == out_size ? 0 : -EBADMSG;
}

int elfcompress_section(enum elfcompress_kind kind, const uint8_t *data, size_t size, int is_64,
			int big_endian, size_t limit, uint8_t **out, size_t *out_size)
{
	size_t hdr;
	uint64_t type, usize;
	uint8_t *buf;
	int ret;

	*out = NULL;
	*out_size = 0;
	if (kind == ELFCOMPRESS_ZDEBUG) {
		if (size < 12 || memcmp(data, "ZLIB", 4))
			return -EBADMSG;
		type = ELFCOMPRESS_ZLIB;
		usize = read_uint(data + 4, 8, 1);
		hdr = 12;
	} else if (kind == ELFCOMPRESS_CHDR) {
		hdr = is_64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
		if (size < hdr)
			return -EBADMSG;
		type = read_uint(data, 4, big_endian);
		usize = is_64 ? read_uint(data + 8, 8, big_endian) : read_uint(data + 4, 4, big_endian);
	} else {
		return -EINVAL;
	}
	if (type != ELFCOMPRESS_ZLIB && type != ELFCOMPRESS_ZSTD)
		return -EOPNOTSUPP;
	if (usize > limit)
		return -E2BIG;
	buf = malloc((size_t)usize + 1);
	if (!buf)
		return -ENOMEM;
	if (type == ELFCOMPRESS_ZLIB)
		ret = inflate_exact(data + hdr, size - hdr, buf, (size_t)usize);
	else
		ret = zstd_exact(data + hdr, size - hdr, buf, (size_t)usize);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*out = buf;
	*out_size = (size_t)usize;
	return 0;
}

int elfcompress_xz(const uint8_t *in, size_t size, size_t limit, uint8_t **out, size_t *out_size)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	uint8_t *buf = NULL;
	size_t alloc = 0, cap = limit + 1; /* one byte more tells "too big" from "exactly limit" */
	lzma_ret lr;
	int ret;

	*out = NULL;
	*out_size = 0;
	if (lzma_stream_decoder(&strm, 256u << 20, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = size;
	for (;;) {
		if (strm.avail_out == 0) {
			size_t used = alloc;

			if (alloc >= cap) {
				ret = -E2BIG;
				goto out;
			}
			alloc = alloc ? alloc * 2 : (size * 4 > 4096 ? size * 4 : 4096);
			if (alloc > cap)
				alloc = cap;
			buf = xrealloc(buf, alloc);
			strm.next_out = buf + used;
			strm.avail_out = alloc - used;
		}
		lr = lzma_code(&strm, LZMA_FINISH);
		if (lr == LZMA_STREAM_END)
			break;
		if (lr == LZMA_OK)
			continue;
		ret = lr == LZMA_MEM_ERROR	  ? -ENOMEM
		      : lr == LZMA_MEMLIMIT_ERROR ? -E2BIG
						  : -EBADMSG;
		goto out;
	}
	if (strm.total_out > limit) {
		ret = -E2BIG;
		goto out;
	}
	*out = buf;
	*out_size = strm.total_out;
	buf = NULL;
	ret = 0;
out:
	lzma_end(&strm);
	free(buf);
	return ret;
}
