/* DIE attributes through libdwarf, and the address ranges of a DIE (DW_AT_low_pc/high_pc,
 * DWARF 4 .debug_ranges, DWARF 5 .debug_rnglists, the range lists of split units). */

#include "perch/base/xalloc.h"
#include "perch/symbols/ehframe.h"
#include "debuginfo-int.h"

static int split_addr(const struct di_splitctx *x, uint64_t index, uint64_t *out);

static int die_attr(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Attribute *out)
{
	Dwarf_Error err = NULL;
	int ret = dwarf_attr(die, at, out, &err);

	di_drop_err(di, err);
	return ret == DW_DLV_OK ? 0 : -1;
}

int di_die_udata(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *out)
{
	Dwarf_Attribute attr;
	Dwarf_Error err = NULL;
	Dwarf_Signed sval = 0;
	Dwarf_Half form = 0;
	int ret;

	if (die_attr(di, die, at, &attr))
		return -1;
	/* libdwarf 20210528's dwarf_formudata() rejects DW_FORM_implicit_const
	 * (DW_DLE_ATTR_FORM_BAD), which gcc 12 uses for DW_AT_call_file/call_line;
	 * dwarf_formsdata() reads it. */
	ret = dwarf_whatform(attr, &form, &err);
	if (ret == DW_DLV_OK && form == DW_FORM_implicit_const) {
		ret = dwarf_formsdata(attr, &sval, &err);
		if (ret == DW_DLV_OK && sval < 0)
			ret = DW_DLV_NO_ENTRY;
		*out = (Dwarf_Unsigned)sval;
	} else if (ret == DW_DLV_OK) {
		ret = dwarf_formudata(attr, out, &err);
	}
	di_drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK ? 0 : -1;
}

/* Is flag attribute @at present and true (DW_FORM_flag_present, or flag 1)? */
int di_die_flag(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute attr;
	Dwarf_Error err = NULL;
	Dwarf_Bool b = 0;
	int ret;

	if (die_attr(di, die, at, &attr))
		return 0;
	ret = dwarf_formflag(attr, &b, &err);
	di_drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK && b;
}

/* An address attribute (DW_FORM_addr, addrx...). In a split unit an indexed address is read
 * from the program's .debug_addr by perch (split_addr(), see split_open()). */
int di_die_addr(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, uint64_t *out)
{
	Dwarf_Attribute attr;
	Dwarf_Error err = NULL;
	Dwarf_Unsigned index = 0;
	Dwarf_Half form = 0;
	Dwarf_Addr a = 0;
	uint64_t v = 0;
	int ret;

	if (die_attr(di, die, at, &attr))
		return -1;
	if (di->split && dwarf_whatform(attr, &form, &err) == DW_DLV_OK &&
	    dwarf_addr_form_is_indexed(form)) {
		ret = dwarf_get_debug_addr_index(attr, &index, &err) == DW_DLV_OK &&
			      !split_addr(di->split, index, &v)
			  ? DW_DLV_OK
			  : DW_DLV_ERROR;
		a = v;
	} else {
		ret = dwarf_formaddr(attr, &a, &err);
	}
	di_drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	if (ret != DW_DLV_OK)
		return -1;
	*out = a;
	return 0;
}

const char *di_die_string(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute attr;
	Dwarf_Error err = NULL;
	char *s = NULL;
	int ret;

	if (die_attr(di, die, at, &attr))
		return NULL;
	ret = dwarf_formstring(attr, &s, &err);
	di_drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK && s && *s ? s : NULL;
}

/* Global offset of the DIE a reference attribute points to. */
int di_die_ref(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *out)
{
	Dwarf_Attribute attr;
	Dwarf_Error err = NULL;
	int ret;

	if (die_attr(di, die, at, &attr))
		return -1;
	ret = dwarf_global_formref(attr, out, &err);
	di_drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK ? 0 : -1;
}

/* A section offset attribute (DW_FORM_sec_offset, or data4/data8 before DWARF 4). */
int di_die_sec_offset(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *out)
{
	Dwarf_Unsigned v;

	if (!di_die_ref(di, die, at, out))
		return 0;
	if (di_die_udata(di, die, at, &v))
		return -1;
	*out = v;
	return 0;
}

Dwarf_Die di_die_at(struct debuginfo *di, Dwarf_Off off)
{
	Dwarf_Error err = NULL;
	Dwarf_Die die = NULL;

	if (di_info_ensure(di, off) < 0)
		return NULL;
	if (dwarf_offdie_b(di->dbg, off, 1, &die, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return NULL;
	}
	return die;
}

Dwarf_Off di_die_offset(struct debuginfo *di, Dwarf_Die die)
{
	Dwarf_Error err = NULL;
	Dwarf_Off off = 0;

	if (dwarf_dieoffset(die, &off, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return 0;
	}
	return off;
}

/* Function name: the linkage name if any DIE along the abstract_origin / specification chain
 * has one, else the first DW_AT_name. Strings live in libdwarf's sections until dwarf_finish.
 * Without a linkage name, *@decl_off is the offset of the chain's last DIE (the declaration,
 * which sits in the function's namespace or class), else 0. */
const char *di_die_func_name(struct debuginfo *di, Dwarf_Die die, Dwarf_Off *decl_off)
{
	const char *name = NULL, *s;
	Dwarf_Die cur = die, next;
	Dwarf_Off off;
	int hops;

	*decl_off = 0;
	for (hops = 0; cur && hops < DI_MAX_ORIGIN_HOPS; hops++) {
		s = di_die_string(di, cur, DW_AT_linkage_name);
		if (!s)
			s = di_die_string(di, cur, DW_AT_MIPS_linkage_name);
		if (s) {
			name = s;
			*decl_off = 0;
			break;
		}
		if (!name)
			name = di_die_string(di, cur, DW_AT_name);
		*decl_off = di_die_offset(di, cur);
		next = NULL;
		if (!di_die_ref(di, cur, DW_AT_abstract_origin, &off) ||
		    !di_die_ref(di, cur, DW_AT_specification, &off))
			next = di_die_at(di, off);
		if (cur != die)
			dwarf_dealloc_die(cur);
		cur = next;
	}
	if (cur && cur != die)
		dwarf_dealloc_die(cur);
	return name;
}

void di_push_range(struct di_range **r, size_t *nr, size_t *alloc, uint64_t lo, uint64_t hi,
		   uint32_t idx)
{
	/* Address 0 is where the linker puts functions it discarded (--gc-sections, COMDAT). */
	if (lo == 0 || lo >= hi || *nr >= DI_MAX_RANGES)
		return;
	ALLOC_GROW(*r, *nr + 1, *alloc);
	(*r)[*nr].lo = lo;
	(*r)[*nr].hi = hi;
	(*r)[*nr].idx = idx;
	(*nr)++;
}

/* DWARF 5 DW_AT_ranges: .debug_rnglists (DW_FORM_sec_offset or DW_FORM_rnglistx). */
static void rnglists_ranges(struct debuginfo *di, Dwarf_Attribute attr, struct di_range **r,
			    size_t *nr, size_t *alloc, uint32_t idx)
{
	Dwarf_Rnglists_Head head = NULL;
	Dwarf_Unsigned val = 0, count = 0, goff = 0, i;
	Dwarf_Error err = NULL;
	Dwarf_Half form = 0;
	Dwarf_Off off = 0;

	if (dwarf_whatform(attr, &form, &err) != DW_DLV_OK)
		goto out;
	if (form == DW_FORM_rnglistx) {
		if (dwarf_formudata(attr, &val, &err) != DW_DLV_OK)
			goto out;
	} else {
		if (dwarf_global_formref(attr, &off, &err) != DW_DLV_OK)
			goto out;
		val = off;
	}
	if (dwarf_rnglists_get_rle_head(attr, form, val, &head, &count, &goff, &err) != DW_DLV_OK)
		goto out;
	for (i = 0; i < count; i++) {
		Dwarf_Unsigned raw1, raw2, lo, hi;
		Dwarf_Bool no_addr = 0;
		unsigned int len, code;

		if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2, &no_addr,
						      &lo, &hi, &err) != DW_DLV_OK)
			break;
		switch (code) {
		case DW_RLE_startx_endx:
		case DW_RLE_startx_length:
		case DW_RLE_offset_pair:
		case DW_RLE_start_end:
		case DW_RLE_start_length:
			if (!no_addr)
				di_push_range(r, nr, alloc, lo, hi, idx);
			break;
		default:
			break;
		}
	}
	dwarf_dealloc_rnglists_head(head);
out:
	di_drop_err(di, err);
}

/* DWARF 2-4 DW_AT_ranges: .debug_ranges, offsets relative to the CU base address. */
static void debug_ranges(struct debuginfo *di, Dwarf_Die die, Dwarf_Attribute attr, uint64_t base,
			 struct di_range **r, size_t *nr, size_t *alloc, uint32_t idx)
{
	Dwarf_Ranges *buf = NULL;
	Dwarf_Signed cnt = 0, i;
	Dwarf_Unsigned bytes = 0, val = 0;
	Dwarf_Error err = NULL;
	Dwarf_Off off = 0, real = 0;

	if (dwarf_global_formref(attr, &off, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		err = NULL;
		if (dwarf_formudata(attr, &val, &err) != DW_DLV_OK)
			goto out;
		off = val;
	}
	if (dwarf_get_ranges_b(di->dbg, off, die, &real, &buf, &cnt, &bytes, &err) != DW_DLV_OK)
		goto out;
	for (i = 0; i < cnt; i++) {
		switch (buf[i].dwr_type) {
		case DW_RANGES_ENTRY:
			di_push_range(r, nr, alloc, buf[i].dwr_addr1 + base,
				      buf[i].dwr_addr2 + base, idx);
			break;
		case DW_RANGES_ADDRESS_SELECTION:
			base = buf[i].dwr_addr2;
			break;
		default:
			break;
		}
	}
	dwarf_ranges_dealloc(di->dbg, buf, cnt);
out:
	di_drop_err(di, err);
}

/* Entry @index of the program's address table, for a split unit. 0 or -1. */
static int split_addr(const struct di_splitctx *x, uint64_t index, uint64_t *out)
{
	if (index >= x->addr_size / x->asz)
		return -1;
	*out = di_read_uint(x->addr + index * x->asz, x->asz, x->big);
	return 0;
}

/* A split unit's DW_AT_ranges: DWARF 5 (DW_FORM_rnglistx, an index into the offsets that
 * follow the .debug_rnglists.dwo header, section 7.28; entries as in section 2.17.3) or the
 * GNU extension to DWARF 4 (an offset into the program's .debug_ranges: begin/end pairs
 * relative to the base, (0, 0) ends, (max, addr) sets the base). */
static void split_ranges(struct debuginfo *di, Dwarf_Attribute attr, struct di_range **r,
			 size_t *nr, size_t *alloc, uint32_t idx)
{
	const struct di_splitctx *x = di->split;
	struct ehframe_cursor c = {0};
	Dwarf_Unsigned v = 0;
	Dwarf_Error err = NULL;
	Dwarf_Half form = 0;
	Dwarf_Off off = 0;
	uint64_t base = x->base, a, b, maxa = x->asz == 8 ? UINT64_MAX : UINT32_MAX;
	unsigned int steps = 0;

	if (dwarf_whatform(attr, &form, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return;
	}
	if (form != DW_FORM_rnglistx) { /* DWARF 4 GNU split: .debug_ranges */
		if (dwarf_global_formref(attr, &off, &err) != DW_DLV_OK) {
			di_drop_err(di, err);
			err = NULL;
			if (dwarf_formudata(attr, &v, &err) != DW_DLV_OK) {
				di_drop_err(di, err);
				return;
			}
			off = v;
		}
		for (; off < x->ranges_size && x->ranges_size - off >= 2u * x->asz;
		     off += 2u * x->asz) {
			a = di_read_uint(x->ranges + off, x->asz, x->big);
			b = di_read_uint(x->ranges + off + x->asz, x->asz, x->big);
			if (!a && !b)
				break;
			if (a == maxa)
				base = b;
			else
				di_push_range(r, nr, alloc, base + a, base + b, idx);
		}
		return;
	}
	if (dwarf_formudata(attr, &v, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return;
	}
	/* the header: unit_length(4|12) version(2) address_size(1) seg(1) count(4) offsets */
	if (x->rng_size < 12 || di_read_uint(x->rng, 4, x->big) >= 0xfffffff0u)
		return; /* no list, or 64-bit DWARF (no compiler emits it for split units) */
	if (v >= di_read_uint(x->rng + 8, 4, x->big) || 12 + (v + 1) * 4 > x->rng_size)
		return;
	c.base = x->rng;
	c.end = x->rng_size;
	c.pos = 12 + di_read_uint(x->rng + 12 + v * 4, 4, x->big);
	while (c.pos < c.end && !c.bad && steps++ < DI_MAX_RANGES) {
		unsigned int code = x->rng[c.pos++];

		if (code == DW_RLE_end_of_list)
			break;
		switch (code) {
		case DW_RLE_base_addressx:
			if (split_addr(x, ehframe_read_uleb(&c), &base) < 0)
				return;
			break;
		case DW_RLE_startx_endx:
			if (split_addr(x, ehframe_read_uleb(&c), &a) < 0 ||
			    split_addr(x, ehframe_read_uleb(&c), &b) < 0)
				return;
			di_push_range(r, nr, alloc, a, b, idx);
			break;
		case DW_RLE_startx_length:
			if (split_addr(x, ehframe_read_uleb(&c), &a) < 0)
				return;
			b = ehframe_read_uleb(&c);
			di_push_range(r, nr, alloc, a, a + b, idx);
			break;
		case DW_RLE_offset_pair:
			a = ehframe_read_uleb(&c);
			b = ehframe_read_uleb(&c);
			di_push_range(r, nr, alloc, base + a, base + b, idx);
			break;
		case DW_RLE_base_address:
			base = ehframe_read_le(&c, x->asz);
			break;
		case DW_RLE_start_end:
			a = ehframe_read_le(&c, x->asz);
			b = ehframe_read_le(&c, x->asz);
			di_push_range(r, nr, alloc, a, b, idx);
			break;
		case DW_RLE_start_length:
			a = ehframe_read_le(&c, x->asz);
			b = ehframe_read_uleb(&c);
			di_push_range(r, nr, alloc, a, a + b, idx);
			break;
		default:
			return; /* an entry this reader does not know: the rest cannot be read */
		}
	}
}

/* DW_AT_low_pc of @die: libdwarf's, or in a split unit perch's (di_die_addr()). 0 or -1. */
static int die_low_pc(struct debuginfo *di, Dwarf_Die die, Dwarf_Addr *lo)
{
	Dwarf_Error err = NULL;
	uint64_t v;

	if (di->split) {
		if (di_die_addr(di, die, DW_AT_low_pc, &v))
			return -1;
		*lo = v;
		return 0;
	}
	if (dwarf_lowpc(die, lo, &err) == DW_DLV_OK)
		return 0;
	di_drop_err(di, err);
	return -1;
}

/* Append the address ranges of @die (low/high pc or DW_AT_ranges). */
void di_die_ranges(struct debuginfo *di, Dwarf_Die die, int version, uint64_t base,
		   struct di_range **r, size_t *nr, size_t *alloc, uint32_t idx)
{
	Dwarf_Addr lo = 0, hi = 0;
	Dwarf_Half form = 0;
	enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;
	Dwarf_Error err = NULL;
	Dwarf_Attribute attr;

	if (die_low_pc(di, die, &lo) == 0) {
		if (dwarf_highpc_b(die, &hi, &form, &cls, &err) == DW_DLV_OK) {
			if (cls == DW_FORM_CLASS_CONSTANT)
				hi += lo;
			di_push_range(r, nr, alloc, lo, hi, idx);
			return;
		}
	}
	di_drop_err(di, err);
	if (die_attr(di, die, DW_AT_ranges, &attr))
		return;
	if (di->split)
		split_ranges(di, attr, r, nr, alloc, idx);
	else if (version >= 5)
		rnglists_ranges(di, attr, r, nr, alloc, idx);
	else
		debug_ranges(di, die, attr, base, r, nr, alloc, idx);
	dwarf_dealloc_attribute(attr);
}

/* Every DIE is at least one byte, and perch walks a CU's tree at most twice (its functions,
 * and its C++ scopes when another CU refers into it), so more steps than a few times the size
 * of .debug_info mean hostile DWARF that makes the walks go over the same DIEs again and again
 * (overlapping CUs, DW_AT_sibling jumping about): then every walk ends early. */
static int die_step_ok(struct debuginfo *di)
{
	return ++di->die_steps <= 4 * di->info_size + 4096;
}

Dwarf_Die di_die_child(struct debuginfo *di, Dwarf_Die die)
{
	Dwarf_Error err = NULL;
	Dwarf_Die child = NULL;

	if (!die_step_ok(di))
		return NULL;

	if (dwarf_child(die, &child, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return NULL;
	}
	return child;
}

/* The next sibling, or NULL. libdwarf follows DW_AT_sibling when a DIE has one, and hostile
 * DWARF can point it backwards: only a sibling further on in the section is taken, so every
 * walk over a list of siblings ends. */
Dwarf_Die di_die_sibling(struct debuginfo *di, Dwarf_Die die)
{
	Dwarf_Error err = NULL;
	Dwarf_Die sib = NULL;
	Dwarf_Off here = 0, there = 0;

	if (!die_step_ok(di))
		return NULL;
	if (dwarf_siblingof_b(di->dbg, die, 1, &sib, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return NULL;
	}
	if (dwarf_dieoffset(die, &here, &err) != DW_DLV_OK ||
	    dwarf_dieoffset(sib, &there, &err) != DW_DLV_OK || there <= here) {
		di_drop_err(di, err);
		dwarf_dealloc_die(sib);
		return NULL;
	}
	return sib;
}

int di_die_tag(struct debuginfo *di, Dwarf_Die die)
{
	Dwarf_Error err = NULL;
	Dwarf_Half tag = 0;

	if (dwarf_tag(die, &tag, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return -1;
	}
	return tag;
}

int di_die_has(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Error err = NULL;
	Dwarf_Bool b = 0;
	int ret = dwarf_hasattr(die, at, &b, &err);

	di_drop_err(di, err);
	return ret == DW_DLV_OK && b;
}
