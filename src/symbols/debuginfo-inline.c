/* Functions and inlined subroutines of a compilation unit (a preorder tree of nodes with
 * their ranges), the C++ scopes that qualify their names, and call sites (DW_TAG_call_site and
 * the GNU forms) with their targets, for tail-call frames. */
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "debuginfo-int.h"

static void add_node_tree(struct debuginfo *di, struct di_cu *cu, Dwarf_Die die, int depth,
			  struct pending *pend);
static void call_site_add(struct debuginfo *di, struct di_cu *cu, Dwarf_Die die);

/* Functions nested in functions (GNU C nested functions) become roots of their own. */
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
	for (child = di_die_child(di, parent); child; child = next) {
		switch (di_die_tag(di, child)) {
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
				di_drop_err(di, err);
				err = NULL;
				break;
			}
			ALLOC_GROW(pend->offs, pend->nr + 1, pend->alloc);
			pend->offs[pend->nr++] = off;
			break;
		default:
			break;
		}
		next = di_die_sibling(di, child);
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
	int inlined = di_die_tag(di, die) == DW_TAG_inlined_subroutine;

	if (cu->nr_nodes >= DI_MAX_NODES)
		return;
	di_die_ranges(di, die, cu->version, cu->base, &cu->node_ranges, &cu->nr_node_ranges,
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
	n->name = di_die_func_name(di, die, &n->decl_off);
	if (inlined) {
		if (!di_die_udata(di, die, DW_AT_call_file, &v) && v <= UINT32_MAX)
			n->call_file = (uint32_t)v;
		if (!di_die_udata(di, die, DW_AT_call_line, &v) && v <= UINT32_MAX)
			n->call_line = (uint32_t)v;
	} else {
		n->all_calls = di_die_flag(di, die, DW_AT_call_all_calls) ||
			       di_die_flag(di, die, DW_AT_call_all_tail_calls) ||
			       di_die_flag(di, die, DW_AT_GNU_all_call_sites) ||
			       di_die_flag(di, die, DW_AT_GNU_all_tail_call_sites);
		n->call_first = (uint32_t)cu->nr_calls;
	}
	walk_scope(di, cu, die, depth, pend);
	cu->nodes[idx].end = (uint32_t)cu->nr_nodes;
	if (!inlined) /* nested subprograms are queued, so this subprogram's calls are contiguous */
		cu->nodes[idx].nr_calls = (uint32_t)cu->nr_calls - cu->nodes[idx].call_first;
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
	Dwarf_Die t = di_die_at(di, off);

	if (!t)
		return;
	if (di_die_flag(di, t, DW_AT_declaration) &&
	    di_die_ref(di, t, DW_AT_specification, &spec)) {
		c->name = di_die_string(di, t, DW_AT_linkage_name);
		if (!c->name)
			c->name = di_die_string(di, t, DW_AT_MIPS_linkage_name);
		if (!c->name)
			c->name = di_die_string(di, t, DW_AT_name);
		if (c->name)
			c->kind = DEBUGINFO_TARGET_NAME;
	} else if ((tcu = di_cu_of_offset(di, off))) {
		di_die_ranges(di, t, tcu->version, tcu->base, &r, &nr, &alloc, 0);
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

	if (idx >= DI_MAX_CALLS || (di_die_addr(di, die, DW_AT_call_return_pc, &c.pc) &&
				    di_die_addr(di, die, DW_AT_low_pc, &c.pc)))
		return;
	c.tail =
	    di_die_flag(di, die, DW_AT_call_tail_call) || di_die_flag(di, die, DW_AT_GNU_tail_call);
	ALLOC_GROW(cu->calls, idx + 1, cu->alloc_calls);
	if (cu->alloc_calls != alloc)
		cu->call_addr_first =
		    xrealloc(cu->call_addr_first, cu->alloc_calls * sizeof(*cu->call_addr_first));
	cu->call_addr_first[idx] = (uint32_t)cu->nr_call_addrs;
	/* gdb takes the first of these: a DWARF expression (DW_AT_call_target) needs the
	 * caller's registers, which a tail-call frame does not have, so it is no target */
	if (!di_die_has(di, die, DW_AT_call_target) &&
	    !di_die_has(di, die, DW_AT_GNU_call_site_target) &&
	    (!di_die_ref(di, die, DW_AT_call_origin, &off) ||
	     !di_die_ref(di, die, DW_AT_abstract_origin, &off)))
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
	sc->name = di_die_string(di, die, DW_AT_name);
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
void di_collect_roots(struct debuginfo *di, struct di_cu *cu, Dwarf_Die parent, int depth,
		      struct pending *pend, uint32_t scope)
{
	Dwarf_Die child, next;
	int tag;

	if (depth >= DI_MAX_DEPTH)
		return;
	for (child = di_die_child(di, parent); child; child = next) {
		switch ((tag = di_die_tag(di, child))) {
		case DW_TAG_subprogram:
			/* only these can end a chain without a linkage name (di_die_func_name) */
			if (scope && scope != DI_NO_SCOPE &&
			    !di_die_string(di, child, DW_AT_linkage_name) &&
			    !di_die_string(di, child, DW_AT_MIPS_linkage_name))
				fnscope_add(di, di_die_offset(di, child), scope);
			if (pend)
				add_node_tree(di, cu, child, 0, pend);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (pend || scope != DI_NO_SCOPE)
				di_collect_roots(di, cu, child, depth + 1, pend,
						 scope_add(di, child, tag, scope));
			break;
		case DW_TAG_module:
			if (pend)
				di_collect_roots(di, cu, child, depth + 1, pend, DI_NO_SCOPE);
			break;
		default:
			break;
		}
		next = di_die_sibling(di, child);
		dwarf_dealloc_die(child);
	}
}

/* "ns::cls::@name" for a C++ function whose declaration is the DIE at @decl_off, as addr2line
 * and gdb print it when there is no linkage name (gcc omits it for static and inline functions
 * in a namespace). NULL when the declaration is not in a C++ scope. Owned by @di. */
static const char *qualified_name(struct debuginfo *di, Dwarf_Off decl_off, const char *name)
{
	const char *parts[DI_MAX_DEPTH];
	struct di_fnscope *e;
	struct di_cu *dcu = di_cu_of_offset(di, decl_off);
	size_t len, nr = 0, i;
	uint32_t sc;
	char *q, *p;

	if (!dcu || !dcu->cxx)
		return NULL;
	di_cu_scan_scopes(di, dcu);
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

void di_load_functions(struct debuginfo *di, struct di_cu *cu, Dwarf_Die cu_die)
{
	struct pending pend = {0};
	size_t i, j, k;

	/* scopes are recorded once per CU: di_cu_scan_scopes() may have done it already */
	di_collect_roots(di, cu, cu_die, 0, &pend, cu->cxx && !cu->scoped ? 0 : DI_NO_SCOPE);
	if (cu->cxx)
		cu->scoped = 1;
	for (i = 0; i < pend.nr; i++) { /* may grow while we go */
		Dwarf_Die d = di_die_at(di, pend.offs[i]);

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
		qsort(cu->roots, cu->nr_roots, sizeof(*cu->roots), di_range_cmp);
	calls_finish(cu);
}
