/* Unit tests for elfsym: symbol tables of the fixtures in fixtures/elf/sym (addresses from the
 * binutils `nm` golden files), hand-built ELF images in both classes and byte orders, xz, and
 * truncated/corrupted input. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/elfsym.h"
#include "sym-fixture.h"

/* Every entry sane: named, sorted, inside its bound. */
static void assert_sane_table(const struct elfsym_table *t)
{
	uint64_t prev = 0;

	for (size_t i = 0; i < elfsym_table_count(t); i++) {
		const struct elfsym *s = elfsym_table_get(t, i);

		ck_assert_ptr_nonnull(s);
		ck_assert_ptr_nonnull(s->name);
		ck_assert_int_ne(s->name[0], '\0');
		ck_assert_ptr_null(strchr(s->name, '@'));
		ck_assert_uint_ge(s->addr, prev);
		ck_assert_uint_gt(s->sec_end, s->addr);
		ck_assert(s->type == STT_FUNC || s->type == STT_NOTYPE);
		prev = s->addr;
	}
	ck_assert_ptr_null(elfsym_table_get(t, elfsym_table_count(t)));
}

static struct elfsym_table *load_fixture(const char *name, unsigned int which, int expect)
{
	struct elfsym_table *t = elfsym_table_new();
	size_t size;
	uint8_t *img = testutil_read_file(name, &size);
	int ret = elfsym_table_load(t, img, size, which);

	free(img); /* names must have been copied */
	if (expect >= 0)
		ck_assert_int_ge(ret, expect);
	else
		ck_assert_int_eq(ret, expect);
	elfsym_table_finish(t);
	assert_sane_table(t);
	return t;
}

static const char *const prog_funcs[] = {
    "sym_local_helper", "sym_local_second", "sym_global_foo", "sym_global_bar", "main",
};

static void assert_named(const struct elfsym_table *t, uint64_t addr, const char *want)
{
	const struct elfsym *s = elfsym_table_find(t, addr);

	ck_assert_msg(s, "nothing at %#llx (want %s)", (unsigned long long)addr, want);
	ck_assert_str_eq(s->name, want);
}

START_TEST(test_symtab)
{
	struct elfsym_table *t = load_fixture(SYMFIX_DIR "prog", ELFSYM_SYMTAB, 5);

	for (size_t i = 0; i < ARRAY_SIZE(prog_funcs); i++) {
		uint64_t a = symfix_nm_addr(SYMFIX_DIR "prog.nm", prog_funcs[i]);
		const struct elfsym *s = elfsym_table_find_name(t, prog_funcs[i]);

		ck_assert_uint_ne(a, 0);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->addr, a);
		ck_assert_uint_eq(s->type, STT_FUNC);
		ck_assert_uint_gt(s->size, 0);
		assert_named(t, a, prog_funcs[i]);
		assert_named(t, a + s->size - 1, prog_funcs[i]);
	}
	/* data symbols are not functions */
	ck_assert_ptr_null(elfsym_table_find_name(t, "sym_sink"));
	ck_assert_ptr_null(elfsym_table_find(t, symfix_nm_addr(SYMFIX_DIR "prog.nm", "sym_sink")));
	ck_assert_ptr_null(elfsym_table_find(t, 0x10));
	elfsym_table_free(t);
}
END_TEST

/* A function whose symbol is gone (objcopy --strip-symbol): not named, and the gap it lies
 * in starts where the nearest sized symbol below ends, as `nm -S` of that copy says. */
START_TEST(test_gap_start)
{
	char *copy = testutil_tmp_path("prog.gap"), *cmd, *out, *line, *save = NULL;
	uint64_t ends[64], lo = UINT64_MAX, hi = 0, a;
	size_t nr_ends = 0, unnamed = 0;
	struct elfsym_table *t;
	int st;

	cmd = xasprintf("objcopy --strip-symbol=sym_local_second %s %s && nm -S --defined-only %s",
			SYMFIX_DIR "prog", copy, copy);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s", out);
	/* "0000000000001139 0000000000000029 t sym_local_helper": sized .text symbols */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr, size;
		char type;

		if (sscanf(line, "%llx %llx %c", &addr, &size, &type) != 3 ||
		    (type != 't' && type != 'T') || !size)
			continue;
		ck_assert_uint_lt(nr_ends, ARRAY_SIZE(ends));
		ends[nr_ends++] = addr + size;
		lo = addr < lo ? addr : lo;
		hi = addr + size > hi ? addr + size : hi;
	}
	ck_assert_uint_gt(nr_ends, 3);
	t = load_fixture(copy, ELFSYM_SYMTAB, 4);
	ck_assert_ptr_null(elfsym_table_find_name(t, "sym_local_second"));
	for (a = lo; a < hi; a++) {
		uint64_t want = 0;

		if (elfsym_table_find(t, a)) {
			ck_assert_uint_eq(elfsym_table_gap_start(t, a), 0);
			continue;
		}
		for (size_t i = 0; i < nr_ends; i++)
			if (ends[i] <= a && ends[i] > want)
				want = ends[i];
		ck_assert_msg(elfsym_table_gap_start(t, a) == want,
			      "%#llx: gap from %#llx, want %#llx", (unsigned long long)a,
			      (unsigned long long)elfsym_table_gap_start(t, a),
			      (unsigned long long)want);
		unnamed++;
	}
	/* sym_local_second's bytes at least */
	ck_assert_uint_ge(unnamed, symfix_nm_addr(SYMFIX_DIR "prog.nm", "sym_global_foo") -
				       symfix_nm_addr(SYMFIX_DIR "prog.nm", "sym_local_second"));
	ck_assert_uint_eq(
	    elfsym_table_gap_start(t, symfix_nm_addr(SYMFIX_DIR "prog.nm", "sym_local_second")),
	    symfix_nm_addr(SYMFIX_DIR "prog.nm", "sym_local_second"));
	elfsym_table_free(t);
	free(out);
	free(cmd);
	free(copy);
}
END_TEST

START_TEST(test_dynsym_only)
{
	struct elfsym_table *t = load_fixture(SYMFIX_DIR "prog.stripped", ELFSYM_SYMTAB, -ENOENT);

	ck_assert_uint_eq(elfsym_table_count(t), 0);
	ck_assert_ptr_null(elfsym_table_find(t, 0x1139));
	elfsym_table_free(t);

	t = load_fixture(SYMFIX_DIR "prog.stripped", ELFSYM_DYNSYM, 3);
	assert_named(t, symfix_nm_addr(SYMFIX_DIR "prog.nm", "sym_global_foo") + 2,
		     "sym_global_foo");
	assert_named(t, symfix_nm_addr(SYMFIX_DIR "prog.nm", "main"), "main");
	/* static functions are not exported */
	ck_assert_ptr_null(elfsym_table_find_name(t, "sym_local_helper"));
	elfsym_table_free(t);
}
END_TEST

static uint8_t *debugdata(const char *path, size_t *size)
{
	struct elffile *ef = elffile_open(path);
	struct elffile_section sec;
	uint8_t *copy;

	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(elffile_section(ef, ".gnu_debugdata", &sec), 0);
	ck_assert_ptr_nonnull(sec.data);
	copy = malloc(sec.size);
	memcpy(copy, sec.data, sec.size);
	*size = sec.size;
	elffile_free(ef);
	return copy;
}

/* A call to a name binds to its default version: for every function of the C library's
 * .dynsym with a "@@" version in `nm -D --with-symbol-versions`, elfsym_table_find_function()
 * gives that address (pthread_cond_wait@@GLIBC_2.3.2, not @GLIBC_2.2.5; memcpy@@GLIBC_2.14,
 * an IFUNC, not the old memcpy@GLIBC_2.2.5). */
START_TEST(test_find_function_versions)
{
	char *cmd, *out, *line, *save = NULL, *lib;
	struct elfsym_table *t;
	size_t checked = 0;
	int st;

	out = testutil_run("ldd /bin/true | sed -n 's/.*=> \\(.*libc\\.so[^ ]*\\).*/\\1/p'", &st);
	ck_assert_int_eq(st, 0);
	lib = xstrndup(out, strcspn(out, "\n"));
	free(out);
	if (!*lib) {
		printf("SKIP: no C library found by ldd\n");
		free(lib);
		return;
	}
	t = load_fixture(lib, ELFSYM_DYNSYM, 100);
	cmd = xasprintf("nm -D --defined-only --with-symbol-versions %s", lib);
	out = testutil_run(cmd, &st);
	ck_assert_int_eq(st, 0);
	/* "00000000000883f0 T pthread_cond_wait@@GLIBC_2.3.2" */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		char type, name[256];
		const struct elfsym *sym;
		char *at;

		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !strchr("TtWiI", type) ||
		    !(at = strstr(name, "@@")))
			continue;
		*at = 0;
		sym = elfsym_table_find_function(t, name);
		ck_assert_msg(sym && sym->addr == a, "%s: got %#llx, nm has %#llx", name,
			      sym ? (unsigned long long)sym->addr : 0ULL, a);
		checked++;
	}
	ck_assert_uint_gt(checked, 500);
	ck_assert_ptr_null(elfsym_table_find_function(t, "no_such_function_in_libc"));
	elfsym_table_free(t);
	free(out);
	free(cmd);
	free(lib);
}
END_TEST

START_TEST(test_minidebuginfo)
{
	struct elfsym_table *t = elfsym_table_new();
	size_t size, out_size;
	uint8_t *xz = debugdata(SYMFIX_DIR "prog.mini", &size), *out;

	ck_assert_int_ge(elfsym_table_load_xz(t, xz, size), 2);
	elfsym_table_finish(t);
	assert_sane_table(t);
	assert_named(t, symfix_nm_addr(SYMFIX_DIR "prog.nm", "sym_local_helper") + 1,
		     "sym_local_helper");
	assert_named(t, symfix_nm_addr(SYMFIX_DIR "prog.nm", "sym_local_second"),
		     "sym_local_second");
	/* the mini table leaves out what .dynsym has */
	ck_assert_ptr_null(elfsym_table_find_name(t, "sym_global_foo"));
	elfsym_table_free(t);

	/* the decompressed image is an ELF file, and the size limit holds */
	ck_assert_int_eq(elfsym_xz_decode(xz, size, ELFSYM_MAX_XZ_SIZE, &out, &out_size), 0);
	ck_assert_uint_gt(out_size, 64);
	ck_assert_int_eq(memcmp(out, ELFMAG, SELFMAG), 0);
	free(out);
	ck_assert_int_eq(elfsym_xz_decode(xz, size, out_size, &out, &size), 0);
	free(out);
	ck_assert_int_eq(elfsym_xz_decode(xz, size, out_size - 1, &out, &size), -E2BIG);
	ck_assert_ptr_null(out);
	free(xz);
}
END_TEST

START_TEST(test_corrupt_xz)
{
	struct elfsym_table *t = elfsym_table_new();
	uint8_t junk[256], *out;
	size_t size, out_size;
	uint8_t *xz = debugdata(SYMFIX_DIR "prog.badmini", &size);

	/* a truncated stream */
	ck_assert_int_eq(elfsym_table_load_xz(t, xz, size), -EBADMSG);
	free(xz);
	/* garbage, and an empty input */
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	ck_assert_int_eq(elfsym_xz_decode(junk, sizeof(junk), 1 << 20, &out, &out_size), -EBADMSG);
	ck_assert_int_eq(elfsym_xz_decode(junk, 0, 1 << 20, &out, &out_size), -EBADMSG);
	/* a good stream with a flipped byte in the middle: a CRC or format error */
	xz = debugdata(SYMFIX_DIR "prog.mini", &size);
	xz[size / 2] ^= 0x55;
	ck_assert_int_lt(elfsym_table_load_xz(t, xz, size), 0);
	free(xz);
	elfsym_table_finish(t);
	ck_assert_uint_eq(elfsym_table_count(t), 0);
	elfsym_table_free(t);
}
END_TEST

/* A hand-built ELF image: .text [0x1000, 0x1100), .data, .strtab, .symtab and two broken
 * .dynsym sections (sh_link to a non-STRTAB section, sh_entsize 0). */
struct mk {
	uint8_t *b;
	int is_64, be;
};

static void put(struct mk *m, size_t off, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		m->b[off + (size_t)i] = (uint8_t)(v >> (8 * (m->be ? n - 1 - i : i)));
}

static void mk_ehdr(struct mk *m, uint64_t shoff, unsigned int shnum)
{
	memcpy(m->b, ELFMAG, SELFMAG);
	m->b[EI_CLASS] = m->is_64 ? ELFCLASS64 : ELFCLASS32;
	m->b[EI_DATA] = m->be ? ELFDATA2MSB : ELFDATA2LSB;
	m->b[EI_VERSION] = EV_CURRENT;
	put(m, 16, ET_DYN, 2);
	put(m, 18, EM_X86_64, 2);
	put(m, 20, EV_CURRENT, 4);
	if (m->is_64) {
		put(m, 40, shoff, 8);
		put(m, 52, 64, 2);
		put(m, 58, sizeof(Elf64_Shdr), 2);
		put(m, 60, shnum, 2);
	} else {
		put(m, 32, shoff, 4);
		put(m, 40, 52, 2);
		put(m, 46, sizeof(Elf32_Shdr), 2);
		put(m, 48, shnum, 2);
	}
}

static void mk_shdr(struct mk *m, uint64_t shoff, unsigned int i, uint32_t type, uint64_t flags,
		    uint64_t addr, uint64_t off, uint64_t size, uint32_t link, uint64_t entsize)
{
	size_t o = shoff + i * (m->is_64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr));

	put(m, o + 4, type, 4);
	if (m->is_64) {
		put(m, o + 8, flags, 8);
		put(m, o + 16, addr, 8);
		put(m, o + 24, off, 8);
		put(m, o + 32, size, 8);
		put(m, o + 40, link, 4);
		put(m, o + 56, entsize, 8);
	} else {
		put(m, o + 8, flags, 4);
		put(m, o + 12, addr, 4);
		put(m, o + 16, off, 4);
		put(m, o + 20, size, 4);
		put(m, o + 24, link, 4);
		put(m, o + 36, entsize, 4);
	}
}

static void mk_sym(struct mk *m, uint64_t symoff, unsigned int i, uint32_t name, int type, int bind,
		   uint16_t shndx, uint64_t value, uint64_t size)
{
	size_t o = symoff + i * (m->is_64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));

	put(m, o, name, 4);
	if (m->is_64) {
		m->b[o + 4] = (uint8_t)ELF64_ST_INFO(bind, type);
		put(m, o + 6, shndx, 2);
		put(m, o + 8, value, 8);
		put(m, o + 16, size, 8);
	} else {
		put(m, o + 4, value, 4);
		put(m, o + 8, size, 4);
		m->b[o + 12] = (uint8_t)ELF32_ST_INFO(bind, type);
		put(m, o + 14, shndx, 2);
	}
}

#define MK_STROFF 0x100
#define MK_SYMOFF 0x200
#define MK_SHOFF  0x400
#define MK_SIZE	  0x600
#define MK_NSYMS  16

/* the string table ends with "tail" and no NUL */
static const char mk_strtab[] = "\0$x\0foo@@VER_1\0bar\0baz\0data_label\0$d.1\0$xyz\0ifunc_sel\0"
				"abs_func\0undef_fn\0obj\0inner_label\0tail";

static uint32_t mk_str(const char *s)
{
	for (size_t i = 1; i < sizeof(mk_strtab) - 1; i++)
		if (!strcmp(mk_strtab + i, s) && mk_strtab[i - 1] == '\0')
			return (uint32_t)i;
	ck_abort_msg("no %s in mk_strtab", s);
	return 0;
}

static uint8_t *mk_image(int is_64, int be)
{
	struct mk m = {calloc(1, MK_SIZE), is_64, be};
	size_t strsz = sizeof(mk_strtab) - 1; /* without the C terminator: "tail" unterminated */
	size_t symsz = is_64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);

	mk_ehdr(&m, MK_SHOFF, 7);
	memcpy(m.b + MK_STROFF, mk_strtab, strsz);
	mk_shdr(&m, MK_SHOFF, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0, 0x100, 0, 0);
	mk_shdr(&m, MK_SHOFF, 2, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 0x2000, 0, 0x100, 0, 0);
	mk_shdr(&m, MK_SHOFF, 3, SHT_STRTAB, 0, 0, MK_STROFF, strsz, 0, 0);
	mk_shdr(&m, MK_SHOFF, 4, SHT_SYMTAB, 0, 0, MK_SYMOFF, MK_NSYMS * symsz, 3, symsz);
	mk_shdr(&m, MK_SHOFF, 5, SHT_DYNSYM, SHF_ALLOC, 0, MK_SYMOFF, MK_NSYMS * symsz, 2, symsz);
	mk_shdr(&m, MK_SHOFF, 6, SHT_DYNSYM, SHF_ALLOC, 0, MK_SYMOFF, MK_NSYMS * symsz, 3, 0);

	mk_sym(&m, MK_SYMOFF, 1, mk_str("$x"), STT_NOTYPE, STB_LOCAL, 1, 0x1000, 0);
	mk_sym(&m, MK_SYMOFF, 2, mk_str("foo@@VER_1"), STT_FUNC, STB_GLOBAL, 1, 0x1000, 0x10);
	mk_sym(&m, MK_SYMOFF, 3, mk_str("bar"), STT_NOTYPE, STB_LOCAL, 1, 0x1040, 0);
	mk_sym(&m, MK_SYMOFF, 4, mk_str("baz"), STT_FUNC, STB_WEAK, 1, 0x1080, 8);
	mk_sym(&m, MK_SYMOFF, 5, mk_str("data_label"), STT_NOTYPE, STB_LOCAL, 2, 0x2000, 0);
	mk_sym(&m, MK_SYMOFF, 6, 0, STT_FUNC, STB_LOCAL, 1, 0x1090, 4);
	mk_sym(&m, MK_SYMOFF, 7, mk_str("$d.1"), STT_NOTYPE, STB_LOCAL, 1, 0x10a0, 0);
	mk_sym(&m, MK_SYMOFF, 8, 0xffff, STT_FUNC, STB_LOCAL, 1, 0x10b0, 4);
	mk_sym(&m, MK_SYMOFF, 9, (uint32_t)(strsz - 4), STT_FUNC, STB_LOCAL, 1, 0x10b8, 4);
	mk_sym(&m, MK_SYMOFF, 10, mk_str("$xyz"), STT_FUNC, STB_LOCAL, 1, 0x10c0, 0x10);
	mk_sym(&m, MK_SYMOFF, 11, mk_str("undef_fn"), STT_FUNC, STB_GLOBAL, SHN_UNDEF, 0, 0);
	mk_sym(&m, MK_SYMOFF, 12, mk_str("obj"), STT_OBJECT, STB_GLOBAL, 2, 0x2010, 4);
	mk_sym(&m, MK_SYMOFF, 13, mk_str("ifunc_sel"), STT_GNU_IFUNC, STB_GLOBAL, 1, 0x10e0, 0x10);
	mk_sym(&m, MK_SYMOFF, 14, mk_str("abs_func"), STT_FUNC, STB_GLOBAL, SHN_ABS, 0x5000, 0x20);
	/* a label inside foo: foo's size wins inside foo, the label after it */
	mk_sym(&m, MK_SYMOFF, 15, mk_str("inner_label"), STT_NOTYPE, STB_LOCAL, 1, 0x1008, 0);
	return m.b;
}

static void check_mk_table(int is_64, int be)
{
	uint8_t *img = mk_image(is_64, be);
	struct elfsym_table *t = elfsym_table_new();
	static const struct {
		uint64_t addr;
		const char *name; /* NULL: nothing */
	} want[] = {
	    {0xfff, NULL},
	    {0x1000, "foo"},
	    {0x1008, "foo"},
	    {0x100f, "foo"},
	    {0x1010, "inner_label"},
	    {0x1020, "inner_label"},
	    {0x1040, "bar"},
	    {0x107f, "bar"},
	    {0x1084, "baz"},
	    /* past the end of a sized symbol: functions the table lost (no name, bad name) */
	    {0x1088, NULL},
	    {0x1090, NULL},
	    {0x10b0, NULL},
	    {0x10bc, NULL},
	    {0x10c5, "$xyz"},
	    {0x10d8, NULL},
	    {0x10e0, "ifunc_sel"},
	    {0x10ef, "ifunc_sel"},
	    {0x10ff, NULL},
	    {0x1100, NULL},
	    {0x2000, NULL},
	    {0x2010, NULL},
	    {0x5010, "abs_func"},
	    {0x5020, NULL},
	};

	/* the two .dynsym sections are broken: found, nothing read */
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_DYNSYM), 0);
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), 7);
	free(img);
	elfsym_table_finish(t);
	assert_sane_table(t);
	ck_assert_uint_eq(elfsym_table_count(t), 7);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct elfsym *s = elfsym_table_find(t, want[i].addr);

		if (!want[i].name)
			ck_assert_msg(!s, "%#llx: got %s", (unsigned long long)want[i].addr,
				      s ? s->name : "");
		else
			assert_named(t, want[i].addr, want[i].name);
	}
	ck_assert_uint_eq(elfsym_table_find_name(t, "foo")->size, 0x10);
	ck_assert_uint_eq(elfsym_table_find_name(t, "foo")->bind, STB_GLOBAL);
	ck_assert_uint_eq(elfsym_table_find_name(t, "ifunc_sel")->type, STT_FUNC);
	ck_assert_uint_eq(elfsym_table_find_name(t, "bar")->sec_end, 0x1100);
	ck_assert_ptr_null(elfsym_table_find_name(t, "$x"));
	ck_assert_ptr_null(elfsym_table_find_name(t, "$d"));
	ck_assert_ptr_null(elfsym_table_find_name(t, "tail"));
	ck_assert_ptr_null(elfsym_table_find_name(t, "data_label"));
	ck_assert_ptr_null(elfsym_table_find_name(t, "obj"));
	ck_assert_ptr_null(elfsym_table_find_name(t, "undef_fn"));
	elfsym_table_free(t);
}

START_TEST(test_synthetic)
{
	/* _i: 0 ELF64 LE, 1 ELF64 BE, 2 ELF32 LE, 3 ELF32 BE */
	check_mk_table(_i < 2, _i & 1);
}
END_TEST

START_TEST(test_bad_headers)
{
	struct elfsym_table *t = elfsym_table_new();
	uint8_t *img = mk_image(1, 0);
	struct mk m = {img, 1, 0};

	mk_ehdr(&m, 0, 7); /* no section headers */
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), -ENOENT);
	mk_ehdr(&m, MK_SIZE - 64, 7); /* table runs past the end */
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), -ENOEXEC);
	mk_ehdr(&m, UINT64_MAX - 8, 7); /* offset overflow */
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), -ENOEXEC);
	mk_ehdr(&m, MK_SHOFF, 7);
	put(&m, 58, 16, 2); /* e_shentsize too small */
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), -ENOEXEC);
	mk_ehdr(&m, MK_SHOFF, 0); /* e_shnum 0: count in section 0's sh_size, here huge */
	put(&m, MK_SHOFF + 32, 1u << 30, 8);
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), -ENOEXEC);
	put(&m, MK_SHOFF + 32, 7, 8); /* ... and a sane one */
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), 7);
	put(&m, MK_SHOFF + 32, 0, 8);
	img[EI_CLASS] = 7;
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), -ENOEXEC);
	ck_assert_int_eq(elfsym_table_load(t, img, 10, ELFSYM_SYMTAB), -ENOEXEC);
	ck_assert_int_eq(elfsym_table_load(t, (const uint8_t *)"garbage!", 8, ELFSYM_SYMTAB),
			 -ENOEXEC);
	/* symbol table with sh_size past the end of the image: skipped */
	mk_ehdr(&m, MK_SHOFF, 7);
	img[EI_CLASS] = ELFCLASS64;
	mk_shdr(&m, MK_SHOFF, 4, SHT_SYMTAB, 0, 0, MK_SYMOFF, 1u << 20, 3, sizeof(Elf64_Sym));
	ck_assert_int_eq(elfsym_table_load(t, img, MK_SIZE, ELFSYM_SYMTAB), 0);
	free(img);
	elfsym_table_finish(t);
	ck_assert_uint_eq(elfsym_table_count(t), 7);
	elfsym_table_free(t);
}
END_TEST

START_TEST(test_symbol_limit)
{
	/* a .symtab of ELFSYM_MAX_SYMBOLS + 16 entries: the ones past the limit are ignored */
	size_t nsyms = (size_t)ELFSYM_MAX_SYMBOLS + 16;
	size_t symoff = 0x1000, shoff = symoff + nsyms * sizeof(Elf64_Sym);
	size_t size = shoff + 5 * sizeof(Elf64_Shdr);
	struct mk m = {calloc(1, size), 1, 0};
	struct elfsym_table *t = elfsym_table_new();

	ck_assert_ptr_nonnull(m.b);
	mk_ehdr(&m, shoff, 5);
	memcpy(m.b + MK_STROFF, mk_strtab, sizeof(mk_strtab) - 1);
	mk_shdr(&m, shoff, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0, 0x100, 0, 0);
	mk_shdr(&m, shoff, 3, SHT_STRTAB, 0, 0, MK_STROFF, sizeof(mk_strtab) - 1, 0, 0);
	mk_shdr(&m, shoff, 4, SHT_SYMTAB, 0, 0, symoff, nsyms * sizeof(Elf64_Sym), 3,
		sizeof(Elf64_Sym));
	mk_sym(&m, symoff, 1, mk_str("bar"), STT_FUNC, STB_GLOBAL, 1, 0x1040, 0x10);
	mk_sym(&m, symoff, ELFSYM_MAX_SYMBOLS - 1, mk_str("baz"), STT_FUNC, STB_GLOBAL, 1, 0x1080,
	       8);
	mk_sym(&m, symoff, ELFSYM_MAX_SYMBOLS + 4, mk_str("ifunc_sel"), STT_FUNC, STB_GLOBAL, 1,
	       0x10e0, 8);
	ck_assert_int_eq(elfsym_table_load(t, m.b, size, ELFSYM_SYMTAB), 2);
	free(m.b);
	elfsym_table_finish(t);
	ck_assert_ptr_nonnull(elfsym_table_find_name(t, "baz"));
	ck_assert_ptr_null(elfsym_table_find_name(t, "ifunc_sel"));
	elfsym_table_free(t);
}
END_TEST

static int result_ok(int ret)
{
	return ret >= 0 || ret == -ENOENT || ret == -ENOEXEC;
}

START_TEST(test_truncated)
{
	size_t size;
	uint8_t *img = testutil_read_file(SYMFIX_DIR "prog", &size);

	/* every prefix of a real file, each in a buffer of exactly that size */
	for (size_t len = 0; len <= size; len += (len < 128 || len > size - 4096) ? 1 : 7) {
		struct elfsym_table *t = elfsym_table_new();
		uint8_t *cut = malloc(len ? len : 1);
		int ret;

		memcpy(cut, img, len);
		ret = elfsym_table_load(t, cut, len, ELFSYM_SYMTAB | ELFSYM_DYNSYM);
		ck_assert_msg(result_ok(ret), "len %zu: %d", len, ret);
		free(cut);
		elfsym_table_finish(t);
		assert_sane_table(t);
		elfsym_table_find(t, 0x1140);
		elfsym_table_free(t);
	}
	free(img);
}
END_TEST

START_TEST(test_garbage)
{
	size_t size;
	uint8_t *img = testutil_read_file(SYMFIX_DIR "prog", &size), *bad = malloc(size);
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	/* random byte flips, mostly in the section headers and symbol tables at the end */
	for (int iter = 0; iter < 3000; iter++) {
		struct elfsym_table *t = elfsym_table_new();
		int ret;

		memcpy(bad, img, size);
		for (int k = 0; k < 1 + iter % 8; k++) {
			size_t pos;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			pos = (x & 1) ? size - 1 - (x >> 8) % 4096 : (x >> 8) % size;
			bad[pos] = (uint8_t)(x >> 40);
		}
		ret = elfsym_table_load(t, bad, size, ELFSYM_SYMTAB | ELFSYM_DYNSYM);
		ck_assert_msg(result_ok(ret), "iter %d: %d", iter, ret);
		elfsym_table_finish(t);
		assert_sane_table(t);
		for (uint64_t a = 0x1000; a < 0x1300; a += 0x10) {
			const struct elfsym *s = elfsym_table_find(t, a);

			if (s)
				ck_assert(s->addr <= a && a < s->sec_end);
		}
		elfsym_table_free(t);
	}
	free(bad);
	free(img);
}
END_TEST

Suite *elfsym_suite(void)
{
	Suite *s = suite_create("elfsym");
	TCase *tc = tcase_create("fixtures");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_symtab);
	tcase_add_test(tc, test_dynsym_only);
	tcase_add_test(tc, test_gap_start);
	tcase_add_test(tc, test_find_function_versions);
	tcase_add_test(tc, test_minidebuginfo);
	tcase_add_test(tc, test_corrupt_xz);
	suite_add_tcase(s, tc);

	tc = tcase_create("synthetic");
	tcase_add_loop_test(tc, test_synthetic, 0, 4);
	tcase_add_test(tc, test_bad_headers);
	tcase_add_test(tc, test_symbol_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_garbage);
	suite_add_tcase(s, tc);
	return s;
}
