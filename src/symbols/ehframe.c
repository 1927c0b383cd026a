/* A sorted (start, FDE) table over .eh_frame, for files without .eh_frame_hdr, and the
 * pointer-encoding readers and CIE parser it shares with cfi.c (which runs the CFA programs). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/ehframe.h"
#include "perch/symbols/elffile.h"

/* DW_EH_PE_* pointer encodings (LSB, "Exception Frames"): low nibble = format,
 * bits 4-6 = application, bit 7 = indirect. */
#define EH_PE_ABSPTR   0x00
#define EH_PE_ULEB128  0x01
#define EH_PE_UDATA2   0x02
#define EH_PE_UDATA4   0x03
#define EH_PE_UDATA8   0x04
#define EH_PE_SLEB128  0x09
#define EH_PE_SDATA2   0x0a
#define EH_PE_SDATA4   0x0b
#define EH_PE_SDATA8   0x0c
#define EH_PE_PCREL    0x10
#define EH_PE_TEXTREL  0x20
#define EH_PE_DATAREL  0x30
#define EH_PE_FUNCREL  0x40
#define EH_PE_ALIGNED  0x50
#define EH_PE_INDIRECT 0x80
#define EH_PE_OMIT     0xff

static int need(struct ehframe_cursor *c, size_t n)
{
	if (c->bad || c->end - c->pos < n) {
		c->bad = 1;
		return 0;
	}
	return 1;
}

uint64_t ehframe_read_le(struct ehframe_cursor *c, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (!need(c, n))
		return 0;
	for (i = 0; i < n; i++)
		v |= (uint64_t)c->base[c->pos + i] << (8 * i);
	c->pos += n;
	return v;
}

uint64_t ehframe_read_uleb(struct ehframe_cursor *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (!need(c, 1))
			return 0;
		b = c->base[c->pos++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

int64_t ehframe_read_sleb(struct ehframe_cursor *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (!need(c, 1))
			return 0;
		b = c->base[c->pos++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* Read a value in the format (low nibble) of @enc, sign-extended for sdata. */
uint64_t ehframe_read_format(struct ehframe_cursor *c, uint8_t enc)
{
	switch (enc & 0x0f) {
	case EH_PE_ABSPTR:
		return ehframe_read_le(c, (size_t)c->addr_size);
	case EH_PE_ULEB128:
		return ehframe_read_uleb(c);
	case EH_PE_UDATA2:
		return ehframe_read_le(c, 2);
	case EH_PE_UDATA4:
		return ehframe_read_le(c, 4);
	case EH_PE_UDATA8:
		return ehframe_read_le(c, 8);
	case EH_PE_SLEB128:
		return (uint64_t)ehframe_read_sleb(c);
	case EH_PE_SDATA2:
		return (uint64_t)(int64_t)(int16_t)ehframe_read_le(c, 2);
	case EH_PE_SDATA4:
		return (uint64_t)(int64_t)(int32_t)ehframe_read_le(c, 4);
	case EH_PE_SDATA8:
		return ehframe_read_le(c, 8);
	default:
		c->bad = 1;
		return 0;
	}
}

/* Read the raw value of an encoded pointer (format and alignment, no application). */
static uint64_t read_encoded_raw(struct ehframe_cursor *c, uint8_t enc)
{
	if ((enc & 0x70) == EH_PE_ALIGNED) {
		size_t a = (size_t)c->addr_size, pad = (a - (c->pos % a)) % a;

		if (!need(c, pad))
			return 0;
		c->pos += pad;
		return ehframe_read_le(c, a);
	}
	return ehframe_read_format(c, enc);
}

/* Read an encoded pointer. pcrel is relative to the field's own address; datarel follows
 * libgcc, whose data base is 0 on every target but i386 (where it is the GOT, which perch
 * does not need). textrel and funcrel have no meaning for a table of FDEs. Indirect pointers
 * (through memory) are refused: .eh_frame alone cannot resolve them. */
int ehframe_read_pointer(struct ehframe_cursor *c, uint8_t enc, uint64_t *out)
{
	uint64_t field = c->vaddr + c->pos, v;

	if (enc == EH_PE_OMIT || (enc & EH_PE_INDIRECT))
		return -1;
	v = read_encoded_raw(c, enc);
	if (c->bad)
		return -1;
	switch (enc & 0x70) {
	case EH_PE_ABSPTR:
	case EH_PE_ALIGNED:
	case EH_PE_DATAREL:
		break;
	case EH_PE_PCREL:
		v += field;
		break;
	default:
		return -1;
	}
	if (c->addr_size == 4)
		v &= 0xffffffffu;
	*out = v;
	return 0;
}

/* The cached CIE of the table walk: the last one an FDE referred to. */
struct eh_cie {
	size_t off; /* of the CIE's length field; SIZE_MAX when none is cached */
	int ok;
	struct ehframe_cie cie;
};

int ehframe_cie_parse(struct ehframe_cursor *c, struct ehframe_cie *cie)
{
	const char *aug;
	size_t aug_len, aug_end = 0;

	memset(cie, 0, sizeof(*cie));
	cie->fde_enc = EH_PE_ABSPTR;
	cie->lsda_enc = EH_PE_OMIT;
	cie->addr_size = (uint8_t)c->addr_size;
	cie->version = (uint8_t)ehframe_read_le(c, 1);
	if (c->bad || (cie->version != 1 && cie->version != 3 && cie->version != 4))
		return -1;
	aug = (const char *)c->base + c->pos;
	aug_len = strnlen(aug, c->end - c->pos);
	if (aug_len == c->end - c->pos)
		return -1; /* no terminating NUL inside the CIE */
	c->pos += aug_len + 1;
	if (strstr(aug, "eh"))
		return -1; /* pre-GCC-3 layout with an inline EH data pointer */
	if (cie->version == 4) {
		uint8_t asz = (uint8_t)ehframe_read_le(c, 1);
		uint8_t segsz = (uint8_t)ehframe_read_le(c, 1);

		if (c->bad || (asz != 4 && asz != 8) || segsz != 0)
			return -1;
		cie->addr_size = asz;
	}
	cie->code_align = ehframe_read_uleb(c);
	cie->data_align = ehframe_read_sleb(c);
	if (cie->version == 1)
		cie->ra_reg = ehframe_read_le(c, 1);
	else
		cie->ra_reg = ehframe_read_uleb(c);
	if (c->bad)
		return -1;
	if (aug[0] != 'z') {
		if (aug[0])
			return -1; /* unknown augmentation without a length: unusable */
		cie->insns = c->pos;
		cie->insns_end = c->end;
		return 0;
	}
	aug_len = (size_t)ehframe_read_uleb(c);
	if (c->bad || aug_len > c->end - c->pos)
		return -1;
	aug_end = c->pos + aug_len;
	cie->has_aug_data = 1;
	for (aug++; *aug; aug++) {
		uint8_t enc;

		switch (*aug) {
		case 'R':
			cie->fde_enc = (uint8_t)ehframe_read_le(c, 1);
			break;
		case 'P':
			/* the personality routine (often indirect): skipped, not resolved */
			enc = (uint8_t)ehframe_read_le(c, 1);
			if (!c->bad && enc != EH_PE_OMIT)
				read_encoded_raw(c, enc);
			break;
		case 'L':
			cie->lsda_enc = (uint8_t)ehframe_read_le(c, 1);
			break;
		case 'S':
			cie->signal_frame = 1;
			break;
		case 'B': /* AArch64 BTI */
		case 'G': /* AArch64 MTE tagged stack */
			break;
		default:
			/* 'z' tells us where the data ends, but the FDE encoding may be unread */
			return -1;
		}
		if (c->bad || c->pos > aug_end)
			return -1;
	}
	c->pos = aug_end;
	cie->insns = aug_end;
	cie->insns_end = c->end;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct ehframe_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->fde < y->fde ? -1 : x->fde > y->fde;
}

int ehframe_parse(const uint8_t *data, size_t size, uint64_t vaddr, int is_64,
		  struct ehframe_entry **out)
{
	struct ehframe_entry *tab = NULL;
	struct eh_cie cie = {.off = SIZE_MAX};
	size_t nr = 0, alloc = 0, off = 0, i, j;

	*out = NULL;
	if (!data)
		return -ENOEXEC;
	while (size - off >= 4) {
		struct ehframe_cursor c = {.base = data,
					   .pos = off,
					   .end = size,
					   .vaddr = vaddr,
					   .addr_size = is_64 ? 8 : 4};
		size_t id_pos, entry_end, id_size = 4;
		uint64_t len, id, start, range;

		len = ehframe_read_le(&c, 4);
		if (len == 0)
			break; /* terminator */
		if (len == 0xffffffffu) {
			len = ehframe_read_le(&c, 8);
			id_size = 8;
		}
		if (c.bad || len < id_size || len > size - c.pos)
			break; /* a length we cannot trust ends the walk */
		id_pos = c.pos;
		entry_end = c.pos + (size_t)len;
		c.end = entry_end;
		id = ehframe_read_le(&c, id_size);
		if (id == 0)
			goto next; /* a CIE: parsed when an FDE refers to it */
		/* FDE: id is the distance back from the id field to its CIE */
		if (id > id_pos)
			goto next;
		if (cie.off != id_pos - id) {
			struct ehframe_cursor cc = {.base = data,
						    .pos = id_pos - id,
						    .end = size,
						    .vaddr = vaddr,
						    .addr_size = c.addr_size};
			uint64_t clen, cid;
			size_t cid_size = 4;

			cie.off = id_pos - (size_t)id;
			cie.ok = 0;
			clen = ehframe_read_le(&cc, 4);
			if (clen == 0xffffffffu) {
				clen = ehframe_read_le(&cc, 8);
				cid_size = 8;
			}
			if (cc.bad || clen < cid_size || clen > size - cc.pos)
				goto next;
			cc.end = cc.pos + (size_t)clen;
			cid = ehframe_read_le(&cc, cid_size);
			if (cc.bad || cid != 0)
				goto next;
			cie.ok = ehframe_cie_parse(&cc, &cie.cie) == 0;
		}
		if (!cie.ok)
			goto next;
		if (ehframe_read_pointer(&c, cie.cie.fde_enc, &start))
			goto next;
		range = ehframe_read_format(&c, cie.cie.fde_enc);
		if (c.bad || range == 0)
			goto next; /* zero-length FDEs cover no instruction */
		if (nr >= size / 8)
			break; /* cannot happen with well-formed lengths; bounds the table anyway */
		ALLOC_GROW(tab, nr + 1, alloc);
		tab[nr].start = start;
		tab[nr].fde = vaddr + off;
		nr++;
	next:
		off = entry_end;
	}
	if (!nr) {
		free(tab);
		return -ENOEXEC;
	}
	qsort(tab, nr, sizeof(*tab), entry_cmp);
	/* keep the first FDE (lowest address) for each start */
	for (i = 1, j = 1; i < nr; i++)
		if (tab[i].start != tab[j - 1].start)
			tab[j++] = tab[i];
	*out = tab;
	return (int)j;
}

int ehframe_build_table(const struct elffile *ef, struct ehframe_entry **out)
{
	struct elffile_section sec;

	*out = NULL;
	if (elffile_section(ef, ".eh_frame", &sec) || !sec.data || !sec.size)
		return -ENOENT;
	return ehframe_parse(sec.data, (size_t)sec.size, sec.vaddr, ef->is_64, out);
}
