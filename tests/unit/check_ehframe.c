/* Unit tests for ehframe: the FDE table of a static binary against readelf's, against a
 * binary's own .eh_frame_hdr, hand-built CIE/FDE encodings, and hostile bytes. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/ehframe.h"
#include "perch/symbols/elffile.h"
#include "testutil.h"

static struct elffile *open_fixture(const char *rel)
{
	char *path = testutil_fixture_path("elf/dw/%s", rel);
	struct elffile *ef = elffile_open(path);

	ck_assert_msg(ef, "elffile_open(%s): %s", path, strerror(errno));
	free(path);
	return ef;
}

static void assert_sane_table(const struct ehframe_entry *t, int n, uint64_t lo, uint64_t hi)
{
	int i;

	for (i = 0; i < n; i++) {
		ck_assert_uint_ge(t[i].fde, lo);
		ck_assert_uint_lt(t[i].fde, hi);
		if (i)
			ck_assert_uint_lt(t[i - 1].start, t[i].start);
	}
}

/* hello-static.fdes ("401100 495070" per line) was written by build.sh from readelf. */
START_TEST(test_static_vs_readelf)
{
	struct elffile *ef = open_fixture("hello-static");
	char *path = testutil_fixture_path("elf/dw/hello-static.fdes");
	FILE *f = fopen(path, "r");
	struct ehframe_entry *t = NULL;
	unsigned long long start, fde;
	struct elffile_section sec;
	int n, i = 0;

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(ef->eh_frame_hdr_size, 0); /* the point of this fixture */
	ck_assert_int_eq(elffile_section(ef, ".eh_frame", &sec), 0);
	n = ehframe_build_table(ef, &t);
	ck_assert_int_gt(n, 500);
	assert_sane_table(t, n, sec.vaddr, sec.vaddr + sec.size);
	while (fscanf(f, "%llx %llx", &start, &fde) == 2) {
		ck_assert_int_lt(i, n);
		ck_assert_msg(t[i].start == start && t[i].fde == fde,
			      "entry %d: got %llx %llx, readelf %llx %llx", i,
			      (unsigned long long)t[i].start, (unsigned long long)t[i].fde, start,
			      fde);
		i++;
	}
	ck_assert_int_eq(i, n);
	fclose(f);
	free(path);
	free(t);
	elffile_free(ef);
}
END_TEST

static int32_t rd32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* The linker's own index (.eh_frame_hdr: version 1, eh_frame_ptr pcrel|sdata4, fde_count
 * udata4, table datarel|sdata4 relative to the header) must match ours. */
START_TEST(test_pie_vs_eh_frame_hdr)
{
	struct elffile *ef = open_fixture("inl-dwarf5");
	struct elffile_section hdr;
	struct ehframe_entry *t = NULL;
	const uint8_t *p;
	uint32_t count, i;
	int n;

	ck_assert_int_eq(elffile_section(ef, ".eh_frame_hdr", &hdr), 0);
	p = hdr.data;
	ck_assert_uint_ge(hdr.size, 12);
	ck_assert_int_eq(p[0], 1);
	ck_assert_int_eq(p[1], 0x1b);
	ck_assert_int_eq(p[2], 0x03);
	ck_assert_int_eq(p[3], 0x3b);
	count = (uint32_t)rd32(p + 8);
	ck_assert_uint_ge(hdr.size, 12 + 8 * (uint64_t)count);
	n = ehframe_build_table(ef, &t);
	ck_assert_int_eq(n, (int)count);
	for (i = 0; i < count; i++) {
		ck_assert_uint_eq(t[i].start, hdr.vaddr + (int64_t)rd32(p + 12 + 8 * i));
		ck_assert_uint_eq(t[i].fde, hdr.vaddr + (int64_t)rd32(p + 16 + 8 * i));
	}
	free(t);
	elffile_free(ef);
}
END_TEST

/* No section called .eh_frame: -ENOENT. The name is changed in a copy of the image. */
START_TEST(test_no_eh_frame)
{
	char *path = testutil_fixture_path("elf/dw/inl-dwarf5");
	FILE *f = fopen(path, "rb");
	struct ehframe_entry *t = (struct ehframe_entry *)&t;
	struct elffile *ef;
	uint8_t *img, *hit = NULL;
	long size;
	long i;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	img = xmalloc((size_t)size);
	ck_assert_uint_eq(fread(img, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	/* ".eh_frame\0" in .shstrtab (the last match: .shstrtab comes after the code) */
	for (i = 0; i + 10 <= size; i++)
		if (!memcmp(img + i, ".eh_frame", 10))
			hit = img + i;
	ck_assert_ptr_nonnull(hit);
	hit[1] = 'x';
	ef = elffile_open_memory(img, (size_t)size, "renamed");
	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(ehframe_build_table(ef, &t), -ENOENT);
	ck_assert_ptr_null(t);
	elffile_free(ef);
	free(img);
	free(path);
}
END_TEST

/* A little .eh_frame writer for hand-made entries. */
struct ebuf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct ebuf *e, uint64_t v, int bytes)
{
	int i;

	ck_assert_uint_le(e->n + (size_t)bytes, sizeof(e->b));
	for (i = 0; i < bytes; i++)
		e->b[e->n++] = (uint8_t)(v >> (8 * i));
}

static void put_uleb(struct ebuf *e, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		put(e, byte | (v ? 0x80 : 0), 1);
	} while (v);
}

static void put_sleb(struct ebuf *e, int64_t v)
{
	int more = 1;

	while (more) {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
		put(e, byte | (more ? 0x80 : 0), 1);
	}
}

/* Start an entry: returns the offset of its length field. */
static size_t begin(struct ebuf *e, int len64)
{
	size_t at = e->n;

	put(e, len64 ? 0xffffffffu : 0, 4);
	if (len64)
		put(e, 0, 8);
	return at;
}

static void end(struct ebuf *e, size_t at)
{
	int len64 = e->b[at] == 0xff && e->b[at + 1] == 0xff;
	size_t hdr = len64 ? 12 : 4, i;
	uint64_t len;

	while ((e->n - at) % 4) /* DW_CFA_nop padding */
		put(e, 0, 1);
	len = e->n - at - hdr;
	for (i = 0; i < (len64 ? 8u : 4u); i++)
		e->b[at + hdr - (len64 ? 8 : 4) + i] = (uint8_t)(len >> (8 * i));
}

/* CIE with augmentation @aug; the bytes of its augmentation data are written by @data. */
static size_t cie(struct ebuf *e, int len64, int version, const char *aug, const uint8_t *data,
		  size_t data_len)
{
	size_t at = begin(e, len64);

	put(e, 0, len64 ? 8 : 4); /* CIE id */
	put(e, (uint64_t)version, 1);
	memcpy(e->b + e->n, aug, strlen(aug) + 1);
	e->n += strlen(aug) + 1;
	put_uleb(e, 1);	 /* code alignment */
	put_sleb(e, -8); /* data alignment */
	if (version == 1)
		put(e, 16, 1);
	else
		put_uleb(e, 16);
	if (aug[0] == 'z') {
		put_uleb(e, data_len);
		memcpy(e->b + e->n, data, data_len);
		e->n += data_len;
	}
	put(e, 0x0c, 1); /* DW_CFA_def_cfa r7 8 */
	put(e, 7, 1);
	put(e, 8, 1);
	end(e, at);
	return at;
}

/* Start an FDE pointing at the CIE at @cie_at; the caller writes pc_begin/pc_range. */
static size_t fde_begin(struct ebuf *e, int len64, size_t cie_at)
{
	size_t at = begin(e, len64);

	put(e, e->n - cie_at, len64 ? 8 : 4);
	return at;
}

static void fde_end(struct ebuf *e, size_t at, int has_z)
{
	if (has_z)
		put_uleb(e, 0); /* no augmentation data */
	end(e, at);
}

#define VADDR 0x10000u

START_TEST(test_encodings)
{
	static const uint8_t r_pcrel4[] = {0x1b};
	static const uint8_t r_udata8[] = {0x04};
	static const uint8_t r_udata2[] = {0x02};
	static const uint8_t r_sdata2_pcrel[] = {0x1a};
	static const uint8_t r_uleb[] = {0x01};
	static const uint8_t r_sleb_pcrel[] = {0x19};
	static const uint8_t r_sdata8[] = {0x0c};
	static const uint8_t r_datarel4[] = {0x3b};
	/* P: indirect|pcrel|sdata4 personality, L: pcrel|sdata4 LSDA, R: pcrel|sdata4 */
	static const uint8_t plr[] = {0x9b, 0x10, 0x20, 0x30, 0x40, 0x1b, 0x1b};
	struct ebuf e = {.n = 0};
	struct ehframe_entry *t = NULL;
	size_t c, f[10];
	int n;

	/* zR pcrel|sdata4: start = field address + value */
	c = cie(&e, 0, 1, "zR", r_pcrel4, 1);
	f[0] = fde_begin(&e, 0, c);
	put(&e, (uint64_t)(0x401000 - (VADDR + e.n)), 4);
	put(&e, 0x20, 4);
	fde_end(&e, f[0], 1);
	/* zRS absptr udata8 */
	c = cie(&e, 0, 1, "zRS", r_udata8, 1);
	f[1] = fde_begin(&e, 0, c);
	put(&e, 0x402000, 8);
	put(&e, 0x10, 8);
	fde_end(&e, f[1], 1);
	/* udata2 */
	c = cie(&e, 0, 1, "zR", r_udata2, 1);
	f[2] = fde_begin(&e, 0, c);
	put(&e, 0x3000, 2);
	put(&e, 0x10, 2);
	fde_end(&e, f[2], 1);
	/* sdata2 pcrel, negative: start below the field */
	c = cie(&e, 0, 1, "zR", r_sdata2_pcrel, 1);
	f[3] = fde_begin(&e, 0, c);
	put(&e, (uint64_t)(int64_t)-0x100, 2);
	put(&e, 0x10, 2);
	fde_end(&e, f[3], 1);
	/* uleb128 */
	c = cie(&e, 0, 1, "zR", r_uleb, 1);
	f[4] = fde_begin(&e, 0, c);
	put_uleb(&e, 0x123456);
	put_uleb(&e, 0x40);
	fde_end(&e, f[4], 1);
	/* sleb128 pcrel */
	c = cie(&e, 0, 3, "zR", r_sleb_pcrel, 1);
	f[5] = fde_begin(&e, 0, c);
	put_sleb(&e, 0x5000 - (int64_t)(VADDR + e.n));
	put_sleb(&e, 0x40);
	fde_end(&e, f[5], 1);
	/* sdata8 */
	c = cie(&e, 0, 1, "zR", r_sdata8, 1);
	f[6] = fde_begin(&e, 0, c);
	put(&e, 0x7fff00000000ull, 8);
	put(&e, 0x40, 8);
	fde_end(&e, f[6], 1);
	/* datarel: libgcc's data base is 0 outside i386 */
	c = cie(&e, 0, 1, "zR", r_datarel4, 1);
	f[7] = fde_begin(&e, 0, c);
	put(&e, 0x6000, 4);
	put(&e, 0x40, 4);
	fde_end(&e, f[7], 1);
	/* zPLR: personality skipped; the FDE carries a 4-byte LSDA pointer */
	c = cie(&e, 0, 1, "zPLR", plr, sizeof(plr));
	f[8] = fde_begin(&e, 0, c);
	put(&e, (uint64_t)(0x7000 - (VADDR + e.n)), 4);
	put(&e, 0x40, 4);
	put_uleb(&e, 4);
	put(&e, 0, 4);
	end(&e, f[8]);
	/* no augmentation, version 1: absptr of the address size */
	c = cie(&e, 0, 1, "", NULL, 0);
	f[9] = fde_begin(&e, 0, c);
	put(&e, 0x8000, 8);
	put(&e, 0x40, 8);
	end(&e, f[9]);
	put(&e, 0, 4); /* terminator */

	n = ehframe_parse(e.b, e.n, VADDR, 1, &t);
	ck_assert_int_eq(n, 10);
	ck_assert_uint_eq(t[0].start, 0x3000);
	ck_assert_uint_eq(t[0].fde, VADDR + f[2]);
	ck_assert_uint_eq(t[1].start, 0x5000);
	ck_assert_uint_eq(t[1].fde, VADDR + f[5]);
	ck_assert_uint_eq(t[2].start, 0x6000);
	ck_assert_uint_eq(t[2].fde, VADDR + f[7]);
	ck_assert_uint_eq(t[3].start, 0x7000);
	ck_assert_uint_eq(t[3].fde, VADDR + f[8]);
	ck_assert_uint_eq(t[4].start, 0x8000);
	ck_assert_uint_eq(t[4].fde, VADDR + f[9]);
	/* sdata2 pcrel: field is 8 bytes into the FDE (length, CIE pointer) */
	ck_assert_uint_eq(t[5].start, VADDR + f[3] + 8 - 0x100);
	ck_assert_uint_eq(t[5].fde, VADDR + f[3]);
	ck_assert_uint_eq(t[6].start, 0x123456);
	ck_assert_uint_eq(t[6].fde, VADDR + f[4]);
	ck_assert_uint_eq(t[7].start, 0x401000);
	ck_assert_uint_eq(t[7].fde, VADDR + f[0]);
	ck_assert_uint_eq(t[8].start, 0x402000);
	ck_assert_uint_eq(t[8].fde, VADDR + f[1]);
	ck_assert_uint_eq(t[9].start, 0x7fff00000000ull);
	ck_assert_uint_eq(t[9].fde, VADDR + f[6]);
	free(t);
}
END_TEST

/* 32-bit: absptr is 4 bytes and pcrel wraps at 2^32. */
START_TEST(test_32bit)
{
	struct ebuf e = {.n = 0};
	struct ehframe_entry *t = NULL;
	size_t c, f0, f1;
	static const uint8_t r_pcrel4[] = {0x1b};

	c = cie(&e, 0, 1, "", NULL, 0);
	f0 = fde_begin(&e, 0, c);
	put(&e, 0x8048000, 4);
	put(&e, 0x10, 4);
	end(&e, f0);
	c = cie(&e, 0, 1, "zR", r_pcrel4, 1);
	f1 = fde_begin(&e, 0, c);
	put(&e, (uint64_t)(uint32_t)(0x100 - (0xfffff000u + (uint32_t)e.n)), 4);
	put(&e, 0x10, 4);
	fde_end(&e, f1, 1);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, 0xfffff000u, 0, &t), 2);
	ck_assert_uint_eq(t[0].start, 0x100);
	ck_assert_uint_eq(t[0].fde, 0xfffff000u + f1);
	ck_assert_uint_eq(t[1].start, 0x8048000);
	free(t);
}
END_TEST

/* 64-bit DWARF lengths (0xffffffff then 8 bytes) with 8-byte CIE ids/pointers. */
START_TEST(test_len64)
{
	static const uint8_t r_udata4[] = {0x03};
	struct ebuf e = {.n = 0};
	struct ehframe_entry *t = NULL;
	size_t c, f0, f1;

	c = cie(&e, 1, 1, "zR", r_udata4, 1);
	f0 = fde_begin(&e, 1, c);
	put(&e, 0x9000, 4);
	put(&e, 0x10, 4);
	fde_end(&e, f0, 1);
	f1 = fde_begin(&e, 0, c); /* a 32-bit FDE may use a 64-bit CIE */
	put(&e, 0x9100, 4);
	put(&e, 0x10, 4);
	fde_end(&e, f1, 1);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, VADDR, 1, &t), 2);
	ck_assert_uint_eq(t[0].start, 0x9000);
	ck_assert_uint_eq(t[0].fde, VADDR + f0);
	ck_assert_uint_eq(t[1].start, 0x9100);
	ck_assert_uint_eq(t[1].fde, VADDR + f1);
	free(t);
}
END_TEST

/* Sorted, duplicates (same start) keep the first FDE, zero-length FDEs dropped, unusable
 * CIEs/encodings skip their FDEs, the terminator ends the walk. */
START_TEST(test_table_rules)
{
	static const uint8_t r_udata4[] = {0x03};
	static const uint8_t r_indirect[] = {0x9b};
	static const uint8_t r_textrel[] = {0x23};
	static const uint8_t r_omit[] = {0xff};
	static const uint8_t r_bad_format[] = {0x07};
	struct ebuf e = {.n = 0};
	struct ehframe_entry *t = NULL;
	size_t c, bad, f[4], x;
	int n;

	c = cie(&e, 0, 1, "zR", r_udata4, 1);
	f[0] = fde_begin(&e, 0, c);
	put(&e, 0xb000, 4);
	put(&e, 0x10, 4);
	fde_end(&e, f[0], 1);
	f[1] = fde_begin(&e, 0, c); /* same start: dropped, f[0] kept */
	put(&e, 0xb000, 4);
	put(&e, 0x20, 4);
	fde_end(&e, f[1], 1);
	f[2] = fde_begin(&e, 0, c); /* zero length: dropped */
	put(&e, 0xa000, 4);
	put(&e, 0, 4);
	fde_end(&e, f[2], 1);
	f[3] = fde_begin(&e, 0, c);
	put(&e, 0xa800, 4);
	put(&e, 0x20, 4);
	fde_end(&e, f[3], 1);
	bad = cie(&e, 0, 1, "zR", r_indirect, 1);
	x = fde_begin(&e, 0, bad);
	put(&e, 0xc000, 4);
	put(&e, 0x10, 4);
	fde_end(&e, x, 1);
	bad = cie(&e, 0, 1, "zR", r_textrel, 1);
	x = fde_begin(&e, 0, bad);
	put(&e, 0xc100, 4);
	put(&e, 0x10, 4);
	fde_end(&e, x, 1);
	bad = cie(&e, 0, 1, "zR", r_omit, 1);
	x = fde_begin(&e, 0, bad);
	put(&e, 0xc200, 4);
	put(&e, 0x10, 4);
	fde_end(&e, x, 1);
	bad = cie(&e, 0, 1, "zR", r_bad_format, 1);
	x = fde_begin(&e, 0, bad);
	put(&e, 0xc300, 4);
	put(&e, 0x10, 4);
	fde_end(&e, x, 1);
	bad = cie(&e, 0, 1, "zX", r_udata4, 1); /* unknown augmentation */
	x = fde_begin(&e, 0, bad);
	put(&e, 0xc400, 4);
	put(&e, 0x10, 4);
	fde_end(&e, x, 1);
	bad = cie(&e, 0, 2, "", NULL, 0); /* version 2 does not exist */
	x = fde_begin(&e, 0, bad);
	put(&e, 0xc500, 8);
	put(&e, 0x10, 8);
	end(&e, x);
	x = fde_begin(&e, 0, f[3]); /* "CIE" pointer to an FDE */
	put(&e, 0xc600, 4);
	put(&e, 0x10, 4);
	fde_end(&e, x, 1);
	x = begin(&e, 0); /* CIE pointer before the section */
	put(&e, e.n + 8, 4);
	put(&e, 0xc700, 4);
	put(&e, 0x10, 4);
	end(&e, x);
	put(&e, 0, 4); /* terminator: what follows is not read */
	x = fde_begin(&e, 0, c);
	put(&e, 0xd000, 4);
	put(&e, 0x10, 4);
	fde_end(&e, x, 1);

	n = ehframe_parse(e.b, e.n, VADDR, 1, &t);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(t[0].start, 0xa800);
	ck_assert_uint_eq(t[0].fde, VADDR + f[3]);
	ck_assert_uint_eq(t[1].start, 0xb000);
	ck_assert_uint_eq(t[1].fde, VADDR + f[0]);
	free(t);
}
END_TEST

START_TEST(test_hostile_small)
{
	static const uint8_t r_udata4[] = {0x03};
	struct ehframe_entry *t = (struct ehframe_entry *)&t;
	struct ebuf e = {.n = 0};
	size_t c, x;

	/* nothing, NULL, a lone terminator, a lone CIE */
	ck_assert_int_eq(ehframe_parse(e.b, 0, VADDR, 1, &t), -ENOEXEC);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(ehframe_parse(NULL, 100, VADDR, 1, &t), -ENOEXEC);
	put(&e, 0, 4);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, VADDR, 1, &t), -ENOEXEC);
	e.n = 0;
	c = cie(&e, 0, 1, "zR", r_udata4, 1);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, VADDR, 1, &t), -ENOEXEC);

	/* a length past the end, a 64-bit length past the end, lengths too short for an id */
	e.n = 0;
	put(&e, 0x1000, 4);
	put(&e, 0, 8);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, VADDR, 1, &t), -ENOEXEC);
	e.n = 0;
	put(&e, 0xffffffffu, 4);
	put(&e, 0xffffffffffffff00ull, 8);
	put(&e, 0, 8);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, VADDR, 1, &t), -ENOEXEC);
	e.n = 0;
	put(&e, 2, 4);
	put(&e, 0, 4);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, VADDR, 1, &t), -ENOEXEC);

	/* a CIE whose augmentation string has no NUL before its end */
	e.n = 0;
	c = begin(&e, 0);
	put(&e, 0, 4);
	put(&e, 1, 1);
	put(&e, 0x7a7a7a, 3);
	end(&e, c); /* 8 bytes of body: no padding, so no NUL either */
	x = fde_begin(&e, 0, c);
	put(&e, 0x1000, 8);
	put(&e, 0x10, 8);
	end(&e, x);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, VADDR, 1, &t), -ENOEXEC);

	/* a uleb128 pc_begin that runs past its FDE */
	e.n = 0;
	{
		static const uint8_t r_uleb[] = {0x01};

		c = cie(&e, 0, 1, "zR", r_uleb, 1);
	}
	x = fde_begin(&e, 0, c);
	put(&e, 0xffffffffffffffffull, 8);
	end(&e, x);
	put(&e, 0x80808080u, 4);
	ck_assert_int_eq(ehframe_parse(e.b, e.n, VADDR, 1, &t), -ENOEXEC);
}
END_TEST

static uint8_t *eh_frame_copy(const char *rel, size_t *size, uint64_t *vaddr)
{
	struct elffile *ef = open_fixture(rel);
	struct elffile_section sec;
	uint8_t *buf;

	ck_assert_int_eq(elffile_section(ef, ".eh_frame", &sec), 0);
	buf = xmalloc(sec.size); /* exact size: overreads show under ASan */
	memcpy(buf, sec.data, sec.size);
	*size = sec.size;
	*vaddr = sec.vaddr;
	elffile_free(ef);
	return buf;
}

static int in_table(const struct ehframe_entry *t, int n, const struct ehframe_entry *x)
{
	int lo = 0, hi = n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (t[mid].start < x->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && t[lo].start == x->start && t[lo].fde == x->fde;
}

/* Every truncation of a real .eh_frame parses to a subset of the full table. */
START_TEST(test_truncated)
{
	size_t size, len;
	uint64_t vaddr;
	uint8_t *buf = eh_frame_copy("hello-static", &size, &vaddr);
	struct ehframe_entry *full = NULL, *t;
	int nfull = ehframe_parse(buf, size, vaddr, 1, &full), n, i;

	ck_assert_int_gt(nfull, 500);
	for (len = 0; len < size; len += 1 + len / 16) {
		uint8_t *cut = xmalloc(len ? len : 1);

		memcpy(cut, buf, len);
		t = NULL;
		n = ehframe_parse(cut, len, vaddr, 1, &t);
		if (n < 0) {
			ck_assert_int_eq(n, -ENOEXEC);
			ck_assert_ptr_null(t);
		}
		ck_assert_int_le(n, nfull);
		assert_sane_table(t, n, vaddr, vaddr + len);
		for (i = 0; i < n; i++)
			ck_assert(in_table(full, nfull, &t[i]));
		free(t);
		free(cut);
	}
	free(full);
	free(buf);
}
END_TEST

/* Random bytes, and random byte flips in a real .eh_frame: no crash, sane tables. */
START_TEST(test_garbage)
{
	size_t size, i;
	uint64_t vaddr;
	uint8_t *orig = eh_frame_copy("inl-dwarf5", &size, &vaddr), *buf = xmalloc(size);
	uint8_t rnd[2048];
	struct ehframe_entry *t;
	int round, n;

	srand(1234);
	for (round = 0; round < 300; round++) {
		size_t len = (size_t)rand() % sizeof(rnd);

		for (i = 0; i < len; i++)
			rnd[i] = (uint8_t)rand();
		if (round % 2) /* plausible small lengths make the walk go further */
			for (i = 0; i + 4 <= len; i += 4 + (size_t)(rand() % 64))
				rnd[i + 1] = rnd[i + 2] = rnd[i + 3] = 0;
		t = NULL;
		n = ehframe_parse(rnd, len, 0x1000, round % 3 != 0, &t);
		ck_assert(n == -ENOEXEC || n > 0);
		assert_sane_table(t, n, 0x1000, 0x1000 + len);
		free(t);

		memcpy(buf, orig, size);
		for (i = 0; i < 1 + (size_t)round % 6; i++)
			buf[(size_t)rand() % size] = (uint8_t)rand();
		t = NULL;
		n = ehframe_parse(buf, size, vaddr, 1, &t);
		ck_assert(n == -ENOEXEC || n > 0);
		assert_sane_table(t, n, vaddr, vaddr + size);
		free(t);
	}
	free(buf);
	free(orig);
}
END_TEST

Suite *ehframe_suite(void)
{
	Suite *s = suite_create("ehframe");
	TCase *tc;

	tc = tcase_create("fixtures");
	tcase_add_test(tc, test_static_vs_readelf);
	tcase_add_test(tc, test_pie_vs_eh_frame_hdr);
	tcase_add_test(tc, test_no_eh_frame);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_test(tc, test_encodings);
	tcase_add_test(tc, test_32bit);
	tcase_add_test(tc, test_len64);
	tcase_add_test(tc, test_table_rules);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_test(tc, test_hostile_small);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_garbage);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
