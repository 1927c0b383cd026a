/* DWARF line tables and inlined-subroutine chains through libdwarf: opening a file's DWARF
 * (its own or a separate debug file's, split units beside it), freeing it, and the lookups the
 * symbolizer asks for. Demangling and the symbol tables are elsewhere. Lazy: open reads
 * .debug_aranges only; a CU is read when a lookup lands in it. The parts:
 * src/symbols/debuginfo-int.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "debuginfo-int.h"

void di_drop_err(struct debuginfo *di, Dwarf_Error err)
{
	if (err)
		dwarf_dealloc_error(di->dbg, err);
}

uint64_t di_read_uint(const uint8_t *p, unsigned int size, int big)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[big ? size - 1 - i : i] << (8 * i);
	return v;
}

int di_range_cmp(const void *a, const void *b)
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
long di_range_find(const struct di_range *r, size_t n, uint64_t addr)
{
	long i = range_floor(r, n, addr);
	int tries;

	for (tries = 0; i >= 0 && tries < 8; i--, tries++)
		if (addr < r[i].hi)
			return i;
	return -1;
}

/* Open @path's DWARF of group @group (DW_GROUPNUMBER_BASE or _DWO). */
struct debuginfo *di_open_group(const char *path, unsigned int group)
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
	ret = di_sections_read(di);
	if (!ret)
		ret = di_check_sections(di, group == DW_GROUPNUMBER_DWO ? ".debug_info.dwo"
									: ".debug_info");
	if (ret) {
		debuginfo_free(di);
		errno = -ret;
		return NULL;
	}
	di->iface.object = di;
	di->iface.methods = &di_obj_methods;
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
	long i = di_sec_find(di, di->dwo ? ".debug_info.dwo" : ".debug_info");

	*ready = *size = i < 0 ? 0 : di->secs[i].size;
	if (i >= 0 && di->secs[i].stream)
		*ready = elfsection_stream_ready(di->secs[i].stream);
	else if (i >= 0 && di->secs[i].comp != ELFSECTION_PLAIN && di->secs[i].state <= 0)
		*ready = 0;
}

struct debuginfo *debuginfo_open(const char *path)
{
	return di_open_group(path, DW_GROUPNUMBER_BASE);
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
	cu = di_cu_for_addr(di, vaddr);
	if (!cu || di_cu_load(di, cu) < 0)
		return 0;
	row = cu_row(cu, vaddr);

	ci = di_range_find(cu->roots, cu->nr_roots, vaddr);
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
	long i = di_range_find(cu->roots, cu->nr_roots, vaddr);

	return i >= 0 ? &cu->nodes[cu->roots[i].idx] : NULL;
}

/* gdb's entry pc of a function: the start of its first range (in DWARF order). */
static uint64_t node_entry(const struct di_cu *cu, const struct di_node *n)
{
	return cu->node_ranges[n->range_first].lo;
}

int debuginfo_func_entry(struct debuginfo *di, uint64_t vaddr, uint64_t *entry)
{
	struct di_cu *cu = di ? di_cu_for_addr(di, vaddr) : NULL;
	const struct di_node *n;

	if (!cu || di_cu_load(di, cu) < 0 || !(n = root_at(cu, vaddr)) || !n->nr_ranges)
		return -ENOENT;
	*entry = node_entry(cu, n);
	return 0;
}

int debuginfo_call_site(struct debuginfo *di, uint64_t pc, struct debuginfo_call *out)
{
	struct di_cu *cu = di && pc ? di_cu_for_addr(di, pc - 1) : NULL;
	size_t lo = 0, hi;

	/* the CU of the call instruction, which ends at @pc */
	if (!cu || di_cu_load(di, cu) < 0)
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
	struct di_cu *cu = di ? di_cu_for_addr(di, entry) : NULL;
	const struct di_node *node;

	if (!cu || di_cu_load(di, cu) < 0 || !(node = root_at(cu, entry)) || !node->nr_ranges ||
	    node_entry(cu, node) != entry)
		return -ENOENT;
	*calls = cu->tails + node->tail_first;
	*n = node->nr_tails;
	return 0;
}
