/* perch's own DWARF CFI: an FDE index over .eh_frame/.debug_frame, the CFA program interpreter,
 * a bounded DWARF expression evaluator and one unwind step. The encodings and the CIE parser
 * come from ehframe.c; deciding what to do when a step fails is the unwinder's job. */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/cfi.h"
#include "perch/symbols/ehframe.h"
#include "perch/symbols/elffile.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

/* One section of CFI. .debug_frame is not loaded: its pointers are absolute and its CIE
 * pointers are offsets from the start of the section. */
struct cfi_section {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr; /* .eh_frame: address of data[0] (pcrel pointers); .debug_frame: 0 */
	int is_eh;
};

struct cfi_fde_ent {
	uint64_t start, end; /* ELF vaddrs [start, end) */
	size_t off;	     /* of the FDE's length field in its section */
	unsigned int sec;    /* index into cfi_table.sec */
};

/* Rows already computed, by pc: the same return addresses come back sample after sample, and
 * evaluating a row means parsing its CIE and running the CIE and FDE programs up to the pc. */
#define CFI_ROW_CACHE 64 /* direct-mapped entries per table, allocated on first use */

struct cfi_row_slot {
	uint64_t pc;
	int ret; /* cfi_row_find's result for that pc */
	int used;
	struct cfi_row row;
};

#define CFI_MAX_SECTIONS 3 /* .eh_frame, .debug_frame, MiniDebugInfo's .debug_frame */

/* The binary search table of .eh_frame_hdr (version 1, datarel sdata4 pairs: the linker's
 * sorted index of .eh_frame), used in place of indexing .eh_frame when the file has one: a
 * dump then parses only the FDEs its pcs need. */
struct cfi_hdr {
	const uint8_t *pairs; /* count x (initial location, FDE address), relative to @vaddr */
	size_t count;
	uint64_t vaddr; /* of .eh_frame_hdr */
};

struct cfi_table {
	struct cfi_section sec[CFI_MAX_SECTIONS];
	unsigned int nr_sec;
	unsigned int machine;
	int addr_size;
	/* .eh_frame (sec[0]) through its header while @hdr.pairs: not in @ents until a header
	 * entry turns out wrong (then the whole section is indexed) */
	struct cfi_hdr hdr;
	struct cfi_fde_ent *ents; /* sorted by start; for equal starts .eh_frame first */
	size_t nr, alloc;
	/* a memo, not part of the table's value: filled by the const lookups (a table is used
	 * by one thread at a time) */
	struct cfi_row_slot *rows;
};

/* A parsed FDE with its CIE: everything the interpreter needs. */
struct cfi_fde {
	const struct cfi_section *sec;
	struct ehframe_cie cie;
	uint64_t start, end;
	size_t insns, insns_end; /* FDE instructions in sec->data */
};

/* ---- CIE/FDE parsing ---- */

/* Read the header of the entry at @off: its length, id and where it ends. 0, or -1 when the
 * length cannot be trusted (which ends a walk) or the entry is a terminator. */
static int entry_header(const struct cfi_section *s, int addr_size, size_t off,
			struct ehframe_cursor *c, uint64_t *id, size_t *id_pos, int *id_size)
{
	uint64_t len;

	memset(c, 0, sizeof(*c));
	c->base = s->data;
	c->pos = off;
	c->end = s->size;
	c->vaddr = s->vaddr;
	c->addr_size = addr_size;
	*id_size = 4;
	len = ehframe_read_le(c, 4);
	if (len == 0xffffffffu) {
		len = ehframe_read_le(c, 8);
		*id_size = 8;
	}
	if (c->bad || len < (uint64_t)*id_size || len > s->size - c->pos)
		return -1;
	c->end = c->pos + (size_t)len;
	*id_pos = c->pos;
	*id = ehframe_read_le(c, (size_t)*id_size);
	return c->bad ? -1 : 0;
}

static int is_cie_id(const struct cfi_section *s, uint64_t id, int id_size)
{
	if (s->is_eh)
		return id == 0;
	return id_size == 4 ? id == 0xffffffffu : id == UINT64_MAX;
}

static int parse_cie_at(const struct cfi_section *s, int addr_size, size_t off,
			struct ehframe_cie *cie)
{
	struct ehframe_cursor c;
	uint64_t id;
	size_t id_pos;
	int id_size;

	if (off >= s->size || entry_header(s, addr_size, off, &c, &id, &id_pos, &id_size) < 0)
		return -1;
	if (!is_cie_id(s, id, id_size))
		return -1;
	return ehframe_cie_parse(&c, cie);
}

/* Parse the FDE at @off of @s. @cache (may be NULL) remembers the last CIE parsed.
 * 0; 1 when the entry is a CIE or an FDE to skip; -1 when the walk cannot go on. *@next gets
 * the offset of the next entry whenever the length was readable. */
struct cie_cache {
	size_t off;
	int ok;
	struct ehframe_cie cie;
};

static int parse_fde_at(const struct cfi_table *t, const struct cfi_section *s, size_t off,
			struct cie_cache *cache, struct cfi_fde *fde, size_t *next)
{
	struct ehframe_cursor c;
	struct cie_cache local = {.off = SIZE_MAX};
	uint64_t id, range, aug_len;
	size_t id_pos, cie_off;
	int id_size;

	if (!cache)
		cache = &local;
	if (entry_header(s, t->addr_size, off, &c, &id, &id_pos, &id_size) < 0)
		return -1;
	*next = c.end;
	if (is_cie_id(s, id, id_size))
		return 1;
	if (s->is_eh) {
		if (id > id_pos)
			return 1;
		cie_off = id_pos - (size_t)id;
	} else {
		if (id >= s->size)
			return 1;
		cie_off = (size_t)id;
	}
	if (cache->off != cie_off) {
		cache->off = cie_off;
		cache->ok = parse_cie_at(s, t->addr_size, cie_off, &cache->cie) == 0;
	}
	if (!cache->ok)
		return 1;
	fde->sec = s;
	fde->cie = cache->cie;
	c.addr_size = fde->cie.addr_size;
	if (s->is_eh) {
		if (ehframe_read_pointer(&c, fde->cie.fde_enc, &fde->start) < 0)
			return 1;
		range = ehframe_read_format(&c, fde->cie.fde_enc);
	} else {
		fde->start = ehframe_read_le(&c, fde->cie.addr_size);
		range = ehframe_read_le(&c, fde->cie.addr_size);
	}
	if (c.bad || range == 0 || range > UINT64_MAX - fde->start)
		return 1;
	fde->end = fde->start + range;
	if (fde->cie.has_aug_data) {
		aug_len = ehframe_read_uleb(&c);
		if (c.bad || aug_len > c.end - c.pos)
			return 1;
		c.pos += (size_t)aug_len;
	}
	fde->insns = c.pos;
	fde->insns_end = c.end;
	return 0;
}

static void index_section(struct cfi_table *t, unsigned int si)
{
	const struct cfi_section *s = &t->sec[si];
	struct cie_cache cache = {.off = SIZE_MAX};
	size_t off = 0, next, first = t->nr;

	while (s->size - off >= 4) {
		struct cfi_fde fde;
		int ret;

		if (s->is_eh && !memcmp(s->data + off, "\0\0\0\0", 4))
			break; /* .eh_frame terminator */
		ret = parse_fde_at(t, s, off, &cache, &fde, &next);
		if (ret < 0)
			break; /* a length we cannot trust ends the walk */
		if (ret == 0) {
			if (t->nr - first >= s->size / 8)
				break; /* not with sane lengths; bounds the index anyway */
			ALLOC_GROW(t->ents, t->nr + 1, t->alloc);
			t->ents[t->nr].start = fde.start;
			t->ents[t->nr].end = fde.end;
			t->ents[t->nr].off = off;
			t->ents[t->nr].sec = si;
			t->nr++;
		}
		if (next <= off)
			break;
		off = next;
	}
}

static int ent_cmp(const void *a, const void *b)
{
	const struct cfi_fde_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static void sort_index(struct cfi_table *t)
{
	if (t->nr > 1) /* (no index at all when .eh_frame goes through its header alone) */
		qsort(t->ents, t->nr, sizeof(*t->ents), ent_cmp);
}

/* The table over @nr sections (borrowed), .eh_frame first when present, searched through @hdr
 * when @hdr->pairs; NULL with errno ENOENT when none has an FDE. */
static struct cfi_table *table_new(const struct cfi_section *sec, unsigned int nr,
				   const struct cfi_hdr *hdr, unsigned int machine, int is_64)
{
	struct cfi_table *t = xcalloc(1, sizeof(*t));

	t->machine = machine;
	t->addr_size = is_64 ? 8 : 4;
	for (unsigned int i = 0; i < nr && t->nr_sec < CFI_MAX_SECTIONS; i++)
		if (sec[i].data && sec[i].size)
			t->sec[t->nr_sec++] = sec[i];
	if (hdr && hdr->pairs && t->nr_sec && t->sec[0].is_eh)
		t->hdr = *hdr;
	for (unsigned int i = t->hdr.pairs ? 1 : 0; i < t->nr_sec; i++)
		index_section(t, i);
	if (!t->nr && !t->hdr.pairs) {
		cfi_table_free(t);
		errno = ENOENT;
		return NULL;
	}
	sort_index(t);
	return t;
}

/* A header entry did not match .eh_frame: stop trusting the header and index the section. */
static void drop_hdr(struct cfi_table *t)
{
	t->hdr.pairs = NULL;
	t->hdr.count = 0;
	index_section(t, 0);
	sort_index(t);
}

static int32_t hdr_word(const struct cfi_hdr *h, size_t i)
{
	int32_t v;

	memcpy(&v, h->pairs + 4 * i, 4);
	return v;
}

/* The .eh_frame_hdr of @ef when it is the kind perch reads (version 1, a datarel|sdata4
 * table whose .eh_frame pointer is @eh's address): @out->pairs NULL otherwise. */
static void hdr_of(const struct elffile *ef, const struct cfi_section *eh, struct cfi_hdr *out)
{
	const uint8_t *h = elffile_vaddr_ptr(ef, ef->eh_frame_hdr_vaddr, 12);
	uint64_t size = ef->eh_frame_hdr_size, count, frame;
	int32_t rel;
	uint32_t n;

	memset(out, 0, sizeof(*out));
	/* eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4: what every linker
	 * writes */
	if (!eh->data || !h || size < 12 || h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 ||
	    h[3] != 0x3b)
		return;
	memcpy(&rel, h + 4, 4);
	frame = ef->eh_frame_hdr_vaddr + 4 + (uint64_t)(int64_t)rel;
	memcpy(&n, h + 8, 4);
	count = n;
	if (frame != eh->vaddr || count == 0 || count > (size - 12) / 8 ||
	    !elffile_vaddr_ptr(ef, ef->eh_frame_hdr_vaddr, (size_t)(12 + count * 8)))
		return;
	out->pairs = h + 12;
	out->count = (size_t)count;
	out->vaddr = ef->eh_frame_hdr_vaddr;
}

struct cfi_table *cfi_table_new_raw(const uint8_t *eh, size_t eh_size, uint64_t eh_vaddr,
				    const uint8_t *dbg, size_t dbg_size, unsigned int machine,
				    int is_64)
{
	const struct cfi_section sec[] = {
	    {eh, eh_size, eh_vaddr, 1},
	    {dbg, dbg_size, 0, 0},
	};

	return table_new(sec, 2, NULL, machine, is_64);
}

/* The .debug_frame of @ef, decompressed when stored compressed; size 0 when unusable. */
static struct cfi_section debug_frame_of(const struct elffile *ef)
{
	struct elffile_section s;

	if (elffile_section_data(ef, ".debug_frame", &s) < 0 || !s.data)
		return (struct cfi_section){NULL, 0, 0, 0};
	return (struct cfi_section){s.data, (size_t)s.size, 0, 0};
}

struct cfi_table *cfi_table_new(const struct elffile *ef)
{
	struct cfi_section sec[CFI_MAX_SECTIONS] = {{0}};
	struct elffile_section eh;
	const struct elffile *mdi = elffile_minidebuginfo(ef);
	struct cfi_hdr hdr;

	if (elffile_section(ef, ".eh_frame", &eh) == 0 && eh.data)
		sec[0] = (struct cfi_section){eh.data, (size_t)eh.size, eh.vaddr, 1};
	sec[1] = debug_frame_of(ef);
	if (mdi)
		sec[2] = debug_frame_of(mdi);
	hdr_of(ef, &sec[0], &hdr);
	return table_new(sec, CFI_MAX_SECTIONS, &hdr, ef->machine, ef->is_64);
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->ents);
	free(t);
}

size_t cfi_table_count(const struct cfi_table *t)
{
	return t->nr + t->hdr.count;
}

/* The FDE of .eh_frame covering @pc through its header: 1 with @out set, 0 when the header has
 * none, -1 when an entry does not match the section (the header is then dropped). Like
 * find_ent(), a few earlier entries are tried when FDEs overlap. */
static int find_hdr(struct cfi_table *t, uint64_t pc, struct cfi_fde_ent *out)
{
	const struct cfi_hdr *h = &t->hdr;
	size_t lo = 0, hi = h->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->vaddr + (uint64_t)(int64_t)hdr_word(h, 2 * mid) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, tries = 0; i > 0 && tries < 8; i--, tries++) {
		uint64_t start = h->vaddr + (uint64_t)(int64_t)hdr_word(h, 2 * (i - 1));
		uint64_t fde_at = h->vaddr + (uint64_t)(int64_t)hdr_word(h, 2 * (i - 1) + 1);
		struct cfi_fde fde;
		size_t next;

		if (fde_at < t->sec[0].vaddr || fde_at - t->sec[0].vaddr >= t->sec[0].size ||
		    parse_fde_at(t, &t->sec[0], (size_t)(fde_at - t->sec[0].vaddr), NULL, &fde,
				 &next) != 0 ||
		    fde.start != start) {
			drop_hdr(t);
			return -1;
		}
		if (pc < fde.end) {
			*out = (struct cfi_fde_ent){fde.start, fde.end,
						    (size_t)(fde_at - t->sec[0].vaddr), 0};
			return 1;
		}
	}
	return 0;
}

/* The FDE covering @pc: the last one starting at or before @pc that still covers it (FDEs
 * should not overlap; when they do, a few earlier ones are tried too). .eh_frame, through its
 * header or its index, wins over the other sections. 0 with @out set, or -1. */
static int find_ent(const struct cfi_table *ct, uint64_t pc, struct cfi_fde_ent *out)
{
	struct cfi_table *t = (struct cfi_table *)ct; /* dropping a bad header: see rows */
	size_t lo = 0, hi;

	if (t->hdr.pairs && find_hdr(t, pc, out) == 1)
		return 0;
	hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ents[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo = first entry starting after pc; walk back over entries with the same start so
	 * that .eh_frame (sorted first) wins */
	for (size_t i = lo, tries = 0; i > 0 && tries < 8; i--, tries++) {
		const struct cfi_fde_ent *e = &t->ents[i - 1];

		if (pc < e->end) {
			while (i > 1 && t->ents[i - 2].start == e->start && pc < t->ents[i - 2].end)
				e = &t->ents[--i - 1];
			*out = *e;
			return 0;
		}
	}
	return -1;
}

/* ---- the CFA program interpreter ---- */

/* The part of a row that remember_state saves. */
struct cfi_regstate {
	uint8_t cfa_kind;
	uint16_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	uint32_t cfa_expr_len;
	uint8_t ra_signed;
	struct cfi_rule rules[CFI_MAX_REGS];
};

struct cfi_interp {
	const struct cfi_table *t;
	const struct cfi_fde *fde;
	uint64_t pc, loc;
	struct cfi_regstate cur;
	struct cfi_regstate init; /* after the CIE's initial instructions (DW_CFA_restore) */
	uint64_t args_size;
	int depth;
	struct cfi_regstate stack[CFI_MAX_STATE_DEPTH];
};

/* DW_CFA_* opcodes (DWARF 5, 6.4.2; GNU and AArch64 extensions) */
enum {
	CFA_ADVANCE_LOC = 0x40,
	CFA_OFFSET = 0x80,
	CFA_RESTORE = 0xc0,
	CFA_NOP = 0x00,
	CFA_SET_LOC = 0x01,
	CFA_ADVANCE_LOC1 = 0x02,
	CFA_ADVANCE_LOC2 = 0x03,
	CFA_ADVANCE_LOC4 = 0x04,
	CFA_OFFSET_EXTENDED = 0x05,
	CFA_RESTORE_EXTENDED = 0x06,
	CFA_UNDEFINED = 0x07,
	CFA_SAME_VALUE = 0x08,
	CFA_REGISTER = 0x09,
	CFA_REMEMBER_STATE = 0x0a,
	CFA_RESTORE_STATE = 0x0b,
	CFA_DEF_CFA = 0x0c,
	CFA_DEF_CFA_REGISTER = 0x0d,
	CFA_DEF_CFA_OFFSET = 0x0e,
	CFA_DEF_CFA_EXPRESSION = 0x0f,
	CFA_EXPRESSION = 0x10,
	CFA_OFFSET_EXTENDED_SF = 0x11,
	CFA_DEF_CFA_SF = 0x12,
	CFA_DEF_CFA_OFFSET_SF = 0x13,
	CFA_VAL_OFFSET = 0x14,
	CFA_VAL_OFFSET_SF = 0x15,
	CFA_VAL_EXPRESSION = 0x16,
	CFA_MIPS_ADVANCE_LOC8 = 0x1d,
	CFA_AARCH64_NEGATE_RA_STATE = 0x2d, /* DW_CFA_GNU_window_save elsewhere (SPARC) */
	CFA_GNU_ARGS_SIZE = 0x2e,
	CFA_GNU_NEGATIVE_OFFSET_EXTENDED = 0x2f,
};

static void set_rule(struct cfi_interp *in, uint64_t reg, uint8_t kind, int64_t off, uint64_t reg2,
		     const uint8_t *expr, uint32_t expr_len)
{
	struct cfi_rule *r;

	if (reg >= CFI_MAX_REGS)
		return; /* a column perch does not track (vector registers): parsed, dropped */
	r = &in->cur.rules[reg];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->off = off;
	r->reg = reg2 > UINT16_MAX ? UINT16_MAX : (uint16_t)reg2;
	r->expr = expr;
	r->expr_len = expr_len;
}

/* Advance the location by @delta code units: 1 when that moves past the pc (the row is
 * complete), 0 otherwise. Overflow counts as past. */
static int advance(struct cfi_interp *in, uint64_t delta)
{
	uint64_t caf = in->fde->cie.code_align, d;

	if (caf && delta > UINT64_MAX / caf)
		return 1;
	d = delta * caf;
	if (d > UINT64_MAX - in->loc || in->loc + d > in->pc)
		return 1;
	in->loc += d;
	return 0;
}

static int64_t scaled(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align); /* wraps on hostile input instead of overflowing */
}

/* Read a block (uleb length, then the bytes) into @p and @len. 0 or -1. */
static int read_block(struct ehframe_cursor *c, const uint8_t **p, uint32_t *len)
{
	uint64_t n = ehframe_read_uleb(c);

	if (c->bad || n > c->end - c->pos || n > UINT32_MAX)
		return -1;
	*p = c->base + c->pos;
	*len = (uint32_t)n;
	c->pos += (size_t)n;
	return 0;
}

/* DW_CFA_set_loc or DW_CFA_advance_loc1/2/4/8 (@op, its operand at @c): 1 when the next row
 * starts past the pc (the program is done), 0, or -ENOEXEC. */
static int move_loc(struct cfi_interp *in, uint8_t op, struct ehframe_cursor *c)
{
	const struct cfi_fde *fde = in->fde;
	uint64_t v;

	if (op != CFA_SET_LOC) {
		v = ehframe_read_le(c, op == CFA_ADVANCE_LOC1	? 1
				       : op == CFA_ADVANCE_LOC2 ? 2
				       : op == CFA_ADVANCE_LOC4 ? 4
								: 8);
		if (c->bad)
			return -ENOEXEC;
		return advance(in, v) ? 1 : 0;
	}
	if (fde->sec->is_eh) {
		if (ehframe_read_pointer(c, fde->cie.fde_enc, &v) < 0)
			return -ENOEXEC;
	} else {
		v = ehframe_read_le(c, fde->cie.addr_size);
	}
	if (c->bad)
		return -ENOEXEC;
	if (v > in->pc)
		return 1;
	in->loc = v;
	return 0;
}

/* DW_CFA_offset_extended(_sf), DW_CFA_val_offset(_sf), DW_CFA_GNU_negative_offset_extended
 * (@op, its operands at @c): the register's new rule (the caller checks @c->bad). */
static void offset_rule(struct cfi_interp *in, uint8_t op, struct ehframe_cursor *c, int64_t daf)
{
	uint64_t reg = ehframe_read_uleb(c);
	int sf = op == CFA_OFFSET_EXTENDED_SF || op == CFA_VAL_OFFSET_SF;
	uint64_t v = sf ? (uint64_t)ehframe_read_sleb(c) : ehframe_read_uleb(c);
	int64_t off = scaled(v, daf);

	if (op == CFA_GNU_NEGATIVE_OFFSET_EXTENDED)
		off = -off;
	set_rule(in, reg,
		 op == CFA_VAL_OFFSET || op == CFA_VAL_OFFSET_SF ? CFI_RULE_VAL_OFFSET
								 : CFI_RULE_OFFSET,
		 off, 0, NULL, 0);
}

/* One of the DW_CFA_def_cfa* instructions (@op, its operands at @c): the CFA's new rule in
 * @in->cur. 0, or -ENOEXEC. */
static int def_cfa(struct cfi_interp *in, uint8_t op, struct ehframe_cursor *c, int64_t daf)
{
	const uint8_t *expr;
	uint32_t elen;
	uint64_t reg;

	switch (op) {
	case CFA_DEF_CFA_OFFSET:
		in->cur.cfa_off = (int64_t)ehframe_read_uleb(c);
		return 0;
	case CFA_DEF_CFA_OFFSET_SF:
		in->cur.cfa_off = scaled((uint64_t)ehframe_read_sleb(c), daf);
		return 0;
	case CFA_DEF_CFA_EXPRESSION:
		if (read_block(c, &expr, &elen) < 0)
			return -ENOEXEC;
		in->cur.cfa_kind = CFI_CFA_EXPR;
		in->cur.cfa_expr = expr;
		in->cur.cfa_expr_len = elen;
		return 0;
	default: /* CFA_DEF_CFA, CFA_DEF_CFA_SF, CFA_DEF_CFA_REGISTER */
		reg = ehframe_read_uleb(c);
		if (op == CFA_DEF_CFA)
			in->cur.cfa_off = (int64_t)ehframe_read_uleb(c);
		else if (op == CFA_DEF_CFA_SF)
			in->cur.cfa_off = scaled((uint64_t)ehframe_read_sleb(c), daf);
		if (c->bad || reg >= CFI_MAX_REGS)
			return -ENOEXEC;
		in->cur.cfa_kind = CFI_CFA_REG_OFF;
		in->cur.cfa_reg = (uint16_t)reg;
		return 0;
	}
}

/* Run instructions [pos, end) of the FDE's section. @is_cie: the initial instructions.
 * 0 (done: end of program or the next row starts past pc) or -ENOEXEC. */
static int run_program(struct cfi_interp *in, size_t pos, size_t end, int is_cie)
{
	const struct cfi_fde *fde = in->fde;
	int64_t daf = fde->cie.data_align;
	struct ehframe_cursor c = {
	    .base = fde->sec->data,
	    .pos = pos,
	    .end = end,
	    .vaddr = fde->sec->vaddr,
	    .addr_size = fde->cie.addr_size,
	};

	while (c.pos < c.end) {
		uint8_t op = (uint8_t)ehframe_read_le(&c, 1);
		uint64_t reg, v;
		const uint8_t *expr;
		uint32_t elen;
		int ret;

		switch (op & 0xc0) {
		case CFA_ADVANCE_LOC:
			if (advance(in, op & 0x3f))
				return 0;
			continue;
		case CFA_OFFSET:
			v = ehframe_read_uleb(&c);
			set_rule(in, op & 0x3f, CFI_RULE_OFFSET, scaled(v, daf), 0, NULL, 0);
			goto check;
		case CFA_RESTORE:
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case CFA_NOP:
			break;
		case CFA_SET_LOC:
		case CFA_ADVANCE_LOC1:
		case CFA_ADVANCE_LOC2:
		case CFA_ADVANCE_LOC4:
		case CFA_MIPS_ADVANCE_LOC8:
			ret = move_loc(in, op, &c);
			if (ret)
				return ret < 0 ? ret : 0;
			break;
		case CFA_OFFSET_EXTENDED:
		case CFA_VAL_OFFSET:
		case CFA_OFFSET_EXTENDED_SF:
		case CFA_VAL_OFFSET_SF:
		case CFA_GNU_NEGATIVE_OFFSET_EXTENDED:
			offset_rule(in, op, &c, daf);
			break;
		case CFA_RESTORE_EXTENDED:
			reg = ehframe_read_uleb(&c);
		restore:
			if (c.bad)
				return -ENOEXEC;
			if (reg < CFI_MAX_REGS)
				in->cur.rules[reg] =
				    is_cie ? (struct cfi_rule){0} : in->init.rules[reg];
			break;
		case CFA_UNDEFINED:
		case CFA_SAME_VALUE:
			reg = ehframe_read_uleb(&c);
			set_rule(in, reg, op == CFA_UNDEFINED ? CFI_RULE_UNDEF : CFI_RULE_SAME, 0,
				 0, NULL, 0);
			break;
		case CFA_REGISTER:
			reg = ehframe_read_uleb(&c);
			v = ehframe_read_uleb(&c);
			set_rule(in, reg, CFI_RULE_REG, 0, v, NULL, 0);
			break;
		case CFA_REMEMBER_STATE:
			if (in->depth >= CFI_MAX_STATE_DEPTH)
				return -ENOEXEC;
			in->stack[in->depth++] = in->cur;
			break;
		case CFA_RESTORE_STATE:
			if (in->depth <= 0)
				return -ENOEXEC;
			in->cur = in->stack[--in->depth];
			break;
		case CFA_DEF_CFA:
		case CFA_DEF_CFA_SF:
		case CFA_DEF_CFA_REGISTER:
		case CFA_DEF_CFA_OFFSET:
		case CFA_DEF_CFA_OFFSET_SF:
		case CFA_DEF_CFA_EXPRESSION:
			if (def_cfa(in, op, &c, daf) < 0)
				return -ENOEXEC;
			break;
		case CFA_EXPRESSION:
		case CFA_VAL_EXPRESSION:
			reg = ehframe_read_uleb(&c);
			if (read_block(&c, &expr, &elen) < 0)
				return -ENOEXEC;
			set_rule(in, reg, op == CFA_EXPRESSION ? CFI_RULE_EXPR : CFI_RULE_VAL_EXPR,
				 0, 0, expr, elen);
			break;
		case CFA_AARCH64_NEGATE_RA_STATE:
			/* SPARC's DW_CFA_GNU_window_save shares the number; perch has no SPARC */
			if (in->t->machine != EM_AARCH64)
				return -ENOEXEC;
			in->cur.ra_signed ^= 1;
			break;
		case CFA_GNU_ARGS_SIZE:
			in->args_size = ehframe_read_uleb(&c);
			break;
		default:
			return -ENOEXEC;
		}
	check:
		if (c.bad)
			return -ENOEXEC;
	}
	return 0;
}

static int row_for_fde(const struct cfi_table *t, const struct cfi_fde *fde, uint64_t pc,
		       struct cfi_row *row)
{
	/* the remember_state stack (most of the size) is only read where it was written */
	struct cfi_interp *in = xmalloc(sizeof(*in));
	int ret;

	memset(in, 0, offsetof(struct cfi_interp, stack));

	in->t = t;
	in->fde = fde;
	in->pc = pc;
	in->loc = fde->start;
	ret = run_program(in, fde->cie.insns, fde->cie.insns_end, 1);
	if (ret == 0) {
		in->init = in->cur;
		in->depth = 0; /* the CIE's remembered states do not carry into the FDE */
		ret = run_program(in, fde->insns, fde->insns_end, 0);
	}
	if (ret == 0) {
		memset(row, 0, sizeof(*row));
		row->fde_start = fde->start;
		row->fde_end = fde->end;
		row->loc = in->loc;
		row->cfa_kind = in->cur.cfa_kind;
		row->cfa_reg = in->cur.cfa_reg;
		row->cfa_off = in->cur.cfa_off;
		row->cfa_expr = in->cur.cfa_expr;
		row->cfa_expr_len = in->cur.cfa_expr_len;
		row->ra_reg = fde->cie.ra_reg > UINT16_MAX ? UINT16_MAX : (uint16_t)fde->cie.ra_reg;
		row->ra_signed = in->cur.ra_signed;
		row->signal_frame = (uint8_t)fde->cie.signal_frame;
		row->args_size = in->args_size;
		row->addr_size = (uint8_t)t->addr_size;
		memcpy(row->rules, in->cur.rules, sizeof(row->rules));
	}
	free(in);
	return ret;
}

static int row_find_uncached(const struct cfi_table *t, uint64_t pc, struct cfi_row *row)
{
	struct cfi_fde_ent e;
	struct cfi_fde fde;
	size_t next;

	if (find_ent(t, pc, &e) < 0)
		return -ENOENT;
	if (parse_fde_at(t, &t->sec[e.sec], e.off, NULL, &fde, &next) != 0)
		return -ENOEXEC;
	return row_for_fde(t, &fde, pc, row);
}

int cfi_row_find(const struct cfi_table *t, uint64_t pc, struct cfi_row *row)
{
	struct cfi_table *mt = (struct cfi_table *)t; /* the memo only */
	struct cfi_row_slot *slot;

	if (!mt->rows)
		mt->rows = xcalloc(CFI_ROW_CACHE, sizeof(*mt->rows));
	slot = &mt->rows[(pc ^ (pc >> 7) ^ (pc >> 13)) % CFI_ROW_CACHE];
	if (!slot->used || slot->pc != pc) {
		slot->used = 1;
		slot->pc = pc;
		slot->ret = row_find_uncached(t, pc, &slot->row);
	}
	if (slot->ret == 0)
		*row = slot->row;
	return slot->ret;
}

/* ---- DWARF expressions ---- */

/* DW_OP_* (DWARF 5, 7.7.1) */
enum {
	OP_ADDR = 0x03,
	OP_DEREF = 0x06,
	OP_CONST1U = 0x08,
	OP_CONST1S = 0x09,
	OP_CONST2U = 0x0a,
	OP_CONST2S = 0x0b,
	OP_CONST4U = 0x0c,
	OP_CONST4S = 0x0d,
	OP_CONST8U = 0x0e,
	OP_CONST8S = 0x0f,
	OP_CONSTU = 0x10,
	OP_CONSTS = 0x11,
	OP_DUP = 0x12,
	OP_DROP = 0x13,
	OP_OVER = 0x14,
	OP_PICK = 0x15,
	OP_SWAP = 0x16,
	OP_ROT = 0x17,
	OP_ABS = 0x19,
	OP_AND = 0x1a,
	OP_DIV = 0x1b,
	OP_MINUS = 0x1c,
	OP_MOD = 0x1d,
	OP_MUL = 0x1e,
	OP_NEG = 0x1f,
	OP_NOT = 0x20,
	OP_OR = 0x21,
	OP_PLUS = 0x22,
	OP_PLUS_UCONST = 0x23,
	OP_SHL = 0x24,
	OP_SHR = 0x25,
	OP_SHRA = 0x26,
	OP_XOR = 0x27,
	OP_BRA = 0x28,
	OP_EQ = 0x29,
	OP_GE = 0x2a,
	OP_GT = 0x2b,
	OP_LE = 0x2c,
	OP_LT = 0x2d,
	OP_NE = 0x2e,
	OP_SKIP = 0x2f,
	OP_LIT0 = 0x30,
	OP_LIT31 = 0x4f,
	OP_REG0 = 0x50,
	OP_REG31 = 0x6f,
	OP_BREG0 = 0x70,
	OP_BREG31 = 0x8f,
	OP_REGX = 0x90,
	OP_BREGX = 0x92,
	OP_DEREF_SIZE = 0x94,
	OP_NOP = 0x96,
};

static int reg_value(const struct perch_regs *regs, uint64_t reg, uint64_t *v)
{
	if (reg >= PERCH_MAX_DWREGS || !(regs->valid & (1ULL << reg)))
		return -EINVAL;
	*v = regs->r[reg];
	return 0;
}

static int mem_read(const struct perch_mem *mem, uint64_t addr, size_t size, uint64_t *v)
{
	uint8_t b[8];
	int ret;

	if (!mem || !mem->read)
		return -EFAULT;
	ret = mem->read(mem->ctx, addr, b, size);
	if (ret < 0)
		return ret;
	*v = 0;
	for (size_t i = 0; i < size; i++)
		*v |= (uint64_t)b[i] << (8 * i);
	return 0;
}

/* An address of a target with @asz-byte addresses (4: 32-bit arithmetic wraps there). */
static uint64_t addr_wrap(uint64_t v, int asz)
{
	return asz == 4 ? (uint32_t)v : v;
}

/* The value a constant operation (DW_OP_const*) pushes, read after @op: 1, or 0 when @op is
 * not one. */
static int expr_const(uint8_t op, struct ehframe_cursor *c, uint64_t *v)
{
	switch (op) {
	case OP_CONST1U:
		*v = ehframe_read_le(c, 1);
		return 1;
	case OP_CONST1S:
		*v = (uint64_t)(int64_t)(int8_t)ehframe_read_le(c, 1);
		return 1;
	case OP_CONST2U:
		*v = ehframe_read_le(c, 2);
		return 1;
	case OP_CONST2S:
		*v = (uint64_t)(int64_t)(int16_t)ehframe_read_le(c, 2);
		return 1;
	case OP_CONST4U:
		*v = ehframe_read_le(c, 4);
		return 1;
	case OP_CONST4S:
		*v = (uint64_t)(int64_t)(int32_t)ehframe_read_le(c, 4);
		return 1;
	case OP_CONST8U:
	case OP_CONST8S:
		*v = ehframe_read_le(c, 8);
		return 1;
	case OP_CONSTU:
		*v = ehframe_read_uleb(c);
		return 1;
	case OP_CONSTS:
		*v = (uint64_t)ehframe_read_sleb(c);
		return 1;
	default:
		return 0;
	}
}

/* A binary operation on @a (below) and @b (the top): 0 with *v, -ENOEXEC (division by zero),
 * or -ENOENT when @op is not one. */
static int expr_binop(uint8_t op, uint64_t a, uint64_t b, uint64_t *v)
{
	switch (op) {
	case OP_AND:
		*v = a & b;
		return 0;
	case OP_OR:
		*v = a | b;
		return 0;
	case OP_XOR:
		*v = a ^ b;
		return 0;
	case OP_PLUS:
		*v = a + b;
		return 0;
	case OP_MINUS:
		*v = a - b;
		return 0;
	case OP_MUL:
		*v = a * b;
		return 0;
	case OP_DIV:
		if (b == 0)
			return -ENOEXEC;
		if ((int64_t)b == -1)
			*v = 0 - a; /* also INT64_MIN / -1, which would trap */
		else
			*v = (uint64_t)((int64_t)a / (int64_t)b);
		return 0;
	case OP_MOD:
		if (b == 0)
			return -ENOEXEC;
		*v = a % b;
		return 0;
	case OP_SHL:
		*v = b >= 64 ? 0 : a << b;
		return 0;
	case OP_SHR:
		*v = b >= 64 ? 0 : a >> b;
		return 0;
	case OP_SHRA:
		*v = b >= 64 ? ((int64_t)a < 0 ? UINT64_MAX : 0) : (uint64_t)((int64_t)a >> b);
		return 0;
	case OP_EQ:
		*v = (int64_t)a == (int64_t)b;
		return 0;
	case OP_GE:
		*v = (int64_t)a >= (int64_t)b;
		return 0;
	case OP_GT:
		*v = (int64_t)a > (int64_t)b;
		return 0;
	case OP_LE:
		*v = (int64_t)a <= (int64_t)b;
		return 0;
	case OP_LT:
		*v = (int64_t)a < (int64_t)b;
		return 0;
	case OP_NE:
		*v = (int64_t)a != (int64_t)b;
		return 0;
	default:
		return -ENOENT;
	}
}

/* The expression stack. */
struct expr_stack {
	uint64_t v[CFI_EXPR_MAX_STACK];
	int n;
};

static int expr_push(struct expr_stack *s, uint64_t v)
{
	if (s->n >= CFI_EXPR_MAX_STACK)
		return -ENOEXEC;
	s->v[s->n++] = v;
	return 0;
}

/* A stack operation (DW_OP_dup, drop, over, pick, swap, rot, abs, neg, not, plus_uconst and
 * the binary operations) on @s: 0, -ENOEXEC (too few entries, or a bad operand), or -ENOENT
 * when @op is not one. */
static int expr_stack_op(uint8_t op, struct ehframe_cursor *c, struct expr_stack *s)
{
	static const int need[256] = {
	    [OP_DUP] = 1, [OP_DROP] = 1, [OP_OVER] = 2, [OP_SWAP] = 2,	      [OP_ROT] = 3,
	    [OP_ABS] = 1, [OP_NEG] = 1,	 [OP_NOT] = 1,	[OP_PLUS_UCONST] = 1,
	};
	uint64_t *top = s->n ? &s->v[s->n - 1] : NULL, v, pick;
	int ret;

	if (s->n < need[op])
		return -ENOEXEC;
	switch (op) {
	case OP_DUP:
		return expr_push(s, *top);
	case OP_DROP:
		s->n--;
		return 0;
	case OP_OVER:
		return expr_push(s, top[-1]);
	case OP_PICK:
		pick = ehframe_read_le(c, 1);
		if (c->bad || pick >= (uint64_t)s->n)
			return -ENOEXEC;
		return expr_push(s, top[-(int)pick]);
	case OP_SWAP:
		v = top[0];
		top[0] = top[-1];
		top[-1] = v;
		return 0;
	case OP_ROT:
		v = top[0];
		top[0] = top[-1];
		top[-1] = top[-2];
		top[-2] = v;
		return 0;
	case OP_ABS:
		if ((int64_t)*top < 0)
			*top = 0 - *top;
		return 0;
	case OP_NEG:
		*top = 0 - *top;
		return 0;
	case OP_NOT:
		*top = ~*top;
		return 0;
	case OP_PLUS_UCONST:
		*top += ehframe_read_uleb(c);
		return 0;
	default:
		if (s->n < 2)
			return expr_binop(op, 0, 0, &v) == -ENOENT ? -ENOENT : -ENOEXEC;
		ret = expr_binop(op, top[-1], top[0], &v);
		if (ret < 0)
			return ret;
		s->n--;
		s->v[s->n - 1] = v;
		return 0;
	}
}

/* cfi_expr_eval() for a target whose addresses (DW_OP_addr, DW_OP_deref) are @asz bytes. */
static int expr_eval(const uint8_t *expr, size_t len, const struct perch_regs *regs,
		     const struct perch_mem *mem, uint64_t bias, int push_initial, uint64_t initial,
		     int asz, uint64_t *out)
{
	struct ehframe_cursor c = {.base = expr, .end = len, .addr_size = asz};
	struct expr_stack s = {.n = 0};
	int steps = 0, ret = 0;

	if (!expr && len)
		return -ENOEXEC;
	if (push_initial)
		ret = expr_push(&s, initial);
	while (!ret && c.pos < c.end) {
		uint8_t op = (uint8_t)ehframe_read_le(&c, 1);
		uint64_t a, v;
		int64_t off;

		if (++steps > CFI_EXPR_MAX_STEPS)
			return -ENOEXEC;
		if (op >= OP_LIT0 && op <= OP_LIT31) {
			ret = expr_push(&s, (uint64_t)(op - OP_LIT0));
			continue;
		}
		if (expr_const(op, &c, &v)) {
			ret = c.bad ? -ENOEXEC : expr_push(&s, v);
			continue;
		}
		if ((op >= OP_BREG0 && op <= OP_BREG31) || op == OP_BREGX) {
			a = op == OP_BREGX ? ehframe_read_uleb(&c) : (uint64_t)(op - OP_BREG0);
			off = ehframe_read_sleb(&c);
			if (c.bad)
				return -ENOEXEC;
			ret = reg_value(regs, a, &v);
			if (!ret)
				ret = expr_push(&s, v + (uint64_t)off);
			continue;
		}
		if ((op >= OP_REG0 && op <= OP_REG31) || op == OP_REGX)
			return -EOPNOTSUPP; /* a location, not a value: not valid in CFI */
		switch (op) {
		case OP_ADDR:
			v = ehframe_read_le(&c, (size_t)asz);
			ret = expr_push(&s, v + bias);
			break;
		case OP_DEREF:
		case OP_DEREF_SIZE:
			a = op == OP_DEREF ? (uint64_t)asz : ehframe_read_le(&c, 1);
			if (c.bad || a == 0 || a > 8 || s.n < 1)
				return -ENOEXEC;
			ret = mem_read(mem, addr_wrap(s.v[s.n - 1], asz), (size_t)a, &v);
			if (!ret)
				s.v[s.n - 1] = v;
			break;
		case OP_SKIP:
		case OP_BRA:
			off = (int16_t)ehframe_read_le(&c, 2);
			if (c.bad || (op == OP_BRA && s.n < 1))
				return -ENOEXEC;
			if (op == OP_BRA && s.v[--s.n] == 0)
				break;
			if ((off < 0 && (uint64_t)-off > c.pos) ||
			    (off > 0 && (uint64_t)off > c.end - c.pos))
				return -ENOEXEC;
			c.pos = (size_t)((int64_t)c.pos + off);
			break;
		case OP_NOP:
			break;
		default:
			ret = expr_stack_op(op, &c, &s);
			if (ret == -ENOENT)
				return -EOPNOTSUPP;
			break;
		}
		if (c.bad)
			return -ENOEXEC;
	}
	if (ret < 0)
		return ret;
	if (s.n == 0)
		return -ENOEXEC;
	*out = addr_wrap(s.v[s.n - 1], asz);
	return 0;
}

int cfi_expr_eval(const uint8_t *expr, size_t len, const struct perch_regs *regs,
		  const struct perch_mem *mem, uint64_t bias, int push_initial, uint64_t initial,
		  uint64_t *out)
{
	return expr_eval(expr, len, regs, mem, bias, push_initial, initial, 8, out);
}

/* The row's address size (rows made before it was recorded: 8). */
static int row_asz(const struct cfi_row *row)
{
	return row->addr_size == 4 ? 4 : 8;
}

/* ---- stepping ---- */

static int row_cfa(const struct cfi_row *row, const struct perch_regs *in,
		   const struct perch_mem *mem, uint64_t bias, uint64_t *cfa)
{
	uint64_t v;
	int ret;

	if (row->cfa_kind == CFI_CFA_EXPR)
		return expr_eval(row->cfa_expr, row->cfa_expr_len, in, mem, bias, 0, 0,
				 row_asz(row), cfa);
	ret = reg_value(in, row->cfa_reg, &v);
	if (ret < 0)
		return ret;
	*cfa = addr_wrap(v + (uint64_t)row->cfa_off, row_asz(row));
	return 0;
}

/* The caller's value of register @reg by @row's rule. 0, 1 when the rule says "keep @in's"
 * (no rule or same value), 2 when undefined, or -errno. */
static int rule_value(const struct cfi_rule *r, const struct perch_regs *in,
		      const struct perch_mem *mem, uint64_t bias, uint64_t cfa, int asz,
		      uint64_t *v)
{
	uint64_t addr;
	int ret;

	switch (r->kind) {
	case CFI_RULE_UNSPEC:
	case CFI_RULE_SAME:
		return 1;
	case CFI_RULE_UNDEF:
		return 2;
	case CFI_RULE_OFFSET:
		return mem_read(mem, addr_wrap(cfa + (uint64_t)r->off, asz), (size_t)asz, v);
	case CFI_RULE_VAL_OFFSET:
		*v = addr_wrap(cfa + (uint64_t)r->off, asz);
		return 0;
	case CFI_RULE_REG:
		return reg_value(in, r->reg, v);
	case CFI_RULE_EXPR:
		ret = expr_eval(r->expr, r->expr_len, in, mem, bias, 1, cfa, asz, &addr);
		return ret < 0 ? ret : mem_read(mem, addr, (size_t)asz, v);
	case CFI_RULE_VAL_EXPR:
		return expr_eval(r->expr, r->expr_len, in, mem, bias, 1, cfa, asz, v);
	}
	return -ENOEXEC;
}

int cfi_step(const struct perch_arch *a, const struct cfi_table *t, uint64_t bias,
	     const struct perch_regs *in, unsigned int in_flags, const struct perch_mem *mem,
	     uint64_t pac_mask, struct perch_regs *out, unsigned int *out_flags)
{
	struct cfi_row row_buf, *row = &row_buf;
	uint64_t pc, lookup, cfa, ra = 0;
	int ret, nr = a->nr_regs < CFI_MAX_REGS ? a->nr_regs : CFI_MAX_REGS;

	*out_flags = 0;
	if (!(in->valid & (1ULL << a->dw_pc)))
		return -EINVAL;
	pc = in->r[a->dw_pc];
	lookup = pc - bias;
	if (!(in_flags & CFI_PC_EXACT)) {
		if (lookup == 0)
			return -ENODATA;
		lookup--;
	}
	ret = cfi_row_find(t, lookup, row);
	if (ret == -ENOENT) {
		ret = -ENODATA;
		goto out;
	}
	if (ret < 0)
		goto out;
	ret = -ENOEXEC;
	if (row->ra_reg >= nr)
		goto out;
	ret = row_cfa(row, in, mem, bias, &cfa);
	if (ret < 0)
		goto out;

	*out = *in;
	for (int reg = 0; reg < nr; reg++) {
		uint64_t v;
		int r = rule_value(&row->rules[reg], in, mem, bias, cfa, row_asz(row), &v);

		if (reg == row->ra_reg) {
			if (r == 2) {
				ret = -ENOENT; /* outermost frame (_start, clone, thread start) */
				goto out;
			}
			if (r == 1) {
				/* no rule for the RA: the return address is still in its register
				 * (aarch64 leaf functions); as the pc itself it would be a loop */
				if (reg == a->dw_pc || !(in->valid & (1ULL << reg))) {
					ret = reg == a->dw_pc ? -ENOEXEC : -EINVAL;
					goto out;
				}
				v = in->r[reg];
			} else if (r < 0) {
				ret = r;
				goto out;
			}
			ra = v;
			out->r[reg] = v;
			out->valid |= 1ULL << reg;
			continue;
		}
		if (r == 1)
			continue;
		if (r == 0) {
			out->r[reg] = v;
			out->valid |= 1ULL << reg;
		} else {
			/* undefined, or a saved value perch cannot read: unknown in the caller, but
			 * the step itself can go on */
			out->r[reg] = 0;
			out->valid &= ~(1ULL << reg);
		}
	}
	/* the CFA is by definition the caller's sp, unless a rule says otherwise */
	if (row->rules[a->dw_sp].kind == CFI_RULE_UNSPEC ||
	    row->rules[a->dw_sp].kind == CFI_RULE_SAME) {
		out->r[a->dw_sp] = cfa;
		out->valid |= 1ULL << a->dw_sp;
	}
	if (row->ra_signed) {
		ra &= ~(pac_mask ? pac_mask : ~((1ULL << 48) - 1));
		*out_flags |= CFI_RA_SIGNED;
	}
	if (ra == 0) {
		ret = -ENOENT;
		goto out;
	}
	out->r[a->dw_pc] = ra;
	out->valid |= 1ULL << a->dw_pc;
	if (row->signal_frame)
		*out_flags |= CFI_PC_EXACT;
	ret = 0;
	if (ra == pc && (in->valid & (1ULL << a->dw_sp)) && out->r[a->dw_sp] == in->r[a->dw_sp])
		ret = -ELOOP;
out:
	return ret;
}

/* DW_OP_const4u "DEX1" (0x31584544 little-endian), DW_OP_drop */
static const uint8_t dex_marker[] = {OP_CONST4U, 0x44, 0x45, 0x58, 0x31, OP_DROP};

int cfi_row_dex_pc(const struct cfi_row *row, const struct perch_regs *regs,
		   const struct perch_mem *mem, uint64_t *dex_pc)
{
	for (int reg = 0; reg < CFI_MAX_REGS; reg++) {
		const struct cfi_rule *r = &row->rules[reg];

		if (r->kind != CFI_RULE_VAL_EXPR || r->expr_len <= sizeof(dex_marker) ||
		    memcmp(r->expr, dex_marker, sizeof(dex_marker)))
			continue;
		return expr_eval(r->expr, r->expr_len, regs, mem, 0, 0, 0, row_asz(row), dex_pc);
	}
	return -ENOENT;
}
