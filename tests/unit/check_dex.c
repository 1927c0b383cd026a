/* Unit tests for the dex parser against Debian's dexdump (ART 11), on dex files assembled from
 * fixtures/dex/NAME.smali at build time (mk/dex.mk): standard dex 035-039, compact dex and a 041
 * container written by scripts/dex-convert.py. Every method dexdump lists with code, and every
 * row of its position table, must come back from dex_lookup() at every code unit; nothing
 * expected is written by hand. Then hostile input: truncations and byte flips. */
#include <check.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/dex.h"
#include "perch/xalloc.h"
#include "testutil.h"

#define MAX_ROWS 64

/* One method as dexdump -d prints it. */
struct dd_method {
	char name[256]; /* "pkg.Class.m", from dexdump's "pkg.Class.m:(sig)" below */
	char full[512]; /* "<ret> pkg.Class.m(<params>)" in Java notation (ART's PrettyMethod) */
	char file[128];
	uint32_t code_off; /* "[0003a0]": the code item's offset (data-relative for cdex) */
	uint32_t insns;	   /* "insns size : N 16-bit code units" */
	struct dex_position rows[MAX_ROWS];
	int nr_rows;
};

/* $(O)/dex, found from this program's path ($(O)/tests/unit/run). Malloc'ed. */
static char *dex_dir(void)
{
	char exe[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	dir = dirname(dirname(dirname(exe)));
	return xasprintf("%s/dex", dir);
}

static char *dex_path(const char *name)
{
	char *dir = dex_dir(), *p = xasprintf("%s/%s", dir, name);

	free(dir);
	return p;
}

/* Skip (return 0) when the tools are missing; fail when they are there but the fixtures are
 * not (the build should have made them). */
static int have_fixtures(void)
{
	char *p;
	int ok;

	if (!testutil_have_tool("dexdump") || !testutil_have_tool("smali"))
		return 0;
	p = dex_path("multi.dex");
	ok = access(p, R_OK) == 0;
	ck_assert_msg(ok, "%s missing: run `make dex-fixtures`", p);
	free(p);
	return 1;
}

/* The test's own descriptor -> Java conversion ("[[I" -> "int[][]"), kept apart from dex.c. */
static void append(char *out, size_t size, const char *s)
{
	size_t len = strlen(out);

	snprintf(out + len, size - len, "%s", s);
}

static const char *pretty(const char *d, char *out, size_t size)
{
	static const char prims[] = "BCDFIJSZV";
	static const char *const names[] = { "byte",  "char",  "double", "float",  "int",
					     "long",  "short", "boolean", "void" };
	int dims = 0;
	size_t len = 0;
	const char *end;

	while (*d == '[') {
		dims++;
		d++;
	}
	if (*d == 'L') {
		end = strchr(d, ';');
		ck_assert_ptr_nonnull(end);
		len = (size_t)(end - d - 1);
		snprintf(out, size, "%.*s", (int)len, d + 1);
		for (char *c = out; *c; c++)
			if (*c == '/')
				*c = '.';
		end++;
	} else {
		const char *k = strchr(prims, *d);

		ck_assert_ptr_nonnull(k);
		snprintf(out, size, "%s", names[k - prims]);
		end = d + 1;
	}
	while (dims--)
		append(out, size, "[]");
	return end;
}

/* "com.example.Hello.mix:(JD[[I)V" -> @full "void com.example.Hello.mix(long, double, int[][])"
 * (ART's PrettyMethod with signature, the form of JIT symbols with full debug info) and @name
 * "com.example.Hello.mix" (what perch calls every Java frame: dex_java_name()). */
static void java_name(const char *dd, char *name, size_t nsize, char *full, size_t size)
{
	const char *colon = strchr(dd, ':');
	const char *p;
	char t[256];
	int first = 1;

	ck_assert_ptr_nonnull(colon);
	ck_assert_int_eq(colon[1], '(');
	snprintf(name, nsize, "%.*s", (int)(colon - dd), dd);
	p = strchr(colon, ')');
	ck_assert_ptr_nonnull(p);
	pretty(p + 1, t, sizeof(t));
	snprintf(full, size, "%s ", t);
	append(full, size, name);
	append(full, size, "(");
	for (p = colon + 2; *p && *p != ')';) {
		p = pretty(p, t, sizeof(t));
		if (!first)
			append(full, size, ", ");
		append(full, size, t);
		first = 0;
	}
	append(full, size, ")");
}

/* Parse `dexdump -d @path`: the methods with code, in dexdump's order. */
static struct dd_method *dexdump(const char *path, size_t *nr)
{
	char *cmd = xasprintf("dexdump -d '%s'", path), *text, *save = NULL;
	struct dd_method *m = NULL, *cur = NULL;
	size_t n = 0, alloc = 0, class_first = 0;
	uint32_t pending_insns = 0;
	int status, in_pos = 0;

	text = testutil_run(cmd, &status);
	ck_assert_msg(status == 0, "%s failed: %s", cmd, text);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned int a, b;
		char *br;
		int idx;

		if (in_pos) {
			if (sscanf(line, " 0x%x line=%u", &a, &b) == 2) {
				ck_assert_int_lt(cur->nr_rows, MAX_ROWS);
				cur->rows[cur->nr_rows++] = (struct dex_position){ a, b };
				continue;
			}
			in_pos = 0;
		}
		if (!strncmp(line, "Class #", 7)) {
			class_first = n;
		} else if (sscanf(line, " insns size : %u 16-bit code units", &a) == 1) {
			pending_insns = a;
		} else if ((br = strstr(line, "|[")) && sscanf(br, "|[%x] ", &a) == 1) {
			ALLOC_GROW(m, n + 1, alloc);
			cur = &m[n++];
			memset(cur, 0, sizeof(*cur));
			cur->code_off = a;
			cur->insns = pending_insns;
			java_name(strchr(br, ']') + 2, cur->name, sizeof(cur->name), cur->full,
				  sizeof(cur->full));
		} else if (strstr(line, "positions     :")) {
			in_pos = cur != NULL;
		} else if (sscanf(line, " source_file_idx : %d (", &idx) == 1) {
			char *open = strchr(line, '(');
			char file[128] = "";

			if (idx >= 0)
				snprintf(file, sizeof(file), "%.*s", (int)strlen(open + 1) - 1, open + 1);
			for (size_t i = class_first; i < n; i++)
				snprintf(m[i].file, sizeof(m[i].file), "%s", file);
		}
	}
	free(text);
	free(cmd);
	*nr = n;
	return m;
}

static struct dex_file *open_path(const char *path, uint8_t **bytes, size_t *size)
{
	struct dex_file *d = NULL;

	*bytes = testutil_read_file(path, size);
	ck_assert_int_eq(dex_open(*bytes, *size, &d), 0);
	return d;
}

/* dexdump's line for code unit @u: the last row at or before it (ART's GetLineNumForPc). */
static uint32_t expected_line(const struct dd_method *m, uint32_t u)
{
	uint32_t line = 0;

	for (int i = 0; i < m->nr_rows && m->rows[i].address <= u; i++)
		line = m->rows[i].line;
	return line;
}

/* Every method of @dd must be found in @d with its insns at @base + code_off + @hdr. */
static size_t check_methods(struct dex_file *d, const struct dd_method *dd, size_t nr,
			    uint64_t base, uint32_t hdr)
{
	struct dex_position rows[MAX_ROWS];
	struct dex_method got;
	size_t units = 0;
	char jit[256];

	for (size_t i = 0; i < nr; i++) {
		const struct dd_method *m = &dd[i];
		uint64_t insns = base + m->code_off + hdr;
		int n;

		ck_assert_uint_gt(m->insns, 0);
		/* the JIT's full-debug-info name of the same method comes out the same */
		ck_assert_str_eq(dex_java_name(m->full, jit, sizeof(jit)), m->name);
		for (uint32_t u = 0; u < m->insns; u++) {
			for (uint32_t byte = 0; byte < 2; byte++) {
				ck_assert_int_eq(dex_lookup(d, insns + 2 * u + byte, &got), 0);
				ck_assert_str_eq(got.name, m->name);
				ck_assert_str_eq(got.file, m->file);
				ck_assert_uint_eq(got.code_offset, insns);
				ck_assert_msg(got.line == expected_line(m, u),
					      "%s unit %u: line %u, dexdump %u", m->name, u,
					      got.line, expected_line(m, u));
			}
			units++;
		}
		/* one past the end is not this method */
		if (dex_lookup(d, insns + 2ULL * m->insns, &got) == 0)
			ck_assert_uint_ne(got.code_offset, insns);
		n = dex_method_positions(d, (uint32_t)insns, rows, MAX_ROWS);
		ck_assert_int_eq(n, m->nr_rows);
		for (int k = 0; k < n; k++) {
			ck_assert_uint_eq(rows[k].address, m->rows[k].address);
			ck_assert_uint_eq(rows[k].line, m->rows[k].line);
		}
	}
	return units;
}

static void check_standard(const char *name, const char *version)
{
	char *path = dex_path(name);
	struct dd_method *dd;
	struct dex_file *d;
	uint8_t *bytes;
	size_t nr, size;

	dd = dexdump(path, &nr);
	ck_assert_uint_gt(nr, 0);
	d = open_path(path, &bytes, &size);
	ck_assert_mem_eq(bytes + 4, version, 3);
	ck_assert_uint_eq(dex_method_count(d), nr);
	ck_assert_uint_gt(check_methods(d, dd, nr, 0, 16), 0);
	dex_close(d);
	free(bytes);
	free(dd);
	free(path);
}

START_TEST(test_standard_versions)
{
	if (!have_fixtures())
		return;
	check_standard("Hello.dex", "035");
	check_standard("Hello-037.dex", "037");
	check_standard("Hello-038.dex", "038");
	check_standard("multi.dex", "039");
	check_standard("Shapes_Square.dex", "035");
}
END_TEST

/* Compact dex: dexdump reads it with ART's own CompactDexFile (pre-headers, offset table). */
START_TEST(test_compact)
{
	char *path;
	struct dd_method *dd;
	struct dex_file *d;
	struct dex_method got;
	uint8_t *bytes;
	size_t nr, size;
	uint32_t data_off, insns_bytes;

	if (!have_fixtures())
		return;
	path = dex_path("multi.cdex");
	dd = dexdump(path, &nr);
	ck_assert_uint_ge(nr, 8);
	d = open_path(path, &bytes, &size);
	ck_assert_mem_eq(bytes, "cdex001", 8);
	memcpy(&data_off, bytes + 108, 4);
	ck_assert_uint_gt(data_off, 0); /* code offsets count from the data section */
	ck_assert_uint_eq(dex_method_count(d), nr);
	check_methods(d, dd, nr, data_off, 4);
	/* instruction counts, half of them from the pre-header */
	for (size_t i = 0; i < nr; i++) {
		ck_assert_int_eq(dex_lookup(d, data_off + dd[i].code_off + 4, &got), 0);
		for (size_t k = 0; k < dex_method_count(d); k++) {
			struct dex_method m;

			ck_assert_int_eq(dex_method_get(d, k, &m, &insns_bytes), 0);
			if (m.code_offset == got.code_offset)
				ck_assert_uint_eq(insns_bytes, 2 * dd[i].insns);
		}
	}
	dex_close(d);
	free(bytes);
	free(dd);
	free(path);
}
END_TEST

/* 041 container of Hello.dex and multi.dex: each part's methods as dexdump lists them in the
 * original file, moved by the part's header_offset. */
START_TEST(test_container)
{
	char *path, *p1, *p2;
	struct dd_method *dd1, *dd2;
	struct dex_file *d;
	uint8_t *bytes;
	size_t nr1, nr2, size;
	uint32_t h2, csize;
	uint64_t back, span;

	if (!have_fixtures())
		return;
	path = dex_path("container.dex");
	p1 = dex_path("Hello.dex");
	p2 = dex_path("multi.dex");
	dd1 = dexdump(p1, &nr1);
	dd2 = dexdump(p2, &nr2);
	d = open_path(path, &bytes, &size);
	ck_assert_mem_eq(bytes, "dex\n041", 8);
	memcpy(&h2, bytes + 32, 4); /* the second header follows the first dex */
	memcpy(&csize, bytes + 112, 4);
	ck_assert_uint_eq(csize, size);
	ck_assert_uint_eq(dex_method_count(d), nr1 + nr2);
	check_methods(d, dd1, nr1, 0, 16);
	check_methods(d, dd2, nr2, h2, 16);
	/* from the second header, dex_span() points back at the container */
	ck_assert_int_eq(dex_span(bytes + h2, size - h2, &back, &span), 0);
	ck_assert_uint_eq(back, h2);
	ck_assert_uint_eq(span, size);
	/* a dex from the middle of a container alone cannot be read */
	ck_assert_int_eq(dex_open(bytes + h2, size - h2, &(struct dex_file *){ NULL }), -EINVAL);
	dex_close(d);
	free(bytes);
	free(dd1);
	free(dd2);
	free(p1);
	free(p2);
	free(path);
}
END_TEST

/* A dex source over a buffer (a target's memory in perch) that counts what is read. */
struct buf_source {
	const uint8_t *p;
	uint64_t size, bytes;
};

static int buf_read(void *ctx, uint64_t off, void *out, size_t len)
{
	struct buf_source *b = ctx;

	ck_assert_msg(off <= b->size && len <= b->size - off, "read outside the span");
	memcpy(out, b->p + off, len);
	b->bytes += len;
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Compact dex files as dex2oat puts them in a vdex (scripts/dex-convert.py vdex): main sections
 * one after the other, then one data section they share, each file_size covering only the
 * main section (what Android 10/11 registered), strings deduplicated into the first dex's part.
 * The oracle is dexdump (ART 11's own reader) on the bytes from each header on: the same
 * layout perch reads, shared data included. Each dex is read lazily through a source; what is
 * read must stay well below the span (the other dex's 64 KiB owned part is never touched). */
START_TEST(test_vdex_shared_data)
{
	struct dex_header_info info[2];
	uint64_t hdr[2];
	uint8_t *bytes;
	size_t size, nr_hdr = 0;
	char *path;

	if (!have_fixtures())
		return;
	path = dex_path("shared.vdex");
	bytes = testutil_read_file(path, &size);
	/* the dex files follow a 16-byte stand-in for the vdex header, 4-byte aligned */
	for (uint64_t h = 16; h + 0x88 <= size && !memcmp(bytes + h, "cdex001", 8);
	     h = (h + rd32(bytes + h + 32) + 3) & ~3ULL) {
		ck_assert_uint_lt(nr_hdr, 2);
		hdr[nr_hdr] = h;
		ck_assert_int_eq(dex_header_info(bytes + h, size - h, &info[nr_hdr]), 0);
		nr_hdr++;
	}
	ck_assert_uint_eq(nr_hdr, 2);
	for (size_t k = 0; k < 2; k++) {
		const uint8_t *h = bytes + hdr[k];
		uint32_t data_off = rd32(h + 108), data_size = rd32(h + 104);
		struct buf_source src = { h, info[k].size, 0 };
		struct dex_source ds = { buf_read, &src };
		char *tmp = testutil_tmp_file("part.cdex", h, size - hdr[k]);
		struct dd_method *dd;
		struct dex_file *d;
		size_t nr, shared = 0;

		ck_assert_int_eq(info[k].kind, DEX_KIND_COMPACT);
		ck_assert_uint_eq(info[k].back, 0);
		/* the registered size of Android 10/11 (file_size) leaves the code out */
		ck_assert_uint_le(rd32(h + 32), data_off);
		ck_assert_uint_eq(info[k].size, (uint64_t)data_off + data_size);
		ck_assert_uint_eq(info[k].code_start, data_off + rd32(h + 128));
		ck_assert_uint_eq(info[k].code_end, data_off + rd32(h + 132));
		dd = dexdump(tmp, &nr);
		ck_assert_uint_gt(nr, 0);
		ck_assert_int_eq(dex_open_source(&ds, info[k].size, &d), 0);
		check_methods(d, dd, nr, data_off, 4);
		for (size_t i = 0; i < nr; i++) {
			uint64_t at = hdr[k] + data_off + dd[i].code_off; /* absolute */

			/* in its own owned range, in no other's */
			for (size_t j = 0; j < 2; j++)
				ck_assert_int_eq(at >= hdr[j] + info[j].code_start &&
							 at < hdr[j] + info[j].code_end,
						 j == k);
		}
		/* names come from the other dex's part too: the layout shares data */
		for (uint32_t i = 0; i < rd32(h + 56); i++)
			shared += rd32(h + rd32(h + 60) + 4 * i) < rd32(h + 128);
		ck_assert_uint_eq(shared > 0, k == 1);
		ck_assert_uint_eq(dex_bytes_read(d), src.bytes);
		ck_assert_msg(src.bytes * 2 < info[k].size, "read %llu of %llu bytes",
			      (unsigned long long)src.bytes, (unsigned long long)info[k].size);
		dex_close(d);
		free(dd);
		free(tmp);
	}
	free(bytes);
	free(path);
}
END_TEST

/* The one naming function on every form ART gives a method's name (android-art.md 1.8, 2.4,
 * 4.2): JIT and AOT symbols with MiniDebugInfo (no signature) and with full debug info
 * (ART's PrettyMethod with signature), dedup markers, and names that are not Java methods. The
 * expected column is our reading of those forms. */
START_TEST(test_java_name)
{
	static const char *const cases[][2] = {
		{ "com.example.Main.fib", "com.example.Main.fib" },
		{ "int com.example.Main.fib(int)", "com.example.Main.fib" },
		{ "void Main.main(java.lang.String[])", "Main.main" },
		{ "java.lang.String[] a.B.c(int[], java.util.List)", "a.B.c" },
		{ "void a.B.<init>()", "a.B.<init>" },
		{ "a.B$1.run", "a.B$1.run" },
		{ "boolean a.B$$ExternalSyntheticLambda0.test(java.lang.Object)",
		  "a.B$$ExternalSyntheticLambda0.test" },
		{ "[DEDUPED] void a.B.c()", "[DEDUPED] a.B.c" },
		{ "[DEDUPED] a.B.c", "[DEDUPED] a.B.c" },
		{ "art_jni_trampoline", "art_jni_trampoline" },
		{ "art_quick_invoke_stub", "art_quick_invoke_stub" },
		{ "std::vector<int>::push_back(int const&)", "std::vector<int>::push_back(int const&)" },
		{ "operator new(unsigned long)", "operator new(unsigned long)" },
		{ "main.(*T).run", "main.(*T).run" },
		{ "main", "main" },
		{ "", "" },
	};
	char buf[256], tiny[6];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		ck_assert_str_eq(dex_java_name(cases[i][0], buf, sizeof(buf)), cases[i][1]);
	ck_assert_str_eq(dex_java_name("int a.Bcdef.g(int)", tiny, sizeof(tiny)), "a.Bcd");
}
END_TEST

START_TEST(test_bad_headers)
{
	uint8_t h[0x70] = "dex\n035";
	struct dex_file *d = (struct dex_file *)1;
	uint32_t v;

	ck_assert_int_eq(dex_open(h, sizeof(h), &d), -EINVAL); /* no endian tag */
	ck_assert_ptr_null(d);
	v = 0x12345678;
	memcpy(h + 40, &v, 4);
	v = 0x70;
	memcpy(h + 36, &v, 4);
	/* an empty dex (no tables) is valid and names nothing */
	ck_assert_int_eq(dex_open(h, sizeof(h), &d), 0);
	ck_assert_int_eq(dex_lookup(d, 0x70, &(struct dex_method){ 0 }), -ENOENT);
	ck_assert_uint_eq(dex_method_count(d), 0);
	dex_close(d);
	memcpy(h, "dex\n036", 8); /* skipped on purpose by Android */
	ck_assert_int_eq(dex_open(h, sizeof(h), &d), -EINVAL);
	memcpy(h, "dex\n042", 8);
	ck_assert_int_eq(dex_open(h, sizeof(h), &d), -EINVAL);
	memcpy(h, "cdex001", 8); /* too short for a compact header */
	ck_assert_int_eq(dex_open(h, sizeof(h), &d), -EINVAL);
	memcpy(h, "dex\n035", 8);
	v = 0xfffffff0; /* string_ids_off far outside */
	memcpy(h + 60, &v, 4);
	v = 2;
	memcpy(h + 56, &v, 4);
	ck_assert_int_eq(dex_open(h, sizeof(h), &d), -EINVAL);
	ck_assert_int_eq(dex_open(h, 0x6f, &d), -EINVAL);
}
END_TEST

/* Open and query everything; the answers may be anything, but no crash, no overread. */
static void poke(const uint8_t *p, size_t size)
{
	struct dex_position rows[8];
	struct dex_method m;
	struct dex_file *d;

	if (dex_open(p, size, &d) < 0)
		return;
	for (uint64_t off = 0; off < size + 4; off += 2)
		if (dex_lookup(d, off, &m) == 0) {
			ck_assert_uint_lt(strlen(m.name), sizeof(m.name));
			ck_assert_uint_lt(strlen(m.file), sizeof(m.file));
			dex_method_positions(d, m.code_offset, rows, 8);
		}
	dex_close(d);
}

/* Every truncation of every fixture, then seeded byte flips (ASan checks the reads: the buffers
 * from testutil_read_file() are exactly the file's size). */
START_TEST(test_hostile)
{
	static const char *const names[] = { "multi.dex", "multi.cdex", "container.dex" };
	uint32_t seed = 12345;

	if (!have_fixtures())
		return;
	for (size_t f = 0; f < ARRAY_SIZE(names); f++) {
		char *path = dex_path(names[f]);
		size_t size;
		uint8_t *bytes = testutil_read_file(path, &size);

		for (size_t len = 0; len <= size; len += 7) {
			uint8_t *cut = xmalloc(len ? len : 1);

			memcpy(cut, bytes, len);
			poke(cut, len);
			free(cut);
		}
		for (int round = 0; round < 300; round++) {
			uint8_t *copy = xmalloc(size);

			memcpy(copy, bytes, size);
			for (int k = 0; k < 4; k++) {
				seed = seed * 1103515245u + 12345u;
				copy[(seed >> 8) % size] ^= (uint8_t)(1u << (seed >> 4 & 7));
			}
			poke(copy, size);
			free(copy);
		}
		free(bytes);
		free(path);
	}
}
END_TEST

Suite *dex_suite(void)
{
	Suite *s = suite_create("dex");
	TCase *tc = tcase_create("dex");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_standard_versions);
	tcase_add_test(tc, test_compact);
	tcase_add_test(tc, test_container);
	tcase_add_test(tc, test_vdex_shared_data);
	tcase_add_test(tc, test_java_name);
	tcase_add_test(tc, test_bad_headers);
	tcase_add_test(tc, test_hostile);
	suite_add_tcase(s, tc);
	return s;
}
