/* Unit tests for cfi: recorded x86_64 and aarch64 snapshots walked with cfi_step against gdb's
 * backtraces (and libunwind's on x86_64 hosts), every row of real binaries against readelf's
 * frames-interp, hand-built CIE/FDE programs, and hostile bytes. Fixtures: fixtures/cfi/. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "perch/arch.h"
#include "perch/base/xalloc.h"
#include "perch/symbols/cfi.h"
#include "perch/symbols/elffile.h"
#include "testutil.h"

/* insn_mask of PTRACE_GETREGSET(NT_ARM_PAC_MASK) on Linux with 48-bit VAs; qemu-user uses the
 * same layout (docs/design/arm64-qemu.md, section 6) */
#define PAC_MASK   0x007f000000000000ULL
#define MAX_FRAMES 64

static char *fixture_path(const char *name)
{
	return testutil_fixture_path("cfi/%s", name);
}

static struct elffile *open_fixture(const char *name)
{
	char *path = fixture_path(name);
	struct elffile *ef = elffile_open(path);

	ck_assert_msg(ef, "elffile_open(%s): %s", path, strerror(errno));
	free(path);
	return ef;
}

/* ---- snapshots: <bin>.<point>.{regs,stack,frames} written by fixtures/cfi/build.sh ---- */

struct snap {
	struct elffile *ef;
	struct cfi_table *t;
	const struct perch_arch *a;
	struct perch_regs regs;
	uint64_t stack_addr;
	uint8_t *stack;
	size_t stack_len;
	uint64_t frames[MAX_FRAMES]; /* gdb's */
	int nr_frames;
};

static FILE *snap_file(const char *bin, const char *point, const char *ext)
{
	char *name = xasprintf("%s.%s.%s", bin, point, ext), *path = fixture_path(name);
	FILE *f = fopen(path, "rb");

	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	free(path);
	free(name);
	return f;
}

static void snap_load(struct snap *s, const char *bin, const char *point)
{
	unsigned long long addr, v;
	char line[256], *path;
	size_t len;
	int reg;
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->ef = open_fixture(bin);
	s->a = perch_arch_by_machine(s->ef->machine);
	ck_assert_ptr_nonnull(s->a);
	s->t = cfi_table_new(s->ef);
	ck_assert_ptr_nonnull(s->t);

	f = snap_file(bin, point, "regs");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "stack %llx %zu", &addr, &len) == 2) {
			s->stack_addr = addr;
			s->stack_len = len;
		} else if (sscanf(line, "reg %d %llx", &reg, &v) == 2) {
			ck_assert_int_lt(reg, s->a->nr_regs);
			s->regs.r[reg] = v;
			s->regs.valid |= 1ULL << reg;
		}
	}
	fclose(f);
	ck_assert_uint_eq(s->regs.valid, (1ULL << s->a->nr_regs) - 1);

	path = testutil_fixture_path("cfi/%s.%s.stack", bin, point);
	s->stack = testutil_read_file(path, &len);
	ck_assert_uint_eq(len, s->stack_len);
	free(path);

	f = snap_file(bin, point, "frames");
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%llx", &v) == 1 && s->nr_frames < MAX_FRAMES)
			s->frames[s->nr_frames++] = v;
	fclose(f);
	ck_assert_int_ge(s->nr_frames, 5);
}

static void snap_release(struct snap *s)
{
	cfi_table_free(s->t);
	elffile_free(s->ef);
	free(s->stack);
}

/* The stack from the snapshot, everything else from the binary's file-backed segments. */
static int snap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct snap *s = ctx;
	const uint8_t *p;

	if (addr >= s->stack_addr && addr - s->stack_addr < s->stack_len &&
	    len <= s->stack_len - (addr - s->stack_addr)) {
		memcpy(buf, s->stack + (addr - s->stack_addr), len);
		return 0;
	}
	p = elffile_vaddr_ptr(s->ef, addr, len);
	if (!p)
		return -EFAULT;
	memcpy(buf, p, len);
	return 0;
}

/* Walk @s with cfi_step. Returns the number of pcs; *@end gets the last step's result. */
static int walk(const struct snap *s, uint64_t mask, uint64_t *pcs, uint64_t *sps,
		unsigned int *all_flags, int *end)
{
	struct perch_mem mem = {snap_read, (void *)s};
	struct perch_regs cur = s->regs, next;
	unsigned int in_flags = CFI_PC_EXACT, out_flags;
	int n = 0;

	*all_flags = 0;
	*end = 0;
	pcs[n] = perch_regs_pc(s->a, &cur);
	sps[n++] = perch_regs_sp(s->a, &cur);
	while (n < MAX_FRAMES) {
		*end = cfi_step(s->a, s->t, 0, &cur, in_flags, &mem, mask, &next, &out_flags);
		if (*end < 0)
			break;
		*all_flags |= out_flags;
		in_flags = out_flags & CFI_PC_EXACT;
		pcs[n] = perch_regs_pc(s->a, &next);
		sps[n++] = perch_regs_sp(s->a, &next);
		cur = next;
	}
	return n;
}

static void assert_frames(const struct snap *s, const char *what, const uint64_t *pcs, int n)
{
	for (int i = 0; i < n && i < s->nr_frames; i++)
		ck_assert_msg(pcs[i] == s->frames[i], "%s: frame %d is %#llx, gdb says %#llx", what,
			      i, (unsigned long long)pcs[i], (unsigned long long)s->frames[i]);
	ck_assert_msg(n == s->nr_frames, "%s: %d frames, gdb has %d", what, n, s->nr_frames);
}

static const struct {
	const char *bin, *point;
} snaps[] = {
    {"chain-x86_64", "leaf"},	     {"chain-x86_64", "entry"},
    {"chain-x86_64", "alloca"},	     {"chain-x86_64", "epilogue"},
    {"chain-x86_64-dbg", "leaf"},    {"chain-x86_64-dbg", "entry"},
    {"chain-x86_64-dbg", "alloca"},  {"chain-x86_64-dbg", "epilogue"},
    {"chain-aarch64", "leaf"},	     {"chain-aarch64", "entry"},
    {"chain-aarch64", "prologue"},   {"chain-aarch64", "alloca"},
    {"chain-aarch64", "epilogue"},   {"chain-aarch64-pac", "leaf"},
    {"chain-aarch64-pac", "entry"},  {"chain-aarch64-pac", "prologue"},
    {"chain-aarch64-pac", "alloca"}, {"chain-aarch64-pac", "epilogue"},
};

/* Every snapshot unwinds to exactly gdb's frames, and ends with -ENOENT at _start (its CFI
 * marks the return address undefined), with stack pointers strictly growing. */
START_TEST(test_snapshot_vs_gdb)
{
	uint64_t pcs[MAX_FRAMES], sps[MAX_FRAMES];
	unsigned int flags;
	struct snap s;
	char what[96];
	int n, end;

	snap_load(&s, snaps[_i].bin, snaps[_i].point);
	snprintf(what, sizeof(what), "%s.%s", snaps[_i].bin, snaps[_i].point);
	n = walk(&s, PAC_MASK, pcs, sps, &flags, &end);
	assert_frames(&s, what, pcs, n);
	ck_assert_msg(end == -ENOENT, "%s: last step %d", what, end);
	for (int i = 1; i < n; i++)
		ck_assert_msg(sps[i] > sps[i - 1] || (i == 1 && sps[1] == sps[0]),
			      "%s: sp of frame %d does not grow", what, i);
	snap_release(&s);
}
END_TEST

/* The PAC build really has signed return addresses: raw, they are not code addresses, the
 * row says so (CFI_RA_SIGNED), and clearing the mask recovers gdb's frames. Without a mask
 * from the kernel, the default (bits 48-63) works too. */
START_TEST(test_pac_signed)
{
	uint64_t pcs[MAX_FRAMES], sps[MAX_FRAMES], w;
	unsigned int flags;
	struct snap s;
	int n, end, signed_words = 0;

	snap_load(&s, "chain-aarch64-pac", "leaf");
	for (size_t off = 0; off + 8 <= s.stack_len; off += 8) {
		memcpy(&w, s.stack + off, 8);
		for (int i = 1; i < s.nr_frames; i++)
			if ((w & PAC_MASK) && (w & ~PAC_MASK) == s.frames[i])
				signed_words++;
	}
	ck_assert_int_ge(signed_words, 3); /* inner -> middle -> outer -> main */
	n = walk(&s, PAC_MASK, pcs, sps, &flags, &end);
	ck_assert(flags & CFI_RA_SIGNED);
	assert_frames(&s, "pac leaf", pcs, n);
	n = walk(&s, 0, pcs, sps, &flags, &end);
	assert_frames(&s, "pac leaf, default mask", pcs, n);
	snap_release(&s);

	/* after paciasp, before the store: the signed RA is still in x30 */
	snap_load(&s, "chain-aarch64-pac", "prologue");
	ck_assert_uint_ne(s.regs.r[30] & PAC_MASK, 0);
	n = walk(&s, PAC_MASK, pcs, sps, &flags, &end);
	assert_frames(&s, "pac prologue", pcs, n);
	snap_release(&s);

	/* the unsigned build never sets the flag */
	snap_load(&s, "chain-aarch64", "leaf");
	walk(&s, PAC_MASK, pcs, sps, &flags, &end);
	ck_assert(!(flags & CFI_RA_SIGNED));
	snap_release(&s);
}
END_TEST

/* Callee-saved registers come back: in the x86_64 leaf snapshot, middle keeps a and b in r12
 * and rbp (pushed in its prologue); main passed argc + 1000 = 1001 to outer, and outer passes
 * (n, n + 1) to middle. */
START_TEST(test_callee_saved)
{
	struct perch_mem mem;
	struct perch_regs cur, next;
	unsigned int in_flags = CFI_PC_EXACT, out_flags;
	struct snap s;
	int i;

	snap_load(&s, "chain-x86_64", "leaf");
	mem = (struct perch_mem){snap_read, &s};
	cur = s.regs;
	/* leaf -> inner -> middle: the registers of middle's frame */
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(cfi_step(s.a, s.t, 0, &cur, in_flags, &mem, 0, &next, &out_flags),
				 0);
		in_flags = out_flags & CFI_PC_EXACT;
		cur = next;
	}
	ck_assert_uint_eq(cur.r[16], s.frames[2]);
	ck_assert(cur.valid & (1ULL << 12));
	ck_assert_uint_eq(cur.r[12], 1001); /* a */
	ck_assert_uint_eq(cur.r[6], 1002);  /* b */
	/* middle -> outer: r12 and rbp are restored from middle's pushes */
	ck_assert_int_eq(cfi_step(s.a, s.t, 0, &cur, 0, &mem, 0, &next, &out_flags), 0);
	ck_assert_uint_eq(next.r[16], s.frames[3]);
	snap_release(&s);
}
END_TEST

#if defined(__x86_64__)
#include <libunwind.h>

/* libunwind's own search over an .eh_frame_hdr table (what _UPT_find_proc_info uses) */
#define lu_search_table UNW_OBJ(dwarf_search_unwind_table)
extern int lu_search_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
			   unw_proc_info_t *pi, int need_unwind_info, void *arg);

static int lu_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
			 void *arg)
{
	(void)as;
	if (write)
		return -UNW_EREADONLYREG;
	return snap_read(arg, addr, val, sizeof(*val)) < 0 ? -UNW_EINVAL : 0;
}

static int lu_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
			 void *arg)
{
	const struct snap *s = arg;

	(void)as;
	if (write || reg < 0 || reg >= s->a->nr_regs)
		return -UNW_EBADREG;
	*val = s->regs.r[reg];
	return 0;
}

static int lu_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			     int need_unwind_info, void *arg)
{
	const struct snap *s = arg;
	const struct elffile *ef = s->ef;
	const uint8_t *hdr = elffile_vaddr_ptr(ef, ef->eh_frame_hdr_vaddr, 12);
	uint64_t lo = UINT64_MAX, hi = 0;
	unw_dyn_info_t di;
	uint32_t count;

	/* version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 */
	if (!hdr || hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return -UNW_ENOINFO;
	memcpy(&count, hdr + 8, 4);
	for (size_t i = 0; i < ef->nr_loads; i++) {
		if (!(ef->loads[i].flags & PF_X))
			continue;
		if (ef->loads[i].vaddr < lo)
			lo = ef->loads[i].vaddr;
		if (ef->loads[i].vaddr + ef->loads[i].memsz > hi)
			hi = ef->loads[i].vaddr + ef->loads[i].memsz;
	}
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = lo;
	di.end_ip = hi;
	di.u.rti.segbase = ef->eh_frame_hdr_vaddr;
	di.u.rti.table_data = ef->eh_frame_hdr_vaddr + 12;
	di.u.rti.table_len = count * 8 / sizeof(unw_word_t);
	return lu_search_table(as, ip, &di, pi, need_unwind_info, arg);
}

static void lu_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as, (void)pi, (void)arg;
}

static int lu_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as, (void)addr, (void)arg;
	return -UNW_ENOINFO;
}

static unw_accessors_t lu_accessors = {
    .find_proc_info = lu_find_proc_info,
    .put_unwind_info = lu_put_unwind_info,
    .get_dyn_info_list_addr = lu_get_dyn_info_list_addr,
    .access_mem = lu_access_mem,
    .access_reg = lu_access_reg,
};

/* The same snapshots through libunwind (x86_64 only: libunwind unwinds the host's arch):
 * the same pcs and stack pointers, frame by frame. */
START_TEST(test_x86_64_vs_libunwind)
{
	static const char *const points[] = {"leaf", "entry", "alloca", "epilogue"};
	uint64_t pcs[MAX_FRAMES], sps[MAX_FRAMES];
	unsigned int flags;
	unw_addr_space_t as;
	unw_cursor_t c;
	struct snap s;
	int n, end, i = 0;

	snap_load(&s, "chain-x86_64", points[_i]);
	n = walk(&s, 0, pcs, sps, &flags, &end);
	as = unw_create_addr_space(&lu_accessors, 0);
	ck_assert_ptr_nonnull(as);
	ck_assert_int_eq(unw_init_remote(&c, as, &s), 0);
	do {
		unw_word_t ip, sp;

		ck_assert_int_eq(unw_get_reg(&c, UNW_REG_IP, &ip), 0);
		ck_assert_int_eq(unw_get_reg(&c, UNW_REG_SP, &sp), 0);
		ck_assert_int_lt(i, n);
		ck_assert_msg(ip == pcs[i] && sp == sps[i],
			      "%s frame %d: libunwind %#lx sp %#lx, cfi %#llx sp %#llx", points[_i],
			      i, (unsigned long)ip, (unsigned long)sp, (unsigned long long)pcs[i],
			      (unsigned long long)sps[i]);
		i++;
	} while (unw_step(&c) > 0 && i < MAX_FRAMES);
	ck_assert_int_eq(i, n);
	unw_destroy_addr_space(as);
	snap_release(&s);
}
END_TEST
#endif

/* ---- every row against readelf --debug-dump=frames-interp ---- */

static int reg_by_name(unsigned int machine, const char *name)
{
	static const char *const x86[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi",
					  "rbp", "rsp", "r8",  "r9",  "r10", "r11",
					  "r12", "r13", "r14", "r15", "rip"};
	int n;

	if (machine == EM_X86_64) {
		for (size_t i = 0; i < sizeof(x86) / sizeof(x86[0]); i++)
			if (!strcmp(name, x86[i]))
				return (int)i;
		return -1;
	}
	if (!strcmp(name, "sp"))
		return 31;
	if (name[0] == 'x' && sscanf(name + 1, "%d", &n) == 1 && n >= 0 && n <= 30)
		return n;
	return -1; /* v0-v31: columns perch does not keep */
}

/* Split a frames-interp row into cells: "r9 (r9)" is one cell. */
static int split_cells(char *line, char **cells, int max)
{
	int n = 0;

	for (char *tok = strtok(line, " \n"); tok && n < max; tok = strtok(NULL, " \n")) {
		if (tok[0] == '(' && n)
			continue;
		cells[n++] = tok;
	}
	return n;
}

static void check_cell(const struct cfi_row *row, int reg, const char *cell, uint64_t loc)
{
	const struct cfi_rule *r = &row->rules[reg];
	long long off;
	int r2;

	if (!strcmp(cell, "u"))
		ck_assert_msg(r->kind == CFI_RULE_UNSPEC || r->kind == CFI_RULE_UNDEF,
			      "%#llx reg %d: %d, readelf u", (unsigned long long)loc, reg, r->kind);
	else if (!strcmp(cell, "s"))
		ck_assert_msg(r->kind == CFI_RULE_SAME, "%#llx reg %d", (unsigned long long)loc,
			      reg);
	else if (!strcmp(cell, "exp"))
		ck_assert_msg(r->kind == CFI_RULE_EXPR, "%#llx reg %d", (unsigned long long)loc,
			      reg);
	else if (!strcmp(cell, "vexp"))
		ck_assert_msg(r->kind == CFI_RULE_VAL_EXPR, "%#llx reg %d", (unsigned long long)loc,
			      reg);
	else if (sscanf(cell, "c%lld", &off) == 1)
		ck_assert_msg(r->kind == CFI_RULE_OFFSET && r->off == off,
			      "%#llx reg %d: kind %d off %lld, readelf %s", (unsigned long long)loc,
			      reg, r->kind, (long long)r->off, cell);
	else if (sscanf(cell, "v%lld", &off) == 1)
		ck_assert_msg(r->kind == CFI_RULE_VAL_OFFSET && r->off == off, "%#llx reg %d",
			      (unsigned long long)loc, reg);
	else if (sscanf(cell, "r%d", &r2) == 1)
		ck_assert_msg(r->kind == CFI_RULE_REG && r->reg == r2, "%#llx reg %d",
			      (unsigned long long)loc, reg);
	else
		ck_abort_msg("readelf cell %s not understood", cell);
}

/* Every row of readelf --debug-dump=frames-interp in @golden_path (gzip or plain) against
 * perch's table of the ELF file @ef (named @bin in messages). Returns the number of rows. */
static int compare_rows(struct elffile *ef, const char *bin, const char *golden_path)
{
	struct cfi_table *t = cfi_table_new(ef);
	char line[4096], hdr[4096] = "";
	const char *path = golden_path;
	gzFile f = gzopen(path, "r");
	int in_fde = 0, rows = 0;
	unsigned long long fde_end = UINT64_MAX;
	struct cfi_row row;

	ck_assert_ptr_nonnull(t);
	ck_assert_msg(f, "%s", path);
	while (gzgets(f, line, sizeof(line))) {
		char *cells[128], *names[128], copy[4096];
		int nc, nn, reg;
		unsigned long long loc;
		char creg[16];
		long long coff;

		if (strstr(line, " FDE cie=")) {
			const char *pc = strstr(line, "pc=");
			unsigned long long fde_start;

			in_fde = 1;
			hdr[0] = 0;
			fde_end = UINT64_MAX;
			if (pc)
				sscanf(pc, "pc=%llx..%llx", &fde_start, &fde_end);
			continue;
		}
		if (strstr(line, " CIE ") || strstr(line, "Contents of")) {
			in_fde = 0;
			continue;
		}
		if (!in_fde)
			continue;
		if (strstr(line, "   LOC ")) {
			snprintf(hdr, sizeof(hdr), "%s", line);
			continue;
		}
		/* a row starts with a 16-digit location */
		if (!hdr[0] || strspn(line, "0123456789abcdef") != 16 ||
		    sscanf(line, "%llx ", &loc) != 1)
			continue;
		/* readelf also prints a row an FDE's program advances to at its very end (the
		 * PLT's, 0x1030 exp for pc=0x1020..0x1030): no pc of the FDE has it */
		if (loc >= fde_end)
			continue;
		snprintf(copy, sizeof(copy), "%s", hdr);
		nn = split_cells(copy, names, 128);
		nc = split_cells(line, cells, 128);
		ck_assert_msg(nc == nn, "%s: row %s under %s", bin, line, hdr);
		ck_assert_msg(cfi_row_find(t, loc, &row) == 0, "%s: no row at %#llx", bin, loc);
		ck_assert_uint_eq(row.loc, loc);
		/* CFA: "rsp+8", "x29+16" or "exp" */
		if (!strcmp(cells[1], "exp")) {
			ck_assert_int_eq(row.cfa_kind, CFI_CFA_EXPR);
		} else {
			char *plus = strrchr(cells[1], '+'), *minus = strrchr(cells[1], '-');
			char *sep = plus ? plus : minus;

			ck_assert_ptr_nonnull(sep);
			snprintf(creg, sizeof(creg), "%.*s", (int)(sep - cells[1]), cells[1]);
			coff = strtoll(sep, NULL, 10);
			ck_assert_int_eq(row.cfa_kind, CFI_CFA_REG_OFF);
			ck_assert_int_eq(row.cfa_reg, reg_by_name(ef->machine, creg));
			ck_assert_msg(row.cfa_off == coff, "%s %#llx: cfa off %lld, readelf %s",
				      bin, loc, (long long)row.cfa_off, cells[1]);
		}
		for (int i = 2; i < nc; i++) {
			reg = !strcmp(names[i], "ra") ? row.ra_reg
						      : reg_by_name(ef->machine, names[i]);
			if (reg >= 0 && reg < CFI_MAX_REGS)
				check_cell(&row, reg, cells[i], loc);
		}
		rows++;
	}
	gzclose(f);
	cfi_table_free(t);
	return rows;
}

/* The same for the fixture @bin and its golden file @golden. */
static int compare_with_readelf(const char *bin, const char *golden)
{
	struct elffile *ef = open_fixture(bin);
	char *path = fixture_path(golden);
	int rows = compare_rows(ef, bin, path);

	free(path);
	elffile_free(ef);
	return rows;
}

START_TEST(test_rows_vs_readelf)
{
	ck_assert_int_gt(compare_with_readelf("chain-x86_64", "chain-x86_64.frames-interp.gz"),
			 5000);
	ck_assert_int_gt(
	    compare_with_readelf("chain-aarch64-pac", "chain-aarch64-pac.frames-interp.gz"), 5000);
	/* .debug_frame: the chain's own functions (a CIE id of 0xffffffff, absolute pointers) */
	ck_assert_int_ge(compare_with_readelf("chain-x86_64-dbg", "chain-x86_64-dbg.frames-interp"),
			 10);
}
END_TEST

/* ---- .eh_frame_hdr against perch's own index ---- */

/* Read @path whole. */
static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	rewind(f);
	buf = malloc((size_t)n);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* Every pc of @ef's executable range, in steps of @step: the rows found through
 * .eh_frame_hdr (cfi_table_new) and through an index of the same .eh_frame
 * (cfi_table_new_raw, which never reads the header) are the same. Returns the pcs covered. */
static size_t hdr_vs_index(const struct elffile *ef, uint64_t lo, uint64_t hi, uint64_t step)
{
	struct elffile_section eh;
	struct cfi_table *a, *b;
	size_t covered = 0;

	ck_assert_int_eq(elffile_section(ef, ".eh_frame", &eh), 0);
	a = cfi_table_new(ef);
	b = cfi_table_new_raw(eh.data, (size_t)eh.size, eh.vaddr, NULL, 0, ef->machine, ef->is_64);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (uint64_t pc = lo; pc < hi; pc += step) {
		struct cfi_row ra, rb;
		int xa, xb;

		memset(&ra, 0, sizeof(ra));
		memset(&rb, 0, sizeof(rb));
		xa = cfi_row_find(a, pc, &ra);
		xb = cfi_row_find(b, pc, &rb);
		ck_assert_msg(xa == xb, "pc %#llx: %d through the header, %d through the index",
			      (unsigned long long)pc, xa, xb);
		if (xa == 0) {
			ck_assert_msg(!memcmp(&ra, &rb, sizeof(ra)), "pc %#llx: rows differ",
				      (unsigned long long)pc);
			covered++;
		}
	}
	ck_assert_uint_eq(cfi_table_count(a), cfi_table_count(b));
	cfi_table_free(a);
	cfi_table_free(b);
	return covered;
}

/* The header-driven lookup gives what the full index gives, on the system's libc (written by
 * its own linker) and on the fixture; and a header whose entries are wrong (FDE pointers
 * shifted, as a hostile or stale file may have) is noticed and the section indexed instead. */
START_TEST(test_eh_frame_hdr)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	char *fix = fixture_path("chain-x86_64");
	const char *paths[] = {fix, libc};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct elffile_section text;
		struct elffile *ef;
		uint8_t *img, *h;
		size_t size, n;
		uint32_t count;

		if (access(paths[i], R_OK) != 0)
			continue; /* libc: not on an x86_64 Debian host */
		img = slurp(paths[i], &size);
		ef = elffile_open_memory(img, size, paths[i]);
		ck_assert_ptr_nonnull(ef);
		ck_assert_msg(ef->eh_frame_hdr_size, "%s: no .eh_frame_hdr", paths[i]);
		ck_assert_int_eq(elffile_section(ef, ".text", &text), 0);
		n = hdr_vs_index(ef, text.vaddr, text.vaddr + text.size, 7);
		ck_assert_msg(n > text.size / 7 / 2, "%s: only %zu pcs covered", paths[i], n);
		/* shift every FDE pointer of the header's table by 4 bytes */
		h = (uint8_t *)elffile_vaddr_ptr(ef, ef->eh_frame_hdr_vaddr, 12);
		ck_assert_ptr_nonnull(h);
		memcpy(&count, h + 8, 4);
		for (uint32_t k = 0; k < count; k++) {
			int32_t v;

			memcpy(&v, h + 12 + 8 * k + 4, 4);
			v += 4;
			memcpy(h + 12 + 8 * k + 4, &v, 4);
		}
		ck_assert_uint_eq(hdr_vs_index(ef, text.vaddr, text.vaddr + text.size, 13),
				  hdr_vs_index(ef, text.vaddr, text.vaddr + text.size, 13));
		elffile_free(ef);
		free(img);
	}
	free(fix);
}
END_TEST

/* ---- hand-built CFI ---- */

struct bb {
	uint8_t b[4096];
	size_t n;
};

static void put(struct bb *b, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		b->b[b->n++] = (uint8_t)(v >> (8 * i));
}

static void put_bytes(struct bb *b, const uint8_t *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_uleb(struct bb *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;

		v >>= 7;
		b->b[b->n++] = (uint8_t)(c | (v ? 0x80 : 0));
	} while (v);
}

static void set32(struct bb *b, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->b[at + i] = (uint8_t)(v >> (8 * i));
}

#define FN_START 0x1000
#define FN_LEN	 0x100

/* .eh_frame: a "zR" CIE (udata4 pointers, code align @caf, data align -8, RA column @ra,
 * @cie_insns) and one FDE for [FN_START, FN_START + FN_LEN) running @insns. */
static void build_eh(struct bb *b, uint64_t caf, uint8_t ra, const uint8_t *cie_insns,
		     size_t cie_len, const uint8_t *insns, size_t len)
{
	size_t cie_at, fde_at;

	b->n = 0;
	cie_at = b->n;
	put(b, 0, 4);
	put(b, 0, 4); /* CIE id */
	put_bytes(b, (const uint8_t *)"\1zR", 4);
	put_uleb(b, caf);
	put(b, 0x78, 1); /* sleb -8 */
	put(b, ra, 1);
	put(b, 1, 1);	 /* augmentation length */
	put(b, 0x03, 1); /* DW_EH_PE_udata4 */
	put_bytes(b, cie_insns, cie_len);
	set32(b, cie_at, (uint32_t)(b->n - cie_at - 4));
	fde_at = b->n;
	put(b, 0, 4);
	put(b, b->n - cie_at, 4); /* CIE pointer: back from this field */
	put(b, FN_START, 4);
	put(b, FN_LEN, 4);
	put(b, 0, 1); /* augmentation length */
	put_bytes(b, insns, len);
	set32(b, fde_at, (uint32_t)(b->n - fde_at - 4));
	put(b, 0, 4); /* terminator */
}

/* x86_64 CIE: CFA = rsp + 8, RA at CFA - 8 */
static const uint8_t x86_cie[] = {0x0c, 7, 8, 0x90, 1};

static struct cfi_table *table_x86(struct bb *b, const uint8_t *insns, size_t len)
{
	struct cfi_table *t;

	build_eh(b, 1, 16, x86_cie, sizeof(x86_cie), insns, len);
	t = cfi_table_new_raw(b->b, b->n, 0x5000, NULL, 0, EM_X86_64, 1);
	ck_assert_ptr_nonnull(t);
	return t;
}

START_TEST(test_program_ops)
{
	/* push rbp; mov rbp, rsp; ... remember; leave; ret; restore; more body */
	static const uint8_t insns[] = {
	    0x41,	      /* advance 1 */
	    0x0e, 16,	      /* def_cfa_offset 16 */
	    0x86, 2,	      /* offset rbp at cfa-16 */
	    0x43,	      /* advance 3 -> 0x1004 */
	    0x0d, 6,	      /* def_cfa_register rbp */
	    0x08, 3,	      /* same_value rbx */
	    0x09, 12,	13,   /* r12 in r13 */
	    0x2e, 32,	      /* GNU_args_size 32 */
	    0x44,	      /* -> 0x1008 */
	    0x0a,	      /* remember_state */
	    0x0c, 7,	8,    /* def_cfa rsp+8 */
	    0xc6,	      /* restore rbp */
	    0x2f, 14,	3,    /* GNU_negative_offset_extended r14: cfa + 24 */
	    0x14, 15,	2,    /* val_offset r15 = cfa - 16 */
	    0x07, 0,	      /* undefined rax */
	    0x41,	      /* -> 0x1009 */
	    0x0b,	      /* restore_state */
	    0x02, 0x10,	      /* advance_loc1 16 -> 0x1019 */
	    0x11, 3,	0x7e, /* offset_extended_sf rbx: -2 * -8 = +16 */
	    0x06, 6,	      /* restore_extended rbp */
	};
	struct cfi_row row;
	struct bb b;
	struct cfi_table *t = table_x86(&b, insns, sizeof(insns));

	ck_assert_uint_eq(cfi_table_count(t), 1);
	ck_assert_int_eq(cfi_row_find(t, FN_START - 1, &row), -ENOENT);
	ck_assert_int_eq(cfi_row_find(t, FN_START + FN_LEN, &row), -ENOENT);

	ck_assert_int_eq(cfi_row_find(t, FN_START, &row), 0);
	ck_assert_uint_eq(row.loc, FN_START);
	ck_assert_int_eq(row.cfa_reg, 7);
	ck_assert_int_eq(row.cfa_off, 8);
	ck_assert_int_eq(row.rules[16].kind, CFI_RULE_OFFSET);
	ck_assert_int_eq(row.rules[16].off, -8);
	ck_assert_int_eq(row.rules[6].kind, CFI_RULE_UNSPEC);

	ck_assert_int_eq(cfi_row_find(t, FN_START + 3, &row), 0);
	ck_assert_uint_eq(row.loc, FN_START + 1);
	ck_assert_int_eq(row.cfa_off, 16);
	ck_assert_int_eq(row.rules[6].kind, CFI_RULE_OFFSET);
	ck_assert_int_eq(row.rules[6].off, -16);

	ck_assert_int_eq(cfi_row_find(t, FN_START + 4, &row), 0);
	ck_assert_int_eq(row.cfa_reg, 6);
	ck_assert_int_eq(row.cfa_off, 16);
	ck_assert_int_eq(row.rules[3].kind, CFI_RULE_SAME);
	ck_assert_int_eq(row.rules[12].kind, CFI_RULE_REG);
	ck_assert_int_eq(row.rules[12].reg, 13);
	ck_assert_uint_eq(row.args_size, 32);

	ck_assert_int_eq(cfi_row_find(t, FN_START + 8, &row), 0);
	ck_assert_int_eq(row.cfa_reg, 7);
	ck_assert_int_eq(row.cfa_off, 8);
	ck_assert_int_eq(row.rules[6].kind, CFI_RULE_UNSPEC); /* restored to the CIE's */
	ck_assert_int_eq(row.rules[14].kind, CFI_RULE_OFFSET);
	ck_assert_int_eq(row.rules[14].off, 24);
	ck_assert_int_eq(row.rules[15].kind, CFI_RULE_VAL_OFFSET);
	ck_assert_int_eq(row.rules[15].off, -16);
	ck_assert_int_eq(row.rules[0].kind, CFI_RULE_UNDEF);

	/* restore_state brings back the CFA and the rules of 0x1004 */
	ck_assert_int_eq(cfi_row_find(t, FN_START + 9, &row), 0);
	ck_assert_int_eq(row.cfa_reg, 6);
	ck_assert_int_eq(row.rules[6].kind, CFI_RULE_OFFSET);
	ck_assert_int_eq(row.rules[14].kind, CFI_RULE_UNSPEC);
	ck_assert_int_eq(row.rules[0].kind, CFI_RULE_UNSPEC);

	ck_assert_int_eq(cfi_row_find(t, FN_START + 0x19, &row), 0);
	ck_assert_uint_eq(row.loc, FN_START + 0x19);
	ck_assert_int_eq(row.rules[3].kind, CFI_RULE_OFFSET);
	ck_assert_int_eq(row.rules[3].off, 16);
	ck_assert_int_eq(row.rules[6].kind, CFI_RULE_UNSPEC);
	cfi_table_free(t);
}
END_TEST

static int flat_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct bb *m = ctx; /* memory at 0x8000 */

	if (addr < 0x8000 || addr - 0x8000 > m->n || len > m->n - (addr - 0x8000))
		return -EFAULT;
	memcpy(buf, m->b + (addr - 0x8000), len);
	return 0;
}

/* A step with an expression CFA (x86_64 PLT style), an expression-saved register and a
 * val_expression, then the outermost frame. */
START_TEST(test_step_expressions)
{
	static const uint8_t insns[] = {
	    /* CFA = rsp + 8 + ((rip & 15) >= 11) * 8 (the x86_64 .plt rule) */
	    0x0f, 11,	0x77, 8,    0x80, 0,	0x3f, 0x1a, 0x3b, 0x2a,
	    0x33, 0x24, 0x22, 0x10, 3,	  2,	0x71, 0x10, /* rbx saved at [rdx + 16] (expression)
							     */
	    0x16, 12,	3,    0x08, 0x05, 0x22,		    /* r12 = CFA + 5 (val_expression) */
	};
	static const uint8_t undef_ra[] = {0x41, 0x07, 16}; /* at 0x1001: RA undefined */
	struct perch_regs in = {0}, out;
	struct bb b, m = {.n = 64};
	struct perch_mem mem = {flat_read, &m};
	struct cfi_table *t = table_x86(&b, insns, sizeof(insns));
	unsigned int flags;

	/* rsp = 0x8000; pc 0x100c: (0xc >= 11) -> CFA = 0x8010, RA at 0x8008 */
	in.r[7] = 0x8000;
	in.r[16] = FN_START + 0xc;
	in.r[1] = 0x8020; /* rdx */
	in.valid = (1ULL << 7) | (1ULL << 16) | (1ULL << 1);
	for (int i = 0; i < 8; i++) {
		m.b[0x08 + i] = (uint8_t)(0x4242ULL >> (8 * i)); /* RA */
		m.b[0x30 + i] = (uint8_t)(0x7777ULL >> (8 * i)); /* rbx at rdx + 16 */
	}
	ck_assert_int_eq(
	    cfi_step(&perch_arch_x86_64, t, 0, &in, CFI_PC_EXACT, &mem, 0, &out, &flags), 0);
	ck_assert_uint_eq(out.r[16], 0x4242);
	ck_assert_uint_eq(out.r[7], 0x8010);
	ck_assert_uint_eq(out.r[3], 0x7777);
	ck_assert_uint_eq(out.r[12], 0x8015);
	ck_assert_uint_eq(flags, 0);
	/* pc 0x1004 < 11: CFA = 0x8008, RA from 0x8000 (zero): outermost */
	in.r[16] = FN_START + 4;
	ck_assert_int_eq(
	    cfi_step(&perch_arch_x86_64, t, 0, &in, CFI_PC_EXACT, &mem, 0, &out, &flags), -ENOENT);
	/* a return address pc is looked up at pc - 1: FN_START itself is not in the FDE... */
	in.r[16] = FN_START;
	ck_assert_int_eq(cfi_step(&perch_arch_x86_64, t, 0, &in, 0, &mem, 0, &out, &flags),
			 -ENODATA);
	/* ...and with a load bias it is found */
	in.r[16] = FN_START + 0x10000c;
	ck_assert_int_eq(
	    cfi_step(&perch_arch_x86_64, t, 0x100000, &in, CFI_PC_EXACT, &mem, 0, &out, &flags), 0);
	ck_assert_uint_eq(out.r[16], 0x4242);
	cfi_table_free(t);

	t = table_x86(&b, undef_ra, sizeof(undef_ra));
	in.r[16] = FN_START + 1;
	ck_assert_int_eq(
	    cfi_step(&perch_arch_x86_64, t, 0, &in, CFI_PC_EXACT, &mem, 0, &out, &flags), -ENOENT);
	/* a register the CFA needs is not known */
	in.valid &= ~(1ULL << 7);
	in.r[16] = FN_START;
	ck_assert_int_eq(
	    cfi_step(&perch_arch_x86_64, t, 0, &in, CFI_PC_EXACT, &mem, 0, &out, &flags), -EINVAL);
	cfi_table_free(t);
}
END_TEST

/* aarch64: negate_ra_state toggles, survives remember/restore, and is refused on x86_64. */
START_TEST(test_negate_ra_state)
{
	static const uint8_t a64_cie[] = {0x0c, 31, 0}; /* CFA = sp */
	static const uint8_t insns[] = {
	    0x2d,			      /* paciasp */
	    0x41, 0x0e, 16, 0x9d, 2, 0x9e, 1, /* stp x29, x30, [sp, -16]! */
	    0x41, 0x0a,			      /* remember */
	    0x2d,			      /* autiasp */
	    0x41, 0x0b,			      /* restore */
	};
	struct perch_regs in = {0}, out;
	struct bb b, m = {.n = 64};
	struct perch_mem mem = {flat_read, &m};
	struct cfi_table *t;
	struct cfi_row row;
	unsigned int flags;
	uint64_t signed_lr = 0x0035000000401234ULL;

	build_eh(&b, 4, 30, a64_cie, sizeof(a64_cie), insns, sizeof(insns));
	t = cfi_table_new_raw(b.b, b.n, 0x5000, NULL, 0, EM_AARCH64, 1);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(cfi_row_find(t, FN_START, &row), 0);
	ck_assert_int_eq(row.ra_signed, 1);
	ck_assert_int_eq(cfi_row_find(t, FN_START + 4, &row), 0);
	ck_assert_int_eq(row.ra_signed, 1);
	ck_assert_int_eq(row.cfa_off, 16);
	ck_assert_int_eq(cfi_row_find(t, FN_START + 8, &row), 0);
	ck_assert_int_eq(row.ra_signed, 0);
	ck_assert_int_eq(cfi_row_find(t, FN_START + 12, &row), 0);
	ck_assert_int_eq(row.ra_signed, 1);

	/* at FN_START: the signed RA is still in x30 */
	in.r[31] = 0x8000;
	in.r[32] = FN_START;
	in.r[30] = signed_lr;
	in.valid = (1ULL << 31) | (1ULL << 32) | (1ULL << 30);
	ck_assert_int_eq(
	    cfi_step(&perch_arch_aarch64, t, 0, &in, CFI_PC_EXACT, &mem, PAC_MASK, &out, &flags),
	    0);
	ck_assert_uint_eq(out.r[32], 0x401234);
	ck_assert_uint_eq(out.r[31], 0x8000);
	ck_assert(flags & CFI_RA_SIGNED);
	/* at FN_START + 4: from the stack */
	for (int i = 0; i < 8; i++)
		m.b[8 + i] = (uint8_t)(signed_lr >> (8 * i));
	in.r[32] = FN_START + 4;
	ck_assert_int_eq(
	    cfi_step(&perch_arch_aarch64, t, 0, &in, CFI_PC_EXACT, &mem, PAC_MASK, &out, &flags),
	    0);
	ck_assert_uint_eq(out.r[32], 0x401234);
	ck_assert_uint_eq(out.r[31], 0x8010);
	cfi_table_free(t);

	/* the same opcode means SPARC's window_save elsewhere: refused, not misread */
	build_eh(&b, 1, 16, x86_cie, sizeof(x86_cie), insns, sizeof(insns));
	t = cfi_table_new_raw(b.b, b.n, 0x5000, NULL, 0, EM_X86_64, 1);
	ck_assert_int_eq(cfi_row_find(t, FN_START, &row), -ENOEXEC);
	cfi_table_free(t);
}
END_TEST

/* .debug_frame with 64-bit lengths, CIE versions 3 and 4, an 8-byte CIE id and absolute
 * addresses; and 32-bit .debug_frame with a version 1 CIE. */
START_TEST(test_debug_frame)
{
	struct bb b = {.n = 0};
	struct cfi_table *t;
	struct cfi_row row;
	size_t cie4, cie3;
	static const uint8_t prog[] = {0x0c, 7, 8, 0x90, 1};

	/* version 4 CIE, 64-bit */
	cie4 = b.n;
	put(&b, 0xffffffff, 4);
	put(&b, 0, 8);
	put(&b, UINT64_MAX, 8);
	put_bytes(&b, (const uint8_t *)"\4", 2); /* version 4, augmentation "" */
	put(&b, 8, 1);				 /* address size */
	put(&b, 0, 1);				 /* segment selector size */
	put(&b, 1, 1);
	put(&b, 0x78, 1);
	put(&b, 16, 1); /* uleb RA column */
	put_bytes(&b, prog, sizeof(prog));
	b.b[cie4 + 4] = (uint8_t)(b.n - cie4 - 12);
	/* its FDE */
	{
		size_t at = b.n;

		put(&b, 0xffffffff, 4);
		put(&b, 0, 8);
		put(&b, cie4, 8); /* CIE pointer: section offset */
		put(&b, 0x400000, 8);
		put(&b, 0x40, 8);
		put(&b, 0x41, 1);
		put(&b, 0x0e, 1);
		put(&b, 16, 1);
		b.b[at + 4] = (uint8_t)(b.n - at - 12);
	}
	/* version 3 CIE, 32-bit, code alignment 4 */
	cie3 = b.n;
	put(&b, 0, 4);
	put(&b, 0xffffffff, 4);
	put_bytes(&b, (const uint8_t *)"\3", 2);
	put(&b, 4, 1);
	put(&b, 0x78, 1);
	put(&b, 16, 1);
	put_bytes(&b, prog, sizeof(prog));
	set32(&b, cie3, (uint32_t)(b.n - cie3 - 4));
	{
		size_t at = b.n;

		put(&b, 0, 4);
		put(&b, cie3, 4);
		put(&b, 0x500000, 8);
		put(&b, 0x40, 8);
		put(&b, 0x42, 1); /* advance 2 * 4 */
		put(&b, 0x0e, 1);
		put(&b, 32, 1);
		set32(&b, at, (uint32_t)(b.n - at - 4));
	}
	t = cfi_table_new_raw(NULL, 0, 0, b.b, b.n, EM_X86_64, 1);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(cfi_table_count(t), 2);
	ck_assert_int_eq(cfi_row_find(t, 0x400000, &row), 0);
	ck_assert_int_eq(row.cfa_off, 8);
	ck_assert_int_eq(cfi_row_find(t, 0x400001, &row), 0);
	ck_assert_int_eq(row.cfa_off, 16);
	ck_assert_int_eq(cfi_row_find(t, 0x500007, &row), 0);
	ck_assert_int_eq(row.cfa_off, 8);
	ck_assert_int_eq(cfi_row_find(t, 0x500008, &row), 0);
	ck_assert_int_eq(row.cfa_off, 32);
	ck_assert_int_eq(cfi_row_find(t, 0x500040, &row), -ENOENT);
	cfi_table_free(t);
}
END_TEST

static int expr(const uint8_t *e, size_t n, uint64_t *out)
{
	struct perch_regs regs = {0};
	struct bb m = {.n = 16};
	struct perch_mem mem = {flat_read, &m};

	regs.r[3] = 100;
	regs.valid = 1ULL << 3;
	m.b[0] = 0x11;
	m.b[1] = 0x22;
	return cfi_expr_eval(e, n, &regs, &mem, 0, 0, 0, out);
}

START_TEST(test_expressions)
{
	uint64_t v;
	uint8_t big[200];

#define EXPR(...)                                                                                  \
	({                                                                                         \
		static const uint8_t e_[] = {__VA_ARGS__};                                         \
		expr(e_, sizeof(e_), &v);                                                          \
	})
	ck_assert_int_eq(EXPR(0x73, 0x7f), 0); /* breg3 -1 */
	ck_assert_uint_eq(v, 99);
	ck_assert_int_eq(EXPR(0x92, 3, 2), 0); /* bregx 3, 2 */
	ck_assert_uint_eq(v, 102);
	ck_assert_int_eq(EXPR(0x35, 0x37, 0x1c), 0); /* 5 - 7 */
	ck_assert_uint_eq(v, (uint64_t)-2);
	ck_assert_int_eq(EXPR(0x0b, 0xfe, 0xff, 0x19), 0); /* abs(-2) */
	ck_assert_uint_eq(v, 2);
	ck_assert_int_eq(EXPR(0x11, 0x79, 0x32, 0x1b), 0); /* -7 / 2 (signed) */
	ck_assert_uint_eq(v, (uint64_t)-3);
	ck_assert_int_eq(EXPR(0x3a, 0x33, 0x1d), 0); /* 10 % 3 */
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(EXPR(0x31, 0x08, 70, 0x24), 0); /* 1 << 70 */
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(EXPR(0x31, 0x1f, 0x08, 70, 0x26), 0); /* -1 >>a 70 */
	ck_assert_uint_eq(v, UINT64_MAX);
	/* 1 2 3, rot: 3 1 2, over: 3 1 2 1, pick 3: 3 1 2 1 3, swap: 3 1 2 3 1, drop: top 3 */
	ck_assert_int_eq(EXPR(0x31, 0x32, 0x33, 0x17, 0x14, 0x15, 3, 0x16, 0x13), 0);
	ck_assert_uint_eq(v, 3);
	ck_assert_int_eq(EXPR(0x30, 0x28, 1, 0, 0x35, 0x36), 0); /* bra not taken */
	ck_assert_uint_eq(v, 6);
	ck_assert_int_eq(EXPR(0x31, 0x28, 1, 0, 0x35, 0x36), 0); /* bra taken: skips lit5 */
	ck_assert_uint_eq(v, 6);
	ck_assert_int_eq(EXPR(0x2f, 1, 0, 0x35, 0x36, 0x36, 0x29), 0); /* skip; 6 == 6 */
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(EXPR(0x38, 0x06), -EFAULT);			     /* no memory at 8 */
	ck_assert_int_eq(EXPR(0x0e, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x94, 2), 0); /* deref_size 2 */
	ck_assert_uint_eq(v, 0x2211);
	ck_assert_int_eq(EXPR(0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 3, 0), 0); /* DEX1 */
	ck_assert_uint_eq(v, 100);

	/* errors, all bounded */
	ck_assert_int_eq(EXPR(0x0e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x06), -EFAULT);
	ck_assert_int_eq(EXPR(0x74, 0), -EINVAL);	    /* breg4: not known */
	ck_assert_int_eq(EXPR(0x22), -ENOEXEC);		    /* plus on an empty stack */
	ck_assert_int_eq(EXPR(0x31, 0x30, 0x1b), -ENOEXEC); /* / 0 */
	ck_assert_int_eq(EXPR(0x31, 0x30, 0x1d), -ENOEXEC); /* % 0 */
	ck_assert_int_eq(EXPR(0x2f, 0xfd, 0xff), -ENOEXEC); /* skip -3: itself, forever */
	ck_assert_int_eq(EXPR(0x31, 0x12, 0x28, 0xfc, 0xff), -ENOEXEC); /* dup; bra back */
	ck_assert_int_eq(EXPR(0x2f, 0x10, 0), -ENOEXEC);		/* skip past the end */
	ck_assert_int_eq(EXPR(0x31, 0x15, 5), -ENOEXEC);		/* pick too deep */
	ck_assert_int_eq(EXPR(0x0c, 1, 2), -ENOEXEC);			/* truncated operand */
	ck_assert_int_eq(EXPR(0x50), -EOPNOTSUPP);			/* reg0 */
	ck_assert_int_eq(EXPR(0x91, 0), -EOPNOTSUPP);			/* fbreg */
	ck_assert_int_eq(EXPR(0x96), -ENOEXEC); /* nop: empty stack at the end */
	memset(big, 0x31, sizeof(big));		/* 200 x lit1 */
	ck_assert_int_eq(expr(big, sizeof(big), &v), -ENOEXEC);
	memset(big, 0x12, sizeof(big));
	big[0] = 0x31; /* lit1, dup x 199 */
	ck_assert_int_eq(expr(big, sizeof(big), &v), -ENOEXEC);
#undef EXPR
}
END_TEST

START_TEST(test_dex_pc_marker)
{
	/* the nterp rule on arm64: x0 = val_expression(DEX1, drop, bregx x22 0) */
	static const uint8_t insns[] = {0x16, 0,    9,	  0x0c, 0x44, 0x45,
					0x58, 0x31, 0x13, 0x92, 22,   0};
	static const uint8_t a64_cie[] = {0x0c, 31, 0};
	struct perch_regs regs = {0};
	struct cfi_table *t;
	struct cfi_row row;
	uint64_t dex;
	struct bb b;

	build_eh(&b, 4, 30, a64_cie, sizeof(a64_cie), insns, sizeof(insns));
	t = cfi_table_new_raw(b.b, b.n, 0x5000, NULL, 0, EM_AARCH64, 1);
	ck_assert_int_eq(cfi_row_find(t, FN_START + 8, &row), 0);
	regs.r[22] = 0x70001234;
	regs.valid = 1ULL << 22;
	ck_assert_int_eq(cfi_row_dex_pc(&row, &regs, NULL, &dex), 0);
	ck_assert_uint_eq(dex, 0x70001234);
	cfi_table_free(t);
	/* a row without it */
	t = table_x86(&b, insns, 0);
	ck_assert_int_eq(cfi_row_find(t, FN_START, &row), 0);
	ck_assert_int_eq(cfi_row_dex_pc(&row, &regs, NULL, &dex), -ENOENT);
	cfi_table_free(t);
}
END_TEST

/* ---- hostile input ---- */

START_TEST(test_hostile_programs)
{
	uint8_t prog[512];
	struct cfi_row row;
	struct cfi_table *t;
	struct bb b;
	size_t n;

	/* remember_state without end */
	memset(prog, 0x0a, 100);
	t = table_x86(&b, prog, 100);
	ck_assert_int_eq(cfi_row_find(t, FN_START, &row), -ENOEXEC);
	cfi_table_free(t);
	/* remember/restore pairs, many of them: fine */
	for (n = 0; n < 200; n += 2) {
		prog[n] = 0x0a;
		prog[n + 1] = 0x0b;
	}
	t = table_x86(&b, prog, n);
	ck_assert_int_eq(cfi_row_find(t, FN_START, &row), 0);
	cfi_table_free(t);
	/* restore_state on an empty stack */
	prog[0] = 0x0b;
	t = table_x86(&b, prog, 1);
	ck_assert_int_eq(cfi_row_find(t, FN_START, &row), -ENOEXEC);
	cfi_table_free(t);
	/* huge advances: loc must not wrap around back into the function */
	{
		static const uint8_t p[] = {0x04, 0xff, 0xff, 0xff, 0xff, 0x0e, 99,   0x1d, 0xff,
					    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0e, 98};

		t = table_x86(&b, p, sizeof(p));
		ck_assert_int_eq(cfi_row_find(t, FN_START + 0x80, &row), 0);
		ck_assert_int_eq(row.cfa_off, 8);
		cfi_table_free(t);
		/* with a code alignment near 2^64 */
		build_eh(&b, 1ULL << 62, 16, x86_cie, sizeof(x86_cie), p, sizeof(p));
		t = cfi_table_new_raw(b.b, b.n, 0x5000, NULL, 0, EM_X86_64, 1);
		ck_assert_int_eq(cfi_row_find(t, FN_START + 0x80, &row), 0);
		ck_assert_int_eq(row.cfa_off, 8);
		cfi_table_free(t);
	}
	/* unknown opcode, truncated operand, block longer than the FDE, CFA register 1000 */
	{
		static const uint8_t bad[][4] = {
		    {0x3f},
		    {0x0c, 7},
		    {0x0f, 0x7f, 1},
		    {0x0d, 0xe8, 7},
		};

		for (size_t i = 0; i < 4; i++) {
			t = table_x86(&b, bad[i], i == 0 ? 1 : i == 3 ? 3 : 2 + (i == 2));
			ck_assert_int_eq(cfi_row_find(t, FN_START, &row), -ENOEXEC);
			cfi_table_free(t);
		}
	}
	/* rules for columns perch does not keep are skipped, not written out of bounds */
	{
		static const uint8_t p[] = {0x05, 0xe8, 0x07, 1, 0x07, 0xff, 0xff, 0x03};

		t = table_x86(&b, p, sizeof(p));
		ck_assert_int_eq(cfi_row_find(t, FN_START, &row), 0);
		cfi_table_free(t);
	}
}
END_TEST

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

static int any_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	memset(buf, (int)(addr & 0xff), len);
	return (addr & 0xf000) ? 0 : -EFAULT;
}

/* Garbage, truncated and bit-flipped CFI: tables build or fail cleanly, rows and steps end. */
START_TEST(test_hostile_bytes)
{
	struct elffile *ef = open_fixture("chain-aarch64-pac");
	struct elffile_section sec;
	struct perch_mem mem = {any_read, NULL};
	uint8_t *buf;
	struct cfi_table *t;
	struct cfi_row row;

	ck_assert_int_eq(elffile_section(ef, ".eh_frame", &sec), 0);
	buf = xmalloc(sec.size);
	/* pure garbage as either section */
	for (int round = 0; round < 200; round++) {
		size_t n = rnd() % 2048;

		for (size_t i = 0; i < n; i++)
			buf[i] = (uint8_t)rnd();
		t = cfi_table_new_raw(round & 1 ? buf : NULL, n, 0x1000, round & 1 ? NULL : buf, n,
				      EM_AARCH64, 1);
		cfi_table_free(t);
	}
	/* truncated copies of a real .eh_frame */
	for (size_t n = 0; n < sec.size; n += 1 + n / 7) {
		memcpy(buf, sec.data, n);
		t = cfi_table_new_raw(buf, n, sec.vaddr, NULL, 0, EM_AARCH64, 1);
		if (t)
			cfi_row_find(t, 0x4007c8, &row);
		cfi_table_free(t);
	}
	/* bit flips: every lookup and step must end, whatever it returns */
	for (int round = 0; round < 300; round++) {
		memcpy(buf, sec.data, sec.size);
		for (int k = 0; k < 8; k++)
			buf[rnd() % sec.size] ^= (uint8_t)(1u << (rnd() % 8));
		t = cfi_table_new_raw(buf, sec.size, sec.vaddr, NULL, 0, EM_AARCH64, 1);
		if (!t)
			continue;
		for (int k = 0; k < 20; k++) {
			struct perch_regs in = {0}, out;
			unsigned int flags;
			uint64_t pc = 0x400000 + rnd() % 0x90000;

			cfi_row_find(t, pc, &row);
			for (int r = 0; r < 33; r++)
				in.r[r] = 0x5000 + r * 8;
			in.r[32] = pc;
			in.valid = (1ULL << 33) - 1;
			cfi_step(&perch_arch_aarch64, t, 0, &in, 0, &mem, 0, &out, &flags);
		}
		cfi_table_free(t);
	}
	free(buf);
	elffile_free(ef);
}
END_TEST

/* ---- CFI as toolchains store it, built at test time and compared with readelf ---- */

/* Two translation units: one without unwind tables (its functions have FDEs in .debug_frame
 * only, from -g), one with (.eh_frame, no -g: no .debug_frame). */
static const char tc_src_a[] =
    "#define F(n, m) __attribute__((noinline)) int f##n(int x) "
    "{ return f##m(x + 1) * 3 + x; }\n"
    "int g0(int x);\n"
    "__attribute__((noinline)) int f12(int x) { return g0(x) + 1; }\n"
    "F(11, 12) F(10, 11) F(9, 10) F(8, 9) F(7, 8) F(6, 7) F(5, 6) F(4, 5) F(3, 4) F(2, 3)\n"
    "F(1, 2)\n"
    "int main(int argc, char **argv) { (void)argv; return f1(argc); }\n";
static const char tc_src_b[] =
    "__attribute__((noinline)) int g1(int x) { return x * 7 + 1; }\n"
    "__attribute__((noinline)) int g0(int x) { return g1(x) * 5 + x; }\n";

struct cfi_build {
	const char *name;
	/* shell run in the temp directory: a.c and b.c there; it writes "bin", and "ref" is the
	 * file readelf reads (the same file, or the one before stripping) */
	const char *cmd;
	const char *compressed; /* the section that must be stored compressed, or NULL */
	int mdi;		/* .debug_frame only inside .gnu_debugdata */
};

#define TC_CC "gcc -O1 -c -g -fno-asynchronous-unwind-tables a.c && gcc -O1 -c b.c && "
static const struct cfi_build cfi_builds[] = {
    {"debug_frame", TC_CC "gcc -o bin a.o b.o && cp bin ref", NULL, 0},
    {"ld-zlib", TC_CC "gcc -Wl,--compress-debug-sections=zlib -o bin a.o b.o && cp bin ref",
     ".debug_frame", 0},
    {"ld-zstd", TC_CC "gcc -Wl,--compress-debug-sections=zstd -o bin a.o b.o && cp bin ref",
     ".debug_frame", 0},
    {"objcopy-zstd", TC_CC "gcc -o ref a.o b.o && objcopy --compress-debug-sections=zstd ref bin",
     ".debug_frame", 0},
    {"zdebug", TC_CC "gcc -o ref a.o b.o && objcopy --compress-debug-sections=zlib-gnu ref bin",
     ".zdebug_frame", 0},
    {"lld-zlib",
     TC_CC "gcc -fuse-ld=lld -Wl,--compress-debug-sections=zlib -o bin a.o b.o && cp bin ref",
     ".debug_frame", 0},
    {"minidebuginfo", TC_CC "gcc -o ref a.o b.o && sh $SRC/scripts/android-strip.sh ref bin", NULL,
     1},
};

static char *cfi_build(const struct cfi_build *b)
{
	char *a = testutil_tmp_file("a.c", tc_src_a, sizeof(tc_src_a) - 1);
	char *bsrc = testutil_tmp_file("b.c", tc_src_b, sizeof(tc_src_b) - 1);
	char *cwd = getcwd(NULL, 0);
	char *cmd = xasprintf("cd %s && SRC=%s && %s", testutil_tmp, cwd, b->cmd);
	int status;
	char *log = testutil_run(cmd, &status);

	ck_assert_msg(status == 0, "%s: %s failed:\n%s", b->name, cmd, log);
	free(log);
	free(cmd);
	free(cwd);
	free(bsrc);
	free(a);
	return testutil_tmp_path("bin");
}

START_TEST(test_toolchain_sections)
{
	const struct cfi_build *b = &cfi_builds[_i];
	char *bin = cfi_build(b), *ref = testutil_tmp_path("ref");
	char *golden = testutil_tmp_path("frames-interp");
	char *cmd = xasprintf("readelf --debug-dump=frames-interp %s > %s", ref, golden);
	struct elffile *ef = elffile_open(bin);
	struct elffile_section sec;
	struct cfi_table *t;
	int status, rows;
	char *log = testutil_run(cmd, &status);

	ck_assert_msg(status == 0, "%s:\n%s", cmd, log);
	ck_assert_ptr_nonnull(ef);
	if (b->compressed) {
		/* the toolchain really stored it compressed */
		ck_assert_int_eq(elffile_section(ef, b->compressed, &sec), 0);
		ck_assert(b->compressed[1] == 'z' || (sec.flags & SHF_COMPRESSED));
	}
	if (b->mdi) {
		ck_assert_int_eq(elffile_section(ef, ".debug_frame", &sec), -ENOENT);
		ck_assert_int_eq(elffile_section(ef, ".gnu_debugdata", &sec), 0);
		ck_assert_ptr_nonnull(elffile_minidebuginfo(ef));
	}
	/* every row readelf shows (.eh_frame's and .debug_frame's, decompressed) is perch's */
	rows = compare_rows(ef, b->name, golden);
	ck_assert_msg(rows >= 2 * 14, "%s: %d rows", b->name, rows);
	/* and nothing covers a pc no FDE covers */
	t = cfi_table_new(ef);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_ge(cfi_table_count(t), 15); /* f1..f12, main, g0, g1 */
	cfi_table_free(t);
	elffile_free(ef);
	free(log);
	free(cmd);
	free(golden);
	free(ref);
	free(bin);
}
END_TEST

Suite *cfi_suite(void)
{
	Suite *s = suite_create("cfi");
	TCase *tc;

	tc = tcase_create("snapshots");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_snapshot_vs_gdb, 0, (int)(sizeof(snaps) / sizeof(snaps[0])));
	tcase_add_test(tc, test_pac_signed);
	tcase_add_test(tc, test_callee_saved);
#if defined(__x86_64__)
	tcase_add_loop_test(tc, test_x86_64_vs_libunwind, 0, 4);
#endif
	suite_add_tcase(s, tc);

	tc = tcase_create("rows");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_rows_vs_readelf);
	tcase_add_test(tc, test_eh_frame_hdr);
	tcase_add_test(tc, test_program_ops);
	tcase_add_test(tc, test_debug_frame);
	tcase_add_test(tc, test_negate_ra_state);
	suite_add_tcase(s, tc);

	tc = tcase_create("toolchains");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_loop_test(tc, test_toolchain_sections, 0,
			    (int)(sizeof(cfi_builds) / sizeof(cfi_builds[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("expr");
	tcase_add_test(tc, test_expressions);
	tcase_add_test(tc, test_step_expressions);
	tcase_add_test(tc, test_dex_pc_marker);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hostile_programs);
	tcase_add_test(tc, test_hostile_bytes);
	suite_add_tcase(s, tc);
	return s;
}
