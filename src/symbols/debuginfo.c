/* DWARF line tables and inlined-subroutine chains through libdwarf 20210528 (Debian 12): the
 * only file in perch that includes libdwarf.h. Demangling and the symbol tables are elsewhere.
 * Lazy: open reads .debug_aranges only; a CU is read when a lookup lands in it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <gelf.h>
#include <libdwarf.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/debuginfo.h"
#include "perch/symbols/ehframe.h"
#include "perch/symbols/elfsection.h"

#define DI_MAX_DEPTH	   64	      /* DIE nesting we follow; deeper DIEs are ignored */
#define DI_MAX_ORIGIN_HOPS 16	      /* abstract_origin/specification chain length */
#define DI_MAX_NODES	   (1u << 22) /* functions + inlined subroutines per CU */
#define DI_MAX_RANGES	   (1u << 22) /* address ranges per CU */
#define DI_MAX_CALLS	   (1u << 22) /* call sites per CU */
#define DI_MAX_CUS	   (1u << 20)
#define DI_MAX_SCOPES	   (1u << 22) /* C++ scopes and scoped functions, all CUs together */
#define DI_MAX_PATH	   4096	      /* longest source path we build */
#define DI_MAX_SECTION	   ELFSECTION_MAX_SIZE /* largest uncompressed DWARF section */
#define DI_MAX_SECTIONS	   0xffffu	       /* libdwarf's section indexes are 16-bit */

/* An address range [lo, hi) and what it belongs to (a CU or a function node). */
struct di_range {
	uint64_t lo, hi;
	uint32_t idx;
};

/* One line-table row: "0x1139  inl.c:12" */
struct di_row {
	uint64_t addr;
	uint32_t line;
	uint32_t file; /* file number as in the line table */
};

/* One line-table sequence: rows[first .. first + nr) cover [lo, hi). */
struct di_seq {
	uint64_t lo, hi;
	size_t first, nr;
};

/* A concrete subprogram or inlined subroutine. Nodes are stored in preorder, so the
 * descendants of node i are nodes i+1 .. end-1. */
struct di_node {
	const char *name;   /* libdwarf's string sections or di_fnscope.qual; NULL when unknown */
	Dwarf_Off decl_off; /* last DIE of the origin/specification chain; 0 if it had a linkage
			     * name (no need to qualify @name) */
	uint32_t call_file, call_line;
	uint32_t end;
	uint32_t range_first, nr_ranges; /* into di_cu.node_ranges */
	int inlined;
	/* subprograms: their call sites are calls[call_first .. + nr_calls) (their inlined
	 * subroutines' included); tail calls in tails[tail_first .. + nr_tails) when all_calls */
	int all_calls; /* DW_AT_call_all_calls or _all_tail_calls (or the GNU forms) */
	uint32_t call_first, nr_calls, tail_first, nr_tails;
};

/* A C++ scope (DW_TAG_namespace, class, struct, union) seen while walking a CU. */
struct di_scope {
	const char *name; /* NULL for an anonymous one */
	uint32_t parent;  /* index + 1 into debuginfo.scopes; 0 at CU level */
	int tag;
};

/* A subprogram DIE declared in a C++ scope, by .debug_info offset (open addressing). */
struct di_fnscope {
	Dwarf_Off off;
	uint32_t scope; /* index + 1 into debuginfo.scopes; 0: empty slot */
	char *qual;	/* "ns::cls::name", built on first use */
};

struct di_cu {
	Dwarf_Off die_off;	    /* global .debug_info offset of the CU DIE */
	Dwarf_Off hdr_off, end_off; /* the unit in .debug_info: [hdr_off, end_off) */
	uint32_t idx;		    /* index into debuginfo.cus */
	uint64_t base;		    /* DW_AT_low_pc: base address of DWARF 4 range lists */
	int version;		    /* CU version */
	int state;		    /* 0: not loaded, 1: loaded, -1: failed */
	int cxx;		    /* DW_AT_language is C++: qualify names with their scopes */
	int skeleton;		    /* split DWARF: the DIEs are in a .dwo or .dwp (split_cu_die) */
	int scoped;		    /* its C++ scopes are in debuginfo.scopes / fnscopes */

	struct di_range *ranges; /* the CU DIE's address ranges, sorted by lo */
	size_t nr_ranges;

	char **files; /* indexed by line-table file number; entries may be NULL */
	size_t nr_files;
	struct di_row *rows;
	size_t nr_rows;
	struct di_seq *seqs; /* sorted by lo */
	size_t nr_seqs;

	struct di_node *nodes;
	size_t nr_nodes, alloc_nodes;
	struct di_range *node_ranges; /* grouped per node, in node order */
	size_t nr_node_ranges, alloc_node_ranges;
	struct di_range *roots; /* ranges of subprogram nodes, sorted by lo */
	size_t nr_roots;

	/* DW_TAG_call_site / DW_TAG_GNU_call_site, in DIE order; call_addr_first[i] indexes
	 * call_addrs until the load ends and calls[i].addrs points there */
	struct debuginfo_call *calls;
	size_t nr_calls, alloc_calls;
	uint32_t *call_addr_first;
	uint64_t *call_addrs;
	size_t nr_call_addrs, alloc_call_addrs;
	uint32_t *call_by_pc; /* indexes into calls, sorted by pc (DIE order among equals) */
	struct debuginfo_call *tails; /* the tail calls of each subprogram, grouped */
	size_t nr_tails;
};

/* One CU named by .debug_aranges, by the offset of its unit header in .debug_info. */
struct di_acu {
	uint64_t hdr_off;
	uint32_t cu; /* index into debuginfo.cus once resolved */
	int state;   /* 0: not resolved yet, 1: resolved, -1: not a CU */
};

/* One ELF section as libdwarf sees it through perch's object access (obj_methods). */
struct di_sec {
	char *name;	/* for libdwarf: ".zdebug_x" is ".debug_x"; DI_HIDDEN to keep it out */
	char *elf_name; /* as in the file */
	uint64_t type, flags, addr, offset, link, info, entsize;
	uint64_t raw_size; /* in the file */
	uint64_t size;	   /* uncompressed */
	int comp;	   /* enum elfsection_comp */
	int state;	   /* 0: not read yet, 1: @data holds @size bytes, -1: unreadable */
	uint8_t *data;
	/* .debug_info and .debug_line, compressed: decompressed as far as a reader needs
	 * (info_ensure, line_ensure); @data is the stream's buffer, whole-sized */
	struct elfsection_stream *stream;
	int checked; /* a list or abbreviation section checked (sec_check): 1 ok, -1 not */
};

/* A .dwo or .dwp file split DWARF names (gcc/clang -gsplit-dwarf), opened on first use. */
struct di_split {
	char *path;
	struct debuginfo *di; /* NULL: it cannot be opened */
	/* split units by dwo_id, for a .dwo (a .dwp has an index libdwarf reads) */
	uint64_t *ids;
	Dwarf_Off *offs;
	size_t nr;
};

/* While the DIEs of a split unit are read: where its indexed addresses and its range lists
 * are, which libdwarf 20210528 cannot follow across files for range lists ("rnglists table
 * index ... is unusable unless it is in a tied file"). */
struct di_splitctx {
	const uint8_t *addr; /* the program's .debug_addr from the skeleton's DW_AT_addr_base */
	size_t addr_size;
	const uint8_t *rng; /* this unit's .debug_rnglists.dwo (its contribution in a .dwp) */
	size_t rng_size;
	const uint8_t *ranges; /* DWARF 4 (GNU): the program's .debug_ranges from
				* DW_AT_GNU_ranges_base */
	size_t ranges_size;
	uint64_t base; /* the skeleton's DW_AT_low_pc */
	unsigned int asz;
	int big;
};

struct debuginfo {
	char tag;			 /* 'p': see debuginfo_free() */
	const struct di_splitctx *split; /* set while a split unit is read (cu_load) */
	int fd;
	char *path;
	struct di_split *splits;
	size_t nr_splits;
	int is_64, big; /* ELFCLASS64, ELFDATA2MSB */
	int dwo;	/* split DWARF: the .dwo sections of a .dwo or .dwp file */
	struct di_sec *secs;
	size_t nr_secs;
	Dwarf_Obj_Access_Interface iface;
	Dwarf_Debug dbg;
	uint64_t info_size; /* of .debug_info, uncompressed */
	uint64_t info_walk; /* .debug_info units before this offset are decompressed */
	uint64_t die_steps; /* child/sibling steps taken by all walks (die_step_ok) */
	int info_state;	    /* 0: libdwarf has not read .debug_info yet, 1: has, -1: cannot */
	struct di_cu **cus; /* the CUs read so far, in the order read; each allocated alone */
	size_t nr_cus, alloc_cus;
	uint32_t *by_off; /* indexes into cus, sorted by die_off */

	/* .debug_aranges, read at open: address -> CU, without reading any DIE */
	struct di_range *aranges; /* sorted by lo; idx into acus */
	size_t nr_aranges;
	struct di_acu *acus;
	size_t nr_acus;

	/* every CU's own ranges, from a walk over all CUs: only when .debug_aranges is missing
	 * or does not cover an address (gcc leaves out CUs without code, clang emits none) */
	int scanned;
	struct di_range *cu_ranges; /* sorted by lo; idx into cus */
	size_t nr_cu_ranges;

	struct di_scope *scopes;
	size_t nr_scopes, alloc_scopes;
	struct di_fnscope *fnscopes; /* hash table, power-of-two capacity */
	size_t nr_fnscopes, fnscopes_cap;
};

static int sec_get(struct debuginfo *di, const char *name, const uint8_t **data, size_t *size);
static int info_ensure(struct debuginfo *di, uint64_t off);
static int sec_all(struct debuginfo *di, const char *name);
static int sec_load(struct debuginfo *di, size_t i);
static long sec_find(const struct debuginfo *di, const char *name);
static int line_ensure(struct debuginfo *di, uint64_t off);

static void drop_err(struct debuginfo *di, Dwarf_Error err)
{
	if (err)
		dwarf_dealloc_error(di->dbg, err);
}

static uint64_t read_uint(const uint8_t *p, unsigned int size, int big)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[big ? size - 1 - i : i] << (8 * i);
	return v;
}

static int range_cmp(const void *a, const void *b)
{
	const struct di_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Index of the last range with lo <= addr, or -1. @r is sorted by lo. */
static long range_floor(const struct di_range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* A range containing @addr: the last one starting at or below it, or one of the few before it
 * (ranges of different CUs or functions rarely overlap). Returns its index or -1. */
static long range_find(const struct di_range *r, size_t n, uint64_t addr)
{
	long i = range_floor(r, n, addr);
	int tries;

	for (tries = 0; i >= 0 && tries < 8; i--, tries++)
		if (addr < r[i].hi)
			return i;
	return -1;
}

static int die_attr(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Attribute *out)
{
	Dwarf_Error err = NULL;
	int ret = dwarf_attr(die, at, out, &err);

	drop_err(di, err);
	return ret == DW_DLV_OK ? 0 : -1;
}

static int die_udata(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *out)
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
	drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK ? 0 : -1;
}

/* Is flag attribute @at present and true (DW_FORM_flag_present, or flag 1)? */
static int die_flag(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute attr;
	Dwarf_Error err = NULL;
	Dwarf_Bool b = 0;
	int ret;

	if (die_attr(di, die, at, &attr))
		return 0;
	ret = dwarf_formflag(attr, &b, &err);
	drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK && b;
}

static int split_addr(const struct di_splitctx *x, uint64_t index, uint64_t *out);

/* An address attribute (DW_FORM_addr, addrx...). In a split unit an indexed address is read
 * from the program's .debug_addr by perch (split_addr(), see split_open()). */
static int die_addr(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, uint64_t *out)
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
	drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	if (ret != DW_DLV_OK)
		return -1;
	*out = a;
	return 0;
}

static const char *die_string(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute attr;
	Dwarf_Error err = NULL;
	char *s = NULL;
	int ret;

	if (die_attr(di, die, at, &attr))
		return NULL;
	ret = dwarf_formstring(attr, &s, &err);
	drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK && s && *s ? s : NULL;
}

/* Global offset of the DIE a reference attribute points to. */
static int die_ref(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *out)
{
	Dwarf_Attribute attr;
	Dwarf_Error err = NULL;
	int ret;

	if (die_attr(di, die, at, &attr))
		return -1;
	ret = dwarf_global_formref(attr, out, &err);
	drop_err(di, err);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK ? 0 : -1;
}

/* A section offset attribute (DW_FORM_sec_offset, or data4/data8 before DWARF 4). */
static int die_sec_offset(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *out)
{
	Dwarf_Unsigned v;

	if (!die_ref(di, die, at, out))
		return 0;
	if (die_udata(di, die, at, &v))
		return -1;
	*out = v;
	return 0;
}

static Dwarf_Die die_at(struct debuginfo *di, Dwarf_Off off)
{
	Dwarf_Error err = NULL;
	Dwarf_Die die = NULL;

	if (info_ensure(di, off) < 0)
		return NULL;
	if (dwarf_offdie_b(di->dbg, off, 1, &die, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return NULL;
	}
	return die;
}

static Dwarf_Off die_offset(struct debuginfo *di, Dwarf_Die die)
{
	Dwarf_Error err = NULL;
	Dwarf_Off off = 0;

	if (dwarf_dieoffset(die, &off, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return 0;
	}
	return off;
}

/* Function name: the linkage name if any DIE along the abstract_origin / specification chain
 * has one, else the first DW_AT_name. Strings live in libdwarf's sections until dwarf_finish.
 * Without a linkage name, *@decl_off is the offset of the chain's last DIE (the declaration,
 * which sits in the function's namespace or class), else 0. */
static const char *die_func_name(struct debuginfo *di, Dwarf_Die die, Dwarf_Off *decl_off)
{
	const char *name = NULL, *s;
	Dwarf_Die cur = die, next;
	Dwarf_Off off;
	int hops;

	*decl_off = 0;
	for (hops = 0; cur && hops < DI_MAX_ORIGIN_HOPS; hops++) {
		s = die_string(di, cur, DW_AT_linkage_name);
		if (!s)
			s = die_string(di, cur, DW_AT_MIPS_linkage_name);
		if (s) {
			name = s;
			*decl_off = 0;
			break;
		}
		if (!name)
			name = die_string(di, cur, DW_AT_name);
		*decl_off = die_offset(di, cur);
		next = NULL;
		if (!die_ref(di, cur, DW_AT_abstract_origin, &off) ||
		    !die_ref(di, cur, DW_AT_specification, &off))
			next = die_at(di, off);
		if (cur != die)
			dwarf_dealloc_die(cur);
		cur = next;
	}
	if (cur && cur != die)
		dwarf_dealloc_die(cur);
	return name;
}

static void push_range(struct di_range **r, size_t *nr, size_t *alloc, uint64_t lo, uint64_t hi,
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
				push_range(r, nr, alloc, lo, hi, idx);
			break;
		default:
			break;
		}
	}
	dwarf_dealloc_rnglists_head(head);
out:
	drop_err(di, err);
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
		drop_err(di, err);
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
			push_range(r, nr, alloc, buf[i].dwr_addr1 + base, buf[i].dwr_addr2 + base,
				   idx);
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
	drop_err(di, err);
}

/* Entry @index of the program's address table, for a split unit. 0 or -1. */
static int split_addr(const struct di_splitctx *x, uint64_t index, uint64_t *out)
{
	if (index >= x->addr_size / x->asz)
		return -1;
	*out = read_uint(x->addr + index * x->asz, x->asz, x->big);
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
		drop_err(di, err);
		return;
	}
	if (form != DW_FORM_rnglistx) { /* DWARF 4 GNU split: .debug_ranges */
		if (dwarf_global_formref(attr, &off, &err) != DW_DLV_OK) {
			drop_err(di, err);
			err = NULL;
			if (dwarf_formudata(attr, &v, &err) != DW_DLV_OK) {
				drop_err(di, err);
				return;
			}
			off = v;
		}
		for (; off < x->ranges_size && x->ranges_size - off >= 2u * x->asz;
		     off += 2u * x->asz) {
			a = read_uint(x->ranges + off, x->asz, x->big);
			b = read_uint(x->ranges + off + x->asz, x->asz, x->big);
			if (!a && !b)
				break;
			if (a == maxa)
				base = b;
			else
				push_range(r, nr, alloc, base + a, base + b, idx);
		}
		return;
	}
	if (dwarf_formudata(attr, &v, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return;
	}
	/* the header: unit_length(4|12) version(2) address_size(1) seg(1) count(4) offsets */
	if (x->rng_size < 12 || read_uint(x->rng, 4, x->big) >= 0xfffffff0u)
		return; /* no list, or 64-bit DWARF (no compiler emits it for split units) */
	if (v >= read_uint(x->rng + 8, 4, x->big) || 12 + (v + 1) * 4 > x->rng_size)
		return;
	c.base = x->rng;
	c.end = x->rng_size;
	c.pos = 12 + read_uint(x->rng + 12 + v * 4, 4, x->big);
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
			push_range(r, nr, alloc, a, b, idx);
			break;
		case DW_RLE_startx_length:
			if (split_addr(x, ehframe_read_uleb(&c), &a) < 0)
				return;
			b = ehframe_read_uleb(&c);
			push_range(r, nr, alloc, a, a + b, idx);
			break;
		case DW_RLE_offset_pair:
			a = ehframe_read_uleb(&c);
			b = ehframe_read_uleb(&c);
			push_range(r, nr, alloc, base + a, base + b, idx);
			break;
		case DW_RLE_base_address:
			base = ehframe_read_le(&c, x->asz);
			break;
		case DW_RLE_start_end:
			a = ehframe_read_le(&c, x->asz);
			b = ehframe_read_le(&c, x->asz);
			push_range(r, nr, alloc, a, b, idx);
			break;
		case DW_RLE_start_length:
			a = ehframe_read_le(&c, x->asz);
			b = ehframe_read_uleb(&c);
			push_range(r, nr, alloc, a, a + b, idx);
			break;
		default:
			return; /* an entry this reader does not know: the rest cannot be read */
		}
	}
}

/* DW_AT_low_pc of @die: libdwarf's, or in a split unit perch's (die_addr()). 0 or -1. */
static int die_low_pc(struct debuginfo *di, Dwarf_Die die, Dwarf_Addr *lo)
{
	Dwarf_Error err = NULL;
	uint64_t v;

	if (di->split) {
		if (die_addr(di, die, DW_AT_low_pc, &v))
			return -1;
		*lo = v;
		return 0;
	}
	if (dwarf_lowpc(die, lo, &err) == DW_DLV_OK)
		return 0;
	drop_err(di, err);
	return -1;
}

/* Append the address ranges of @die (low/high pc or DW_AT_ranges). */
static void die_ranges(struct debuginfo *di, Dwarf_Die die, int version, uint64_t base,
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
			push_range(r, nr, alloc, lo, hi, idx);
			return;
		}
	}
	drop_err(di, err);
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

static Dwarf_Die die_child(struct debuginfo *di, Dwarf_Die die)
{
	Dwarf_Error err = NULL;
	Dwarf_Die child = NULL;

	if (!die_step_ok(di))
		return NULL;

	if (dwarf_child(die, &child, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return NULL;
	}
	return child;
}

/* The next sibling, or NULL. libdwarf follows DW_AT_sibling when a DIE has one, and hostile
 * DWARF can point it backwards: only a sibling further on in the section is taken, so every
 * walk over a list of siblings ends. */
static Dwarf_Die die_sibling(struct debuginfo *di, Dwarf_Die die)
{
	Dwarf_Error err = NULL;
	Dwarf_Die sib = NULL;
	Dwarf_Off here = 0, there = 0;

	if (!die_step_ok(di))
		return NULL;
	if (dwarf_siblingof_b(di->dbg, die, 1, &sib, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return NULL;
	}
	if (dwarf_dieoffset(die, &here, &err) != DW_DLV_OK ||
	    dwarf_dieoffset(sib, &there, &err) != DW_DLV_OK || there <= here) {
		drop_err(di, err);
		dwarf_dealloc_die(sib);
		return NULL;
	}
	return sib;
}

static int die_tag(struct debuginfo *di, Dwarf_Die die)
{
	Dwarf_Error err = NULL;
	Dwarf_Half tag = 0;

	if (dwarf_tag(die, &tag, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return -1;
	}
	return tag;
}

/* Functions nested in functions (GNU C nested functions) become roots of their own. */
struct pending {
	Dwarf_Off *offs;
	size_t nr, alloc;
};

static void add_node_tree(struct debuginfo *di, struct di_cu *cu, Dwarf_Die die, int depth,
			  struct pending *pend);
static void call_site_add(struct debuginfo *di, struct di_cu *cu, Dwarf_Die die);

/* Walk the children of @parent: inlined subroutines become nodes below the current node,
 * lexical blocks are looked through, nested subprograms are queued, call sites recorded. */
static void walk_scope(struct debuginfo *di, struct di_cu *cu, Dwarf_Die parent, int depth,
		       struct pending *pend)
{
	Dwarf_Die child, next;
	Dwarf_Error err = NULL;
	Dwarf_Off off;

	if (depth >= DI_MAX_DEPTH)
		return;
	for (child = die_child(di, parent); child; child = next) {
		switch (die_tag(di, child)) {
		case DW_TAG_inlined_subroutine:
			add_node_tree(di, cu, child, depth + 1, pend);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			walk_scope(di, cu, child, depth + 1, pend);
			break;
		case DW_TAG_call_site:
		case DW_TAG_GNU_call_site:
			call_site_add(di, cu, child);
			break;
		case DW_TAG_subprogram:
			if (pend->nr >= DI_MAX_NODES)
				break;
			if (dwarf_dieoffset(child, &off, &err) != DW_DLV_OK) {
				drop_err(di, err);
				err = NULL;
				break;
			}
			ALLOC_GROW(pend->offs, pend->nr + 1, pend->alloc);
			pend->offs[pend->nr++] = off;
			break;
		default:
			break;
		}
		next = die_sibling(di, child);
		dwarf_dealloc_die(child);
	}
}

/* Add @die (a subprogram or an inlined subroutine) and everything inlined into it. */
static void add_node_tree(struct debuginfo *di, struct di_cu *cu, Dwarf_Die die, int depth,
			  struct pending *pend)
{
	struct di_node *n;
	size_t idx = cu->nr_nodes, first = cu->nr_node_ranges;
	Dwarf_Unsigned v;
	int inlined = die_tag(di, die) == DW_TAG_inlined_subroutine;

	if (cu->nr_nodes >= DI_MAX_NODES)
		return;
	die_ranges(di, die, cu->version, cu->base, &cu->node_ranges, &cu->nr_node_ranges,
		   &cu->alloc_node_ranges, (uint32_t)idx);
	if (cu->nr_node_ranges == first && !inlined)
		return; /* a declaration or an abstract instance: no code */
	ALLOC_GROW(cu->nodes, cu->nr_nodes + 1, cu->alloc_nodes);
	cu->nr_nodes++;
	n = &cu->nodes[idx];
	memset(n, 0, sizeof(*n));
	n->inlined = inlined;
	n->range_first = (uint32_t)first;
	n->nr_ranges = (uint32_t)(cu->nr_node_ranges - first);
	n->name = die_func_name(di, die, &n->decl_off);
	if (inlined) {
		if (!die_udata(di, die, DW_AT_call_file, &v) && v <= UINT32_MAX)
			n->call_file = (uint32_t)v;
		if (!die_udata(di, die, DW_AT_call_line, &v) && v <= UINT32_MAX)
			n->call_line = (uint32_t)v;
	} else {
		n->all_calls = die_flag(di, die, DW_AT_call_all_calls) ||
			       die_flag(di, die, DW_AT_call_all_tail_calls) ||
			       die_flag(di, die, DW_AT_GNU_all_call_sites) ||
			       die_flag(di, die, DW_AT_GNU_all_tail_call_sites);
		n->call_first = (uint32_t)cu->nr_calls;
	}
	walk_scope(di, cu, die, depth, pend);
	cu->nodes[idx].end = (uint32_t)cu->nr_nodes;
	if (!inlined) /* nested subprograms are queued, so this subprogram's calls are contiguous */
		cu->nodes[idx].nr_calls = (uint32_t)cu->nr_calls - cu->nodes[idx].call_first;
}

static struct di_cu *cu_of_offset(struct debuginfo *di, Dwarf_Off off);

static int die_has(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Error err = NULL;
	Dwarf_Bool b = 0;
	int ret = dwarf_hasattr(die, at, &b, &err);

	drop_err(di, err);
	return ret == DW_DLV_OK && b;
}

/* Where a call site's DW_AT_call_origin (DW_AT_abstract_origin in DW_TAG_GNU_call_site) leads,
 * read as gdb reads it (dwarf2/read.c, read_call_site_scope): a declaration by its name (the
 * linkage name, else DW_AT_name), looked up in the symbol tables later; a function with code
 * by the start of each of its ranges, in DWARF order; anything else (an abstract instance
 * without code) is no target. */
static void call_target(struct debuginfo *di, Dwarf_Off off, struct di_cu *cu,
			struct debuginfo_call *c)
{
	struct di_range *r = NULL;
	size_t nr = 0, alloc = 0, i;
	struct di_cu *tcu;
	Dwarf_Off spec;
	Dwarf_Die t = die_at(di, off);

	if (!t)
		return;
	if (die_flag(di, t, DW_AT_declaration) && die_ref(di, t, DW_AT_specification, &spec)) {
		c->name = die_string(di, t, DW_AT_linkage_name);
		if (!c->name)
			c->name = die_string(di, t, DW_AT_MIPS_linkage_name);
		if (!c->name)
			c->name = die_string(di, t, DW_AT_name);
		if (c->name)
			c->kind = DEBUGINFO_TARGET_NAME;
	} else if ((tcu = cu_of_offset(di, off))) {
		die_ranges(di, t, tcu->version, tcu->base, &r, &nr, &alloc, 0);
		for (i = 0; i < nr && cu->nr_call_addrs < DI_MAX_RANGES; i++) {
			ALLOC_GROW(cu->call_addrs, cu->nr_call_addrs + 1, cu->alloc_call_addrs);
			cu->call_addrs[cu->nr_call_addrs++] = r[i].lo;
			c->nr_addrs++;
		}
		if (c->nr_addrs)
			c->kind = DEBUGINFO_TARGET_ADDRS;
		free(r);
	}
	dwarf_dealloc_die(t);
}

/* Record the call site @die (DW_TAG_call_site or DW_TAG_GNU_call_site). */
static void call_site_add(struct debuginfo *di, struct di_cu *cu, Dwarf_Die die)
{
	struct debuginfo_call c = {.kind = DEBUGINFO_TARGET_NONE};
	size_t idx = cu->nr_calls, alloc = cu->alloc_calls;
	Dwarf_Off off;

	if (idx >= DI_MAX_CALLS || (die_addr(di, die, DW_AT_call_return_pc, &c.pc) &&
				    die_addr(di, die, DW_AT_low_pc, &c.pc)))
		return;
	c.tail = die_flag(di, die, DW_AT_call_tail_call) || die_flag(di, die, DW_AT_GNU_tail_call);
	ALLOC_GROW(cu->calls, idx + 1, cu->alloc_calls);
	if (cu->alloc_calls != alloc)
		cu->call_addr_first =
		    xrealloc(cu->call_addr_first, cu->alloc_calls * sizeof(*cu->call_addr_first));
	cu->call_addr_first[idx] = (uint32_t)cu->nr_call_addrs;
	/* gdb takes the first of these: a DWARF expression (DW_AT_call_target) needs the
	 * caller's registers, which a tail-call frame does not have, so it is no target */
	if (!die_has(di, die, DW_AT_call_target) && !die_has(di, die, DW_AT_GNU_call_site_target) &&
	    (!die_ref(di, die, DW_AT_call_origin, &off) ||
	     !die_ref(di, die, DW_AT_abstract_origin, &off)))
		call_target(di, off, cu, &c);
	cu->calls[idx] = c;
	cu->nr_calls++;
}

static int call_pc_cmp(const void *a, const void *b, void *arg)
{
	const struct di_cu *cu = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (cu->calls[x].pc != cu->calls[y].pc)
		return cu->calls[x].pc < cu->calls[y].pc ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* After the walk: address arrays in place, the index by pc, each subprogram's tail calls. */
static void calls_finish(struct di_cu *cu)
{
	size_t i, k;

	for (i = 0; i < cu->nr_calls; i++)
		cu->calls[i].addrs =
		    cu->calls[i].nr_addrs ? cu->call_addrs + cu->call_addr_first[i] : NULL;
	cu->call_by_pc = xcalloc(cu->nr_calls ? cu->nr_calls : 1, sizeof(*cu->call_by_pc));
	for (i = 0; i < cu->nr_calls; i++)
		cu->call_by_pc[i] = (uint32_t)i;
	if (cu->nr_calls > 1)
		qsort_r(cu->call_by_pc, cu->nr_calls, sizeof(*cu->call_by_pc), call_pc_cmp, cu);
	for (i = 0; i < cu->nr_nodes; i++) {
		const struct di_node *n = &cu->nodes[i];

		if (n->inlined || !n->all_calls)
			continue;
		for (k = n->call_first; k < n->call_first + n->nr_calls; k++)
			cu->nr_tails += cu->calls[k].tail;
	}
	cu->tails = xcalloc(cu->nr_tails ? cu->nr_tails : 1, sizeof(*cu->tails));
	cu->nr_tails = 0;
	for (i = 0; i < cu->nr_nodes; i++) {
		struct di_node *n = &cu->nodes[i];

		if (n->inlined || !n->all_calls)
			continue;
		n->tail_first = (uint32_t)cu->nr_tails;
		for (k = n->call_first; k < n->call_first + n->nr_calls; k++)
			if (cu->calls[k].tail)
				cu->tails[cu->nr_tails++] = cu->calls[k];
		n->nr_tails = (uint32_t)cu->nr_tails - n->tail_first;
	}
}

#define DI_NO_SCOPE UINT32_MAX /* a scope we could not record: record nothing below it */

/* Record @die (namespace, class, struct or union) as a scope inside @parent. Index + 1. */
static uint32_t scope_add(struct debuginfo *di, Dwarf_Die die, int tag, uint32_t parent)
{
	struct di_scope *sc;

	if (parent == DI_NO_SCOPE || di->nr_scopes >= DI_MAX_SCOPES)
		return DI_NO_SCOPE;
	ALLOC_GROW(di->scopes, di->nr_scopes + 1, di->alloc_scopes);
	sc = &di->scopes[di->nr_scopes++];
	sc->name = die_string(di, die, DW_AT_name);
	sc->parent = parent;
	sc->tag = tag;
	return (uint32_t)di->nr_scopes;
}

static size_t fnscope_slot(const struct di_fnscope *t, size_t cap, Dwarf_Off off)
{
	uint64_t h = (uint64_t)off * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 32) & (cap - 1);

	while (t[i].scope && t[i].off != off)
		i = (i + 1) & (cap - 1);
	return i;
}

/* Remember that the subprogram DIE at @off is declared in @scope. */
static void fnscope_add(struct debuginfo *di, Dwarf_Off off, uint32_t scope)
{
	size_t i;

	if (!off || !scope || scope == DI_NO_SCOPE || di->nr_fnscopes >= DI_MAX_SCOPES)
		return;
	if ((di->nr_fnscopes + 1) * 2 > di->fnscopes_cap) {
		size_t cap = di->fnscopes_cap ? di->fnscopes_cap * 2 : 256;
		struct di_fnscope *t = xcalloc(cap, sizeof(*t));

		for (i = 0; i < di->fnscopes_cap; i++)
			if (di->fnscopes[i].scope)
				t[fnscope_slot(t, cap, di->fnscopes[i].off)] = di->fnscopes[i];
		free(di->fnscopes);
		di->fnscopes = t;
		di->fnscopes_cap = cap;
	}
	i = fnscope_slot(di->fnscopes, di->fnscopes_cap, off);
	if (di->fnscopes[i].scope)
		return; /* seen already */
	di->fnscopes[i].off = off;
	di->fnscopes[i].scope = scope;
	di->nr_fnscopes++;
}

static struct di_fnscope *fnscope_find(struct debuginfo *di, Dwarf_Off off)
{
	size_t i;

	if (!di->fnscopes_cap)
		return NULL;
	i = fnscope_slot(di->fnscopes, di->fnscopes_cap, off);
	return di->fnscopes[i].scope ? &di->fnscopes[i] : NULL;
}

/* Subprograms at CU level, or inside namespaces and classes (C++). With @pend, they become
 * nodes; without, only the C++ scopes are recorded (a CU other functions refer into). Scope
 * @scope is where @parent's children live: 0 at CU level, DI_NO_SCOPE when not recording. */
static void collect_roots(struct debuginfo *di, struct di_cu *cu, Dwarf_Die parent, int depth,
			  struct pending *pend, uint32_t scope)
{
	Dwarf_Die child, next;
	int tag;

	if (depth >= DI_MAX_DEPTH)
		return;
	for (child = die_child(di, parent); child; child = next) {
		switch ((tag = die_tag(di, child))) {
		case DW_TAG_subprogram:
			/* only these can end a chain without a linkage name (die_func_name) */
			if (scope && scope != DI_NO_SCOPE &&
			    !die_string(di, child, DW_AT_linkage_name) &&
			    !die_string(di, child, DW_AT_MIPS_linkage_name))
				fnscope_add(di, die_offset(di, child), scope);
			if (pend)
				add_node_tree(di, cu, child, 0, pend);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (pend || scope != DI_NO_SCOPE)
				collect_roots(di, cu, child, depth + 1, pend,
					      scope_add(di, child, tag, scope));
			break;
		case DW_TAG_module:
			if (pend)
				collect_roots(di, cu, child, depth + 1, pend, DI_NO_SCOPE);
			break;
		default:
			break;
		}
		next = die_sibling(di, child);
		dwarf_dealloc_die(child);
	}
}

/* Position in by_off of the first CU whose DIE is at or after @off. */
static size_t cu_lower_bound(const struct debuginfo *di, size_t n, Dwarf_Off off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (di->cus[di->by_off[mid]]->die_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int lang_is_cxx(Dwarf_Unsigned lang)
{
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14 ||
	       lang == DW_LANG_ObjC_plus_plus;
}

/* The CU whose DIE is @cu_die, reading its header, base address, language and address
 * ranges. Known CUs are returned as they are. With @sorted 0 (the walk over all CUs) the new
 * CU is left out of by_off, which the caller rebuilds. NULL if @cu_die is not a CU DIE. */
static struct di_cu *cu_get(struct debuginfo *di, Dwarf_Die cu_die, int sorted)
{
	Dwarf_Off off = 0, hdr = 0, len = 0;
	Dwarf_Half version = 0, off_size = 0;
	Dwarf_Unsigned lang = 0;
	Dwarf_Error err = NULL;
	Dwarf_Addr low = 0;
	struct di_cu *cu;
	size_t pos, alloc = 0;
	int tag = die_tag(di, cu_die);

	if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit && tag != DW_TAG_skeleton_unit)
		return NULL;
	if (dwarf_dieoffset(cu_die, &off, &err) != DW_DLV_OK ||
	    dwarf_die_CU_offset_range(cu_die, &hdr, &len, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return NULL;
	}
	pos = cu_lower_bound(di, sorted ? di->nr_cus : 0, off);
	if (sorted && pos < di->nr_cus && di->cus[di->by_off[pos]]->die_off == off)
		return di->cus[di->by_off[pos]];
	if (di->nr_cus >= DI_MAX_CUS || hdr > off || len > UINT64_MAX - hdr ||
	    dwarf_get_version_of_die(cu_die, &version, &off_size) != DW_DLV_OK)
		return NULL;
	cu = xcalloc(1, sizeof(*cu));
	cu->die_off = off;
	cu->hdr_off = hdr;
	cu->end_off = hdr + len;
	cu->version = version;
	cu->idx = (uint32_t)di->nr_cus;
	if (dwarf_lowpc(cu_die, &low, &err) == DW_DLV_OK)
		cu->base = low;
	drop_err(di, err);
	err = NULL;
	if (dwarf_srclang(cu_die, &lang, &err) == DW_DLV_OK)
		cu->cxx = lang_is_cxx(lang);
	drop_err(di, err);
	cu->skeleton = !di->dwo && (tag == DW_TAG_skeleton_unit ||
				    die_string(di, cu_die, DW_AT_GNU_dwo_name) != NULL);
	die_ranges(di, cu_die, version, cu->base, &cu->ranges, &cu->nr_ranges, &alloc, cu->idx);
	if (cu->nr_ranges > 1)
		qsort(cu->ranges, cu->nr_ranges, sizeof(*cu->ranges), range_cmp);

	if (di->nr_cus + 1 > di->alloc_cus) {
		ALLOC_GROW(di->cus, di->nr_cus + 1, di->alloc_cus);
		di->by_off = xrealloc(di->by_off, di->alloc_cus * sizeof(*di->by_off));
	}
	di->cus[di->nr_cus] = cu;
	if (sorted) {
		memmove(di->by_off + pos + 1, di->by_off + pos,
			(di->nr_cus - pos) * sizeof(*di->by_off));
		di->by_off[pos] = cu->idx;
	}
	di->nr_cus++;
	return cu;
}

static int by_off_cmp(const void *a, const void *b, void *arg)
{
	const struct debuginfo *di = arg;
	Dwarf_Off x = di->cus[*(const uint32_t *)a]->die_off;
	Dwarf_Off y = di->cus[*(const uint32_t *)b]->die_off;

	return x < y ? -1 : x > y;
}

/* Step libdwarf's walk over the CU headers to the next CU: 0, or -1 at the end. */
static int next_cu_header(struct debuginfo *di)
{
	Dwarf_Unsigned hdr_len = 0, typeoff = 0, next = 0;
	Dwarf_Half version = 0, addr_size = 0, len_size = 0, ext_size = 0, unit_type = 0;
	Dwarf_Off abbrev = 0;
	Dwarf_Sig8 sig;
	Dwarf_Error err = NULL;

	if (dwarf_next_cu_header_d(di->dbg, 1, &hdr_len, &version, &abbrev, &addr_size, &len_size,
				   &ext_size, &sig, &typeoff, &next, &unit_type,
				   &err) != DW_DLV_OK) {
		drop_err(di, err);
		return -1;
	}
	di->info_state = 1; /* the first header loads .debug_info */
	return 0;
}

/* The CU DIE of the CU libdwarf's walk is at, or NULL. */
static Dwarf_Die walk_cu_die(struct debuginfo *di)
{
	Dwarf_Error err = NULL;
	Dwarf_Die cu_die = NULL;

	if (dwarf_siblingof_b(di->dbg, NULL, 1, &cu_die, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return NULL;
	}
	return cu_die;
}

/* Make libdwarf read .debug_info: dwarf_get_cu_die_offset_given_cu_header_offset_b() does
 * not, and dereferences the missing section. Reading the first CU header does; that CU is
 * recorded, so the walk over all CUs, which then goes on from the second one, misses none. */
static int info_load(struct debuginfo *di)
{
	Dwarf_Die cu_die;

	if (di->info_state || di->scanned)
		return di->info_state;
	di->info_state = -1;
	if (info_ensure(di, 0) < 0 || next_cu_header(di))
		return -1;
	cu_die = walk_cu_die(di);
	if (cu_die) {
		cu_get(di, cu_die, 1);
		dwarf_dealloc_die(cu_die);
	}
	return 1;
}

/* The walk over every CU header, once: all CUs and all their ranges. Up to 20 ms on glibc's
 * 2000 CUs (libdwarf builds a context per CU), which is why it waits for a lookup that
 * .debug_aranges does not answer. */
static void cu_scan_all(struct debuginfo *di)
{
	size_t known = di->nr_cus, alloc_ranges = 0, i, j;

	if (di->scanned)
		return;
	di->scanned = 1;
	/* the walk reads every unit header: all of .debug_info */
	if (sec_all(di, ".debug_info") < 0)
		return;
	while (!next_cu_header(di)) {
		Dwarf_Error err = NULL;
		Dwarf_Die cu_die;
		Dwarf_Off off = 0;
		size_t pos;

		if (!(cu_die = walk_cu_die(di)))
			continue;
		/* CUs read before the walk are in by_off[0 .. known) */
		if (dwarf_dieoffset(cu_die, &off, &err) != DW_DLV_OK) {
			drop_err(di, err);
		} else {
			pos = cu_lower_bound(di, known, off);
			if (pos >= known || di->cus[di->by_off[pos]]->die_off != off)
				cu_get(di, cu_die, 0);
		}
		dwarf_dealloc_die(cu_die);
	}
	for (i = 0; i < di->nr_cus; i++)
		di->by_off[i] = (uint32_t)i;
	if (di->nr_cus > 1)
		qsort_r(di->by_off, di->nr_cus, sizeof(*di->by_off), by_off_cmp, di);
	for (i = 0; i < di->nr_cus; i++) {
		const struct di_cu *cu = di->cus[i];

		for (j = 0; j < cu->nr_ranges; j++)
			push_range(&di->cu_ranges, &di->nr_cu_ranges, &alloc_ranges,
				   cu->ranges[j].lo, cu->ranges[j].hi, cu->idx);
	}
	if (di->nr_cu_ranges > 1)
		qsort(di->cu_ranges, di->nr_cu_ranges, sizeof(*di->cu_ranges), range_cmp);
}

/* The CU holding .debug_info offset @off, or NULL: a CU read already, else the one libdwarf
 * finds for the DIE at @off. */
static struct di_cu *cu_of_offset(struct debuginfo *di, Dwarf_Off off)
{
	size_t pos = cu_lower_bound(di, di->nr_cus, off);
	struct di_cu *cu = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Off cu_off = 0;
	Dwarf_Die die;

	if (pos < di->nr_cus && di->cus[di->by_off[pos]]->die_off == off)
		return di->cus[di->by_off[pos]];
	if (di->scanned) /* after the walk, every CU is known */
		return pos ? di->cus[di->by_off[pos - 1]] : NULL;
	if (pos && off < di->cus[di->by_off[pos - 1]]->end_off)
		return di->cus[di->by_off[pos - 1]];
	die = die_at(di, off);
	if (!die)
		return NULL;
	if (dwarf_CU_dieoffset_given_die(die, &cu_off, &err) != DW_DLV_OK) {
		drop_err(di, err);
		dwarf_dealloc_die(die);
		return NULL;
	}
	dwarf_dealloc_die(die);
	die = die_at(di, cu_off);
	if (!die)
		return NULL;
	cu = cu_get(di, die, 1);
	dwarf_dealloc_die(die);
	return cu && off >= cu->die_off && off < cu->end_off ? cu : NULL;
}

/* Record the C++ scopes of @cu without loading its functions. */
static void cu_scan_scopes(struct debuginfo *di, struct di_cu *cu)
{
	Dwarf_Die cu_die;

	if (cu->scoped || !cu->cxx)
		return;
	cu->scoped = 1;
	cu_die = die_at(di, cu->die_off);
	if (!cu_die)
		return;
	collect_roots(di, cu, cu_die, 0, NULL, 0);
	dwarf_dealloc_die(cu_die);
}

/* "ns::cls::@name" for a C++ function whose declaration is the DIE at @decl_off, as addr2line
 * and gdb print it when there is no linkage name (gcc omits it for static and inline functions
 * in a namespace). NULL when the declaration is not in a C++ scope. Owned by @di. */
static const char *qualified_name(struct debuginfo *di, Dwarf_Off decl_off, const char *name)
{
	const char *parts[DI_MAX_DEPTH];
	struct di_fnscope *e;
	struct di_cu *dcu = cu_of_offset(di, decl_off);
	size_t len, nr = 0, i;
	uint32_t sc;
	char *q, *p;

	if (!dcu || !dcu->cxx)
		return NULL;
	cu_scan_scopes(di, dcu);
	e = fnscope_find(di, decl_off);
	if (!e)
		return NULL;
	if (e->qual)
		return e->qual;
	len = strlen(name) + 1;
	for (sc = e->scope; sc && sc <= di->nr_scopes && nr < ARRAY_SIZE(parts);) {
		const struct di_scope *s = &di->scopes[sc - 1];
		const char *part = s->name;

		if (!part)
			part = s->tag == DW_TAG_namespace    ? "(anonymous namespace)"
			       : s->tag == DW_TAG_union_type ? "(anonymous union)"
			       : s->tag == DW_TAG_class_type ? "(anonymous class)"
							     : "(anonymous struct)";
		parts[nr++] = part;
		len += strlen(part) + 2;
		if (s->parent >= sc)
			break; /* parents come before their children; anything else is a loop */
		sc = s->parent;
	}
	q = p = xmalloc(len);
	for (i = nr; i-- > 0;) {
		size_t l = strlen(parts[i]);

		memcpy(p, parts[i], l);
		memcpy(p + l, "::", 2);
		p += l + 2;
	}
	memcpy(p, name, strlen(name) + 1);
	e->qual = q;
	return q;
}

static void load_functions(struct debuginfo *di, struct di_cu *cu, Dwarf_Die cu_die)
{
	struct pending pend = {0};
	size_t i, j, k;

	/* scopes are recorded once per CU: cu_scan_scopes() may have done it already */
	collect_roots(di, cu, cu_die, 0, &pend, cu->cxx && !cu->scoped ? 0 : DI_NO_SCOPE);
	if (cu->cxx)
		cu->scoped = 1;
	for (i = 0; i < pend.nr; i++) { /* may grow while we go */
		Dwarf_Die d = die_at(di, pend.offs[i]);

		if (d) {
			add_node_tree(di, cu, d, 0, &pend);
			dwarf_dealloc_die(d);
		}
	}
	free(pend.offs);

	/* the declarations of inlined functions may come after their inlined instances */
	for (i = 0; i < cu->nr_nodes; i++) {
		struct di_node *n = &cu->nodes[i];
		const char *q;

		if (n->name && n->decl_off && (q = qualified_name(di, n->decl_off, n->name)))
			n->name = q;
	}

	for (i = 0; i < cu->nr_nodes; i++)
		if (!cu->nodes[i].inlined)
			cu->nr_roots += cu->nodes[i].nr_ranges;
	cu->roots = xcalloc(cu->nr_roots ? cu->nr_roots : 1, sizeof(*cu->roots));
	for (i = 0, k = 0; i < cu->nr_nodes; i++) {
		const struct di_node *n = &cu->nodes[i];

		if (n->inlined)
			continue;
		for (j = 0; j < n->nr_ranges; j++)
			cu->roots[k++] = cu->node_ranges[n->range_first + j];
	}
	if (cu->nr_roots > 1)
		qsort(cu->roots, cu->nr_roots, sizeof(*cu->roots), range_cmp);
	calls_finish(cu);
}

static int seq_cmp(const void *a, const void *b)
{
	const struct di_seq *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int row_cmp(const void *a, const void *b)
{
	const struct di_row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/* @dir + "/" + @name; just @name when @name is absolute or already starts with "@dir/"
 * (NULL when too long). */
static char *path_join(const char *dir, const char *name)
{
	size_t dl = dir ? strlen(dir) : 0, nl = strlen(name);

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (!dl || name[0] == '/' || (!strncmp(name, dir, dl) && name[dl] == '/'))
		return nl < DI_MAX_PATH ? xstrdup(name) : NULL;
	if (dl + nl + 1 >= DI_MAX_PATH)
		return NULL;
	if (dl == 1 && dir[0] == '/')
		return xasprintf("/%s", name);
	return xasprintf("%.*s/%s", (int)dl, dir, name);
}

/* Full path of a line-table file entry. DWARF 5 (section 6.2.4): directory entry 0 is the
 * compilation directory itself and file entries index the directory table directly; in
 * DWARF 2-4, directory 0 means DW_AT_comp_dir and 1.. are include_directories. A relative
 * directory is relative to the compilation directory. (dwarf_srcfiles() joins DWARF 5's
 * directory 0 to the comp dir again: "./nptl/./nptl/futex-internal.c" in glibc.) */
static char *file_path(struct debuginfo *di, Dwarf_Line_Context ctx, int version,
		       const char *comp_dir, const char *name, Dwarf_Unsigned dir_idx)
{
	Dwarf_Error err = NULL;
	const char *dir = NULL;
	char *rel, *full;

	if (!name || !*name)
		return NULL;
	if (name[0] == '/')
		return path_join(NULL, name);
	if (version >= 5 || dir_idx) {
		if (dir_idx > INT32_MAX ||
		    dwarf_srclines_include_dir_data(ctx, (Dwarf_Signed)dir_idx, &dir, &err) !=
			DW_DLV_OK) {
			drop_err(di, err);
			dir = NULL;
		}
	}
	if (dir_idx == 0) /* the compilation directory */
		return path_join(dir ? dir : comp_dir, name);
	rel = path_join(dir, name);
	if (!rel || rel[0] == '/' || !comp_dir)
		return rel;
	full = path_join(comp_dir, rel);
	free(rel);
	return full;
}

/* File names by line-table file number (0-based in DWARF 5, 1-based before). */
static void load_files(struct debuginfo *di, struct di_cu *cu, Dwarf_Line_Context ctx,
		       int line_version)
{
	Dwarf_Signed base = 0, cnt = 0, end = 0, i;
	Dwarf_Error err = NULL;
	const char *comp_dir = NULL, *dir0 = NULL;

	if (dwarf_srclines_files_indexes(ctx, &base, &cnt, &end, &err) != DW_DLV_OK || base < 0 ||
	    base > 1 || end <= base || end > (Dwarf_Signed)DI_MAX_NODES) {
		drop_err(di, err);
		return;
	}
	if (dwarf_srclines_comp_dir(ctx, &comp_dir, &err) != DW_DLV_OK || !comp_dir || !*comp_dir) {
		drop_err(di, err);
		err = NULL;
		comp_dir = NULL;
		/* DWARF 5 without DW_AT_comp_dir: directory entry 0 is the same thing */
		if (line_version >= 5 &&
		    dwarf_srclines_include_dir_data(ctx, 0, &dir0, &err) == DW_DLV_OK && dir0 &&
		    *dir0)
			comp_dir = dir0;
		drop_err(di, err);
	}
	cu->nr_files = (size_t)end;
	cu->files = xcalloc(cu->nr_files, sizeof(*cu->files));
	for (i = base; i < end; i++) {
		const char *name = NULL;
		Dwarf_Unsigned dir = 0, mtime = 0, size = 0;
		Dwarf_Form_Data16 *md5 = NULL;

		err = NULL;
		if (dwarf_srclines_files_data_b(ctx, i, &name, &dir, &mtime, &size, &md5, &err) !=
		    DW_DLV_OK) {
			drop_err(di, err);
			continue;
		}
		cu->files[i] = file_path(di, ctx, line_version, comp_dir, name, dir);
	}
}

/* Which rows of a DWARF 5 line program come before the first DW_LNS_set_file of their
 * sequence. DWARF 5 (section 6.2.2, table 6.4) starts the file register at 1, as 2-4 did, but
 * libdwarf 20210528 starts it at 0 for version 5 tables (fixed in later releases): with gcc
 * 11+, whose file 1 is the first file used and not always the CU's own (glibc's sem_wait.c CU
 * begins with sem_waitcommon.c), those rows got the wrong file. Only opcodes are decoded, to
 * count the rows in the order libdwarf lists them: one per special opcode, DW_LNS_copy and
 * DW_LNE_end_sequence. Sets implicit[i] for such rows i < @nr; returns the number of rows
 * the program has, or -1 when it does not parse. */
static long line_implicit_file_rows(const uint8_t *p, size_t size, uint64_t off, int big,
				    uint8_t *implicit, size_t nr)
{
	struct ehframe_cursor c = {.base = p, .end = size};
	const uint8_t *lengths;
	uint64_t len, hdr_len;
	unsigned int off_size = 4, opcode_base;
	size_t end, prog;
	long rows = 0;
	int set = 0;

	if (off >= size || size - off < 4)
		return -1;
	c.pos = (size_t)off;
	len = read_uint(p + c.pos, 4, big);
	c.pos += 4;
	if (len == 0xffffffffu) {
		if (size - c.pos < 8)
			return -1;
		len = read_uint(p + c.pos, 8, big);
		c.pos += 8;
		off_size = 8;
	}
	/* version(2) address_size(1) seg_sel_size(1) header_length(off_size) then
	 * min_inst(1) max_ops(1) default_is_stmt(1) line_base(1) line_range(1) opcode_base(1) */
	if (len > size - c.pos || len < 4 + off_size + 6 || read_uint(p + c.pos, 2, big) != 5)
		return -1;
	end = c.pos + (size_t)len;
	hdr_len = read_uint(p + c.pos + 4, off_size, big);
	c.pos += 4 + off_size;
	if (hdr_len > end - c.pos || hdr_len < 6)
		return -1;
	prog = c.pos + (size_t)hdr_len;
	opcode_base = p[c.pos + 5];
	lengths = p + c.pos + 6;
	if (opcode_base == 0 || (size_t)(opcode_base - 1) > hdr_len - 6)
		return -1;
	c.pos = prog;
	c.end = end;
	while (c.pos < c.end && !c.bad) {
		unsigned int op = p[c.pos++];
		int row = 0;

		if (op >= opcode_base) {
			row = 1;      /* special opcode */
		} else if (op == 0) { /* extended: length, then the opcode and its operands */
			uint64_t l = ehframe_read_uleb(&c);

			if (c.bad || !l || l > c.end - c.pos)
				return -1;
			if (p[c.pos] == DW_LNE_end_sequence)
				row = 2;
			c.pos += (size_t)l;
		} else if (op == DW_LNS_copy) {
			row = 1;
		} else if (op == DW_LNS_advance_line) {
			ehframe_read_sleb(&c);
		} else if (op == DW_LNS_set_file) {
			ehframe_read_uleb(&c);
			set = 1;
		} else if (op == DW_LNS_fixed_advance_pc) {
			if (c.end - c.pos < 2) /* a uhalf, not a LEB */
				return -1;
			c.pos += 2;
		} else if (op == DW_LNS_advance_pc || op == DW_LNS_set_column ||
			   op == DW_LNS_set_isa) {
			ehframe_read_uleb(&c);
		} else if (op != DW_LNS_negate_stmt && op != DW_LNS_set_basic_block &&
			   op != DW_LNS_const_add_pc && op != DW_LNS_set_prologue_end &&
			   op != DW_LNS_set_epilogue_begin) {
			for (unsigned int k = 0; k < lengths[op - 1] && !c.bad; k++)
				ehframe_read_uleb(&c); /* an opcode this reader does not know */
		}
		if (!row)
			continue;
		if (!set && (size_t)rows < nr)
			implicit[rows] = 1;
		rows++;
		if (row == 2)
			set = 0; /* the registers start again with the next sequence */
	}
	return c.bad ? -1 : rows;
}

/* line_implicit_file_rows() for @cu_die's line program of @nr rows: a malloc'ed flag per row,
 * or NULL when the program cannot be read or its rows are not the @nr libdwarf listed. */
/* The line section as far as decompressed, which line_ensure(@off) made cover the table at
 * @off: 0 with *@data and *@size set, or -errno. */
static int line_prefix(struct debuginfo *di, uint64_t off, const uint8_t **data, size_t *size)
{
	long i = sec_find(di, di->dwo ? ".debug_line.dwo" : ".debug_line");
	int ret;

	if (i < 0)
		return -ENOENT;
	ret = line_ensure(di, off);
	if (!ret)
		ret = sec_load(di, (size_t)i);
	if (ret < 0)
		return ret;
	*data = di->secs[i].data;
	*size = di->secs[i].stream ? elfsection_stream_ready(di->secs[i].stream)
				   : (size_t)di->secs[i].size;
	return 0;
}

static uint8_t *implicit_file_rows(struct debuginfo *di, Dwarf_Die cu_die, size_t nr)
{
	const uint8_t *data;
	size_t size;
	uint8_t *implicit;
	Dwarf_Off off;

	if (die_sec_offset(di, cu_die, DW_AT_stmt_list, &off) || line_prefix(di, off, &data, &size))
		return NULL;
	implicit = xcalloc(nr, 1);
	if (line_implicit_file_rows(data, size, off, di->big, implicit, nr) != (long)nr) {
		free(implicit);
		return NULL;
	}
	return implicit;
}

static void load_lines(struct debuginfo *di, struct di_cu *cu, Dwarf_Die cu_die)
{
	Dwarf_Line_Context ctx = NULL;
	Dwarf_Unsigned version = 0;
	Dwarf_Small tables = 0;
	Dwarf_Line *lines = NULL;
	Dwarf_Signed nr = 0, i;
	Dwarf_Error err = NULL;
	uint8_t *implicit = NULL;
	size_t alloc_rows = 0, alloc_seqs = 0, seq_start = 0;
	int in_seq = 0;
	Dwarf_Off stmt = 0;

	/* the line table at DW_AT_stmt_list decompressed before libdwarf reads it */
	if (!die_sec_offset(di, cu_die, DW_AT_stmt_list, &stmt) && line_ensure(di, stmt) < 0)
		return;
	if (dwarf_srclines_b(cu_die, &version, &tables, &ctx, &err) != DW_DLV_OK) {
		drop_err(di, err);
		return;
	}
	load_files(di, cu, ctx, (int)version);
	if (tables != 1 || dwarf_srclines_from_linecontext(ctx, &lines, &nr, &err) != DW_DLV_OK)
		goto out;
	if (version == 5 && nr > 0)
		implicit = implicit_file_rows(di, cu_die, (size_t)nr);
	for (i = 0; i < nr; i++) {
		Dwarf_Addr addr = 0;
		Dwarf_Unsigned line = 0, file = 0;
		Dwarf_Bool end = 0;

		if (dwarf_lineaddr(lines[i], &addr, &err) != DW_DLV_OK ||
		    dwarf_lineendsequence(lines[i], &end, &err) != DW_DLV_OK ||
		    dwarf_lineno(lines[i], &line, &err) != DW_DLV_OK ||
		    dwarf_line_srcfileno(lines[i], &file, &err) != DW_DLV_OK)
			break;
		if (implicit && implicit[i])
			file = 1; /* the initial value (line_implicit_file_rows) */
		if (!in_seq) {
			seq_start = cu->nr_rows;
			in_seq = 1;
		}
		if (end) {
			size_t n = cu->nr_rows - seq_start;

			in_seq = 0;
			if (!n)
				continue;
			/* rows of a sequence should already be in order; make sure */
			qsort(cu->rows + seq_start, n, sizeof(*cu->rows), row_cmp);
			if (cu->rows[seq_start].addr == 0 || addr <= cu->rows[seq_start].addr) {
				cu->nr_rows = seq_start; /* discarded code or empty */
				continue;
			}
			ALLOC_GROW(cu->seqs, cu->nr_seqs + 1, alloc_seqs);
			cu->seqs[cu->nr_seqs].lo = cu->rows[seq_start].addr;
			cu->seqs[cu->nr_seqs].hi = addr;
			cu->seqs[cu->nr_seqs].first = seq_start;
			cu->seqs[cu->nr_seqs].nr = n;
			cu->nr_seqs++;
			continue;
		}
		if (cu->nr_rows >= DI_MAX_RANGES * 4)
			break;
		ALLOC_GROW(cu->rows, cu->nr_rows + 1, alloc_rows);
		cu->rows[cu->nr_rows].addr = addr;
		cu->rows[cu->nr_rows].line = line > UINT32_MAX ? 0 : (uint32_t)line;
		cu->rows[cu->nr_rows].file = file > UINT32_MAX ? UINT32_MAX : (uint32_t)file;
		cu->nr_rows++;
	}
	if (in_seq) /* a sequence without its end row covers nothing */
		cu->nr_rows = seq_start;
	if (cu->nr_seqs > 1)
		qsort(cu->seqs, cu->nr_seqs, sizeof(*cu->seqs), seq_cmp);
out:
	free(implicit);
	drop_err(di, err);
	dwarf_srclines_dealloc_b(ctx);
}

static struct debuginfo *open_group(const char *path, unsigned int group);

/* The dwo_id of a skeleton or split unit: the unit header's (DWARF 5) or DW_AT_GNU_dwo_id
 * (the GNU extension to DWARF 4), as the 8 bytes read as a little-endian number. 0, -1. */
static int unit_dwo_id(struct debuginfo *di, Dwarf_Die cu_die, uint64_t *id)
{
	Dwarf_Half version = 0, off_size = 0, addr_size = 0, ext_size = 0;
	Dwarf_Bool is_info = 0, is_dwo = 0;
	Dwarf_Sig8 *sig = NULL;
	Dwarf_Off len_off = 0;
	Dwarf_Unsigned total = 0, v;
	Dwarf_Error err = NULL;
	int i;

	if (dwarf_cu_header_basics(cu_die, &version, &is_info, &is_dwo, &off_size, &addr_size,
				   &ext_size, &sig, &len_off, &total, &err) == DW_DLV_OK &&
	    version >= 5 && sig) {
		for (*id = 0, i = 7; i >= 0; i--)
			*id = *id << 8 | (uint8_t)sig->signature[i];
		return 0;
	}
	drop_err(di, err);
	if (die_udata(di, cu_die, DW_AT_GNU_dwo_id, &v))
		return -1;
	*id = v;
	return 0;
}

/* @path opened as split DWARF, once; a .dwo's units are indexed by dwo_id. NULL when it
 * cannot be read. It is not tied to @di with dwarf_set_tied_dbg(): libdwarf 20210528 then
 * takes the skeleton's DW_AT_str_offsets_base for the split unit's strings of every unit but
 * the first; perch reads the split unit's indexed addresses and range lists itself
 * (split_context()), nothing else needs @di. */
static struct di_split *split_open(struct debuginfo *di, const char *path)
{
	struct di_split *sp;
	size_t alloc = 0;

	for (size_t i = 0; i < di->nr_splits; i++)
		if (!strcmp(di->splits[i].path, path))
			return di->splits[i].di ? &di->splits[i] : NULL;
	if (di->nr_splits >= 256)
		return NULL;
	di->splits = xrealloc(di->splits, (di->nr_splits + 1) * sizeof(*di->splits));
	sp = &di->splits[di->nr_splits++];
	memset(sp, 0, sizeof(*sp));
	sp->path = xstrdup(path);
	sp->di = open_group(path, DW_GROUPNUMBER_DWO);
	if (!sp->di)
		return NULL;
	while (sp->nr < DI_MAX_CUS && !next_cu_header(sp->di)) {
		Dwarf_Die d = walk_cu_die(sp->di);
		uint64_t id;

		if (!d)
			continue;
		if (!unit_dwo_id(sp->di, d, &id)) {
			ALLOC_GROW(sp->ids, sp->nr + 1, alloc);
			sp->offs = xrealloc(sp->offs, alloc * sizeof(*sp->offs));
			sp->ids[sp->nr] = id;
			sp->offs[sp->nr++] = die_offset(sp->di, d);
		}
		dwarf_dealloc_die(d);
	}
	return sp;
}

/* The split unit @id in @sp: by the index of a .dwp, else by the units of a .dwo. */
static Dwarf_Die split_find(struct di_split *sp, uint64_t id)
{
	Dwarf_Error err = NULL;
	Dwarf_Die die = NULL;
	Dwarf_Sig8 sig;

	for (int i = 0; i < 8; i++)
		sig.signature[i] = (char)(id >> (8 * i));
	if (dwarf_die_from_hash_signature(sp->di->dbg, &sig, "cu", &die, &err) == DW_DLV_OK)
		return die;
	drop_err(sp->di, err);
	for (size_t i = 0; i < sp->nr; i++)
		if (sp->ids[i] == id)
			return die_at(sp->di, sp->offs[i]);
	return NULL;
}

/* The split unit of skeleton @skel, in the .dwo it names (absolute; under DW_AT_comp_dir;
 * next to this file) or in the .dwp next to this file (<file>.dwp), as gdb looks for them:
 * its DIE, with the debuginfo that reads it in *@sdi. NULL when none has it. */
static Dwarf_Die split_cu_die(struct debuginfo *di, Dwarf_Die skel, struct debuginfo **sdi)
{
	const char *name = die_string(di, skel, DW_AT_dwo_name), *dir, *base, *slash;
	char *paths[5] = {NULL};
	struct di_split *sp;
	Dwarf_Die die = NULL;
	size_t n = 0, i;
	uint64_t id;

	if (!name)
		name = die_string(di, skel, DW_AT_GNU_dwo_name);
	if (unit_dwo_id(di, skel, &id))
		return NULL;
	dir = die_string(di, skel, DW_AT_comp_dir);
	slash = strrchr(di->path, '/');
	if (name && name[0] == '/') {
		paths[n++] = xstrdup(name);
	} else if (name) {
		if (dir)
			paths[n++] = path_join(dir, name);
		paths[n++] = slash ? xasprintf("%.*s/%s", (int)(slash - di->path), di->path, name)
				   : xstrdup(name);
	}
	if (name && (base = strrchr(name, '/')))
		paths[n++] = slash ? xasprintf("%.*s%s", (int)(slash - di->path), di->path, base)
				   : xstrdup(base + 1);
	paths[n++] = xasprintf("%s.dwp", di->path);
	for (i = 0; i < n && !die; i++)
		if (paths[i] && (sp = split_open(di, paths[i])) && (die = split_find(sp, id)))
			*sdi = sp->di;
	for (i = 0; i < n; i++)
		free(paths[i]);
	return die;
}

/* What split_ranges() needs for the split unit @split (read by @sdi) of skeleton @skel. */
static void split_context(struct debuginfo *di, const struct di_cu *cu, Dwarf_Die skel,
			  struct debuginfo *sdi, Dwarf_Die split, struct di_splitctx *x)
{
	Dwarf_Debug_Fission_Per_CU fission;
	Dwarf_Error err = NULL;
	const uint8_t *data;
	size_t size;
	Dwarf_Off off;

	memset(x, 0, sizeof(*x));
	x->asz = di->is_64 ? 8 : 4;
	x->big = di->big;
	x->base = cu->base;
	if ((!die_sec_offset(di, skel, DW_AT_addr_base, &off) ||
	     !die_sec_offset(di, skel, DW_AT_GNU_addr_base, &off)) &&
	    !sec_get(di, ".debug_addr", &data, &size) && off <= size) {
		x->addr = data + off;
		x->addr_size = size - (size_t)off;
	}
	if (!sec_get(di, ".debug_ranges", &data, &size)) {
		off = 0;
		if (die_sec_offset(di, skel, DW_AT_GNU_ranges_base, &off) || off > size)
			off = 0;
		x->ranges = data + off;
		x->ranges_size = size - (size_t)off;
	}
	if (!sec_get(sdi, ".debug_rnglists.dwo", &data, &size)) {
		x->rng = data;
		x->rng_size = size;
		memset(&fission, 0, sizeof(fission));
		/* in a .dwp, this unit's part of the section (DWARF 5 package index) */
		if (dwarf_get_debugfission_for_die(split, &fission, &err) == DW_DLV_OK &&
		    fission.pcu_size[DW_SECT_RNGLISTS] &&
		    fission.pcu_offset[DW_SECT_RNGLISTS] <= size &&
		    fission.pcu_size[DW_SECT_RNGLISTS] <=
			size - fission.pcu_offset[DW_SECT_RNGLISTS]) {
			x->rng = data + fission.pcu_offset[DW_SECT_RNGLISTS];
			x->rng_size = (size_t)fission.pcu_size[DW_SECT_RNGLISTS];
		}
		drop_err(sdi, err);
	}
}

static int cu_load(struct debuginfo *di, struct di_cu *cu)
{
	struct di_splitctx ctx;
	struct debuginfo *sdi = NULL;
	Dwarf_Die cu_die, split = NULL;
	Dwarf_Unsigned lang = 0;
	Dwarf_Error err = NULL;

	if (cu->state)
		return cu->state;
	cu->state = -1;
	cu_die = die_at(di, cu->die_off);
	if (!cu_die)
		return -1;
	load_lines(di, cu, cu_die); /* a skeleton keeps the line table */
	if (cu->skeleton && (split = split_cu_die(di, cu_die, &sdi))) {
		/* the functions are in the split unit; its addresses are in our .debug_addr
		 * (split_context) */
		if (dwarf_srclang(split, &lang, &err) == DW_DLV_OK)
			cu->cxx = lang_is_cxx(lang);
		drop_err(sdi, err);
		split_context(di, cu, cu_die, sdi, split, &ctx);
		sdi->split = &ctx;
		load_functions(sdi, cu, split);
		sdi->split = NULL;
		dwarf_dealloc_die(split);
	} else {
		load_functions(di, cu, cu_die);
	}
	dwarf_dealloc_die(cu_die);
	cu->state = 1;
	return 1;
}

/* The CU .debug_aranges names in acus[@i], read on first use. Its header offset must be the
 * unit libdwarf finds there, so a stray offset in .debug_aranges names no CU. */
static struct di_cu *acu_cu(struct debuginfo *di, uint32_t i)
{
	struct di_acu *a = &di->acus[i];
	Dwarf_Off die_off = 0, cu_off = 0, hdr = 0, len = 0;
	Dwarf_Error err = NULL;
	struct di_cu *cu = NULL;
	Dwarf_Die die;

	if (a->state)
		return a->state > 0 ? di->cus[a->cu] : NULL;
	a->state = -1;
	if (a->hdr_off >= di->info_size || info_load(di) <= 0 || info_ensure(di, a->hdr_off) < 0 ||
	    dwarf_get_cu_die_offset_given_cu_header_offset_b(di->dbg, a->hdr_off, 1, &die_off,
							     &err) != DW_DLV_OK) {
		drop_err(di, err);
		return NULL;
	}
	die = die_at(di, die_off);
	if (!die)
		return NULL;
	if (dwarf_CU_dieoffset_given_die(die, &cu_off, &err) == DW_DLV_OK && cu_off == die_off &&
	    dwarf_die_CU_offset_range(die, &hdr, &len, &err) == DW_DLV_OK && hdr == a->hdr_off)
		cu = cu_get(di, die, 1);
	drop_err(di, err);
	dwarf_dealloc_die(die);
	if (!cu)
		return NULL;
	a->state = 1;
	a->cu = cu->idx;
	return cu;
}

/* The CU whose own ranges (DW_AT_low_pc/high_pc or DW_AT_ranges) contain @addr: the one
 * .debug_aranges names if its ranges agree, else found by the walk over all CUs. */
static struct di_cu *cu_for_addr(struct debuginfo *di, uint64_t addr)
{
	struct di_cu *cu = NULL;
	long i = range_find(di->aranges, di->nr_aranges, addr);

	if (i >= 0) {
		cu = acu_cu(di, di->aranges[i].idx);
		if (cu && range_find(cu->ranges, cu->nr_ranges, addr) >= 0)
			return cu;
	}
	cu_scan_all(di);
	i = range_find(di->cu_ranges, di->nr_cu_ranges, addr);
	return i >= 0 ? di->cus[di->cu_ranges[i].idx] : NULL;
}

/* .debug_aranges (DWARF 5 section 6.1.2), one set per CU:
 * "unit_length(4|12) version(2)=2 debug_info_offset(4|8) address_size(1) segment_size(1)
 *  padding to 2*address_size, then (address, length) pairs up to (0, 0)"
 * Sets that do not parse are skipped; what is left is a hint that cu_for_addr() checks. */
static void parse_aranges(struct debuginfo *di, const uint8_t *p, size_t size, int big)
{
	size_t off = 0, alloc_ranges = 0, alloc_acus = 0;

	while (size - off >= 4 && di->nr_aranges < DI_MAX_RANGES && di->nr_acus < DI_MAX_CUS) {
		uint64_t len = read_uint(p + off, 4, big), cu_off, lo, l;
		size_t hdr = 4, set = off, end, q;
		unsigned int off_size = 4, asz, tuple;

		if (len == 0xffffffffu) {
			if (size - off < 12)
				return;
			len = read_uint(p + off + 4, 8, big);
			hdr = 12;
			off_size = 8;
		} else if (len >= 0xfffffff0u) {
			return;
		}
		if (len > size - off - hdr)
			return;
		q = off + hdr;
		end = off = q + (size_t)len; /* the next set */
		if (len < 2 + off_size + 2 || read_uint(p + q, 2, big) != 2)
			continue;
		cu_off = read_uint(p + q + 2, off_size, big);
		asz = p[q + 2 + off_size];
		if ((asz != 4 && asz != 8) || p[q + 3 + off_size] != 0 || cu_off >= di->info_size)
			continue; /* segmented addresses: not on ELF targets perch knows */
		tuple = 2 * asz;
		/* tuples are aligned to their size from the start of the set */
		q = set + (q + 4 + off_size - set + tuple - 1) / tuple * tuple;
		if (!di->nr_acus || di->acus[di->nr_acus - 1].hdr_off != cu_off) {
			ALLOC_GROW(di->acus, di->nr_acus + 1, alloc_acus);
			di->acus[di->nr_acus++] = (struct di_acu){.hdr_off = cu_off};
		}
		for (; q <= end && end - q >= tuple; q += tuple) {
			lo = read_uint(p + q, asz, big);
			l = read_uint(p + q + asz, asz, big);
			if (!lo && !l)
				break;
			if (l <= UINT64_MAX - lo)
				push_range(&di->aranges, &di->nr_aranges, &alloc_ranges, lo, lo + l,
					   (uint32_t)(di->nr_acus - 1));
		}
	}
	if (di->nr_aranges > 1)
		qsort(di->aranges, di->nr_aranges, sizeof(*di->aranges), range_cmp);
}

/* Is every attribute form in .debug_abbrev one DWARF 2-5 or GNU defines? libdwarf 20210528
 * gets stuck skipping DIEs whose abbreviation names a form it does not know (a fuzzed file
 * kept dwarf_siblingof_b busy for minutes), and no compiler emits such forms. */
static int abbrev_forms_known(const uint8_t *p, size_t size)
{
	struct ehframe_cursor c = {.base = p, .end = size};

	while (c.pos < c.end && !c.bad) {
		if (!ehframe_read_uleb(&c))
			continue;	/* code 0: the end of one CU's table */
		ehframe_read_uleb(&c);	/* the tag */
		ehframe_read_le(&c, 1); /* has children */
		while (!c.bad) {
			uint64_t at = ehframe_read_uleb(&c), form = ehframe_read_uleb(&c);

			if (!at && !form)
				break;
			if (!((form >= 0x01 && form <= 0x2c && form != 0x02) ||
			      (form >= 0x1f01 && form <= 0x1f02) ||
			      (form >= 0x1f20 && form <= 0x1f21)))
				return 0;
			if (form == 0x21) /* DW_FORM_implicit_const: its value follows */
				ehframe_read_sleb(&c);
		}
	}
	return !c.bad;
}

/* Header of each unit in .debug_rnglists / .debug_loclists (DWARF 5 section 7.28/7.29):
 * "unit_length(4|12) version(2)=5 address_size(1) segment_selector_size(1) offset_entry_count(4)"
 * libdwarf 20210528 loads both sections with the first CU header, and a malformed unit header
 * there makes it use freed memory and free it twice (internal_load_rnglists_contexts() goes on
 * after its error path; fixed in later releases). So perch checks these headers first. */
static int lists_section_sane(const uint8_t *p, size_t size)
{
	size_t off = 0;

	while (off < size) {
		uint64_t len;
		size_t hdr = 4;

		if (size - off < 4)
			return 0;
		len = (uint64_t)p[off] | (uint64_t)p[off + 1] << 8 | (uint64_t)p[off + 2] << 16 |
		      (uint64_t)p[off + 3] << 24;
		if (len == 0xffffffffu) {
			int i;

			if (size - off < 12)
				return 0;
			for (len = 0, i = 7; i >= 0; i--)
				len = len << 8 | p[off + 4 + i];
			hdr = 12;
		} else if (len >= 0xfffffff0u) {
			return 0;
		}
		if (len < 8 || len > size - off - hdr)
			return 0;
		if (p[off + hdr] != 5 || p[off + hdr + 1] != 0)
			return 0; /* version */
		if (p[off + hdr + 2] != 2 && p[off + hdr + 2] != 4 && p[off + hdr + 2] != 8)
			return 0; /* address size */
		off += hdr + (size_t)len;
	}
	return 1;
}

/* How libdwarf sees a section perch must not show it (a second copy of a DWARF section, one
 * perch cannot read or decompress): a name libdwarf ignores. */
#define DI_HIDDEN ".perch.hidden"

static int is_dwarf_name(const char *name)
{
	return !strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8);
}

/* The index of the section libdwarf sees as @name, or -1. */
static long sec_find(const struct debuginfo *di, const char *name)
{
	for (size_t i = 0; i < di->nr_secs; i++)
		if (!strcmp(di->secs[i].name, name))
			return (long)i;
	return -1;
}

/* Is @s decompressed only as far as readers need? .debug_info and .debug_line hold units read
 * by offset (info_ensure, line_ensure): glibc's are 10 MB and a dump needs a few units. */
static int sec_streamed(const struct debuginfo *di, const struct di_sec *s)
{
	return !di->dwo && s->comp != ELFSECTION_PLAIN &&
	       (!strcmp(s->name, ".debug_info") || !strcmp(s->name, ".debug_line"));
}

/* Read section @i once, decompressed (a streamed one only as far as sec_ensure() asked).
 * 0 or -errno; afterwards secs[i].data points to secs[i].size bytes. */
static int sec_load(struct debuginfo *di, size_t i)
{
	struct di_sec *s = &di->secs[i];
	uint8_t *raw, *out = NULL;
	size_t out_size = 0;
	int ret;

	if (s->state)
		return s->state > 0 ? 0 : -ENOEXEC;
	s->state = -1;
	raw = xmalloc_large(s->raw_size + 1);
	if (pread(di->fd, raw, s->raw_size, (off_t)s->offset) != (ssize_t)s->raw_size) {
		free(raw);
		return -EIO;
	}
	if (s->comp == ELFSECTION_PLAIN) {
		s->data = raw;
	} else if (sec_streamed(di, s)) {
		ret = elfsection_stream_new(raw, s->raw_size, s->flags, s->elf_name, di->is_64,
					    di->big, DI_MAX_SECTION, &s->stream);
		if (ret < 0)
			return ret;
		if (elfsection_stream_size(s->stream) != s->size)
			return -EBADMSG;
		s->data = elfsection_stream_data(s->stream);
	} else {
		ret = elfsection_decompress(raw, s->raw_size, s->flags, s->elf_name, di->is_64,
					    di->big, DI_MAX_SECTION, &out, &out_size);
		free(raw);
		if (ret < 0 || out_size != s->size) {
			free(out);
			return ret < 0 ? ret : -EBADMSG;
		}
		s->data = out;
	}
	s->state = 1;
	return 0;
}

/* Section @i loaded and decompressed up to @upto bytes at least. 0 or -errno. */
static int sec_ensure(struct debuginfo *di, size_t i, uint64_t upto)
{
	int ret = sec_load(di, i);

	if (ret < 0 || !di->secs[i].stream)
		return ret;
	return elfsection_stream_ensure(di->secs[i].stream,
					upto > SIZE_MAX ? SIZE_MAX : (size_t)upto);
}

/* The end of the unit (a .debug_info unit or a line table: "unit_length(4|12) ...") that
 * starts at @at in section @i, decompressing as far as that. 0 or -errno; a length that
 * does not fit ends at the end of the section. */
static int sec_unit_end(struct debuginfo *di, size_t i, uint64_t at, uint64_t *end)
{
	const struct di_sec *s = &di->secs[i];
	uint64_t len;
	int ret = sec_ensure(di, i, at + 12);

	*end = s->size;
	if (ret < 0 || at >= s->size || s->size - at < 4)
		return ret;
	len = read_uint(s->data + at, 4, di->big);
	if (len == 0xffffffffu && s->size - at >= 12) {
		len = read_uint(s->data + at + 4, 8, di->big);
		if (len <= s->size - at - 12)
			*end = at + 12 + len;
	} else if (len < 0xfffffff0u && len <= s->size - at - 4) {
		*end = at + 4 + len;
	}
	return sec_ensure(di, i, *end);
}

/* .debug_info decompressed up to the end of the unit holding offset @off (and all before it:
 * a DIE libdwarf has no unit for yet makes it walk the unit headers from the start). 0 or
 * -errno; nothing to do for a section stored plain. */
static int info_ensure(struct debuginfo *di, uint64_t off)
{
	long i = sec_find(di, ".debug_info");
	uint64_t end;
	int ret;

	if (i < 0 || di->dwo || di->secs[i].comp == ELFSECTION_PLAIN)
		return 0;
	while (di->info_walk <= off && di->info_walk < di->secs[i].size) {
		ret = sec_unit_end(di, (size_t)i, di->info_walk, &end);
		if (ret < 0)
			return ret;
		di->info_walk = end;
	}
	return 0;
}

/* .debug_line decompressed up to the end of the line table at @off. 0 or -errno. */
static int line_ensure(struct debuginfo *di, uint64_t off)
{
	long i = sec_find(di, ".debug_line");
	uint64_t end;

	if (i < 0 || di->dwo || di->secs[i].comp == ELFSECTION_PLAIN)
		return 0;
	return sec_unit_end(di, (size_t)i, off, &end);
}

/* The whole of section @name decompressed. 0, -ENOENT or -errno. */
static int sec_all(struct debuginfo *di, const char *name)
{
	long i = sec_find(di, name);

	return i < 0 ? -ENOENT : sec_ensure(di, (size_t)i, di->secs[i].size);
}

/* Is section @name one perch checks before libdwarf reads it (sec_check)? */
static int sec_is_list(const char *name)
{
	return !strncmp(name, ".debug_rnglists", 15) || !strncmp(name, ".debug_loclists", 15);
}

/* A DWARF 5 list section is checked when it is first loaded (libdwarf 20210528 trusts its
 * offsets): glibc's .debug_loclists is 3 MB and perch reads no location list, so it is
 * inflated only if libdwarf asks. 0, or -ENOEXEC. */
static int sec_check(struct debuginfo *di, size_t i)
{
	struct di_sec *s = &di->secs[i];

	if (!sec_is_list(s->name) || s->checked)
		return s->checked < 0 ? -ENOEXEC : 0;
	s->checked = -1;
	if (sec_load(di, i) < 0 || !lists_section_sane(s->data, (size_t)s->size))
		return -ENOEXEC;
	s->checked = 1;
	return 0;
}

/* The contents of the section libdwarf sees as @name, all of it: 0 with *@data and *@size
 * set, -ENOENT when there is none, or sec_load()'s error. */
static int sec_get(struct debuginfo *di, const char *name, const uint8_t **data, size_t *size)
{
	long i = sec_find(di, name);
	int ret;

	if (i < 0)
		return -ENOENT;
	ret = sec_ensure(di, (size_t)i, di->secs[i].size);
	if (!ret)
		ret = sec_check(di, (size_t)i);
	if (ret < 0)
		return ret;
	*data = di->secs[i].data;
	*size = (size_t)di->secs[i].size;
	return 0;
}

/* Record section @shdr (named @name) as libdwarf will see it: a DWARF section under its
 * ".debug_*" name and its uncompressed size, or hidden. */
static void sec_add(struct debuginfo *di, const GElf_Shdr *shdr, const char *name,
		    uint64_t file_size)
{
	struct di_sec s = {
	    .type = shdr->sh_type,
	    .flags = shdr->sh_flags,
	    .addr = shdr->sh_addr,
	    .offset = shdr->sh_offset,
	    .raw_size = shdr->sh_size,
	    .size = shdr->sh_size,
	    .link = shdr->sh_link,
	    .info = shdr->sh_info,
	    .entsize = shdr->sh_entsize,
	};
	struct elfsection_info info;
	uint8_t hdr[24];
	size_t want = shdr->sh_size < sizeof(hdr) ? (size_t)shdr->sh_size : sizeof(hdr);

	s.elf_name = xstrdup(name);
	if (!is_dwarf_name(name)) {
		s.name = xstrdup(name);
		/* libdwarf may load it too (relocations, symbols): one the file cannot hold
		 * fails to load instead */
		if (shdr->sh_type == SHT_NOBITS || shdr->sh_offset > file_size ||
		    shdr->sh_size > file_size - shdr->sh_offset || shdr->sh_size > SIZE_MAX - 1)
			s.state = -1;
	} else {
		/* a DWARF section: libdwarf reads it through sec_load() only, so check it here */
		s.name = name[1] == 'z' ? xasprintf(".%s", name + 2) : xstrdup(name);
		if (!strcmp(s.name, ".debug_loclists") || !strcmp(s.name, ".debug_loc") ||
		    !strcmp(s.name, ".debug_loclists.dwo") || !strcmp(s.name, ".debug_loc.dwo")) {
			/* perch reads no location list, and libdwarf 20210528 would inflate and
			 * parse every header of .debug_loclists (glibc's: 3 MB) as soon as it
			 * loads .debug_info */
			free(s.name);
			s.name = xstrdup(DI_HIDDEN);
		} else if (shdr->sh_type == SHT_NOBITS || shdr->sh_offset > file_size ||
			   shdr->sh_size > file_size - shdr->sh_offset ||
			   shdr->sh_size > SIZE_MAX - 1 || sec_find(di, s.name) >= 0 ||
			   pread(di->fd, hdr, want, (off_t)shdr->sh_offset) != (ssize_t)want ||
			   elfsection_probe(hdr, want, shdr->sh_flags, name, di->is_64, di->big,
					    &info) < 0 ||
			   info.size > DI_MAX_SECTION) {
			free(s.name);
			s.name = xstrdup(DI_HIDDEN);
		} else if (info.comp != ELFSECTION_PLAIN) {
			s.comp = info.comp;
			s.size = info.size;
		}
	}
	di->secs[di->nr_secs++] = s;
}

/* The section table, through libelf: every section in ELF order (libdwarf asks by index). */
static int sections_read(struct debuginfo *di)
{
	size_t shnum = 0, shstrndx, i;
	struct stat st;
	const char *ident;
	Elf *elf;
	int ret = 0;

	if (elf_version(EV_CURRENT) == EV_NONE || fstat(di->fd, &st) < 0)
		return -ENOEXEC;
	elf = elf_begin(di->fd, ELF_C_READ, NULL); /* read(), not mmap: no SIGBUS */
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) ||
	    elf_getshdrnum(elf, &shnum) || !(ident = elf_getident(elf, NULL))) {
		ret = -ENOEXEC;
		goto out;
	}
	di->is_64 = gelf_getclass(elf) == ELFCLASS64;
	di->big = ident[EI_DATA] == ELFDATA2MSB;
	if (shnum > DI_MAX_SECTIONS) /* libdwarf numbers sections with a Dwarf_Half */
		shnum = DI_MAX_SECTIONS;
	di->secs = xcalloc(shnum ? shnum : 1, sizeof(*di->secs));
	for (i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr shdr;
		const char *name = NULL;

		if (!scn || !gelf_getshdr(scn, &shdr)) {
			memset(&shdr, 0, sizeof(shdr));
			shdr.sh_type = SHT_NULL;
		} else if (i) {
			name = elf_strptr(elf, shstrndx, shdr.sh_name);
		}
		sec_add(di, &shdr, name ? name : "", (uint64_t)st.st_size);
	}
out:
	elf_end(elf);
	return ret;
}

/* libdwarf's object access (libdwarf.h, "libdwarf Object File Interface"): perch hands it the
 * sections, decompressed. libdwarf 20210528 inflates zlib sections itself but knows no zstd,
 * and its own ELF reader loads sections perch has not checked (see debuginfo_open). */
static int obj_section_info(void *obj, Dwarf_Half i, Dwarf_Obj_Access_Section *out, int *err)
{
	struct debuginfo *di = obj;
	const struct di_sec *s;

	if (i >= di->nr_secs) {
		*err = DW_DLE_SECTION_INDEX_BAD;
		return DW_DLV_NO_ENTRY;
	}
	s = &di->secs[i];
	memset(out, 0, sizeof(*out));
	out->addr = s->addr;
	out->type = s->comp != ELFSECTION_PLAIN ? SHT_PROGBITS : s->type;
	out->size = s->size;
	out->name = s->name;
	out->link = s->link;
	out->info = s->info;
	out->entrysize = s->entsize;
	return DW_DLV_OK;
}

static Dwarf_Endianness obj_byte_order(void *obj)
{
	return ((struct debuginfo *)obj)->big ? DW_OBJECT_MSB : DW_OBJECT_LSB;
}

static Dwarf_Small obj_addr_size(void *obj)
{
	return ((struct debuginfo *)obj)->is_64 ? 8 : 4;
}

static Dwarf_Unsigned obj_section_count(void *obj)
{
	return ((struct debuginfo *)obj)->nr_secs;
}

static int obj_load_section(void *obj, Dwarf_Half i, Dwarf_Small **data, int *err)
{
	struct debuginfo *di = obj;

	if (i >= di->nr_secs || !strcmp(di->secs[i].name, DI_HIDDEN)) {
		*err = DW_DLE_SECTION_INDEX_BAD;
		return DW_DLV_NO_ENTRY;
	}
	if (di->secs[i].type == SHT_NOBITS || !di->secs[i].size)
		return DW_DLV_NO_ENTRY;
	if (sec_load(di, i) < 0 || sec_check(di, i) < 0) {
		*err = DW_DLE_ELF_SECTION_ERROR;
		return DW_DLV_ERROR;
	}
	*data = di->secs[i].data;
	return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods obj_methods = {
    .get_section_info = obj_section_info,
    .get_byte_order = obj_byte_order,
    .get_length_size = obj_addr_size,
    .get_pointer_size = obj_addr_size,
    .get_section_count = obj_section_count,
    .load_section = obj_load_section,
    .relocate_a_section = NULL, /* executables, libraries and .dwo files need none */
};

/* What perch checks before libdwarf reads a byte: the size of .debug_info (-ENOENT without
 * one), .debug_aranges into di->aranges, every form in the abbreviation tables known
 * (-ENOEXEC if not; the DWARF 5 list sections are checked when loaded, sec_check). No DIE is
 * read. */
static int check_sections(struct debuginfo *di, const char *info_name)
{
	const uint8_t *data;
	size_t size, i;
	long idx = sec_find(di, info_name);

	if (idx < 0 || !di->secs[idx].size)
		return -ENOENT;
	di->info_size = di->secs[idx].size;
	for (i = 0; i < di->nr_secs; i++) {
		if (strncmp(di->secs[i].name, ".debug_abbrev", 13))
			continue; /* the list sections: when loaded (sec_check) */
		if (sec_load(di, i) < 0)
			return -ENOEXEC;
		data = di->secs[i].data;
		size = (size_t)di->secs[i].size;
		if (!abbrev_forms_known(data, size))
			return -ENOEXEC;
	}
	/* after info_size is known: its CU offsets are checked against it */
	if (!strcmp(info_name, ".debug_info") && sec_get(di, ".debug_aranges", &data, &size) == 0)
		parse_aranges(di, data, size, di->big);
	return 0;
}

/* Open @path's DWARF of group @group (DW_GROUPNUMBER_BASE or _DWO). */
static struct debuginfo *open_group(const char *path, unsigned int group)
{
	struct debuginfo *di;
	Dwarf_Error err = NULL;
	unsigned char magic[4];
	struct stat st;
	int fd, ret;

	/* O_NONBLOCK: a split unit's file name comes from the DWARF, and a FIFO there must not
	 * hang perch; only regular files are read */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	/* libdwarf also reads Mach-O and PE; perch wants ELF only */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    pread(fd, magic, sizeof(magic), 0) != sizeof(magic) || memcmp(magic, "\177ELF", 4)) {
		close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	di = xcalloc(1, sizeof(*di));
	di->tag = 'p';
	di->fd = fd;
	di->path = xstrdup(path);
	di->dwo = group == DW_GROUPNUMBER_DWO;
	ret = sections_read(di);
	if (!ret)
		ret = check_sections(di, group == DW_GROUPNUMBER_DWO ? ".debug_info.dwo"
								     : ".debug_info");
	if (ret) {
		debuginfo_free(di);
		errno = -ret;
		return NULL;
	}
	di->iface.object = di;
	di->iface.methods = &obj_methods;
	ret = dwarf_object_init_b(&di->iface, NULL, NULL, group, &di->dbg, &err);
	if (ret != DW_DLV_OK) {
		if (err)
			dwarf_dealloc_error(NULL, err);
		di->dbg = NULL;
		debuginfo_free(di);
		errno = ret == DW_DLV_NO_ENTRY ? ENOENT : ENOEXEC;
		return NULL;
	}
	return di;
}

void debuginfo_info_ready(struct debuginfo *di, uint64_t *ready, uint64_t *size)
{
	long i = sec_find(di, di->dwo ? ".debug_info.dwo" : ".debug_info");

	*ready = *size = i < 0 ? 0 : di->secs[i].size;
	if (i >= 0 && di->secs[i].stream)
		*ready = elfsection_stream_ready(di->secs[i].stream);
	else if (i >= 0 && di->secs[i].comp != ELFSECTION_PLAIN && di->secs[i].state <= 0)
		*ready = 0;
}

struct debuginfo *debuginfo_open(const char *path)
{
	return open_group(path, DW_GROUPNUMBER_BASE);
}

/* Frees @cu itself too. */
static void cu_release(struct di_cu *cu)
{
	size_t i;

	for (i = 0; i < cu->nr_files; i++)
		free(cu->files[i]);
	free(cu->files);
	free(cu->rows);
	free(cu->seqs);
	free(cu->nodes);
	free(cu->node_ranges);
	free(cu->roots);
	free(cu->ranges);
	free(cu->calls);
	free(cu->call_addr_first);
	free(cu->call_addrs);
	free(cu->call_by_pc);
	free(cu->tails);
	free(cu);
}

void debuginfo_free(struct debuginfo *di)
{
	Dwarf_Error err = NULL;
	size_t i;

	if (!di)
		return;
	/* the split files first: they are tied to this one's libdwarf handle */
	for (i = 0; i < di->nr_splits; i++) {
		debuginfo_free(di->splits[i].di);
		free(di->splits[i].path);
		free(di->splits[i].ids);
		free(di->splits[i].offs);
	}
	free(di->splits);
	for (i = 0; i < di->nr_cus; i++)
		cu_release(di->cus[i]);
	free(di->cus);
	free(di->by_off);
	free(di->aranges);
	free(di->acus);
	free(di->cu_ranges);
	for (i = 0; i < di->fnscopes_cap; i++)
		free(di->fnscopes[i].qual);
	free(di->fnscopes);
	free(di->scopes);
	/* dwarf_object_finish(), not dwarf_finish(): the latter takes the object for one of
	 * libdwarf's own readers when its first byte is E, F, M or P (hence di->tag) */
	if (di->dbg)
		dwarf_object_finish(di->dbg, &err);
	for (i = 0; i < di->nr_secs; i++) {
		free(di->secs[i].name);
		free(di->secs[i].elf_name);
		if (di->secs[i].stream) /* the stream owns the data */
			elfsection_stream_free(di->secs[i].stream, 0);
		else
			free(di->secs[i].data);
	}
	free(di->secs);
	if (di->fd >= 0)
		close(di->fd);
	free(di->path);
	free(di);
}

static const char *cu_file(const struct di_cu *cu, uint32_t file)
{
	return file < cu->nr_files ? cu->files[file] : NULL;
}

/* The line-table row for @addr, or NULL when no sequence covers it. */
static const struct di_row *cu_row(const struct di_cu *cu, uint64_t addr)
{
	const struct di_seq *s = NULL;
	size_t lo = 0, hi = cu->nr_seqs;
	long i;
	int tries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cu->seqs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (long)lo - 1, tries = 0; i >= 0 && tries < 8; i--, tries++) {
		if (addr < cu->seqs[i].hi) {
			s = &cu->seqs[i];
			break;
		}
	}
	if (!s)
		return NULL;
	/* last row at or below addr: of several rows at one address, the last one applies */
	lo = s->first;
	hi = s->first + s->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cu->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > s->first ? &cu->rows[lo - 1] : NULL;
}

static int node_contains(const struct di_cu *cu, const struct di_node *n, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < n->nr_ranges; i++) {
		const struct di_range *r = &cu->node_ranges[n->range_first + i];

		if (addr >= r->lo && addr < r->hi)
			return 1;
	}
	return 0;
}

int debuginfo_lookup(struct debuginfo *di, uint64_t vaddr, struct sym_frame *out, int max)
{
	uint32_t chain[DI_MAX_DEPTH + 1];
	const struct di_row *row;
	struct di_cu *cu;
	int nr_chain = 0, n, i;
	long ci;

	if (!di || max <= 0)
		return 0;
	cu = cu_for_addr(di, vaddr);
	if (!cu || cu_load(di, cu) < 0)
		return 0;
	row = cu_row(cu, vaddr);

	ci = range_find(cu->roots, cu->nr_roots, vaddr);
	if (ci >= 0) {
		uint32_t cur = cu->roots[ci].idx, c;

		chain[nr_chain++] = cur;
		/* descend into the child that contains vaddr, as long as there is one */
		for (c = cur + 1; c < cu->nodes[cur].end && nr_chain <= DI_MAX_DEPTH;) {
			if (node_contains(cu, &cu->nodes[c], vaddr)) {
				chain[nr_chain++] = c;
				cur = c;
				c = cur + 1;
			} else {
				c = cu->nodes[c].end > c ? cu->nodes[c].end : c + 1;
			}
		}
	}
	if (!nr_chain) {
		if (!row)
			return 0;
		out[0] = (struct sym_frame){.file = cu_file(cu, row->file), .line = row->line};
		return 1;
	}
	/* chain[0] is the subprogram, chain[nr_chain - 1] the innermost inlined subroutine */
	n = nr_chain < max ? nr_chain : max;
	for (i = 0; i < n; i++) {
		const struct di_node *node = &cu->nodes[chain[nr_chain - 1 - i]];
		struct sym_frame *f = &out[i];

		f->func = node->name;
		f->inlined = i < nr_chain - 1;
		if (i == 0) {
			f->file = row ? cu_file(cu, row->file) : NULL;
			f->line = row ? row->line : 0;
		} else {
			const struct di_node *callee = &cu->nodes[chain[nr_chain - i]];

			f->file = cu_file(cu, callee->call_file);
			f->line = callee->call_line;
		}
	}
	return n;
}

/* The subprogram whose code holds @vaddr in @cu (loaded), or NULL. */
static const struct di_node *root_at(const struct di_cu *cu, uint64_t vaddr)
{
	long i = range_find(cu->roots, cu->nr_roots, vaddr);

	return i >= 0 ? &cu->nodes[cu->roots[i].idx] : NULL;
}

/* gdb's entry pc of a function: the start of its first range (in DWARF order). */
static uint64_t node_entry(const struct di_cu *cu, const struct di_node *n)
{
	return cu->node_ranges[n->range_first].lo;
}

int debuginfo_func_entry(struct debuginfo *di, uint64_t vaddr, uint64_t *entry)
{
	struct di_cu *cu = di ? cu_for_addr(di, vaddr) : NULL;
	const struct di_node *n;

	if (!cu || cu_load(di, cu) < 0 || !(n = root_at(cu, vaddr)) || !n->nr_ranges)
		return -ENOENT;
	*entry = node_entry(cu, n);
	return 0;
}

int debuginfo_call_site(struct debuginfo *di, uint64_t pc, struct debuginfo_call *out)
{
	struct di_cu *cu = di && pc ? cu_for_addr(di, pc - 1) : NULL;
	size_t lo = 0, hi;

	/* the CU of the call instruction, which ends at @pc */
	if (!cu || cu_load(di, cu) < 0)
		return -ENOENT;
	hi = cu->nr_calls;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cu->calls[cu->call_by_pc[mid]].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= cu->nr_calls || cu->calls[cu->call_by_pc[lo]].pc != pc)
		return -ENOENT;
	*out = cu->calls[cu->call_by_pc[lo]]; /* of several at one pc, the first (as gdb) */
	return 0;
}

int debuginfo_tail_calls(struct debuginfo *di, uint64_t entry, const struct debuginfo_call **calls,
			 size_t *n)
{
	struct di_cu *cu = di ? cu_for_addr(di, entry) : NULL;
	const struct di_node *node;

	if (!cu || cu_load(di, cu) < 0 || !(node = root_at(cu, entry)) || !node->nr_ranges ||
	    node_entry(cu, node) != entry)
		return -ENOENT;
	*calls = cu->tails + node->tail_first;
	*n = node->nr_tails;
	return 0;
}
