/* Unit tests for debuginfo: lookups on fixtures/elf/dw agree with GNU addr2line,
 * llvm-addr2line and gdb (expectations recorded by fixtures/elf/dw/build.sh); the same frames
 * with, without and with a wrong .debug_aranges; hostile files. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/debuginfo.h"
#include "testutil.h"

#define MAX_EXP_FRAMES 8

/* One expectation line: "0x1058\tinl_mid\t/perch/.../inl.c:10\tmain\t/perch/.../inl.c:41" */
struct exp {
	uint64_t addr;
	int n;
	char *func[MAX_EXP_FRAMES];
	char *file[MAX_EXP_FRAMES]; /* basename, as written by the tool ("??" when unknown) */
	char *path[MAX_EXP_FRAMES]; /* the whole path, as written by the tool */
	unsigned int line[MAX_EXP_FRAMES]; /* 0 for "?" or "0" */
};

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static size_t load_exp_path(const char *path, struct exp **out);

static size_t load_exp(const char *rel, struct exp **out)
{
	char *path = testutil_fixture_path("elf/dw/%s", rel);
	size_t nr = load_exp_path(path, out);

	free(path);
	return nr;
}

static size_t load_exp_path(const char *path, struct exp **out)
{
	char *line = NULL;
	FILE *f = fopen(path, "r");
	struct exp *e = NULL;
	size_t nr = 0, alloc = 0, cap = 0;

	ck_assert_msg(f, "cannot open %s (run the tests from the repository root)", path);
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok, *colon;
		struct exp *x;

		line[strcspn(line, "\n")] = 0;
		ALLOC_GROW(e, nr + 1, alloc);
		x = &e[nr++];
		memset(x, 0, sizeof(*x));
		tok = strtok_r(line, "\t", &save);
		ck_assert_ptr_nonnull(tok);
		x->addr = strtoull(tok, NULL, 16);
		while ((tok = strtok_r(NULL, "\t", &save))) {
			ck_assert_int_lt(x->n, MAX_EXP_FRAMES);
			x->func[x->n] = xstrdup(tok);
			tok = strtok_r(NULL, "\t", &save);
			ck_assert_ptr_nonnull(tok);
			colon = strrchr(tok, ':');
			ck_assert_ptr_nonnull(colon);
			*colon = 0;
			x->line[x->n] = (unsigned int)strtoul(colon + 1, NULL, 10);
			x->file[x->n] = xstrdup(base_name(tok));
			x->path[x->n] = xstrdup(tok);
			x->n++;
		}
		ck_assert_int_gt(x->n, 0);
	}
	free(line);
	fclose(f);
	*out = e;
	return nr;
}

static void free_exp(struct exp *e, size_t nr)
{
	size_t i;
	int j;

	for (i = 0; i < nr; i++)
		for (j = 0; j < e[i].n; j++) {
			free(e[i].func[j]);
			free(e[i].file[j]);
			free(e[i].path[j]);
		}
	free(e);
}

static struct debuginfo *open_fixture(const char *rel)
{
	char *path = testutil_fixture_path("elf/dw/%s", rel);
	struct debuginfo *di = debuginfo_open(path);

	ck_assert_msg(di, "debuginfo_open(%s): %s", path, strerror(errno));
	free(path);
	return di;
}

static int no_line(const struct exp *x)
{
	return !strcmp(x->file[0], "??") || x->line[0] == 0;
}

enum name_check {
	NAME_SKIP,
	NAME_EXACT,
	NAME_UNQUALIFIED, /* the tool leaves out namespaces and classes ("hot" for "nsfx::hot") */
};

static int name_matches(const char *got, const char *want, enum name_check how)
{
	size_t gl, wl;

	if (!got)
		return 0;
	if (!strcmp(got, want) || how != NAME_UNQUALIFIED)
		return !strcmp(got, want);
	gl = strlen(got);
	wl = strlen(want);
	return gl > wl + 2 && !strcmp(got + gl - wl, want) && !strncmp(got + gl - wl - 2, "::", 2);
}

static void check_frame(const struct exp *x, int i, const struct sym_frame *f, int n,
			enum name_check how)
{
	ck_assert_msg(f->file && !strcmp(base_name(f->file), x->file[i]) && f->line == x->line[i],
		      "0x%llx frame %d: got %s:%u, want %s:%u", (unsigned long long)x->addr, i,
		      f->file ? f->file : "(null)", f->line, x->file[i], x->line[i]);
	if (how != NAME_SKIP)
		ck_assert_msg(name_matches(f->func, x->func[i], how),
			      "0x%llx frame %d: got %s, want %s", (unsigned long long)x->addr, i,
			      f->func ? f->func : "(null)", x->func[i]);
	ck_assert_int_eq(f->inlined, i < n - 1);
}

/* GNU addr2line falls back to .symtab where DWARF has no function (padding after a
 * function's high_pc), and names an inlined C++ function that has no linkage name after the
 * function it was inlined into, or by its bare DW_AT_name (binutils 2.40); llvm-addr2line
 * does neither. Every frame's file:line is checked, so the call sites of inlined calls too. */
static void check_gnu(const char *bin, const char *expfile, int *deepest, enum name_check how,
		      unsigned int min_pct)
{
	struct debuginfo *di = open_fixture(bin);
	struct sym_frame f[SYM_MAX_INLINE];
	struct exp *e;
	size_t nr = load_exp(expfile, &e), i, full = 0;
	int j, n;

	ck_assert_uint_gt(nr, 100);
	for (i = 0; i < nr; i++) {
		const struct exp *x = &e[i];

		n = debuginfo_lookup(di, x->addr, f, SYM_MAX_INLINE);
		if (no_line(x)) {
			ck_assert_msg(n == 0 || !f[0].file || !f[0].line,
				      "0x%llx: addr2line has no line, got %s:%u",
				      (unsigned long long)x->addr, f[0].file, f[0].line);
			continue;
		}
		ck_assert_msg(n > 0, "0x%llx: no frames", (unsigned long long)x->addr);
		if (!f[n - 1].func) { /* line but no function: addr2line used .symtab */
			ck_assert_int_eq(n, 1);
			ck_assert_int_eq(x->n, 1);
			check_frame(x, 0, &f[0], n, NAME_SKIP);
			continue;
		}
		ck_assert_msg(n == x->n, "0x%llx: %d frames, addr2line has %d",
			      (unsigned long long)x->addr, n, x->n);
		for (j = 0; j < n; j++)
			check_frame(
			    x, j, &f[j], n,
			    j == n - 1 || strcmp(x->func[j], x->func[x->n - 1]) ? how : NAME_SKIP);
		if (x->n > *deepest)
			*deepest = x->n;
		full++;
	}
	/* @min_pct of .text is our own code with DWARF */
	ck_assert_uint_ge(full * 100, nr * min_pct);
	free_exp(e, nr);
	debuginfo_free(di);
}

static void check_llvm_di(struct debuginfo *di, struct exp *e, size_t nr);

/* llvm-addr2line uses DWARF only (with -f, no symbol-table names): exact agreement. */
static void check_llvm(const char *bin, const char *expfile)
{
	struct debuginfo *di = open_fixture(bin);
	struct exp *e;
	size_t nr = load_exp(expfile, &e);

	check_llvm_di(di, e, nr);
}

static void check_llvm_di(struct debuginfo *di, struct exp *e, size_t nr)
{
	struct sym_frame f[SYM_MAX_INLINE];
	size_t i;
	int j, n;

	ck_assert_uint_gt(nr, 100);
	for (i = 0; i < nr; i++) {
		const struct exp *x = &e[i];

		n = debuginfo_lookup(di, x->addr, f, SYM_MAX_INLINE);
		if (x->n == 1 && no_line(x)) {
			/* nothing (a name from .symtab, _start), or a "line 0" row of a function
			 * (clang): then that function, and no line */
			ck_assert_msg(
			    n == 0 || (n == 1 && f[0].func && !strcmp(f[0].func, x->func[0]) &&
				       !f[0].line),
			    "0x%llx: llvm-addr2line has %s at line 0, got %d frames (%s:%u)",
			    (unsigned long long)x->addr, x->func[0], n, n ? f[0].func : "",
			    n ? f[0].line : 0);
			continue;
		}
		ck_assert_msg(n == x->n, "0x%llx: %d frames, llvm-addr2line has %d",
			      (unsigned long long)x->addr, n, x->n);
		for (j = 0; j < n; j++) {
			if (!strcmp(x->func[j], "??")) {
				ck_assert_ptr_null(f[j].func);
				check_frame(x, j, &f[j], n, NAME_SKIP);
			} else {
				check_frame(x, j, &f[j], n, NAME_EXACT);
			}
		}
	}
	free_exp(e, nr);
	debuginfo_free(di);
}

START_TEST(test_gnu_dwarf5)
{
	int deepest = 0;

	check_gnu("inl-dwarf5", "inl-dwarf5.expect", &deepest, NAME_EXACT, 51);
	ck_assert_int_ge(deepest, 3); /* the two-level inline chain was exercised */
}
END_TEST

START_TEST(test_gnu_dwarf4)
{
	int deepest = 0;

	check_gnu("inl-dwarf4", "inl-dwarf4.expect", &deepest, NAME_EXACT, 51);
	ck_assert_int_ge(deepest, 3);
}
END_TEST

START_TEST(test_llvm_dwarf5)
{
	check_llvm("inl-dwarf5", "inl-dwarf5.llvm-expect");
}
END_TEST

START_TEST(test_llvm_dwarf4)
{
	check_llvm("inl-dwarf4", "inl-dwarf4.llvm-expect");
}
END_TEST

/* Line number of the first line of fixtures/elf/dw/@rel containing @needle. */
static unsigned int source_line(const char *rel, const char *needle)
{
	char *path = testutil_fixture_path("elf/dw/%s", rel), *line = NULL;
	FILE *f = fopen(path, "r");
	unsigned int nr = 0, found = 0;
	size_t cap = 0;

	ck_assert_ptr_nonnull(f);
	while (!found && getline(&line, &cap, f) > 0) {
		nr++;
		if (strstr(line, needle))
			found = nr;
	}
	ck_assert_msg(found, "no \"%s\" in %s", needle, path);
	free(line);
	fclose(f);
	free(path);
	return found;
}

/* A two-level chain, checked against the fixture's source: inl_leaf (inl.h) inlined into
 * inl_mid, inlined into main. The address is one where addr2line shows three frames. */
START_TEST(test_chain_and_max)
{
	struct debuginfo *di = open_fixture("inl-dwarf5");
	struct sym_frame f[SYM_MAX_INLINE];
	struct exp *e;
	size_t nr = load_exp("inl-dwarf5.expect", &e), i;
	const struct exp *x = NULL;
	int n;

	for (i = 0; i < nr && !x; i++)
		if (e[i].n == 3 && !strcmp(e[i].func[2], "main"))
			x = &e[i];
	ck_assert_ptr_nonnull(x);
	n = debuginfo_lookup(di, x->addr, f, SYM_MAX_INLINE);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(f[0].func, "inl_leaf");
	ck_assert_str_eq(base_name(f[0].file), "inl.h");
	ck_assert_uint_gt(f[0].line, source_line("inl.h", "inl_leaf(int x)"));
	ck_assert_uint_le(f[0].line, source_line("inl.h", "return r;"));
	ck_assert_int_eq(f[0].inlined, 1);
	ck_assert_str_eq(f[1].func, "inl_mid");
	ck_assert_str_eq(base_name(f[1].file), "inl.c");
	ck_assert(f[1].line == source_line("inl.c", "int a = inl_leaf(x + 1);") ||
		  f[1].line == source_line("inl.c", "a += inl_leaf(a);"));
	ck_assert_int_eq(f[1].inlined, 1);
	ck_assert_str_eq(f[2].func, "main");
	ck_assert_uint_eq(f[2].line, source_line("inl.c", "inl_mid(argc + 2)"));
	ck_assert_int_eq(f[2].inlined, 0);
	/* full paths: comp_dir joined in (build.sh maps it to /perch/...) */
	ck_assert_str_eq(f[2].file, "/perch/fixtures/elf/dw/inl.c");

	/* @max keeps the innermost frames */
	memset(f, 0, sizeof(f));
	n = debuginfo_lookup(di, x->addr, f, 1);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(f[0].func, "inl_leaf");
	ck_assert_ptr_null(f[1].func);
	ck_assert_int_eq(debuginfo_lookup(di, x->addr, f, 0), 0);

	/* outside any CU */
	ck_assert_int_eq(debuginfo_lookup(di, 0, f, SYM_MAX_INLINE), 0);
	ck_assert_int_eq(debuginfo_lookup(di, 0x10, f, SYM_MAX_INLINE), 0);
	ck_assert_int_eq(debuginfo_lookup(di, UINT64_MAX, f, SYM_MAX_INLINE), 0);
	ck_assert_int_eq(debuginfo_lookup(NULL, x->addr, f, SYM_MAX_INLINE), 0);
	free_exp(e, nr);
	debuginfo_free(di);
}
END_TEST

/* The C++ member defined out of line: its name comes through DW_AT_specification. */
START_TEST(test_cxx_names)
{
	struct debuginfo *di = open_fixture("inl-dwarf4");
	struct sym_frame f[SYM_MAX_INLINE];
	struct exp *e;
	size_t nr = load_exp("inl-dwarf4.llvm-expect", &e), i, seen = 0;
	int n;

	for (i = 0; i < nr; i++) {
		if (e[i].n != 2 || strcmp(e[i].func[1], "_ZN7perchfx7counter4bumpEi"))
			continue;
		n = debuginfo_lookup(di, e[i].addr, f, SYM_MAX_INLINE);
		ck_assert_int_eq(n, 2);
		ck_assert_str_eq(f[1].func, "_ZN7perchfx7counter4bumpEi");
		ck_assert_str_eq(base_name(f[1].file), "cls.cc");
		seen++;
	}
	ck_assert_uint_gt(seen, 0);
	free_exp(e, nr);
	debuginfo_free(di);
}
END_TEST

START_TEST(test_gnu_nsinl_dwarf5)
{
	int deepest = 0;

	check_gnu("nsinl-dwarf5", "nsinl-dwarf5.expect", &deepest, NAME_UNQUALIFIED, 40);
	ck_assert_int_ge(deepest, 3); /* nsfx::hot inlined into nsfx::inner::deep */
}
END_TEST

START_TEST(test_gnu_nsinl_dwarf4)
{
	int deepest = 0;

	check_gnu("nsinl-dwarf4", "nsinl-dwarf4.expect", &deepest, NAME_UNQUALIFIED, 40);
	ck_assert_int_ge(deepest, 3);
}
END_TEST

/* @raw as gdb names a frame: demangled, without the parameter list. */
static void gdb_name(const char *raw, char *buf, size_t size)
{
	char *dm = symbolize_demangle(raw);
	const char *name = dm ? dm : raw;
	size_t len = strlen(name);

	if (dm && len && name[len - 1] == ')') {
		int depth = 0;

		while (len--) {
			depth += name[len] == ')' ? 1 : name[len] == '(' ? -1 : 0;
			if (!depth)
				break;
		}
	}
	ck_assert_uint_lt(len, size);
	memcpy(buf, name, len);
	buf[len] = 0;
	free(dm);
}

/* gdb's frames at breakpoints inside the inlined functions: the same qualified names, the
 * same full paths (no directory joined twice) and lines, the call sites for the callers. */
static void check_gdb(const char *bin, const char *expfile)
{
	struct debuginfo *di = open_fixture(bin);
	struct sym_frame f[SYM_MAX_INLINE];
	char name[256];
	struct exp *e;
	size_t nr = load_exp(expfile, &e), i;
	int j, n;

	ck_assert_uint_ge(nr, 5);
	for (i = 0; i < nr; i++) {
		const struct exp *x = &e[i];

		n = debuginfo_lookup(di, x->addr, f, SYM_MAX_INLINE);
		ck_assert_msg(n == x->n, "0x%llx: %d frames, gdb has %d",
			      (unsigned long long)x->addr, n, x->n);
		for (j = 0; j < n; j++) {
			ck_assert_ptr_nonnull(f[j].func);
			if (j < n - 1)
				snprintf(name, sizeof(name), "%s", f[j].func);
			else
				gdb_name(f[j].func, name, sizeof(name));
			ck_assert_msg(!strcmp(name, x->func[j]),
				      "0x%llx frame %d: got %s, gdb has %s",
				      (unsigned long long)x->addr, j, name, x->func[j]);
			ck_assert_msg(f[j].file && !strcmp(f[j].file, x->path[j]) &&
					  f[j].line == x->line[j],
				      "0x%llx frame %d: got %s:%u, gdb has %s:%u",
				      (unsigned long long)x->addr, j, f[j].file, f[j].line,
				      x->path[j], x->line[j]);
			ck_assert_int_eq(f[j].inlined, j < n - 1);
		}
	}
	free_exp(e, nr);
	debuginfo_free(di);
}

START_TEST(test_gdb_nsinl)
{
	check_gdb("nsinl-dwarf5", "nsinl-dwarf5.gdb");
	check_gdb("nsinl-dwarf4", "nsinl-dwarf4.gdb");
}
END_TEST

/* Every address where addr2line sees an inlined call in nsinl.cc: the inner frame has its
 * namespaces (gcc gives these functions no linkage name), the caller's line is the line of
 * the call, not the loop head above it; C code (paths/rel.c) keeps plain names and its paths
 * join the relative compilation directory once. */
START_TEST(test_ns_names_and_call_lines)
{
	static const struct {
		const char *caller, *inner, *call_marker;
	} calls[] = {
	    {"_ZN4nsfx6callerEm", "nsfx::hot", "NSFX_CALL_HOT"},
	    {"_ZN4nsfx7caller2Em", "nsfx::inner::deep", "NSFX_CALL_DEEP"},
	    {"_ZN4nsfx7caller2Em", "(anonymous namespace)::anon_mix", "NSFX_CALL_ANON"},
	    {"rel_entry", "inl_leaf", "REL_CALL"},
	};
	const char *bins[] = {"nsinl-dwarf5", "nsinl-dwarf4"};
	struct sym_frame f[SYM_MAX_INLINE];
	size_t b, c, i, nr, seen[ARRAY_SIZE(calls)] = {0};
	struct exp *e;
	int n;

	ck_assert_uint_ne(source_line("nsinl.cc", "NSFX_CALL_HOT"),
			  source_line("nsinl.cc", "do {"));
	for (b = 0; b < ARRAY_SIZE(bins); b++) {
		struct debuginfo *di = open_fixture(bins[b]);
		char *exp = xasprintf("%s.expect", bins[b]);

		nr = load_exp(exp, &e);
		for (i = 0; i < nr; i++) {
			if (e[i].n < 2)
				continue;
			n = debuginfo_lookup(di, e[i].addr, f, SYM_MAX_INLINE);
			ck_assert_int_eq(n, e[i].n);
			for (c = 0; c < ARRAY_SIZE(calls); c++) {
				const char *src = c == 3 ? "paths/rel.c" : "nsinl.cc";

				if (strcmp(f[n - 1].func, calls[c].caller) ||
				    strcmp(f[n - 2].func, calls[c].inner))
					continue;
				ck_assert_uint_eq(f[n - 1].line,
						  source_line(src, calls[c].call_marker));
				if (c == 3) {
					ck_assert_str_eq(f[n - 1].file, "./paths/rel.c");
					ck_assert_str_eq(f[n - 2].file, "./paths/../inl.h");
				}
				seen[c]++;
			}
			for (int j = 0; j < n; j++) /* no bare name of a namespaced function */
				ck_assert_msg(strcmp(f[j].func, "hot") &&
						  strcmp(f[j].func, "deep") &&
						  strcmp(f[j].func, "anon_mix"),
					      "0x%llx frame %d: unqualified %s",
					      (unsigned long long)e[i].addr, j, f[j].func);
		}
		free_exp(e, nr);
		free(exp);
		debuginfo_free(di);
	}
	for (c = 0; c < ARRAY_SIZE(calls); c++)
		ck_assert_msg(seen[c] >= 2, "%s inlined into %s: seen %zu times", calls[c].inner,
			      calls[c].caller, seen[c]);
}
END_TEST

/* Many lookups over the whole file: lazily built, then binary searches only. */
START_TEST(test_many_lookups)
{
	struct debuginfo *di = open_fixture("inl-dwarf5");
	struct sym_frame f[SYM_MAX_INLINE];
	uint64_t a;
	long total = 0;
	int round;

	for (round = 0; round < 200; round++)
		for (a = 0x1000; a < 0x1400; a++)
			total += debuginfo_lookup(di, a, f, SYM_MAX_INLINE);
	ck_assert_int_gt(total, 0);
	debuginfo_free(di);
}
END_TEST

START_TEST(test_no_dwarf)
{
	char *path = testutil_fixture_path("elf/dw/hello-static"); /* stripped of .debug_* */

	errno = 0;
	ck_assert_ptr_null(debuginfo_open(path));
	ck_assert_int_eq(errno, ENOENT);
	free(path);
	errno = 0;
	ck_assert_ptr_null(debuginfo_open("/nonexistent/perch/file"));
	ck_assert_int_eq(errno, ENOENT);
	debuginfo_free(NULL);
}
END_TEST

/* fixtures/elf/dw/@rel in a buffer of exactly its size (so overreads show under ASan). */
static uint8_t *read_fixture(const char *rel, size_t *size)
{
	char *path = testutil_fixture_path("elf/dw/%s", rel);
	uint8_t *buf = testutil_read_file(path, size);

	ck_assert_uint_gt(*size, 0);
	free(path);
	return buf;
}

static char *tmp_path; /* <testutil_tmp>/hostile, in the "hostile" tests */

/* Open @buf as a file: NULL with ENOENT/ENOEXEC, or a debuginfo whose lookups stay sane. */
static void open_hostile(const uint8_t *buf, size_t size)
{
	struct sym_frame f[SYM_MAX_INLINE];
	struct debuginfo *di;
	uint64_t a;
	int n, i;

	testutil_write_file(tmp_path, buf, size);
	errno = 0;
	di = debuginfo_open(tmp_path);
	if (!di) {
		ck_assert_msg(errno == ENOENT || errno == ENOEXEC, "errno %d", errno);
		return;
	}
	for (a = 0x1000; a < 0x401400; a += a == 0x13ff ? 0x3ffc01 : 3) { /* PIE and -no-pie */
		n = debuginfo_lookup(di, a, f, SYM_MAX_INLINE);
		ck_assert_int_ge(n, 0);
		ck_assert_int_le(n, SYM_MAX_INLINE);
		for (i = 0; i < n; i++)
			ck_assert_int_eq(f[i].inlined, i < n - 1);
	}
	debuginfo_free(di);
}

static void hostile_setup(void)
{
	testutil_tmp_setup();
	tmp_path = testutil_tmp_path("hostile");
}

static void hostile_teardown(void)
{
	free(tmp_path);
	tmp_path = NULL;
	testutil_tmp_teardown();
}

START_TEST(test_garbage)
{
	uint8_t buf[4096];
	size_t i;

	srand(42);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	open_hostile(buf, sizeof(buf));
	open_hostile(buf, 0);
	memcpy(buf, "\177ELF", 4); /* ELF magic, garbage after */
	open_hostile(buf, sizeof(buf));
	open_hostile(buf, 4);
	errno = 0;
	testutil_write_file(tmp_path, "not an ELF file\n", 16);
	ck_assert_ptr_null(debuginfo_open(tmp_path));
	ck_assert_int_eq(errno, ENOEXEC);
}
END_TEST

START_TEST(test_truncated)
{
	size_t size, len;
	uint8_t *buf = read_fixture("inl-dwarf5", &size);

	for (len = 0; len < size; len += 997)
		open_hostile(buf, len);
	free(buf);
}
END_TEST

/* Section [off, off + size) of an ELF64 image, by name; 0 when absent or out of bounds. */
static int find_section(const uint8_t *img, size_t size, const char *name, size_t *off, size_t *len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh, *strsh;
	size_t i;

	ck_assert_uint_ge(size, sizeof(*eh));
	ck_assert_uint_le(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh), size);
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	ck_assert_uint_lt(eh->e_shstrndx, eh->e_shnum);
	strsh = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= strsh->sh_size ||
		    strcmp((const char *)img + strsh->sh_offset + sh[i].sh_name, name))
			continue;
		if (sh[i].sh_offset + sh[i].sh_size > size)
			return 0;
		*off = sh[i].sh_offset;
		*len = sh[i].sh_size;
		return 1;
	}
	return 0;
}

/* Random byte flips inside the DWARF sections of a real file: the ELF stays valid, the
 * DWARF does not. Must not crash, hang or leak (under ASan). */
static void corrupt_rounds(const char *rel, int rounds, unsigned int seed)
{
	static const char *const secs[] = {".debug_info",     ".debug_abbrev", ".debug_line",
					   ".debug_rnglists", ".debug_str",    ".debug_line_str"};
	size_t size, off[ARRAY_SIZE(secs)], len[ARRAY_SIZE(secs)], s, k;
	uint8_t *orig = read_fixture(rel, &size), *buf = xmalloc(size);
	int round;

	for (s = 0; s < ARRAY_SIZE(secs); s++)
		ck_assert_msg(find_section(orig, size, secs[s], &off[s], &len[s]) && len[s],
			      "no %s in the fixture", secs[s]);
	srand(seed);
	for (round = 0; round < rounds; round++) {
		memcpy(buf, orig, size);
		s = (size_t)round % ARRAY_SIZE(secs);
		for (k = 0; k < 1 + (size_t)round % 8; k++)
			buf[off[s] + (size_t)rand() % len[s]] = (uint8_t)rand();
		open_hostile(buf, size);
	}
	free(buf);
	free(orig);
}

START_TEST(test_corrupt_dwarf)
{
	corrupt_rounds("inl-dwarf5", 150, 7);
}
END_TEST

/* The same for the C++ scopes (namespaces, specification chains) of nsinl. */
START_TEST(test_corrupt_scopes)
{
	corrupt_rounds("nsinl-dwarf5", 150, 11);
}
END_TEST

/* The same frames (count, names, file:line, inline flags) from @a and @b at @addr; the count. */
static int same_frames(struct debuginfo *a, struct debuginfo *b, uint64_t addr)
{
	struct sym_frame fa[SYM_MAX_INLINE], fb[SYM_MAX_INLINE];
	int na, nb, i;

	memset(fa, 0, sizeof(fa));
	memset(fb, 0, sizeof(fb));
	na = debuginfo_lookup(a, addr, fa, SYM_MAX_INLINE);
	nb = debuginfo_lookup(b, addr, fb, SYM_MAX_INLINE);
	ck_assert_msg(na == nb, "0x%llx: %d frames against %d", (unsigned long long)addr, na, nb);
	for (i = 0; i < na; i++) {
		ck_assert_msg((!fa[i].func && !fb[i].func) ||
				  (fa[i].func && fb[i].func && !strcmp(fa[i].func, fb[i].func)),
			      "0x%llx frame %d: %s against %s", (unsigned long long)addr, i,
			      fa[i].func ? fa[i].func : "(null)",
			      fb[i].func ? fb[i].func : "(null)");
		ck_assert_msg((!fa[i].file && !fb[i].file) ||
				  (fa[i].file && fb[i].file && !strcmp(fa[i].file, fb[i].file)),
			      "0x%llx frame %d: %s against %s", (unsigned long long)addr, i,
			      fa[i].file ? fa[i].file : "(null)",
			      fb[i].file ? fb[i].file : "(null)");
		ck_assert_uint_eq(fa[i].line, fb[i].line);
		ck_assert_int_eq(fa[i].inlined, fb[i].inlined);
	}
	return na;
}

/* Every byte from 64 below the first to 64 above the last instruction of @expfile's .text
 * gives the same frames from @a and @b; checks that the lookups found something. */
static void compare_files(struct debuginfo *a, struct debuginfo *b, const char *expfile)
{
	struct exp *e;
	size_t nr = load_exp(expfile, &e), i, hits = 0, chains = 0;
	uint64_t lo = UINT64_MAX, hi = 0, addr;
	int n;

	for (i = 0; i < nr; i++) {
		lo = e[i].addr < lo ? e[i].addr : lo;
		hi = e[i].addr > hi ? e[i].addr : hi;
	}
	ck_assert_uint_gt(lo, 64);
	for (addr = lo - 64; addr < hi + 64; addr++) {
		n = same_frames(a, b, addr);
		hits += n > 0;
		chains += n > 1;
	}
	ck_assert_uint_gt(hits, (hi - lo) / 2);
	ck_assert_uint_gt(chains, 0);
	free_exp(e, nr);
}

/* Without .debug_aranges debuginfo walks every CU; with it, it reads only the CUs the index
 * names. Same frames everywhere, C and C++ (scopes across CUs), DWARF 5 and 4. */
START_TEST(test_aranges_removed)
{
	static const char *const bins[] = {"inl-dwarf5", "nsinl-dwarf4"};
	size_t b, size, off, len;

	for (b = 0; b < ARRAY_SIZE(bins); b++) {
		char *bare = xasprintf("%s-noaranges", bins[b]),
		     *exp = xasprintf("%s.expect", bins[b]);
		uint8_t *img = read_fixture(bins[b], &size);
		struct debuginfo *with, *without;

		ck_assert(find_section(img, size, ".debug_aranges", &off, &len) && len);
		free(img);
		img = read_fixture(bare, &size);
		ck_assert(!find_section(img, size, ".debug_aranges", &off, &len));
		free(img);
		with = open_fixture(bins[b]);
		without = open_fixture(bare);
		compare_files(with, without, exp);
		debuginfo_free(with);
		debuginfo_free(without);
		/* and in the other order: the walk first, then the index */
		with = open_fixture(bins[b]);
		without = open_fixture(bare);
		compare_files(without, with, exp);
		debuginfo_free(with);
		debuginfo_free(without);
		free(bare);
		free(exp);
	}
}
END_TEST

enum aranges_edit {
	ARANGES_DROP_FIRST, /* the first CU's set covers nothing (lengths 0): an incomplete index */
	ARANGES_ALL_FIRST,  /* every set names the first CU: most addresses land in the wrong CU */
	ARANGES_MID_UNIT,   /* every CU offset moved 3 bytes into its unit: no unit header there */
	ARANGES_PAST_END,   /* every CU offset past the end of .debug_info */
};

/* Edit the .debug_aranges of a 32-bit DWARF, little-endian, 64-bit address image in place:
 * "unit_length(4) version(2) debug_info_offset(4) address_size(1)=8 segment_size(1) pad(4)
 * (address(8), length(8))... (0, 0)" */
static void edit_aranges(uint8_t *img, size_t size, enum aranges_edit how)
{
	size_t off, len, p, end, q;
	uint32_t unit, cu, first_cu = 0;
	int set = 0;

	ck_assert(find_section(img, size, ".debug_aranges", &off, &len) && len);
	for (p = off; p + 16 <= off + len; p = end, set++) {
		memcpy(&unit, img + p, 4);
		ck_assert_uint_lt(unit, 0xfffffff0u);
		end = p + 4 + unit;
		ck_assert_uint_le(end, off + len);
		ck_assert_uint_eq(img[p + 10], 8);
		memcpy(&cu, img + p + 6, 4);
		if (!set)
			first_cu = cu;
		switch (how) {
		case ARANGES_DROP_FIRST:
			for (q = p + 16; !set && q + 16 <= end; q += 16)
				memset(img + q + 8, 0, 8);
			break;
		case ARANGES_ALL_FIRST:
			memcpy(img + p + 6, &first_cu, 4);
			break;
		case ARANGES_MID_UNIT:
			cu += 3;
			memcpy(img + p + 6, &cu, 4);
			break;
		case ARANGES_PAST_END:
			cu = 0x7fffff00u;
			memcpy(img + p + 6, &cu, 4);
			break;
		}
	}
	ck_assert_int_ge(set, 2);
}

/* A wrong or incomplete index does not change the frames: debuginfo checks the CU's own
 * ranges and walks all CUs for what the index does not answer. */
START_TEST(test_aranges_wrong)
{
	static const char *const bins[] = {"inl-dwarf5", "nsinl-dwarf4"};
	size_t b, size;
	int how;

	for (b = 0; b < ARRAY_SIZE(bins); b++) {
		char *exp = xasprintf("%s.expect", bins[b]);
		uint8_t *img = read_fixture(bins[b], &size);
		struct debuginfo *good = open_fixture(bins[b]), *bad;

		for (how = ARANGES_DROP_FIRST; how <= ARANGES_PAST_END; how++) {
			uint8_t *copy = xmalloc(size);

			memcpy(copy, img, size);
			edit_aranges(copy, size, (enum aranges_edit)how);
			ck_assert(memcmp(copy, img, size));
			testutil_write_file(tmp_path, copy, size);
			bad = debuginfo_open(tmp_path);
			ck_assert_msg(bad, "%s, edit %d: %s", bins[b], how, strerror(errno));
			compare_files(good, bad, exp);
			debuginfo_free(bad);
			free(copy);
		}
		debuginfo_free(good);
		free(img);
		free(exp);
	}
}
END_TEST

/* Random bytes in .debug_aranges: lookups stay sane (open_hostile). */
START_TEST(test_corrupt_aranges)
{
	size_t size, off, len, k;
	uint8_t *orig = read_fixture("nsinl-dwarf5", &size), *buf = xmalloc(size);
	int round;

	ck_assert(find_section(orig, size, ".debug_aranges", &off, &len) && len);
	srand(13);
	for (round = 0; round < 120; round++) {
		memcpy(buf, orig, size);
		for (k = 0; k < 1 + (size_t)round % 6; k++)
			buf[off + (size_t)rand() % len] = (uint8_t)rand();
		open_hostile(buf, size);
	}
	/* truncated: the section shortened in its header to every length */
	for (k = 0; k < len; k++) {
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)orig;
		Elf64_Shdr *sh;
		size_t i;

		memcpy(buf, orig, size);
		sh = (Elf64_Shdr *)(buf + eh->e_shoff);
		for (i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_offset == off && sh[i].sh_size == len)
				sh[i].sh_size = k;
		open_hostile(buf, size);
	}
	free(buf);
	free(orig);
}
END_TEST

/* Inputs the fuzzer found that kept libdwarf busy for minutes: abbreviations with forms no
 * DWARF version defines (refused at open), and a DW_AT_sibling chain (the walks only go
 * forward). Each must be dealt with at once. */
START_TEST(test_fuzz_hangs)
{
	static const char *const names[] = {"crash-sibling-chain", "crash-sibling-cycle"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char *path = testutil_fixture_path("fuzz/debuginfo/%s", names[i]);
		struct debuginfo *di = debuginfo_open(path);
		struct sym_frame f[SYM_MAX_INLINE];

		if (di) {
			for (uint64_t a = 0; a < 0x4000; a += 0x40)
				ck_assert_int_le(debuginfo_lookup(di, a, f, SYM_MAX_INLINE),
						 SYM_MAX_INLINE);
			debuginfo_free(di);
		}
		free(path);
	}
	/* the unknown form is refused */
	{
		char *path = testutil_fixture_path("fuzz/debuginfo/crash-sibling-chain");

		errno = 0;
		ck_assert_ptr_null(debuginfo_open(path));
		ck_assert_int_eq(errno, ENOEXEC);
		free(path);
	}
}
END_TEST

/* ---- file:line of every instruction, against gdb, on binaries built at test time ---- */

struct gdb_line {
	char *file; /* as gdb prints it; NULL: "No line number information" */
	unsigned int line;
};

/* Run the shell command @fmt formats; fail the test unless it exits with 0. */
static void __attribute__((format(printf, 1, 2))) run_ok(const char *fmt, ...)
{
	va_list ap;
	char *cmd, *out;
	int status;

	va_start(ap, fmt);
	ck_assert_int_ge(vasprintf(&cmd, fmt, ap), 0);
	va_end(ap);
	out = testutil_run(cmd, &status);
	ck_assert_msg(status == 0, "%s: exit %d: %s", cmd, status, out);
	free(out);
	free(cmd);
}

/* The address of every instruction of .text in @bin, from objdump. */
static size_t text_addrs(const char *bin, uint64_t **out)
{
	char *cmd = xasprintf("objdump -d --section=.text '%s'", bin), *text, *line, *save = NULL;
	size_t nr = 0, alloc = 0;
	int status;

	text = testutil_run(cmd, &status);
	ck_assert_int_eq(status, 0);
	*out = NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end;
		unsigned long long a = strtoull(line, &end, 16);

		/* "    1150:	8d 04 7f             	lea ..." */
		if (end == line || *end != ':' || line[0] != ' ')
			continue;
		ALLOC_GROW(*out, nr + 1, alloc);
		(*out)[nr++] = a;
	}
	free(text);
	free(cmd);
	return nr;
}

/* gdb's `info line *ADDR` for each of @addrs in @bin (one gdb run). */
static void gdb_info_lines(const char *bin, const uint64_t *addrs, size_t n, struct gdb_line *out)
{
	char *cmds = testutil_tmp_path("gdb-lines.cmd"), *cmd, *text, *line, *save = NULL;
	FILE *f = fopen(cmds, "w");
	long cur = -1;
	int status;

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "echo @%zu\\n\ninfo line *0x%llx\n", i, (unsigned long long)addrs[i]);
	fclose(f);
	memset(out, 0, n * sizeof(*out));
	cmd = xasprintf("gdb -nx -batch -x '%s' '%s' 2>&1", cmds, bin);
	text = testutil_run(cmd, &status);
	ck_assert_msg(status == 0, "%s: %s", cmd, text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *q, *e;

		if (line[0] == '@') {
			cur = strtol(line + 1, NULL, 10);
			continue;
		}
		/* Line 8 of "/tmp/x/first.h" starts at address 0x1150 <first_helper> and ... */
		if (cur < 0 || (size_t)cur >= n || out[cur].file || strncmp(line, "Line ", 5) ||
		    !(q = strstr(line, " of \"")) || !(e = strchr(q + 5, '"')))
			continue;
		out[cur].line = (unsigned int)strtoul(line + 5, NULL, 10);
		out[cur].file = xstrndup(q + 5, (size_t)(e - q - 5));
	}
	free(text);
	free(cmd);
	free(cmds);
}

/* One row of readelf --debug-dump=decodedline: "first.h      5      0x1150      x". */
struct row {
	uint64_t addr;
	char file[64]; /* base name, as readelf prints it */
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The rows of @bin's line tables, sorted by address (stable within one address is not
 * needed: only the set of files at an address is used). */
static size_t line_rows(const char *bin, struct row **out)
{
	char *cmd = xasprintf("readelf -wL '%s'", bin), *text, *line, *save = NULL;
	size_t nr = 0, alloc = 0;
	int status;

	text = testutil_run(cmd, &status);
	ck_assert_int_eq(status, 0);
	*out = NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, " 0x");
		size_t l = strcspn(line, " ");

		if (!p || l == 0 || l >= sizeof((*out)->file))
			continue;
		ALLOC_GROW(*out, nr + 1, alloc);
		(*out)[nr].addr = strtoull(p + 1, NULL, 16);
		memcpy((*out)[nr].file, line, l);
		(*out)[nr].file[l] = 0;
		nr++;
	}
	qsort(*out, nr, sizeof(**out), row_cmp);
	free(text);
	free(cmd);
	return nr;
}

/* What can be compared at @a: 2 file and line (one row applies), 1 the file only (the row
 * that applies starts at an address several rows share, all in one file: there gdb picks the
 * last is_stmt row and perch, like addr2line and llvm-symbolizer, the last one), 0 nothing
 * (rows of different files share it). */
static int comparable(const struct row *rows, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n, first;

	while (lo < hi) { /* the first row above @a */
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 2;
	for (first = lo - 1; first > 0 && rows[first - 1].addr == rows[lo - 1].addr; first--)
		if (strcmp(rows[first - 1].file, rows[lo - 1].file))
			return 0;
	return first == lo - 1 ? 2 : 1;
}

/* Each of @addrs in @bin: the innermost frame's file (base name) and line as gdb's, as far as
 * comparable() allows. Returns how many were compared; *@from_header counts those in a .h
 * file. */
static size_t check_addrs_vs_gdb(const char *bin, const uint64_t *addrs, size_t n,
				 size_t *from_header)
{
	struct sym_frame f[SYM_MAX_INLINE];
	struct debuginfo *di;
	struct gdb_line *g;
	struct row *rows;
	size_t nr_rows = line_rows(bin, &rows), i, with_line = 0;

	ck_assert_uint_gt(n, 10);
	g = xcalloc(n, sizeof(*g));
	gdb_info_lines(bin, addrs, n, g);
	di = debuginfo_open(bin);
	ck_assert_msg(di, "debuginfo_open(%s): %s", bin, strerror(errno));
	*from_header = 0;
	for (i = 0; i < n; i++) {
		int k = debuginfo_lookup(di, addrs[i], f, SYM_MAX_INLINE), how;

		if (!g[i].file) {
			ck_assert_msg(k == 0 || !f[0].line, "%s 0x%llx: gdb has no line, got %s:%u",
				      bin, (unsigned long long)addrs[i], f[0].file, f[0].line);
			continue;
		}
		how = comparable(rows, nr_rows, addrs[i]);
		if (!how) {
			free(g[i].file);
			continue;
		}
		ck_assert_msg(
		    k > 0 && f[0].file && !strcmp(base_name(f[0].file), base_name(g[i].file)) &&
			(how == 1 || f[0].line == g[i].line),
		    "%s 0x%llx: got %s:%u, gdb has %s:%u", bin, (unsigned long long)addrs[i],
		    k > 0 ? f[0].file : "(nothing)", k > 0 ? f[0].line : 0, g[i].file, g[i].line);
		with_line++;
		*from_header += strstr(g[i].file, ".h") != NULL;
		free(g[i].file);
	}
	debuginfo_free(di);
	free(g);
	free(rows);
	return with_line;
}

static size_t check_lines_vs_gdb(const char *bin, size_t *from_header)
{
	uint64_t *addrs;
	size_t n = text_addrs(bin, &addrs), ret = check_addrs_vs_gdb(bin, addrs, n, from_header);

	free(addrs);
	return ret;
}

/* gcc 11+ (DWARF 5) leaves the rows of a unit's first function before any DW_LNS_set_file:
 * their file is the register's initial 1, here first.h, not 0 (lines.c): libdwarf 20210528
 * starts the register at 0. clang sets the file at the start of every sequence; DWARF 4 tables
 * are 1-based. The compressed copies must read the same. Expected: gdb 13. */
START_TEST(test_line_files)
{
	static const char *const builds[] = {
	    "gcc -O2 -g",
	    "gcc -O2 -gdwarf-4",
	    "gcc -O0 -g",
	    "clang-14 -O2 -gdwarf-5",
	    "clang-14 -O2 -gdwarf-4",
	};
	static const char *const compress[] = {"zlib", "zlib-gnu", "zstd"};
	char *src = testutil_fixture_path("elf/lines");
	size_t i, hdr;

	if (!testutil_have_tool("gdb") || !testutil_have_tool("objdump"))
		return;
	for (i = 0; i < ARRAY_SIZE(builds); i++) {
		char *bin = testutil_tmp_path("lines");

		if (!strncmp(builds[i], "clang", 5) && !testutil_have_tool("clang-14"))
			continue;
		run_ok("%s -o '%s' '%s/lines.c' '%s/lines2.c'", builds[i], bin, src, src);
		ck_assert_uint_gt(check_lines_vs_gdb(bin, &hdr), 10);
		ck_assert_msg(hdr >= 3, "%s: %zu instructions in headers", builds[i], hdr);
		free(bin);
	}
	/* gcc's DWARF 5, its sections compressed every way a toolchain does */
	run_ok("gcc -O2 -g -o '%s/lines' '%s/lines.c' '%s/lines2.c'", testutil_tmp, src, src);
	for (i = 0; i < ARRAY_SIZE(compress); i++) {
		char *bin = xasprintf("%s/lines-%s", testutil_tmp, compress[i]);

		run_ok("objcopy --compress-debug-sections=%s '%s/lines' '%s'", compress[i],
		       testutil_tmp, bin);
		ck_assert_uint_gt(check_lines_vs_gdb(bin, &hdr), 10);
		free(bin);
	}
	free(src);
}
END_TEST

/* Build fixtures/elf/dw/inl.c, one.c and cls.cc in @dir with @cc/@cxx (C and C++ compilers
 * and flags) into @dir/prog. */
static void build_inl(const char *dir, const char *src, const char *cc, const char *cxx)
{
	run_ok("mkdir -p %s && cd %s && %s -c -o inl.o %s/inl.c && %s -c -o one.o %s/one.c && "
	       "%s -fno-exceptions -c -o cls.o %s/cls.cc && %s -o prog inl.o one.o cls.o",
	       dir, dir, cc, src, cc, src, cxx, src, cxx);
}

/* Split DWARF (-gsplit-dwarf): the skeleton in the program keeps the line table, the DIEs are
 * in .dwo files or, packed, in <program>.dwp. fixtures/elf/dw/inl.c, one.c and cls.cc built
 * here every way gcc, clang and the packers do. The expected frames of every instruction of
 * .text come from llvm-addr2line-14 on a twin built without -gsplit-dwarf, whose .text must
 * be byte for byte the same (llvm-addr2line-14 on the split build itself reads DWARF 5 range
 * lists of .dwo files with the wrong base address: it misses inlined frames gdb shows). */
START_TEST(test_split_dwarf)
{
	static const struct {
		const char *name, *cc, *cxx, *pack;
	} builds[] = {
	    {"gcc dwarf5 .dwo", "gcc -O2 -g", "g++ -O2 -g", NULL},
	    {"gcc dwarf4 .dwo", "gcc -O2 -g -gdwarf-4", "g++ -O2 -g -gdwarf-4", NULL},
	    {"gcc dwarf4 .dwp", "gcc -O2 -g -gdwarf-4", "g++ -O2 -g -gdwarf-4", "dwp"},
	    {"clang dwarf5 .dwo", "clang-14 -O2 -g", "clang++-14 -O2 -g", NULL},
	    /* (llvm-dwp-14 loops on gcc 12's DWARF 5 .dwo files, binutils' dwp crashes) */
	    {"clang dwarf5 .dwp", "clang-14 -O2 -g", "clang++-14 -O2 -g", "llvm-dwp-14"},
	};
	char *rel = testutil_fixture_path("elf/dw"), *src = realpath(rel, NULL);

	ck_assert_ptr_nonnull(src);
	free(rel);
	if (!testutil_have_tool("llvm-addr2line-14"))
		return;
	for (size_t b = 0; b < ARRAY_SIZE(builds); b++) {
		char *dir = xasprintf("%s/b%zu", testutil_tmp, b), *exp, *cmd, *cc, *cxx, *twin;
		struct debuginfo *di;
		struct exp *e;
		size_t nr;
		int deepest = 0;

		if ((!strncmp(builds[b].cc, "clang", 5) && !testutil_have_tool("clang-14")) ||
		    (builds[b].pack && !testutil_have_tool(builds[b].pack)))
			continue;
		cc = xasprintf("%s -gsplit-dwarf", builds[b].cc);
		cxx = xasprintf("%s -gsplit-dwarf", builds[b].cxx);
		build_inl(dir, src, cc, cxx);
		twin = xasprintf("%s/twin", dir);
		build_inl(twin, src, builds[b].cc, builds[b].cxx);
		free(twin);
		run_ok("cd %s && objcopy -O binary -j .text prog a && objcopy -O binary -j .text "
		       "twin/prog b && cmp a b",
		       dir);
		if (builds[b].pack)
			run_ok("cd %s && timeout 60 %s -e prog -o prog.dwp && rm *.dwo", dir,
			       builds[b].pack);
		/* the expected frames: the fixtures' expect() in build.sh, on the twin */
		exp = xasprintf("%s/prog.expect", dir);
		run_ok("cd %s && objdump -d --section=.text prog | awk '/^ +[0-9a-f]+:/ "
		       "{ sub(\":\", \"\", $1); print \"0x\" $1 }' > addrs && "
		       "llvm-addr2line-14 -a -i -f -e twin/prog $(cat addrs) | "
		       "sed 's/ (discriminator [0-9]*)//' | awk '"
		       "/^0x[0-9a-f]+$/ { if (line != \"\") print line; sub(/^0x0*/, \"0x\"); "
		       "line = $0; next } { fn = $0; getline; line = line \"\\t\" fn \"\\t\" $0 } "
		       "END { if (line != \"\") print line }' > prog.expect",
		       dir);
		nr = load_exp_path(exp, &e);
		ck_assert_uint_gt(nr, 100);
		for (size_t i = 0; i < nr; i++)
			deepest = e[i].n > deepest ? e[i].n : deepest;
		ck_assert_msg(deepest >= 3, "%s: no inline chain", builds[b].name);
		cmd = xasprintf("%s/prog", dir);
		di = debuginfo_open(cmd);
		ck_assert_msg(di, "%s: debuginfo_open: %s", builds[b].name, strerror(errno));
		printf("split DWARF: %s\n", builds[b].name); /* which build, if the next fails */
		fflush(stdout);
		check_llvm_di(di, e, nr);
		free(cmd);
		free(exp);
		free(dir);
		free(cc);
		free(cxx);
	}
	free(src);
}
END_TEST

/* The separate debug file of the C library this test runs with (Debian's libc6-dbg), or NULL
 * with a visible SKIP line. Malloc'ed. */
static char *libc_debug_file(void)
{
	char *out, *path = NULL, *p;
	int status;

	out = testutil_run(
	    "readelf -n \"$(ldd /bin/true | sed -n 's/.*=> \\(.*libc\\.so[^ ]*\\).*/\\1/p')\" "
	    "| sed -n 's/.*Build ID: \\([0-9a-f][0-9a-f]\\)\\([0-9a-f]*\\).*/\\1\\/\\2/p'",
	    &status);
	p = strchr(out, '\n');
	if (p)
		*p = 0;
	if (status == 0 && *out) {
		path = xasprintf("/usr/lib/debug/.build-id/%s.debug", out);
		if (access(path, R_OK)) {
			free(path);
			path = NULL;
		}
	}
	if (!path)
		printf("SKIP: no debug file of the C library (install libc6-dbg)\n");
	free(out);
	return path;
}

/* glibc's debug file (Debian's has compressed sections): a lookup in __libc_start_main
 * (csu/libc-start.c, one of the first units) decompresses only part of .debug_info, and its
 * function is the one nm names there. */
START_TEST(test_lazy_glibc)
{
	char *dbg = libc_debug_file(), *cmd, *text;
	struct sym_frame f[SYM_MAX_INLINE];
	struct debuginfo *di;
	unsigned long long addr = 0;
	uint64_t ready, size;
	int status, n;

	if (!dbg || !testutil_have_tool("nm"))
		return;
	cmd = xasprintf("nm --defined-only '%s' | awk '$3 == \"__libc_start_main_impl\" "
			"{ print $1; exit }'",
			dbg);
	text = testutil_run(cmd, &status);
	ck_assert_int_eq(status, 0);
	addr = strtoull(text, NULL, 16);
	free(text);
	free(cmd);
	if (!addr)
		return; /* another glibc: no such symbol */
	di = debuginfo_open(dbg);
	ck_assert_ptr_nonnull(di);
	debuginfo_info_ready(di, &ready, &size);
	ck_assert_uint_gt(size, 1u << 20);
	if (ready == size) { /* stored plain: nothing to decompress */
		printf("SKIP: %s has a plain .debug_info\n", dbg);
		debuginfo_free(di);
		free(dbg);
		return;
	}
	ck_assert_uint_eq(ready, 0); /* nothing read at open */
	n = debuginfo_lookup(di, addr + 4, f, SYM_MAX_INLINE);
	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(f[n - 1].func, "__libc_start_main_impl");
	debuginfo_info_ready(di, &ready, &size);
	ck_assert_uint_gt(ready, 0);
	ck_assert_msg(ready < size / 2, "%llu of %llu bytes decompressed",
		      (unsigned long long)ready, (unsigned long long)size);
	debuginfo_free(di);
	free(dbg);
}
END_TEST

/* Compressed .debug_info and .debug_line are decompressed only as far as the units a lookup
 * reads. fixtures/elf/dw/inl.c, one.c and cls.cc (several CUs, C and C++) with gcc, copies
 * compressed by objcopy with zlib and zstd: each queried on a fresh handle in an order that
 * starts at the last CU, and in one that starts in the middle, gives the frames of the plain
 * build, and file:line as gdb's (gdb reads the compressed copy itself). */
START_TEST(test_compressed_lazy)
{
	static const char *const kinds[] = {"zlib", "zstd"};
	char *rel = testutil_fixture_path("elf/dw"), *src = realpath(rel, NULL);
	char *dir = xasprintf("%s/lazy", testutil_tmp), *plain = xasprintf("%s/prog", dir);
	uint64_t *addrs, *order;
	size_t n, i, k, hdr;

	if (!testutil_have_tool("gdb") || !testutil_have_tool("objcopy"))
		goto out;
	build_inl(dir, src, "gcc -O2 -g", "g++ -O2 -g");
	n = text_addrs(plain, &addrs);
	ck_assert_uint_gt(n, 100);
	order = xcalloc(n, sizeof(*order));
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		char *bin = xasprintf("%s/prog-%s", dir, kinds[k]);

		run_ok("objcopy --compress-debug-sections=%s '%s' '%s'", kinds[k], plain, bin);
		for (int how = 0; how < 2; how++) {
			struct debuginfo *a = debuginfo_open(plain), *b = debuginfo_open(bin);
			size_t hits = 0;

			ck_assert_ptr_nonnull(a);
			ck_assert_ptr_nonnull(b);
			for (i = 0; i < n; i++) /* backwards; or from the middle, alternating */
				order[i] =
				    how ? addrs[(n / 2 + (i % 2 ? n - (i + 1) / 2 : i / 2)) % n]
					: addrs[n - 1 - i];
			for (i = 0; i < n; i++)
				hits += same_frames(a, b, order[i]) > 0;
			ck_assert_uint_gt(hits, n / 2);
			debuginfo_free(a);
			debuginfo_free(b);
		}
		ck_assert_uint_gt(check_addrs_vs_gdb(bin, order, n, &hdr), n / 2);
		free(bin);
	}
	free(order);
	free(addrs);
out:
	free(plain);
	free(dir);
	free(src);
	free(rel);
}
END_TEST

/* The same on glibc's own DWARF 5 (Debian's libc6-dbg, gcc 12): the entry of every 8th
 * function, and every instruction of __new_sem_wait_slow64 (sem_wait.c's unit begins with
 * sem_waitcommon.c) and of __libc_start_call_main (libc_start_call_main.h in libc-start.c). */
START_TEST(test_line_files_glibc)
{
	char *dbg = libc_debug_file(), *cmd, *text, *line, *save = NULL;
	uint64_t *addrs = NULL;
	size_t nr = 0, alloc = 0, hdr, i = 0;
	int status;

	if (!dbg || !testutil_have_tool("gdb") || !testutil_have_tool("nm"))
		return;
	cmd = xasprintf("nm --defined-only --print-size '%s'", dbg);
	text = testutil_run(cmd, &status);
	ck_assert_int_eq(status, 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* "0000000000090c80 000000000000011b t __new_sem_wait_slow64" */
		char *end, type;
		uint64_t a = strtoull(line, &end, 16), size, k;
		int whole;

		if (end == line || *end != ' ')
			continue;
		size = strtoull(end + 1, &end, 16);
		if (*end != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		if (type != 't' && type != 'T')
			continue;
		whole = !strcmp(end + 3, "__new_sem_wait_slow64") ||
			!strcmp(end + 3, "__libc_start_call_main");
		if (!whole && i++ % 8)
			continue;
		for (k = 0; k < (whole ? size : 1); k++) {
			ALLOC_GROW(addrs, nr + 1, alloc);
			addrs[nr++] = a + k;
		}
	}
	ck_assert_uint_gt(nr, 300);
	ck_assert_uint_gt(check_addrs_vs_gdb(dbg, addrs, nr, &hdr), 200);
	ck_assert_uint_gt(hdr, 20);
	free(addrs);
	free(text);
	free(cmd);
	free(dbg);
}
END_TEST

Suite *debuginfo_suite(void)
{
	Suite *s = suite_create("debuginfo");
	TCase *tc;

	tc = tcase_create("addr2line");
	tcase_add_test(tc, test_gnu_dwarf5);
	tcase_add_test(tc, test_gnu_dwarf4);
	tcase_add_test(tc, test_llvm_dwarf5);
	tcase_add_test(tc, test_llvm_dwarf4);
	tcase_add_test(tc, test_chain_and_max);
	tcase_add_test(tc, test_cxx_names);
	tcase_add_test(tc, test_gnu_nsinl_dwarf5);
	tcase_add_test(tc, test_gnu_nsinl_dwarf4);
	tcase_add_test(tc, test_gdb_nsinl);
	tcase_add_test(tc, test_ns_names_and_call_lines);
	suite_add_tcase(s, tc);

	tc = tcase_create("lines");
	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_line_files);
	tcase_add_test(tc, test_line_files_glibc);
	tcase_add_test(tc, test_compressed_lazy);
	tcase_add_test(tc, test_lazy_glibc);
	tcase_add_test(tc, test_split_dwarf);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);

	tc = tcase_create("lookup");
	tcase_add_test(tc, test_many_lookups);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("aranges");
	tcase_add_checked_fixture(tc, hostile_setup, hostile_teardown);
	tcase_add_test(tc, test_aranges_removed);
	tcase_add_test(tc, test_aranges_wrong);
	tcase_add_test(tc, test_corrupt_aranges);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, hostile_setup, hostile_teardown);
	tcase_add_test(tc, test_no_dwarf);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_corrupt_dwarf);
	tcase_add_test(tc, test_corrupt_scopes);
	tcase_add_test(tc, test_fuzz_hangs);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
