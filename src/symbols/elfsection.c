/* Compressed ELF sections (SHF_COMPRESSED with zlib or zstd, GNU .zdebug_*): decompressed with
 * isa-l or zlib (inflate.h) and libzstd. Every size comes from the file, so every one is
 * checked. */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/elfsection.h"
#include "perch/symbols/inflate.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* gABI 2022; glibc 2.36's elf.h does not have it yet */
#endif

static uint64_t read_uint(const uint8_t *p, unsigned int n, int big)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
	return v;
}

int elfsection_probe(const uint8_t *data, size_t size, uint64_t sh_flags, const char *name,
		     int is_64, int big_endian, struct elfsection_info *out)
{
	uint64_t type;

	memset(out, 0, sizeof(*out));
	if (sh_flags & SHF_COMPRESSED) {
		/* Elf64_Chdr: ch_type(4) ch_reserved(4) ch_size(8) ch_addralign(8);
		 * Elf32_Chdr: ch_type(4) ch_size(4) ch_addralign(4) */
		size_t hdr = is_64 ? 24 : 12;

		if (!data || size < hdr)
			return -ENOEXEC;
		type = read_uint(data, 4, big_endian);
		out->size =
		    is_64 ? read_uint(data + 8, 8, big_endian) : read_uint(data + 4, 4, big_endian);
		out->skip = hdr;
		if (type == ELFCOMPRESS_ZLIB)
			out->comp = ELFSECTION_ZLIB;
		else if (type == ELFCOMPRESS_ZSTD)
			out->comp = ELFSECTION_ZSTD;
		else
			return -EOPNOTSUPP;
		return 0;
	}
	if (name && !strncmp(name, ".zdebug", 7)) {
		/* "ZLIB" + uncompressed size, 8 bytes big-endian whatever the file's byte order */
		if (!data || size < 12 || memcmp(data, "ZLIB", 4))
			return -ENOEXEC;
		out->comp = ELFSECTION_ZLIB;
		out->size = read_uint(data + 4, 8, 1);
		out->skip = 12;
		return 0;
	}
	out->comp = ELFSECTION_PLAIN;
	out->size = size;
	return 0;
}

static int inflate_all(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
	struct inflater *z = inflater_new(INFLATE_DEFAULT);
	/* one spare byte: a stream longer than the header says must not look complete */
	size_t out_left = out_size + 1;
	int ret;

	if (!z)
		return -ENOMEM;
	ret = inflater_run(z, &in, &in_size, &out, &out_left);
	inflater_free(z);
	return ret == INFLATE_END && out_left == 1 ? 0 : -EBADMSG;
}

int elfsection_decompress(const uint8_t *data, size_t size, uint64_t sh_flags, const char *name,
			  int is_64, int big_endian, size_t limit, uint8_t **out, size_t *out_size)
{
	struct elfsection_info info;
	uint8_t *buf;
	int ret;

	*out = NULL;
	*out_size = 0;
	ret = elfsection_probe(data, size, sh_flags, name, is_64, big_endian, &info);
	if (ret < 0)
		return ret;
	if (info.comp == ELFSECTION_PLAIN)
		return -EINVAL;
	if (info.size > limit || info.size > SIZE_MAX - 1)
		return -E2BIG;
	/* one extra byte so that the output of an empty section is still an allocation; zlib
	 * writes it only for a stream longer than the header says (then rejected) */
	buf = xmalloc_large((size_t)info.size + 1);
	if (info.comp == ELFSECTION_ZLIB) {
		ret = inflate_all(data + info.skip, size - info.skip, buf, (size_t)info.size);
	} else {
		size_t got =
		    ZSTD_decompress(buf, (size_t)info.size, data + info.skip, size - info.skip);

		ret = ZSTD_isError(got) || got != info.size ? -EBADMSG : 0;
	}
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*out = buf;
	*out_size = (size_t)info.size;
	return 0;
}

struct elfsection_stream {
	uint8_t *raw; /* the section as stored, header included */
	uint8_t *out; /* size + 1 bytes */
	size_t size, ready;
	int comp, failed, done;
	struct inflater *z;
	const uint8_t *in; /* zlib: what is left of the input */
	size_t in_left;
	ZSTD_DCtx *zd;
	ZSTD_inBuffer zin;
};

/* output is produced in steps of this much at least: fewer calls, little waste */
#define STREAM_STEP (64u << 10)

int elfsection_stream_new(uint8_t *raw, size_t size, uint64_t sh_flags, const char *name, int is_64,
			  int big_endian, size_t limit, struct elfsection_stream **out)
{
	struct elfsection_info info;
	struct elfsection_stream *st;
	int ret;

	*out = NULL;
	ret = elfsection_probe(raw, size, sh_flags, name, is_64, big_endian, &info);
	if (!ret && info.comp == ELFSECTION_PLAIN)
		ret = -EINVAL;
	if (!ret && (info.size > limit || info.size > SIZE_MAX - 1))
		ret = -E2BIG;
	if (ret < 0) {
		free(raw);
		return ret;
	}
	st = xcalloc(1, sizeof(*st));
	st->raw = raw;
	st->size = (size_t)info.size;
	st->comp = info.comp;
	st->out = xmalloc_large(st->size + 1);
	if (st->comp == ELFSECTION_ZLIB) {
		st->z = inflater_new(INFLATE_DEFAULT);
		st->in = raw + info.skip;
		st->in_left = size - info.skip;
		if (!st->z)
			st->failed = 1;
	} else {
		st->zd = ZSTD_createDCtx();
		st->zin = (ZSTD_inBuffer){.src = raw + info.skip, .size = size - info.skip};
		if (!st->zd)
			st->failed = 1;
	}
	*out = st;
	return 0;
}

uint8_t *elfsection_stream_data(const struct elfsection_stream *st)
{
	return st->out;
}

size_t elfsection_stream_size(const struct elfsection_stream *st)
{
	return st->size;
}

size_t elfsection_stream_ready(const struct elfsection_stream *st)
{
	return st->ready;
}

/* One zlib step towards @target bytes (size + 1 at the end: a longer stream shows). 1: not
 * at the end yet, 0: the stream ended, -1: corrupt. */
static int stream_zlib(struct elfsection_stream *st, size_t target)
{
	uint8_t *out = st->out + st->ready;
	size_t want = target - st->ready;
	int ret = inflater_run(st->z, &st->in, &st->in_left, &out, &want);

	st->ready = (size_t)(out - st->out);
	if (ret == INFLATE_END)
		return 0;
	return ret == INFLATE_MORE ? 1 : -1;
}

/* The same for zstd; concatenated frames go on into the next one. */
static int stream_zstd(struct elfsection_stream *st, size_t target)
{
	ZSTD_outBuffer o = {.dst = st->out, .size = target, .pos = st->ready};
	size_t in_pos = st->zin.pos, r = ZSTD_decompressStream(st->zd, &o, &st->zin);
	int moved = o.pos > st->ready || st->zin.pos > in_pos;

	if (ZSTD_isError(r))
		return -1;
	st->ready = o.pos;
	if (r == 0 && st->zin.pos == st->zin.size)
		return 0;
	return moved ? 1 : -1;
}

int elfsection_stream_ensure(struct elfsection_stream *st, size_t upto)
{
	size_t target;
	int ret = 1;

	if (upto > st->size)
		upto = st->size;
	if (st->failed)
		return -EBADMSG;
	if (st->done || st->ready >= upto)
		return 0;
	/* the last step asks for one byte more than the header says, as inflate_all() */
	target = upto > st->size - STREAM_STEP || st->size < STREAM_STEP ? st->size + 1
									 : upto + STREAM_STEP;
	while (st->ready < upto && ret > 0) {
		size_t before = st->ready;

		ret =
		    st->comp == ELFSECTION_ZLIB ? stream_zlib(st, target) : stream_zstd(st, target);
		if (ret > 0 && st->ready == before && st->comp == ELFSECTION_ZLIB)
			ret = -1; /* truncated: no input left (stream_zlib() went as far as it
				     could) */
	}
	/* at the end the stream must end exactly there */
	if (ret >= 0 && st->ready >= st->size) {
		while (ret > 0 && st->ready <= st->size) {
			size_t before = st->ready;

			ret = st->comp == ELFSECTION_ZLIB ? stream_zlib(st, st->size + 1)
							  : stream_zstd(st, st->size + 1);
			if (ret > 0 && st->ready == before)
				ret = -1;
		}
		if (ret == 0 && st->ready == st->size)
			st->done = 1;
		else
			ret = -1;
	} else if (ret == 0) {
		ret = -1; /* the stream ended before the size the header says */
	}
	if (ret < 0) {
		st->failed = 1;
		return -EBADMSG;
	}
	return 0;
}

uint8_t *elfsection_stream_free(struct elfsection_stream *st, int keep_data)
{
	uint8_t *data = NULL;

	if (!st)
		return NULL;
	inflater_free(st->z);
	ZSTD_freeDCtx(st->zd);
	free(st->raw);
	if (keep_data)
		data = st->out;
	else
		free(st->out);
	free(st);
	return data;
}

/* Section @name of @ef: its header into @shdr. 0 or -ENOENT. */
static int find_shdr(const struct elffile *ef, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!ef->elf || elf_getshdrstrndx(ef->elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(ef->elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return 0;
	}
	return -ENOENT;
}

int elfsection_get(const struct elffile *ef, const char *name, size_t limit,
		   struct elfsection_buf *out)
{
	char zname[256];
	const char *used = name, *ident;
	GElf_Shdr shdr;
	uint8_t *buf;
	size_t len;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = find_shdr(ef, name, &shdr);
	if (ret < 0 && !strncmp(name, ".debug_", 7) && strlen(name) + 2 < sizeof(zname)) {
		snprintf(zname, sizeof(zname), ".zdebug_%s", name + 7);
		used = zname;
		ret = find_shdr(ef, zname, &shdr);
	}
	if (ret < 0 || shdr.sh_type == SHT_NOBITS)
		return -ENOENT;
	if (shdr.sh_offset > ef->size || shdr.sh_size > ef->size - shdr.sh_offset)
		return -ENOEXEC;
	out->data = ef->image + shdr.sh_offset;
	out->size = (size_t)shdr.sh_size;
	ident = elf_getident(ef->elf, NULL);
	ret = elfsection_decompress(out->data, out->size, shdr.sh_flags, used, ef->is_64,
				    ident && ident[EI_DATA] == ELFDATA2MSB, limit, &buf, &len);
	if (ret == -EINVAL)
		return 0; /* stored plain */
	if (ret < 0) {
		memset(out, 0, sizeof(*out));
		return ret;
	}
	out->data = out->owned_ = buf;
	out->size = len;
	return 0;
}

void elfsection_buf_release(struct elfsection_buf *b)
{
	if (!b)
		return;
	free(b->owned_);
	memset(b, 0, sizeof(*b));
}
