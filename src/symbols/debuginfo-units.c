/* A file's compilation units: found by address through .debug_aranges (else a scan of every
 * unit's ranges), by .debug_info offset, and loaded (functions, inlines, lines) on first use. */
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "debuginfo-int.h"

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
	int tag = di_die_tag(di, cu_die);

	if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit && tag != DW_TAG_skeleton_unit)
		return NULL;
	if (dwarf_dieoffset(cu_die, &off, &err) != DW_DLV_OK ||
	    dwarf_die_CU_offset_range(cu_die, &hdr, &len, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
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
	di_drop_err(di, err);
	err = NULL;
	if (dwarf_srclang(cu_die, &lang, &err) == DW_DLV_OK)
		cu->cxx = lang_is_cxx(lang);
	di_drop_err(di, err);
	cu->skeleton = !di->dwo && (tag == DW_TAG_skeleton_unit ||
				    di_die_string(di, cu_die, DW_AT_GNU_dwo_name) != NULL);
	di_die_ranges(di, cu_die, version, cu->base, &cu->ranges, &cu->nr_ranges, &alloc, cu->idx);
	if (cu->nr_ranges > 1)
		qsort(cu->ranges, cu->nr_ranges, sizeof(*cu->ranges), di_range_cmp);

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
int di_next_cu_header(struct debuginfo *di)
{
	Dwarf_Unsigned hdr_len = 0, typeoff = 0, next = 0;
	Dwarf_Half version = 0, addr_size = 0, len_size = 0, ext_size = 0, unit_type = 0;
	Dwarf_Off abbrev = 0;
	Dwarf_Sig8 sig;
	Dwarf_Error err = NULL;

	if (dwarf_next_cu_header_d(di->dbg, 1, &hdr_len, &version, &abbrev, &addr_size, &len_size,
				   &ext_size, &sig, &typeoff, &next, &unit_type,
				   &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return -1;
	}
	di->info_state = 1; /* the first header loads .debug_info */
	return 0;
}

/* The CU DIE of the CU libdwarf's walk is at, or NULL. */
Dwarf_Die di_walk_cu_die(struct debuginfo *di)
{
	Dwarf_Error err = NULL;
	Dwarf_Die cu_die = NULL;

	if (dwarf_siblingof_b(di->dbg, NULL, 1, &cu_die, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
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
	if (di_info_ensure(di, 0) < 0 || di_next_cu_header(di))
		return -1;
	cu_die = di_walk_cu_die(di);
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
	if (di_sec_all(di, ".debug_info") < 0)
		return;
	while (!di_next_cu_header(di)) {
		Dwarf_Error err = NULL;
		Dwarf_Die cu_die;
		Dwarf_Off off = 0;
		size_t pos;

		if (!(cu_die = di_walk_cu_die(di)))
			continue;
		/* CUs read before the walk are in by_off[0 .. known) */
		if (dwarf_dieoffset(cu_die, &off, &err) != DW_DLV_OK) {
			di_drop_err(di, err);
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
			di_push_range(&di->cu_ranges, &di->nr_cu_ranges, &alloc_ranges,
				      cu->ranges[j].lo, cu->ranges[j].hi, cu->idx);
	}
	if (di->nr_cu_ranges > 1)
		qsort(di->cu_ranges, di->nr_cu_ranges, sizeof(*di->cu_ranges), di_range_cmp);
}

/* The CU holding .debug_info offset @off, or NULL: a CU read already, else the one libdwarf
 * finds for the DIE at @off. */
struct di_cu *di_cu_of_offset(struct debuginfo *di, Dwarf_Off off)
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
	die = di_die_at(di, off);
	if (!die)
		return NULL;
	if (dwarf_CU_dieoffset_given_die(die, &cu_off, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		dwarf_dealloc_die(die);
		return NULL;
	}
	dwarf_dealloc_die(die);
	die = di_die_at(di, cu_off);
	if (!die)
		return NULL;
	cu = cu_get(di, die, 1);
	dwarf_dealloc_die(die);
	return cu && off >= cu->die_off && off < cu->end_off ? cu : NULL;
}

/* Record the C++ scopes of @cu without loading its functions. */
void di_cu_scan_scopes(struct debuginfo *di, struct di_cu *cu)
{
	Dwarf_Die cu_die;

	if (cu->scoped || !cu->cxx)
		return;
	cu->scoped = 1;
	cu_die = di_die_at(di, cu->die_off);
	if (!cu_die)
		return;
	di_collect_roots(di, cu, cu_die, 0, NULL, 0);
	dwarf_dealloc_die(cu_die);
}

int di_cu_load(struct debuginfo *di, struct di_cu *cu)
{
	struct di_splitctx ctx;
	struct debuginfo *sdi = NULL;
	Dwarf_Die cu_die, split = NULL;
	Dwarf_Unsigned lang = 0;
	Dwarf_Error err = NULL;

	if (cu->state)
		return cu->state;
	cu->state = -1;
	cu_die = di_die_at(di, cu->die_off);
	if (!cu_die)
		return -1;
	di_load_lines(di, cu, cu_die); /* a skeleton keeps the line table */
	if (cu->skeleton && (split = di_split_cu_die(di, cu_die, &sdi))) {
		/* the functions are in the split unit; its addresses are in our .debug_addr
		 * (di_split_context) */
		if (dwarf_srclang(split, &lang, &err) == DW_DLV_OK)
			cu->cxx = lang_is_cxx(lang);
		di_drop_err(sdi, err);
		di_split_context(di, cu, cu_die, sdi, split, &ctx);
		sdi->split = &ctx;
		di_load_functions(sdi, cu, split);
		sdi->split = NULL;
		dwarf_dealloc_die(split);
	} else {
		di_load_functions(di, cu, cu_die);
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
	if (a->hdr_off >= di->info_size || info_load(di) <= 0 ||
	    di_info_ensure(di, a->hdr_off) < 0 ||
	    dwarf_get_cu_die_offset_given_cu_header_offset_b(di->dbg, a->hdr_off, 1, &die_off,
							     &err) != DW_DLV_OK) {
		di_drop_err(di, err);
		return NULL;
	}
	die = di_die_at(di, die_off);
	if (!die)
		return NULL;
	if (dwarf_CU_dieoffset_given_die(die, &cu_off, &err) == DW_DLV_OK && cu_off == die_off &&
	    dwarf_die_CU_offset_range(die, &hdr, &len, &err) == DW_DLV_OK && hdr == a->hdr_off)
		cu = cu_get(di, die, 1);
	di_drop_err(di, err);
	dwarf_dealloc_die(die);
	if (!cu)
		return NULL;
	a->state = 1;
	a->cu = cu->idx;
	return cu;
}

/* The CU whose own ranges (DW_AT_low_pc/high_pc or DW_AT_ranges) contain @addr: the one
 * .debug_aranges names if its ranges agree, else found by the walk over all CUs. */
struct di_cu *di_cu_for_addr(struct debuginfo *di, uint64_t addr)
{
	struct di_cu *cu = NULL;
	long i = di_range_find(di->aranges, di->nr_aranges, addr);

	if (i >= 0) {
		cu = acu_cu(di, di->aranges[i].idx);
		if (cu && di_range_find(cu->ranges, cu->nr_ranges, addr) >= 0)
			return cu;
	}
	cu_scan_all(di);
	i = di_range_find(di->cu_ranges, di->nr_cu_ranges, addr);
	return i >= 0 ? di->cus[di->cu_ranges[i].idx] : NULL;
}

/* .debug_aranges (DWARF 5 section 6.1.2), one set per CU:
 * "unit_length(4|12) version(2)=2 debug_info_offset(4|8) address_size(1) segment_size(1)
 *  padding to 2*address_size, then (address, length) pairs up to (0, 0)"
 * Sets that do not parse are skipped; what is left is a hint that di_cu_for_addr() checks. */
void di_parse_aranges(struct debuginfo *di, const uint8_t *p, size_t size, int big)
{
	size_t off = 0, alloc_ranges = 0, alloc_acus = 0;

	while (size - off >= 4 && di->nr_aranges < DI_MAX_RANGES && di->nr_acus < DI_MAX_CUS) {
		uint64_t len = di_read_uint(p + off, 4, big), cu_off, lo, l;
		size_t hdr = 4, set = off, end, q;
		unsigned int off_size = 4, asz, tuple;

		if (len == 0xffffffffu) {
			if (size - off < 12)
				return;
			len = di_read_uint(p + off + 4, 8, big);
			hdr = 12;
			off_size = 8;
		} else if (len >= 0xfffffff0u) {
			return;
		}
		if (len > size - off - hdr)
			return;
		q = off + hdr;
		end = off = q + (size_t)len; /* the next set */
		if (len < 2 + off_size + 2 || di_read_uint(p + q, 2, big) != 2)
			continue;
		cu_off = di_read_uint(p + q + 2, off_size, big);
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
			lo = di_read_uint(p + q, asz, big);
			l = di_read_uint(p + q + asz, asz, big);
			if (!lo && !l)
				break;
			if (l <= UINT64_MAX - lo)
				di_push_range(&di->aranges, &di->nr_aranges, &alloc_ranges, lo,
					      lo + l, (uint32_t)(di->nr_acus - 1));
		}
	}
	if (di->nr_aranges > 1)
		qsort(di->aranges, di->nr_aranges, sizeof(*di->aranges), di_range_cmp);
}
