/* Split DWARF (gcc/clang -gsplit-dwarf): the .dwo or .dwp file a skeleton unit names, the
 * split unit behind it by its dwo_id, and where its addresses and range lists are. */
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "debuginfo-int.h"

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
	di_drop_err(di, err);
	if (di_die_udata(di, cu_die, DW_AT_GNU_dwo_id, &v))
		return -1;
	*id = v;
	return 0;
}

/* @path opened as split DWARF, once; a .dwo's units are indexed by dwo_id. NULL when it
 * cannot be read. It is not tied to @di with dwarf_set_tied_dbg(): libdwarf 20210528 then
 * takes the skeleton's DW_AT_str_offsets_base for the split unit's strings of every unit but
 * the first; perch reads the split unit's indexed addresses and range lists itself
 * (di_split_context()), nothing else needs @di. */
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
	sp->di = di_open_group(path, DW_GROUPNUMBER_DWO);
	if (!sp->di)
		return NULL;
	while (sp->nr < DI_MAX_CUS && !di_next_cu_header(sp->di)) {
		Dwarf_Die d = di_walk_cu_die(sp->di);
		uint64_t id;

		if (!d)
			continue;
		if (!unit_dwo_id(sp->di, d, &id)) {
			ALLOC_GROW(sp->ids, sp->nr + 1, alloc);
			sp->offs = xrealloc(sp->offs, alloc * sizeof(*sp->offs));
			sp->ids[sp->nr] = id;
			sp->offs[sp->nr++] = di_die_offset(sp->di, d);
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
	di_drop_err(sp->di, err);
	for (size_t i = 0; i < sp->nr; i++)
		if (sp->ids[i] == id)
			return di_die_at(sp->di, sp->offs[i]);
	return NULL;
}

/* The split unit of skeleton @skel, in the .dwo it names (absolute; under DW_AT_comp_dir;
 * next to this file) or in the .dwp next to this file (<file>.dwp), as gdb looks for them:
 * its DIE, with the debuginfo that reads it in *@sdi. NULL when none has it. */
Dwarf_Die di_split_cu_die(struct debuginfo *di, Dwarf_Die skel, struct debuginfo **sdi)
{
	const char *name = di_die_string(di, skel, DW_AT_dwo_name), *dir, *base, *slash;
	char *paths[5] = {NULL};
	struct di_split *sp;
	Dwarf_Die die = NULL;
	size_t n = 0, i;
	uint64_t id;

	if (!name)
		name = di_die_string(di, skel, DW_AT_GNU_dwo_name);
	if (unit_dwo_id(di, skel, &id))
		return NULL;
	dir = di_die_string(di, skel, DW_AT_comp_dir);
	slash = strrchr(di->path, '/');
	if (name && name[0] == '/') {
		paths[n++] = xstrdup(name);
	} else if (name) {
		if (dir)
			paths[n++] = di_path_join(dir, name);
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
void di_split_context(struct debuginfo *di, const struct di_cu *cu, Dwarf_Die skel,
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
	if ((!di_die_sec_offset(di, skel, DW_AT_addr_base, &off) ||
	     !di_die_sec_offset(di, skel, DW_AT_GNU_addr_base, &off)) &&
	    !di_sec_get(di, ".debug_addr", &data, &size) && off <= size) {
		x->addr = data + off;
		x->addr_size = size - (size_t)off;
	}
	if (!di_sec_get(di, ".debug_ranges", &data, &size)) {
		off = 0;
		if (di_die_sec_offset(di, skel, DW_AT_GNU_ranges_base, &off) || off > size)
			off = 0;
		x->ranges = data + off;
		x->ranges_size = size - (size_t)off;
	}
	if (!di_sec_get(sdi, ".debug_rnglists.dwo", &data, &size)) {
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
		di_drop_err(sdi, err);
	}
}
