/* Unit tests for the ART debugger-interface readers (art-list.c, art-symfile.c, art-jit.c,
 * art-dex.c, art-proc.c's symbol lookup): descriptors, lists and symfiles are built byte by byte
 * in a fake address space with the offsets of docs/design/android-art.md 1.2/1.3 (64-bit, x86,
 * ARM32), the symfiles with the same builder fakeart uses; and the real Android 11 libart.so of
 * Debian's android-libart package for the descriptor locator. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../targets/fakeart_symfile.h"
#include "perch/art/art.h"
#include "perch/art/dex.h"
#include "perch/symbols/cfi.h"
#include "testutil.h"

/* ---- a fake target address space: one buffer at BASE ---- */

#define BASE	 0x70000000ULL
#define MEM_SIZE (256 * 1024)

static uint8_t *mem;
static int fail_reads; /* >0: that many reads from now fail (a torn/unmapped read) */

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (fail_reads > 0) {
		fail_reads--;
		return -EFAULT;
	}
	if (addr < BASE || addr - BASE > MEM_SIZE || len > MEM_SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, mem + (addr - BASE), len);
	return 0;
}

static const struct perch_mem fake_mem = {fake_read, NULL};

static void mem_setup(void)
{
	mem = calloc(1, MEM_SIZE);
	fail_reads = 0;
}

static void mem_teardown(void)
{
	free(mem);
}

static void put(uint64_t addr, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mem[addr - BASE + i] = (uint8_t)(v >> (8 * i));
}

/* Offsets from the spec's tables, written out independently of art_layout_init(). */
struct abi {
	unsigned int machine;
	int is_64;
	size_t ptr, d_first, d_magic, d_seq, d_ts, d_size;
	size_t e_prev, e_addr, e_size, e_ts, e_seq, e_size1, e_size2;
};

static const struct abi abi64 = {EM_X86_64, 1, 8, 16, 24, 44, 48, 56, 8, 16, 24, 32, 40, 40, 48};
static const struct abi abi_x86 = {EM_386, 0, 4, 12, 16, 36, 40, 48, 4, 8, 12, 20, 28, 28, 32};
static const struct abi abi_arm = {EM_ARM, 0, 4, 12, 16, 36, 40, 48, 4, 8, 16, 24, 32, 32, 40};

#define DESC (BASE + 0x100)

static void write_desc(const struct abi *a, const char *magic, uint64_t first, uint32_t seq,
		       uint64_t ts)
{
	put(DESC, 1, 4);
	put(DESC + 4, 1, 4);
	put(DESC + a->d_first, first, a->ptr);
	if (magic) {
		memcpy(mem + DESC - BASE + a->d_magic, magic, 8);
		put(DESC + a->d_magic + 12, a->d_size, 4);
		put(DESC + a->d_magic + 16, !strcmp(magic, "Android1") ? a->e_size1 : a->e_size2,
		    4);
		put(DESC + a->d_seq, seq, 4);
		put(DESC + a->d_ts, ts, 8);
	}
}

static void write_entry(const struct abi *a, uint64_t at, uint64_t next, uint64_t prev,
			uint64_t sym, uint64_t size, uint64_t ts, uint32_t seq)
{
	put(at, next, a->ptr);
	put(at + a->e_prev, prev, a->ptr);
	put(at + a->e_addr, sym, a->ptr);
	put(at + a->e_size, size, 8);
	put(at + a->e_ts, ts, 8);
	put(at + a->e_seq, seq, 4);
}

/* ---- layouts and descriptors ---- */

static void check_layout(const struct abi *a)
{
	struct art_layout l;

	art_layout_init(&l, a->machine, a->is_64, ART_KIND_ANDROID2);
	ck_assert_uint_eq(l.desc_size, a->d_size);
	ck_assert_uint_eq(l.d_first, a->d_first);
	ck_assert_uint_eq(l.d_magic, a->d_magic);
	ck_assert_uint_eq(l.d_seqlock, a->d_seq);
	ck_assert_uint_eq(l.d_timestamp, a->d_ts);
	ck_assert_uint_eq(l.e_prev, a->e_prev);
	ck_assert_uint_eq(l.e_addr, a->e_addr);
	ck_assert_uint_eq(l.e_size, a->e_size);
	ck_assert_uint_eq(l.e_timestamp, a->e_ts);
	ck_assert_uint_eq(l.e_seqlock, a->e_seq);
	ck_assert_uint_eq(l.entry_size, a->e_size2);
	art_layout_init(&l, a->machine, a->is_64, ART_KIND_ANDROID1);
	ck_assert_uint_eq(l.entry_size, a->e_size1);
	art_layout_init(&l, a->machine, a->is_64, ART_KIND_GDB);
	ck_assert_uint_eq(l.entry_size, a->e_ts);
	ck_assert_uint_eq(l.desc_size, a->is_64 ? 24 : 16);
}

START_TEST(test_layouts)
{
	check_layout(&abi64);
	check_layout(&abi_x86);
	check_layout(&abi_arm);
}
END_TEST

START_TEST(test_descriptor_kinds)
{
	struct art_descriptor d;
	struct art_layout l;

	write_desc(&abi64, "Android2", 0, 4, 99);
	ck_assert_int_eq(art_descriptor_read(&fake_mem, DESC, EM_X86_64, 1, &d, &l), 0);
	ck_assert_int_eq(l.kind, ART_KIND_ANDROID2);
	ck_assert_uint_eq(d.sizeof_descriptor, 56);
	ck_assert_uint_eq(d.sizeof_entry, 48);
	ck_assert_uint_eq(d.seqlock, 4);
	ck_assert_uint_eq(d.timestamp, 99);

	memset(mem, 0, MEM_SIZE);
	write_desc(&abi64, "Android1", 0, 2, 5);
	ck_assert_int_eq(art_descriptor_read(&fake_mem, DESC, EM_X86_64, 1, &d, &l), 0);
	ck_assert_int_eq(l.kind, ART_KIND_ANDROID1);
	ck_assert_uint_eq(l.entry_size, 40);

	memset(mem, 0, MEM_SIZE);
	write_desc(&abi64, NULL, BASE + 0x800, 0, 0);
	ck_assert_int_eq(art_descriptor_read(&fake_mem, DESC, EM_X86_64, 1, &d, &l), 0);
	ck_assert_int_eq(l.kind, ART_KIND_GDB);
	ck_assert_uint_eq(d.first, BASE + 0x800);

	/* a 64-bit descriptor read as 32-bit: the magic is elsewhere, the sizes do not fit */
	memset(mem, 0, MEM_SIZE);
	write_desc(&abi_x86, "Android2", 0, 0, 1);
	ck_assert_int_eq(art_descriptor_read(&fake_mem, DESC, EM_386, 0, &d, &l), 0);
	ck_assert_int_eq(l.kind, ART_KIND_ANDROID2);
	put(DESC + abi_x86.d_magic + 12, 56, 4);
	ck_assert_int_eq(art_descriptor_read(&fake_mem, DESC, EM_386, 0, &d, &l), -EINVAL);
	/* version 2 is not the GDB interface */
	put(DESC, 2, 4);
	ck_assert_int_eq(art_descriptor_read(&fake_mem, DESC, EM_386, 0, &d, &l), -EPROTO);
	ck_assert_int_eq(art_descriptor_read(&fake_mem, BASE + MEM_SIZE, EM_386, 0, &d, &l),
			 -EFAULT);
}
END_TEST

/* ---- list snapshots ---- */

#define E(i) (BASE + 0x1000 + (i)*0x40)

/* head -> E0 -> E1 -> marker(E2, empty) -> E3; symfile sizes with high bytes set (an offset
 * error shows). */
static void build_list(const struct abi *a, const char *magic)
{
	int v2 = magic && !strcmp(magic, "Android2");

	write_desc(a, magic, E(0), 8, 400);
	write_entry(a, E(0), E(1), 0, BASE + 0x8000, 0x100000001ULL, 400, v2 ? 2 : 0);
	write_entry(a, E(1), E(2), E(0), BASE + 0x9000, 0x200000002ULL, 300, v2 ? 4 : 0);
	write_entry(a, E(2), E(3), E(1), 0, 0, 0, v2 ? 2 : 0);
	write_entry(a, E(3), 0, E(2), BASE + 0xa000, 0x300000003ULL, 100, v2 ? 6 : 0);
}

static void check_snapshot(const struct abi *a, const char *magic, enum art_kind kind)
{
	struct art_descriptor d;
	struct art_layout l;
	struct art_entry *e;
	size_t n;

	memset(mem, 0, MEM_SIZE);
	build_list(a, magic);
	ck_assert_int_eq(art_descriptor_read(&fake_mem, DESC, a->machine, a->is_64, &d, &l), 0);
	ck_assert_int_eq(l.kind, kind);
	ck_assert_int_eq(art_list_snapshot(&fake_mem, DESC, &l, &e, &n), 0);
	ck_assert_uint_eq(n, 3); /* the marker is walked past, not listed */
	ck_assert_uint_eq(e[0].addr, E(0));
	ck_assert_uint_eq(e[0].symfile_size, 0x100000001ULL);
	ck_assert_uint_eq(e[1].symfile_addr, BASE + 0x9000);
	ck_assert_uint_eq(e[2].addr, E(3));
	ck_assert_uint_eq(e[2].symfile_size, 0x300000003ULL);
	ck_assert_uint_eq(e[2].timestamp, kind == ART_KIND_GDB ? 0 : 100);
	ck_assert_uint_eq(e[1].seqlock, kind == ART_KIND_ANDROID2 ? 4 : 0);
	free(e);
}

START_TEST(test_snapshot_layouts)
{
	const struct abi *abis[] = {&abi64, &abi_x86, &abi_arm};

	for (size_t i = 0; i < 3; i++) {
		check_snapshot(abis[i], "Android2", ART_KIND_ANDROID2);
		check_snapshot(abis[i], "Android1", ART_KIND_ANDROID1);
		check_snapshot(abis[i], NULL, ART_KIND_GDB);
	}
}
END_TEST

START_TEST(test_snapshot_races)
{
	struct art_descriptor d;
	struct art_layout l;
	struct art_entry *e;
	size_t n;

	/* Android2: an entry being deleted (odd seqlock) is a race every time: bounded retries */
	build_list(&abi64, "Android2");
	put(E(1) + 40, 5, 4);
	art_descriptor_read(&fake_mem, DESC, EM_X86_64, 1, &d, &l);
	ck_assert_int_eq(art_list_snapshot(&fake_mem, DESC, &l, &e, &n), -EAGAIN);
	ck_assert_uint_eq(n, 0);
	free(e);
	/* a read failing once is retried */
	put(E(1) + 40, 4, 4);
	fail_reads = 3;
	ck_assert_int_eq(art_list_snapshot(&fake_mem, DESC, &l, &e, &n), 0);
	ck_assert_uint_eq(n, 3);
	free(e);
	/* a cycle E3 -> E0 ends the pass: each entry once */
	put(E(3), E(0), 8);
	ck_assert_int_eq(art_list_snapshot(&fake_mem, DESC, &l, &e, &n), 0);
	ck_assert_uint_eq(n, 3);
	free(e);

	/* Android1: an odd global seqlock means a writer is inside: no waiting, -EAGAIN */
	memset(mem, 0, MEM_SIZE);
	build_list(&abi64, "Android1");
	put(DESC + 44, 9, 4);
	art_descriptor_read(&fake_mem, DESC, EM_X86_64, 1, &d, &l);
	ck_assert_int_eq(art_list_snapshot(&fake_mem, DESC, &l, &e, &n), -EAGAIN);
	free(e);
	put(DESC + 44, 8, 4);
	/* a cycle in an unchanging list is a broken list; bad prev links a changing one */
	put(E(3), E(1), 8);
	ck_assert_int_eq(art_list_snapshot(&fake_mem, DESC, &l, &e, &n), -ELOOP);
	free(e);
	put(E(3), E(0), 8);
	put(E(0) + 8, E(3), 8);
	ck_assert_int_eq(art_list_snapshot(&fake_mem, DESC, &l, &e, &n), -EAGAIN);
	free(e);
}
END_TEST

/* ---- symfiles ---- */

static struct sf_method meth(const char *name, uint64_t addr)
{
	return (struct sf_method){name, addr, 0x15, 4, 0x14, 1};
}

static void check_cfa(const struct cfi_table *t, uint64_t pc, int64_t off)
{
	struct cfi_row row;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(cfi_row_find(t, pc, &row), 0);
	ck_assert_int_eq(row.cfa_kind, CFI_CFA_REG_OFF);
	ck_assert_int_eq(row.cfa_off, off);
}

START_TEST(test_symfile_variants)
{
	struct sf_method m[3] = {meth("a.B.one", 0x7000000000ULL), meth("a.B.two", 0x7000000100ULL),
				 meth("$android.symtab.sorted", 0x7000000200ULL)};
	struct sf_buf single = {0}, packed = {0}, xz = {0};
	struct art_symfile *s;
	const struct art_jit_sym *y;

	for (int cie = 1; cie <= 4; cie += 3) {
		sf_build(&single, m, 1, 1, EM_X86_64, cie);
		s = art_symfile_new(single.p, single.len, EM_X86_64, 1);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(art_symfile_count(s), 1);
		y = art_symfile_find(s, 0x7000000010ULL);
		ck_assert_ptr_nonnull(y);
		ck_assert_str_eq(y->name, "a.B.one");
		ck_assert_ptr_null(art_symfile_find(s, 0x7000000015ULL));
		check_cfa(art_symfile_cfi(s), 0x7000000002ULL, 8);
		check_cfa(art_symfile_cfi(s), 0x7000000010ULL, 16);
		art_symfile_free(s);
		/* wrong machine or class: not ours */
		ck_assert_ptr_null(art_symfile_new(single.p, single.len, EM_AARCH64, 1));
		ck_assert_ptr_null(art_symfile_new(single.p, single.len, EM_X86_64, 0));
	}
	sf_build(&packed, m, 3, 1, EM_X86_64, 4);
	s = art_symfile_new(packed.p, packed.len, EM_X86_64, 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(art_symfile_count(s), 2); /* the '$' marker is not a method */
	ck_assert_str_eq(art_symfile_find(s, 0x7000000105ULL)->name, "a.B.two");
	check_cfa(art_symfile_cfi(s), 0x7000000110ULL, 16);
	art_symfile_free(s);
	ck_assert_int_eq(sf_compress(&xz, &packed, 0x7000000000ULL, 0x7000000215ULL, 1, EM_X86_64),
			 0);
	s = art_symfile_new(xz.p, xz.len, EM_X86_64, 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(art_symfile_count(s), 2);
	ck_assert_str_eq(art_symfile_find(s, 0x7000000000ULL)->name, "a.B.one");
	check_cfa(art_symfile_cfi(s), 0x7000000105ULL, 16);
	art_symfile_free(s);
	/* a corrupt xz stream */
	xz.p[xz.len / 2] ^= 0xff;
	s = art_symfile_new(xz.p, xz.len, EM_X86_64, 1);
	ck_assert_ptr_null(s);
	free(single.p);
	free(packed.p);
	free(xz.p);
}
END_TEST

START_TEST(test_symfile_32bit)
{
	struct sf_method m[2] = {meth("x.Y.f", 0x40001000), meth("x.Y.g", 0x40001100)};
	struct sf_buf b = {0};
	struct art_symfile *s;

	sf_build(&b, m, 2, 0, EM_386, 1);
	s = art_symfile_new(b.p, b.len, EM_386, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(art_symfile_find(s, 0x40001101)->name, "x.Y.g");
	/* i386: CFA esp+4 at entry, +16 after "sub esp,12", +4 again after the add */
	check_cfa(art_symfile_cfi(s), 0x40001102, 4);
	check_cfa(art_symfile_cfi(s), 0x40001110, 16);
	check_cfa(art_symfile_cfi(s), 0x40001114, 4);
	art_symfile_free(s);
	/* truncated anywhere: never a crash */
	for (size_t len = 0; len < b.len; len += 7)
		art_symfile_free(art_symfile_new(b.p, len, EM_386, 0));
	free(b.p);
}
END_TEST

/* ---- the JIT list over the fake memory ---- */

#define SYM(i) (BASE + 0x10000 + (i)*0x2000)

static size_t put_symfile(int i, const char *name, uint64_t code)
{
	struct sf_method m = meth(name, code);
	struct sf_buf b = {0};
	size_t len;

	sf_build(&b, &m, 1, 1, EM_X86_64, 1);
	ck_assert_uint_lt(b.len, 0x2000);
	memcpy(mem + SYM(i) - BASE, b.p, b.len);
	len = b.len;
	free(b.p);
	return len;
}

START_TEST(test_jit_time)
{
	struct art_jit *j = art_jit_new(&fake_mem, DESC, EM_X86_64, 1);
	struct art_jit_sym y;
	const struct cfi_table *cfi;
	size_t l0, l1;

	/* E0 (newer, t=200) and E1 (older, t=100) both cover 0x5000: code recompiled in place */
	l0 = put_symfile(0, "new.M.m", 0x5000);
	l1 = put_symfile(1, "old.M.m", 0x5000);
	write_desc(&abi64, "Android2", E(0), 4, 200);
	write_entry(&abi64, E(0), E(1), 0, SYM(0), l0, 200, 2);
	write_entry(&abi64, E(1), 0, E(0), SYM(1), l1, 100, 2);
	ck_assert_int_eq(art_jit_update(j, 1000, 0), 1);
	ck_assert_int_eq(art_jit_update(j, 1001, 0), 0); /* unchanged descriptor */
	ck_assert_int_eq(art_jit_find(j, 0x5010, 300, &y, &cfi), 0);
	ck_assert_str_eq(y.name, "new.M.m");
	ck_assert_ptr_nonnull(cfi);
	ck_assert_int_eq(art_jit_find(j, 0x5010, 150, &y, NULL), 0);
	ck_assert_str_eq(y.name, "old.M.m");
	ck_assert_int_eq(art_jit_find(j, 0x5010, 50, &y, NULL), -ENOENT);
	ck_assert_int_eq(art_jit_find(j, 0x6000, 300, &y, NULL), -ENOENT);

	/* E0 is deleted at t=500 and its memory reused: samples before the last snapshot that
	 * had it still get its name, later ones only the old entry */
	put(DESC + 16, E(1), 8);
	put(E(1) + 8, 0, 8);
	put(E(0) + 40, 3, 4);
	memset(mem + SYM(0) - BASE, 0xdd, 0x2000);
	put(DESC + 44, 6, 4);
	put(DESC + 48, 500, 8);
	ck_assert_int_eq(art_jit_update(j, 2000, 0), 1);
	ck_assert_uint_eq(art_jit_stats(j)->entries, 1);
	ck_assert_uint_eq(art_jit_stats(j)->retired, 1);
	ck_assert_int_eq(art_jit_find(j, 0x5010, 900, &y, NULL), 0);
	ck_assert_str_eq(y.name, "new.M.m");
	ck_assert_int_eq(art_jit_find(j, 0x5010, 1500, &y, NULL), 0);
	ck_assert_str_eq(y.name, "old.M.m");
	/* long after: the retired entry is gone */
	put(DESC + 44, 8, 4);
	ck_assert_int_eq(art_jit_update(j, 2000 + ART_RETIRED_NS + 1, 0), 1);
	ck_assert_uint_eq(art_jit_stats(j)->retired, 0);
	art_jit_free(j);
}
END_TEST

START_TEST(test_jit_bad_symfiles)
{
	struct art_jit *j = art_jit_new(&fake_mem, DESC, EM_X86_64, 1);
	struct art_jit_sym y;
	size_t l0 = put_symfile(0, "ok.A.a", 0x9000);

	/* garbage symfile, a huge size, an unreadable address, then a good one: skipped, not
	 * stopped at */
	memset(mem + SYM(1) - BASE, 0x41, 0x100);
	write_desc(&abi64, "Android2", E(0), 2, 50);
	write_entry(&abi64, E(0), E(1), 0, SYM(1), 0x100, 40, 2);
	write_entry(&abi64, E(1), E(2), E(0), SYM(1), 1ULL << 40, 30, 2);
	write_entry(&abi64, E(2), E(3), E(1), 0x10, 0x1000, 20, 2);
	write_entry(&abi64, E(3), 0, E(2), SYM(0), l0, 10, 2);
	ck_assert_int_eq(art_jit_update(j, 100, 0), 1);
	ck_assert_int_eq(art_jit_find(j, 0x9001, 0, &y, NULL), 0);
	ck_assert_str_eq(y.name, "ok.A.a");
	ck_assert_uint_eq(art_jit_stats(j)->bad, 3);
	art_jit_free(j);
}
END_TEST

/* ---- the dex list ---- */

START_TEST(test_dex_list)
{
	char *path = testutil_fixture_path("art/Interp.dex");
	size_t size;
	uint8_t *dex = testutil_read_file(path, &size);
	struct art_dex *d = art_dex_new(&fake_mem, DESC, EM_X86_64, 1);
	struct dex_file *df;
	struct dex_method m, want;
	uint32_t len;

	ck_assert_uint_lt(size, 0x8000);
	memcpy(mem + 0x20000, dex, size);
	write_desc(&abi64, "Android2", E(0), 2, 10);
	write_entry(&abi64, E(0), 0, 0, BASE + 0x20000, size, 10, 2);
	ck_assert_int_eq(art_dex_update(d, 1, 0), 1);
	ck_assert_uint_eq(art_dex_count(d), 1);
	/* every method's first instruction names that method, as dex.c says for the file */
	ck_assert_int_eq(dex_open(dex, size, &df), 0);
	ck_assert_uint_ge(dex_method_count(df), 3);
	for (size_t i = 0; i < dex_method_count(df); i++) {
		ck_assert_int_eq(dex_method_get(df, i, &want, &len), 0);
		ck_assert_int_eq(art_dex_lookup(d, BASE + 0x20000 + want.code_offset, &m), 0);
		ck_assert_str_eq(m.name, want.name);
		ck_assert_uint_eq(m.line, want.line);
	}
	dex_close(df);
	ck_assert_int_eq(art_dex_lookup(d, BASE + 0x20000 + size, &m), -ENOENT);
	ck_assert_int_eq(art_dex_lookup(d, BASE + 0x20000 + 4, &m), -ENOENT);
	art_dex_free(d);
	free(dex);
	free(path);
}
END_TEST

/* ---- runtime frames next to Java frames (simpleperf's rule) ---- */

START_TEST(test_hide_runtime)
{
	/* leaf first: runtime runs touching a Java frame go, a lone one stays */
	static const uint8_t k1[] = {ART_FRAME_RUNTIME, ART_FRAME_JAVA,	  ART_FRAME_RUNTIME,
				     ART_FRAME_RUNTIME, ART_FRAME_JAVA,	  ART_FRAME_RUNTIME,
				     ART_FRAME_OTHER,	ART_FRAME_RUNTIME};
	static const uint8_t want1[] = {1, 0, 1, 1, 0, 1, 0, 0};
	static const uint8_t k2[] = {ART_FRAME_OTHER, ART_FRAME_RUNTIME, ART_FRAME_OTHER};
	uint8_t hide[8];

	ck_assert_uint_eq(art_hide_runtime_frames(k1, 8, hide), 4);
	ck_assert_int_eq(memcmp(hide, want1, 8), 0);
	ck_assert_uint_eq(art_hide_runtime_frames(k2, 3, hide), 0);
	ck_assert_uint_eq(hide[1], 0);
	ck_assert_uint_eq(art_hide_runtime_frames(k2, 0, hide), 0);
}
END_TEST

/* ---- the switch interpreter's current dex pc (src/art/art-interp.c) ---- */

/* A SwitchImplContext on the stack at @ctx, its accessor and ShadowFrame elsewhere; offsets
 * written out from ART's structs (interpreter_switch_impl.h, code_item_accessors.h,
 * shadow_frame.h) for pointers of @ptr bytes. */
static void put_switch(size_t ptr, uint64_t ctx, uint64_t acc, uint64_t sf, uint64_t insns,
		       uint32_t units, uint16_t regs, uint64_t pc_ptr, uint32_t pc)
{
	put(ctx, 0x1234, ptr);		/* self */
	put(ctx + ptr, acc, ptr);	/* accessor */
	put(ctx + 2 * ptr, sf, ptr);	/* shadow_frame */
	put(acc, units, 4);		/* insns_size_in_code_units_ */
	put(acc + ptr, insns, ptr);	/* insns_ */
	put(acc + 2 * ptr, regs, 2);	/* registers_size_ */
	put(sf + 3 * ptr, pc_ptr, ptr); /* dex_pc_ptr_ (after link_, method_, result_register_) */
	put(sf + 6 * ptr, regs,
	    4); /* number_of_vregs_ (after dex_instructions_, lock_count_data_) */
	put(sf + 6 * ptr + 4, pc, 4); /* dex_pc_ */
}

START_TEST(test_switch_dex_pc)
{
	const uint64_t sp = BASE + 0x1000, insns = BASE + 0x5000;
	uint64_t pc;

	for (size_t ptr = 4; ptr <= 8; ptr += 4) {
		int is_64 = ptr == 8;

		memset(mem, 0, MEM_SIZE);
		put_switch(ptr, sp + 0x48, BASE + 0x2000, BASE + 0x3000, insns, 10, 3, 0, 4);
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns, &pc), 0);
		ck_assert_uint_eq(pc, insns + 8);
		/* mterp's dex_pc_ptr_ wins when set */
		put(BASE + 0x3000 + 3 * ptr, insns + 6, ptr);
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns, &pc), 0);
		ck_assert_uint_eq(pc, insns + 6);
		put(BASE + 0x3000 + 3 * ptr, insns + 20, ptr); /* past the method */
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns, &pc), -ENOENT);
		put(BASE + 0x3000 + 3 * ptr, 0, ptr);
		/* dex_pc_ past the method (kDexNoIndex during a throw), another register count,
		 * another method's instructions: no answer */
		put(BASE + 0x3000 + 6 * ptr + 4, 10, 4);
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns, &pc), -ENOENT);
		put(BASE + 0x3000 + 6 * ptr + 4, 9, 4);
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns, &pc), 0);
		ck_assert_uint_eq(pc, insns + 18);
		put(BASE + 0x3000 + 6 * ptr, 4, 4);
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns, &pc), -ENOENT);
		put(BASE + 0x3000 + 6 * ptr, 3, 4);
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns + 2, &pc), -ENOENT);
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns + 1, &pc), -EINVAL);
		/* the context must sit within the window above the frame */
		memset(mem, 0, MEM_SIZE);
		put_switch(ptr, sp + 4096, BASE + 0x2000, BASE + 0x3000, insns, 10, 3, 0, 4);
		ck_assert_int_eq(art_switch_dex_pc(&fake_mem, is_64, sp, insns, &pc), -ENOENT);
		/* a copy that ends before the search does: no answer either way */
		ck_assert_int_eq(
		    art_switch_dex_pc(&fake_mem, is_64, BASE + MEM_SIZE - 64, insns, &pc), -ERANGE);
	}
}
END_TEST

/* ---- the real libart.so (Debian android-libart 11.0.0+r48) ---- */

static const char *libart_path(void)
{
	static const char *const cand[] = {
	    "build/android-libart/usr/lib/x86_64-linux-gnu/android/libart.so",
	    "/usr/lib/x86_64-linux-gnu/android/libart.so",
	};
	const char *env = getenv("PERCH_LIBART");

	if (env)
		return env;
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (access(cand[i], R_OK) == 0)
			return cand[i];
	return NULL;
}

START_TEST(test_debian_libart)
{
	const char *path = libart_path();
	static const char *const names[] = {"__jit_debug_descriptor", "__dex_debug_descriptor"};
	uint64_t vaddr, size, off, v;
	uint8_t *img;
	size_t len;

	if (!path) {
		printf("SKIP: test_debian_libart: no libart.so (make fetch-libart, or install "
		       "android-libart)\n");
		return;
	}
	img = testutil_read_file(path, &len);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(art_elf_data_symbol(img, len, names[i], &vaddr, &size, &off), 0);
		/* the symbol covers ART's private fields too (144 bytes in this build): the
		 * public part is what the descriptor's own size fields say */
		ck_assert_uint_ge(size, 56);
		ck_assert_uint_ne(off, UINT64_MAX);
		ck_assert_uint_le(off + 56, len);
		/* the initial bytes of [DEB] (spec 1.1) */
		memcpy(&v, img + off, 4);
		ck_assert_uint_eq(v & 0xffffffff, 1);
		ck_assert_int_eq(memcmp(img + off + 24, "Android2", 8), 0);
		memcpy(&v, img + off + 36, 8);
		ck_assert_uint_eq(v, 56 | 48ULL << 32);
		memcpy(&v, img + off + 48, 8);
		ck_assert_uint_eq(v, 1);
	}
	ck_assert_int_eq(
	    art_elf_data_symbol(img, len, "g_art_sizeof_jit_code_entry", &vaddr, &size, &off), 0);
	ck_assert_uint_eq(img[off], 48);
	ck_assert_int_eq(
	    art_elf_data_symbol(img, len, "g_art_sizeof_jit_descriptor", &vaddr, &size, &off), 0);
	ck_assert_uint_eq(img[off], 56);
	ck_assert_int_eq(art_elf_data_symbol(img, len, "no_such_symbol", &vaddr, &size, &off),
			 -ENOENT);
	ck_assert_int_eq(
	    art_elf_data_symbol(img, 100, "__jit_debug_descriptor", &vaddr, &size, &off), -ENOEXEC);
	/* recognised by content: Debian names it libart.so.0 */
	ck_assert_uint_eq(art_elf_flags(img, len), ART_MOD_CHECKED | ART_MOD_RUNTIME | ART_MOD_JIT);
	/* without the exported names, the DEX PC markers of its CFI still tell; without those
	 * too, it is any library */
	for (size_t i = 0; i + 22 <= len; i++)
		if (!memcmp(img + i, "__dex_debug_descriptor", 22) ||
		    !memcmp(img + i, "__jit_debug_descriptor", 22))
			img[i + 2] = 'X';
	ck_assert_uint_eq(art_elf_flags(img, len), ART_MOD_CHECKED | ART_MOD_RUNTIME);
	for (size_t i = 0; i + 6 <= len; i++)
		if (!memcmp(img + i,
			    "\x0c"
			    "DEX1\x13",
			    6))
			img[i + 1] = 'X';
	ck_assert_uint_eq(art_elf_flags(img, len), ART_MOD_CHECKED);
	ck_assert_uint_eq(art_elf_flags(img, 10), ART_MOD_CHECKED);
	free(img);
}
END_TEST

Suite *art_suite(void)
{
	Suite *s = suite_create("art");
	TCase *tc = tcase_create("list");

	tcase_add_checked_fixture(tc, mem_setup, mem_teardown);
	tcase_add_test(tc, test_layouts);
	tcase_add_test(tc, test_descriptor_kinds);
	tcase_add_test(tc, test_snapshot_layouts);
	tcase_add_test(tc, test_snapshot_races);
	suite_add_tcase(s, tc);
	tc = tcase_create("symfile");
	tcase_add_test(tc, test_symfile_variants);
	tcase_add_test(tc, test_symfile_32bit);
	suite_add_tcase(s, tc);
	tc = tcase_create("jit");
	tcase_add_checked_fixture(tc, mem_setup, mem_teardown);
	tcase_add_test(tc, test_jit_time);
	tcase_add_test(tc, test_jit_bad_symfiles);
	tcase_add_test(tc, test_dex_list);
	suite_add_tcase(s, tc);
	tc = tcase_create("interp");
	tcase_add_checked_fixture(tc, mem_setup, mem_teardown);
	tcase_add_test(tc, test_hide_runtime);
	tcase_add_test(tc, test_switch_dex_pc);
	suite_add_tcase(s, tc);
	tc = tcase_create("libart");
	tcase_add_test(tc, test_debian_libart);
	suite_add_tcase(s, tc);
	return s;
}
