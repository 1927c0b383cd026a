/* Line tables: the rows and sequences of a compilation unit, its file names joined with their
 * directories, and the implicit file rows libdwarf 20210528 leaves out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/ehframe.h"
#include "debuginfo-int.h"

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
char *di_path_join(const char *dir, const char *name)
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
		return di_path_join(NULL, name);
	if (version >= 5 || dir_idx) {
		if (dir_idx > INT32_MAX ||
		    dwarf_srclines_include_dir_data(ctx, (Dwarf_Signed)dir_idx, &dir, &err) !=
			DW_DLV_OK) {
			di_drop_err(di, err);
			dir = NULL;
		}
	}
	if (dir_idx == 0) /* the compilation directory */
		return di_path_join(dir ? dir : comp_dir, name);
	rel = di_path_join(dir, name);
	if (!rel || rel[0] == '/' || !comp_dir)
		return rel;
	full = di_path_join(comp_dir, rel);
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
		di_drop_err(di, err);
		return;
	}
	if (dwarf_srclines_comp_dir(ctx, &comp_dir, &err) != DW_DLV_OK || !comp_dir || !*comp_dir) {
		di_drop_err(di, err);
		err = NULL;
		comp_dir = NULL;
		/* DWARF 5 without DW_AT_comp_dir: directory entry 0 is the same thing */
		if (line_version >= 5 &&
		    dwarf_srclines_include_dir_data(ctx, 0, &dir0, &err) == DW_DLV_OK && dir0 &&
		    *dir0)
			comp_dir = dir0;
		di_drop_err(di, err);
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
			di_drop_err(di, err);
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
	len = di_read_uint(p + c.pos, 4, big);
	c.pos += 4;
	if (len == 0xffffffffu) {
		if (size - c.pos < 8)
			return -1;
		len = di_read_uint(p + c.pos, 8, big);
		c.pos += 8;
		off_size = 8;
	}
	/* version(2) address_size(1) seg_sel_size(1) header_length(off_size) then
	 * min_inst(1) max_ops(1) default_is_stmt(1) line_base(1) line_range(1) opcode_base(1) */
	if (len > size - c.pos || len < 4 + off_size + 6 || di_read_uint(p + c.pos, 2, big) != 5)
		return -1;
	end = c.pos + (size_t)len;
	hdr_len = di_read_uint(p + c.pos + 4, off_size, big);
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
/* The line section as far as decompressed, which di_line_ensure(@off) made cover the table at
 * @off: 0 with *@data and *@size set, or -errno. */
static int line_prefix(struct debuginfo *di, uint64_t off, const uint8_t **data, size_t *size)
{
	long i = di_sec_find(di, di->dwo ? ".debug_line.dwo" : ".debug_line");
	int ret;

	if (i < 0)
		return -ENOENT;
	ret = di_line_ensure(di, off);
	if (!ret)
		ret = di_sec_load(di, (size_t)i);
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

	if (di_die_sec_offset(di, cu_die, DW_AT_stmt_list, &off) ||
	    line_prefix(di, off, &data, &size))
		return NULL;
	implicit = xcalloc(nr, 1);
	if (line_implicit_file_rows(data, size, off, di->big, implicit, nr) != (long)nr) {
		free(implicit);
		return NULL;
	}
	return implicit;
}

void di_load_lines(struct debuginfo *di, struct di_cu *cu, Dwarf_Die cu_die)
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
	if (!di_die_sec_offset(di, cu_die, DW_AT_stmt_list, &stmt) && di_line_ensure(di, stmt) < 0)
		return;
	if (dwarf_srclines_b(cu_die, &version, &tables, &ctx, &err) != DW_DLV_OK) {
		di_drop_err(di, err);
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
	di_drop_err(di, err);
	dwarf_srclines_dealloc_b(ctx);
}
