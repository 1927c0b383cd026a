/* Unit tests for the symbolizer: names for addresses of fixtures/elf/sym files (addresses from
 * the binutils `nm` golden files) through .symtab, .dynsym, MiniDebugInfo, separate debug files
 * and DWARF; demangling against `nm -C`; the result cache; hostile files. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/symbolize.h"
#include "sym-fixture.h"

#define PROG_NM SYMFIX_DIR "prog.nm"

static struct symbolizer *sym;

/* The sysroot is an empty testutil_tmp, so the host's /usr/lib/debug is never used. */
static void setup(void)
{
	testutil_tmp_setup();
	sym = symbolizer_new(testutil_tmp, NULL);
	ck_assert_ptr_nonnull(sym);
}

static void teardown(void)
{
	symbolizer_free(sym);
	sym = NULL;
	testutil_tmp_teardown();
}

static struct elffile *open_ok(const char *path)
{
	struct elffile *ef = elffile_open(path);

	ck_assert_msg(ef, "cannot open %s", path);
	return ef;
}

/* The outermost function name at @vaddr, or NULL. */
static const char *outer_name(const struct elffile *ef, uint64_t vaddr)
{
	struct sym_frame f[SYM_MAX_INLINE];
	int n = symbolizer_lookup(sym, ef, vaddr, f, SYM_MAX_INLINE);

	ck_assert_int_ge(n, 0);
	ck_assert_int_le(n, SYM_MAX_INLINE);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(f[i].inlined, i < n - 1);
	return n ? f[n - 1].func : NULL;
}

static void assert_name(const struct elffile *ef, const char *nm_name, uint64_t delta)
{
	uint64_t a = symfix_nm_addr(PROG_NM, nm_name);
	const char *got;

	ck_assert_uint_ne(a, 0);
	got = outer_name(ef, a + delta);
	ck_assert_msg(got && !strcmp(got, nm_name), "%s+%llu: got %s", nm_name,
		      (unsigned long long)delta, got ? got : "(null)");
}

static void assert_not_name(const struct elffile *ef, const char *nm_name)
{
	const char *got = outer_name(ef, symfix_nm_addr(PROG_NM, nm_name) + 1);

	ck_assert_msg(!got || strcmp(got, nm_name), "%s named without its symbols", nm_name);
}

static const char *const prog_locals[] = {"sym_local_helper", "sym_local_second"};
static const char *const prog_globals[] = {"sym_global_foo", "sym_global_bar", "main"};

static void assert_all_named(const struct elffile *ef)
{
	for (size_t i = 0; i < ARRAY_SIZE(prog_locals); i++) {
		assert_name(ef, prog_locals[i], 0);
		assert_name(ef, prog_locals[i], 5);
	}
	for (size_t i = 0; i < ARRAY_SIZE(prog_globals); i++) {
		assert_name(ef, prog_globals[i], 0);
		assert_name(ef, prog_globals[i], 3);
	}
}

/* Only .dynsym names: the globals, none of the static functions. */
static void assert_globals_only(const struct elffile *ef)
{
	for (size_t i = 0; i < ARRAY_SIZE(prog_globals); i++)
		assert_name(ef, prog_globals[i], 1);
	for (size_t i = 0; i < ARRAY_SIZE(prog_locals); i++)
		assert_not_name(ef, prog_locals[i]);
}

static const char rust_src[] =
    "use std::sync::mpsc;\n"
    "#[inline(never)]\n"
    "fn worker(rx: mpsc::Receiver<u32>) -> u32 { rx.recv().unwrap_or(0) }\n"
    "fn main() {\n"
    "    let (tx, rx) = mpsc::channel::<u32>();\n"
    "    tx.send(7).unwrap();\n"
    "    println!(\"{}\", worker(rx));\n"
    "}\n";

START_TEST(test_demangle)
{
	char *d = symbolize_demangle("_ZN9perchtest3runEi");

	ck_assert_str_eq(d, "perchtest::run(int)");
	free(d);
	d = symbolize_demangle("_ZNK9perchtest3BoxIiE3getEv");
	ck_assert_str_eq(d, "perchtest::Box<int>::get() const");
	free(d);
	ck_assert_ptr_null(symbolize_demangle("main"));
	ck_assert_ptr_null(symbolize_demangle("Z3foov"));
	ck_assert_ptr_null(symbolize_demangle("_Z"));
	ck_assert_ptr_null(symbolize_demangle("_Z$$garbage"));
	ck_assert_ptr_null(symbolize_demangle(NULL));
	/* Rust: legacy without its hash, v0 (both as binutils' c++filt -i prints them) */
	d = symbolize_demangle("_ZN3std2rt10lang_start17h5f2ed5b7b5d1b1a9E");
	ck_assert_str_eq(d, "std::rt::lang_start");
	free(d);
	d = symbolize_demangle("_RNvMNtNtNtCsdyIG5SqMl5y_3std4sync4mpsc7oneshotINtB2_6PacketmE4recv"
			       "Csi7GFBnvyxwE_1r");
	ck_assert_str_eq(d, "<std::sync::mpsc::oneshot::Packet<u32>>::recv");
	free(d);
	ck_assert_ptr_null(symbolize_demangle("_RX"));
}
END_TEST

/* Rust, built here with Debian's rustc (the one CI has): legacy ("_ZN...17h<hash>E") and v0
 * ("_R...", -C symbol-mangling-version=v0) symbol names as binutils' `c++filt -i` prints
 * them (same libiberty, no hashes or crate disambiguators), for every Rust function of a
 * copy without DWARF; with DWARF, the linkage name gives the same name and a file:line. */
static void check_rust(const char *rustc, const char *flags, const char *tag)
{
	char *src = testutil_tmp_file("r.rs", rust_src, strlen(rust_src));
	char *bin = xasprintf("%s/r-%s", testutil_tmp, tag), *cmd, *out, *line, *save = NULL, *all;
	struct sym_frame f[SYM_MAX_INLINE];
	struct symbolizer *dsym;
	struct elffile *ef;
	size_t checked = 0;
	int st, n;

	cmd = xasprintf("%s -g %s -o %s %s && objcopy --strip-debug %s %s.nodbg", rustc, flags, bin,
			src, bin, bin);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s: %s", cmd, out);
	free(out);
	free(cmd);
	/* "000000000000f150 r::worker" for each Rust function symbol */
	cmd = xasprintf(
	    "nm --defined-only %s.nodbg | awk '$2 ~ /^[tT]$/ && $3 ~ /^(_R|_ZN.*17h[0-9a-f]+E$)/ "
	    "{ print $1, $3 }' | c++filt -i",
	    bin);
	out = testutil_run(cmd, &st);
	ck_assert_int_eq(st, 0);
	free(cmd);
	all = xasprintf("\n%s", out);
	cmd = xasprintf("%s.nodbg", bin);
	ef = open_ok(cmd);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *name, *others;
		uint64_t a = strtoull(line, &name, 16);
		const char *got;

		ck_assert(*name == ' ');
		name++;
		got = outer_name(ef, a);
		ck_assert_ptr_nonnull(got);
		ck_assert_msg(strncmp(got, "_R", 2) && strncmp(got, "_ZN", 3), "%s", got);
		if (strcmp(got, name)) {
			/* one of several symbols at that address (identical code folded) */
			others = xasprintf("\n%016llx %s\n", (unsigned long long)a, got);
			ck_assert_msg(strstr(all, others), "%s 0x%llx: got %s, c++filt -i has %s",
				      tag, (unsigned long long)a, got, name);
			free(others);
		}
		checked++;
	}
	free(all);
	ck_assert_uint_gt(checked, 100);
	elffile_free(ef);
	free(cmd);
	free(out);

	/* with DWARF: the frame of r::worker, at its first line (a symbolizer of its own: the
	 * copy without DWARF has the same build-id, and modules are cached by build-id) */
	ef = open_ok(bin);
	cmd = xasprintf("nm %s | awk '/worker/ { print $1 }'", bin);
	out = testutil_run(cmd, &st);
	dsym = symbolizer_new(testutil_tmp, NULL);
	n = symbolizer_lookup(dsym, ef, strtoull(out, NULL, 16), f, SYM_MAX_INLINE);
	ck_assert_int_ge(n, 1);
	ck_assert_str_eq(f[n - 1].func, "r::worker");
	ck_assert_ptr_nonnull(f[n - 1].file);
	ck_assert_str_eq(strrchr(f[n - 1].file, '/') + 1, "r.rs");
	ck_assert_uint_eq(f[n - 1].line, 3);
	symbolizer_free(dsym);
	elffile_free(ef);
	free(out);
	free(cmd);
	free(bin);
	free(src);
}

START_TEST(test_rust)
{
	const char *rustc = access("/usr/bin/rustc", X_OK) == 0 ? "/usr/bin/rustc" : "rustc";

	if (!testutil_have_tool(rustc) || !testutil_have_tool("c++filt"))
		return;
	check_rust(rustc, "", "legacy");
	check_rust(rustc, "-C symbol-mangling-version=v0", "v0");
}
END_TEST

/* DWARF whose sections are compressed (zlib, GNU .zdebug_*, zstd: objcopy) names and places
 * lines_mid() like the plain build: the module is seen to have DWARF under either section
 * name. */
START_TEST(test_compressed_dwarf)
{
	static const char *const kinds[] = {"none", "zlib", "zlib-gnu", "zstd"};
	char *src = testutil_fixture_path("elf/lines"), *cmd, *out;
	uint64_t a;
	int st;

	if (!testutil_have_tool("gcc") || !testutil_have_tool("objcopy"))
		return;
	cmd = xasprintf("gcc -O2 -g -o %s/plain %s/lines.c %s/lines2.c && nm %s/plain | "
			"awk '/ lines_mid$/ { print $1 }'",
			testutil_tmp, src, src, testutil_tmp);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s: %s", cmd, out);
	a = strtoull(out, NULL, 16);
	ck_assert_uint_ne(a, 0);
	free(out);
	free(cmd);
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		struct symbolizer *s = symbolizer_new(testutil_tmp, NULL);
		struct sym_frame f[SYM_MAX_INLINE];
		struct elffile *ef;
		int n;

		cmd = xasprintf("objcopy --compress-debug-sections=%s %s/plain %s/%s", kinds[k],
				testutil_tmp, testutil_tmp, kinds[k]);
		out = testutil_run(cmd, &st);
		ck_assert_msg(st == 0, "%s: %s", cmd, out);
		free(out);
		free(cmd);
		cmd = xasprintf("%s/%s", testutil_tmp, kinds[k]);
		ef = open_ok(cmd);
		n = symbolizer_lookup(s, ef, a + 4, f, SYM_MAX_INLINE);
		ck_assert_int_ge(n, 1);
		ck_assert_str_eq(f[n - 1].func, "lines_mid");
		ck_assert_msg(f[n - 1].file && strstr(f[n - 1].file, "lines.c"), "%s: file %s",
			      kinds[k], f[n - 1].file ? f[n - 1].file : "(null)");
		elffile_free(ef);
		symbolizer_free(s);
		free(cmd);
	}
	free(src);
}
END_TEST

START_TEST(test_symtab)
{
	struct elffile *ef = open_ok(SYMFIX_DIR "prog");
	struct sym_frame f[4];
	uint64_t a = symfix_nm_addr(PROG_NM, "sym_global_bar");

	assert_all_named(ef);
	/* no DWARF in this copy: a name only */
	ck_assert_int_eq(symbolizer_lookup(sym, ef, a, f, 4), 1);
	ck_assert_str_eq(f[0].func, "sym_global_bar");
	ck_assert_ptr_null(f[0].file);
	ck_assert_uint_eq(f[0].line, 0);
	ck_assert_int_eq(f[0].inlined, 0);
	/* not code */
	ck_assert_int_eq(symbolizer_lookup(sym, ef, 0x10, f, 4), 0);
	ck_assert_int_eq(symbolizer_lookup(sym, ef, symfix_nm_addr(PROG_NM, "sym_sink"), f, 4), 0);
	ck_assert_int_eq(symbolizer_lookup(sym, ef, UINT64_MAX, f, 4), 0);
	elffile_free(ef);
}
END_TEST

START_TEST(test_dynsym_only)
{
	struct elffile *ef = open_ok(SYMFIX_DIR "prog.stripped");

	assert_globals_only(ef);
	elffile_free(ef);
}
END_TEST

START_TEST(test_minidebuginfo)
{
	struct elffile *ef = open_ok(SYMFIX_DIR "prog.mini");

	ck_assert_int_eq(ef->has_symtab, 0);
	assert_all_named(ef); /* locals from .gnu_debugdata, globals from .dynsym */
	elffile_free(ef);
}
END_TEST

START_TEST(test_corrupt_minidebuginfo)
{
	struct elffile *ef = open_ok(SYMFIX_DIR "prog.badmini");

	assert_globals_only(ef);
	elffile_free(ef);
}
END_TEST

START_TEST(test_debuglink)
{
	struct elffile *ef = open_ok(SYMFIX_DIR "prog.dbglink");

	ck_assert_int_eq(ef->has_symtab, 0);
	assert_all_named(ef); /* from fixtures/elf/sym/prog.debug */
	elffile_free(ef);
}
END_TEST

START_TEST(test_dwarf_inline)
{
	/* README: sym_inl inlined into sym_global_foo at [0x1191, 0x11aa), called from line 31 */
	struct elffile *ef = open_ok(SYMFIX_DIR "prog.dbglink");
	struct sym_frame f[SYM_MAX_INLINE];
	int n = symbolizer_lookup(sym, ef, 0x1199, f, SYM_MAX_INLINE);

	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(f[0].func, "sym_inl");
	ck_assert_int_eq(f[0].inlined, 1);
	ck_assert_ptr_nonnull(f[0].file);
	ck_assert_ptr_nonnull(strstr(f[0].file, "prog.c"));
	ck_assert(f[0].line >= 10 && f[0].line <= 11);
	ck_assert_str_eq(f[1].func, "sym_global_foo");
	ck_assert_int_eq(f[1].inlined, 0);
	ck_assert_str_eq(f[1].file, f[0].file);
	ck_assert_uint_eq(f[1].line, 31);
	/* a caller that wants one frame gets the innermost */
	ck_assert_int_eq(symbolizer_lookup(sym, ef, 0x1199, f, 1), 1);
	ck_assert_str_eq(f[0].func, "sym_inl");
	/* no inlining in sym_local_helper (prog.c lines 14-21) */
	n = symbolizer_lookup(sym, ef, symfix_nm_addr(PROG_NM, "sym_local_helper") + 4, f, 4);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(f[0].func, "sym_local_helper");
	ck_assert(f[0].line >= 14 && f[0].line <= 21);
	elffile_free(ef);
}
END_TEST

START_TEST(test_build_id_sysroot)
{
	struct elffile *ef = open_ok(SYMFIX_DIR "prog.dbglink");
	char hex[129], *dbg, *bin = testutil_tmp_path("bin/prog");

	dbg = xasprintf("%s/usr/lib/debug/.build-id/%.2s/%s.debug", testutil_tmp,
			elffile_build_id_hex(ef, hex), hex + 2);
	elffile_free(ef);
	symfix_copy(SYMFIX_DIR "prog.dbglink", bin, NULL); /* no prog.debug next to it */
	symfix_copy(SYMFIX_DIR "prog.debug", dbg, NULL);
	ef = open_ok(bin);
	assert_all_named(ef);
	elffile_free(ef);
	free(dbg);
	free(bin);
}
END_TEST

START_TEST(test_no_debug_file)
{
	/* the debuglink target is missing: only .dynsym names */
	struct elffile *ef;
	char *bin = testutil_tmp_path("bin/prog");

	symfix_copy(SYMFIX_DIR "prog.dbglink", bin, NULL);
	ef = open_ok(bin);
	assert_name(ef, "main", 1);
	assert_not_name(ef, "sym_local_helper");
	elffile_free(ef);
	free(bin);
}
END_TEST

/* The `nm -C` line at address @addr. */
static int nm_demangled(uint64_t addr, char *out, size_t outsz)
{
	FILE *f = fopen(SYMFIX_DIR "cxx.nm-demangled", "r");
	char line[1024];
	unsigned long long a;
	int n, found = 0;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %*c %n", &a, &n) >= 1 && a == addr && n > 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, outsz, "%s", line + n);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

START_TEST(test_cxx)
{
	static const char *const mangled[] = {
	    "_ZN9perchtest3runEi",
	    "_ZZN9perchtest3runEiENKUliE_clEi",
	    "_ZNK9perchtest3BoxIiE3getEv",
	    "_ZN9perchtest5twiceIlEET_S1_",
	};
	struct elffile *ef = open_ok(SYMFIX_DIR "cxx");
	char want[512];

	for (size_t i = 0; i < ARRAY_SIZE(mangled); i++) {
		uint64_t a = symfix_nm_addr(SYMFIX_DIR "cxx.nm", mangled[i]);
		const char *got;

		ck_assert_msg(a, "%s not in cxx.nm", mangled[i]);
		ck_assert(nm_demangled(a, want, sizeof(want)));
		got = outer_name(ef, a + 1);
		ck_assert_msg(got && !strcmp(got, want), "%s: got %s, nm -C says %s", mangled[i],
			      got ? got : "(null)", want);
	}
	/* spelled out, for the reader */
	ck_assert_str_eq(outer_name(ef, symfix_nm_addr(SYMFIX_DIR "cxx.nm", mangled[1])),
			 "perchtest::run(int)::{lambda(int)#1}::operator()(int) const");
	ck_assert_str_eq(outer_name(ef, symfix_nm_addr(SYMFIX_DIR "cxx.nm", mangled[3])),
			 "long perchtest::twice<long>(long)");
	ck_assert_str_eq(outer_name(ef, symfix_nm_addr(SYMFIX_DIR "cxx.nm", "main")), "main");
	elffile_free(ef);
}
END_TEST

START_TEST(test_cache)
{
	struct elffile *ef = open_ok(SYMFIX_DIR "prog.mini"), *ef2;
	uint64_t a = symfix_nm_addr(PROG_NM, "sym_local_second");
	struct sym_frame f1[4], f2[4];

	ck_assert_int_eq(symbolizer_lookup(sym, ef, a + 2, f1, 4), 1);
	ck_assert_int_eq(symbolizer_lookup(sym, ef, a + 2, f2, 4), 1);
	ck_assert_ptr_eq(f1[0].func, f2[0].func);
	/* one string per name, shared by every address in the function */
	ck_assert_int_eq(symbolizer_lookup(sym, ef, a + 9, f2, 4), 1);
	ck_assert_ptr_eq(f1[0].func, f2[0].func);
	ck_assert_int_eq(symbolizer_lookup(sym, ef, a + 2, f2, 0), 0);
	ck_assert_int_eq(symbolizer_lookup(sym, NULL, a + 2, f2, 4), 0);
	/* many addresses (the table grows), then the first answers again */
	for (uint64_t x = 0x1000; x < 0x1000 + 20000; x++)
		symbolizer_lookup(sym, ef, x, f2, 4);
	ck_assert_int_eq(symbolizer_lookup(sym, ef, a + 2, f2, 4), 1);
	ck_assert_ptr_eq(f1[0].func, f2[0].func);
	ck_assert_str_eq(f2[0].func, "sym_local_second");
	/* strings outlive the elffile they came from */
	elffile_free(ef);
	ck_assert_str_eq(f1[0].func, "sym_local_second");
	/* another module in the same symbolizer */
	ef2 = open_ok(SYMFIX_DIR "cxx");
	ck_assert_str_eq(outer_name(ef2, symfix_nm_addr(SYMFIX_DIR "cxx.nm", "main")), "main");
	elffile_free(ef2);
}
END_TEST

START_TEST(test_no_build_id)
{
	/* without a build-id the module is keyed by path; two such files stay apart */
	size_t size;
	uint8_t *img = testutil_read_file(SYMFIX_DIR "prog", &size);
	struct elffile *ef = elffile_open_memory(img, size, "prog"), *a, *b;
	struct elffile_section sec;
	char *pa = testutil_tmp_path("a/prog"), *pb = testutil_tmp_path("b/cxx");

	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(elffile_section(ef, ".note.gnu.build-id", &sec), 0);
	elffile_free(ef);
	memset(img + sec.offset + 8, 0, 4); /* n_type: no longer NT_GNU_BUILD_ID */
	testutil_write_file(pa, img, size);
	free(img);
	img = testutil_read_file(SYMFIX_DIR "cxx", &size);
	ef = elffile_open_memory(img, size, "cxx");
	ck_assert_int_eq(elffile_section(ef, ".note.gnu.build-id", &sec), 0);
	elffile_free(ef);
	memset(img + sec.offset + 8, 0, 4);
	testutil_write_file(pb, img, size);
	free(img);

	a = open_ok(pa);
	b = open_ok(pb);
	ck_assert_uint_eq(a->build_id_len, 0);
	ck_assert_uint_eq(b->build_id_len, 0);
	assert_name(a, "sym_local_helper", 1);
	ck_assert_str_eq(outer_name(b, symfix_nm_addr(SYMFIX_DIR "cxx.nm", "_ZN9perchtest3runEi")),
			 "perchtest::run(int)");
	assert_name(a, "main", 1);
	elffile_free(a);
	elffile_free(b);
	free(pa);
	free(pb);
}
END_TEST

START_TEST(test_hostile_files)
{
	/* truncated copies and copies with flipped bytes: open them if elffile accepts them, and
	 * symbolize whatever is left without crashing */
	static const char *const fixtures[] = {SYMFIX_DIR "prog", SYMFIX_DIR "prog.mini",
					       SYMFIX_DIR "prog.dbglink"};
	uint64_t x = 0x2545f4914f6cdd1dULL;

	for (size_t fi = 0; fi < ARRAY_SIZE(fixtures); fi++) {
		size_t size;
		uint8_t *img = testutil_read_file(fixtures[fi], &size);

		for (int iter = 0; iter < 120; iter++) {
			char *path = xasprintf("%s/h%zu-%d", testutil_tmp, fi, iter);
			uint8_t *bad = malloc(size);
			size_t len = size;
			struct elffile *ef;

			memcpy(bad, img, size);
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (iter % 2)
				len = (size_t)(x % size);
			else
				for (int k = 0; k < 16; k++)
					bad[(x >> (k * 3)) % size] ^= (uint8_t)(0x5a + k);
			testutil_write_file(path, bad, len);
			free(bad);
			ef = elffile_open(path);
			if (ef) {
				struct sym_frame f[SYM_MAX_INLINE];

				for (uint64_t a = 0x1000; a < 0x1220; a += 3) {
					int n = symbolizer_lookup(sym, ef, a, f, SYM_MAX_INLINE);

					ck_assert(n >= 0 && n <= SYM_MAX_INLINE);
					for (int i = 0; i < n; i++)
						ck_assert(!f[i].func || strlen(f[i].func) < 4096);
				}
				elffile_free(ef);
			}
			/* a fresh symbolizer: the copies share prog's build-id */
			symbolizer_free(sym);
			sym = symbolizer_new(testutil_tmp, NULL);
			free(path);
		}
		free(img);
	}
}
END_TEST

Suite *symbolize_suite(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("demangle");

	tcase_add_test(tc, test_demangle);
	suite_add_tcase(s, tc);

	tc = tcase_create("lookup");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_symtab);
	tcase_add_test(tc, test_dynsym_only);
	tcase_add_test(tc, test_minidebuginfo);
	tcase_add_test(tc, test_corrupt_minidebuginfo);
	tcase_add_test(tc, test_debuglink);
	tcase_add_test(tc, test_build_id_sysroot);
	tcase_add_test(tc, test_no_debug_file);
	tcase_add_test(tc, test_cxx);
	tcase_add_test(tc, test_cache);
	tcase_add_test(tc, test_no_build_id);
	suite_add_tcase(s, tc);

	tc = tcase_create("built"); /* programs built by the test */
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rust);
	tcase_add_test(tc, test_compressed_dwarf);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);

	tc = tcase_create("dwarf");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_dwarf_inline);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hostile_files);
	suite_add_tcase(s, tc);
	return s;
}
