/* The DWARF reader's own parts (not a contract: included by src/symbols/debuginfo*.c alone,
 * the only files in perch that include libdwarf.h, libdwarf 20210528 as Debian 12 ships it).
 *   debuginfo.c           open and free a file's DWARF; lookups (lines, inlines, entries,
 *                         call sites, tail calls)
 *   debuginfo-sections.c  the ELF sections as libdwarf sees them through perch's object access:
 *                         read, decompressed as far as needed, checked before libdwarf parses
 *   debuginfo-units.c     compilation units: found by address (.debug_aranges, else a scan),
 *                         by offset, loaded on first use
 *   debuginfo-die.c       DIE attributes and address ranges (DWARF 4 and 5, split units)
 *   debuginfo-inline.c    functions and inlined subroutines, C++ scopes, call sites
 *   debuginfo-lines.c     line tables and file names
 *   debuginfo-split.c     split DWARF (.dwo, .dwp): the unit behind a skeleton */
#ifndef PERCH_DEBUGINFO_INT_H
#define PERCH_DEBUGINFO_INT_H

#include <stddef.h>
#include <stdint.h>

#include <dwarf.h>
#include <gelf.h>
#include <libdwarf.h>

#include "perch/symbols/debuginfo.h"
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

/* Subprogram DIEs found nested in others, walked after them (di_collect_roots()). */
struct pending {
	Dwarf_Off *offs;
	size_t nr, alloc;
};

/* debuginfo.c: opening, freeing, lookups */
void di_drop_err(struct debuginfo *di, Dwarf_Error err);
uint64_t di_read_uint(const uint8_t *p, unsigned int size, int big);
int di_range_cmp(const void *a, const void *b);
long di_range_find(const struct di_range *r, size_t n, uint64_t addr);
struct debuginfo *di_open_group(const char *path, unsigned int group);

/* debuginfo-sections.c: the sections libdwarf reads */
extern const Dwarf_Obj_Access_Methods di_obj_methods;
long di_sec_find(const struct debuginfo *di, const char *name);
int di_sec_load(struct debuginfo *di, size_t i);
int di_info_ensure(struct debuginfo *di, uint64_t off);
int di_line_ensure(struct debuginfo *di, uint64_t off);
int di_sec_all(struct debuginfo *di, const char *name);
int di_sec_get(struct debuginfo *di, const char *name, const uint8_t **data, size_t *size);
int di_sections_read(struct debuginfo *di);
int di_check_sections(struct debuginfo *di, const char *info_name);

/* debuginfo-units.c: compilation units */
int di_next_cu_header(struct debuginfo *di);
Dwarf_Die di_walk_cu_die(struct debuginfo *di);
struct di_cu *di_cu_of_offset(struct debuginfo *di, Dwarf_Off off);
void di_cu_scan_scopes(struct debuginfo *di, struct di_cu *cu);
int di_cu_load(struct debuginfo *di, struct di_cu *cu);
struct di_cu *di_cu_for_addr(struct debuginfo *di, uint64_t addr);
void di_parse_aranges(struct debuginfo *di, const uint8_t *p, size_t size, int big);

/* debuginfo-die.c: DIE attributes and address ranges */
int di_die_udata(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *out);
int di_die_flag(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at);
int di_die_addr(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, uint64_t *out);
const char *di_die_string(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at);
int di_die_ref(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *out);
int di_die_sec_offset(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *out);
Dwarf_Die di_die_at(struct debuginfo *di, Dwarf_Off off);
Dwarf_Off di_die_offset(struct debuginfo *di, Dwarf_Die die);
const char *di_die_func_name(struct debuginfo *di, Dwarf_Die die, Dwarf_Off *decl_off);
void di_push_range(struct di_range **r, size_t *nr, size_t *alloc, uint64_t lo, uint64_t hi,
		   uint32_t idx);
void di_die_ranges(struct debuginfo *di, Dwarf_Die die, int version, uint64_t base,
		   struct di_range **r, size_t *nr, size_t *alloc, uint32_t idx);
Dwarf_Die di_die_child(struct debuginfo *di, Dwarf_Die die);
Dwarf_Die di_die_sibling(struct debuginfo *di, Dwarf_Die die);
int di_die_tag(struct debuginfo *di, Dwarf_Die die);
int di_die_has(struct debuginfo *di, Dwarf_Die die, Dwarf_Half at);

/* debuginfo-inline.c: functions, inlines, scopes, call sites */
void di_collect_roots(struct debuginfo *di, struct di_cu *cu, Dwarf_Die parent, int depth,
		      struct pending *pend, uint32_t scope);
void di_load_functions(struct debuginfo *di, struct di_cu *cu, Dwarf_Die cu_die);

/* debuginfo-lines.c: line tables */
char *di_path_join(const char *dir, const char *name);
void di_load_lines(struct debuginfo *di, struct di_cu *cu, Dwarf_Die cu_die);

/* debuginfo-split.c: split units */
Dwarf_Die di_split_cu_die(struct debuginfo *di, Dwarf_Die skel, struct debuginfo **sdi);
void di_split_context(struct debuginfo *di, const struct di_cu *cu, Dwarf_Die skel,
		      struct debuginfo *sdi, Dwarf_Die split, struct di_splitctx *x);

#endif
