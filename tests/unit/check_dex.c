/* Unit tests for the dex parser against Debian's dexdump (ART 11), on dex files assembled from
 * fixtures/dex/NAME.smali at build time (mk/dex.mk): standard dex 035-039, compact dex and a 041
 * container written by scripts/dex-convert.py. Every method dexdump lists with code, and every
 * row of its position table, must come back from dex_lookup() at every code unit; nothing
 * expected is written by hand. Then hostile input: truncations and byte flips. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/art/art.h"
#include "perch/art/dex.h"
#include "perch/base/xalloc.h"
#include "testutil.h"

#include "../targets/fakeart_symfile.h"

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
	static const char *const names[] = {"byte", "char",  "double",	"float", "int",
					    "long", "short", "boolean", "void"};
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
				cur->rows[cur->nr_rows++] = (struct dex_position){a, b};
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
				snprintf(file, sizeof(file), "%.*s", (int)strlen(open + 1) - 1,
					 open + 1);
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
	ck_assert_int_eq(dex_open(bytes + h2, size - h2, &(struct dex_file *){NULL}), -EINVAL);
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
		struct buf_source src = {h, info[k].size, 0};
		struct dex_source ds = {buf_read, &src};
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

/* ---- the dex list (art-dex.c) over a fake target: ART's Android2 descriptor and entries for
 * 64-bit (docs/design/android-art.md 1.2/1.3), the dex bytes at fixed addresses ---- */

#define FK_DESC	    0x1000ULL
#define FK_ENTRY(i) (0x2000ULL + 48ULL * (i))
#define FK_VDEX	    0x10000000ULL
#define FK_CONT	    0x20000000ULL

#define FK_JIT_DESC	0x1800ULL
#define FK_JIT_ENTRY(i) (0x2800ULL + 48ULL * (i))
#define FK_SYMFILE	0x4000ULL

static struct {
	uint8_t meta[0x8000]; /* descriptors, entries, a JIT symfile */
	const uint8_t *vdex, *cont;
	size_t vdex_size, cont_size;
	uint64_t bytes;		       /* read from the dex regions */
	uint64_t forbid_lo, forbid_hi; /* reads overlapping this range are counted */
	unsigned long forbidden;
} fk;

static int fk_copy(uint64_t base, const uint8_t *p, size_t size, uint64_t addr, void *buf,
		   size_t len)
{
	if (!p || addr < base || addr - base > size || len > size - (addr - base))
		return -EFAULT;
	memcpy(buf, p + (addr - base), len);
	if (base) {
		fk.bytes += len;
		fk.forbidden += addr < fk.forbid_hi && addr + len > fk.forbid_lo;
	}
	return 0;
}

static int fk_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (fk_copy(0, fk.meta, sizeof(fk.meta), addr, buf, len) == 0 ||
	    fk_copy(FK_VDEX, fk.vdex, fk.vdex_size, addr, buf, len) == 0 ||
	    fk_copy(FK_CONT, fk.cont, fk.cont_size, addr, buf, len) == 0)
		return 0;
	return -EFAULT;
}

static const struct perch_mem fk_mem = {fk_read, NULL};

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(fk.meta + addr, &v, 8);
}

/* The list of the descriptor at @desc holds these (symfile address, size) pairs, the first at
 * the head, its entries from @entries on. */
static void fk_list_at(uint64_t desc, uint64_t entries, const uint64_t (*ents)[2], size_t n,
		       uint32_t seqlock)
{
	uint32_t v;

	memset(fk.meta + desc, 0, 56);
	v = 1;
	memcpy(fk.meta + desc, &v, 4);
	put64(desc + 16, n ? entries : 0);
	memcpy(fk.meta + desc + 24, "Android2", 8);
	v = 56;
	memcpy(fk.meta + desc + 36, &v, 4);
	v = 48;
	memcpy(fk.meta + desc + 40, &v, 4);
	memcpy(fk.meta + desc + 44, &seqlock, 4);
	put64(desc + 48, 1 + seqlock);
	for (size_t i = 0; i < n; i++) {
		uint64_t e = entries + 48 * i;

		memset(fk.meta + e, 0, 48);
		put64(e, i + 1 < n ? e + 48 : 0);
		put64(e + 8, i ? e - 48 : 0);
		put64(e + 16, ents[i][0]);
		put64(e + 24, ents[i][1]);
		put64(e + 32, 1 + i);
	}
}

/* The dex list (at FK_DESC) */
static void fk_list(const uint64_t (*ents)[2], size_t n, uint32_t seqlock)
{
	memset(fk.meta, 0, sizeof(fk.meta));
	fk_list_at(FK_DESC, FK_ENTRY(0), ents, n, seqlock);
}

/* Every method dexdump lists (@dd), whose instructions start at @insns0 + code_off, comes out of
 * the list with dexdump's name and line at its first, middle and last code unit. */
static void check_list(struct art_dex *d, const struct dd_method *dd, size_t nr, uint64_t insns0)
{
	struct dex_method got;

	for (size_t i = 0; i < nr; i++) {
		uint32_t units[3] = {0, dd[i].insns / 2, dd[i].insns - 1};

		for (int k = 0; k < 3; k++) {
			uint64_t pc = insns0 + dd[i].code_off + 2ULL * units[k];

			ck_assert_msg(art_dex_lookup(d, pc, &got) == 0, "%s unit %u not found",
				      dd[i].name, units[k]);
			ck_assert_str_eq(got.name, dd[i].name);
			ck_assert_str_eq(got.file, dd[i].file);
			ck_assert_uint_eq(got.line, expected_line(&dd[i], units[k]));
		}
	}
}

struct vdex_fixture {
	uint8_t *bytes;
	size_t size;
	uint64_t hdr[2]; /* offsets of the two compact dex headers */
	uint32_t data_off[2], file_size[2], span[2];
	uint64_t owned_lo[2], owned_hi[2]; /* absolute (at FK_VDEX) */
	struct dd_method *dd[2];
	size_t nr[2];
};

static void vdex_load(struct vdex_fixture *v)
{
	char *path = dex_path("shared.vdex");
	uint64_t h = 16;

	v->bytes = testutil_read_file(path, &v->size);
	for (int k = 0; k < 2; k++) {
		const uint8_t *p = v->bytes + h;
		char *tmp;

		ck_assert_mem_eq(p, "cdex001", 8);
		v->hdr[k] = h;
		v->file_size[k] = rd32(p + 32);
		v->data_off[k] = rd32(p + 108);
		v->span[k] = v->data_off[k] + rd32(p + 104);
		v->owned_lo[k] = FK_VDEX + h + v->data_off[k] + rd32(p + 128);
		v->owned_hi[k] = FK_VDEX + h + v->data_off[k] + rd32(p + 132);
		tmp = testutil_tmp_file(k ? "b.cdex" : "a.cdex", p, v->size - h);
		v->dd[k] = dexdump(tmp, &v->nr[k]);
		free(tmp);
		h = (h + v->file_size[k] + 3) & ~3ULL;
	}
	fk.vdex = v->bytes;
	fk.vdex_size = v->size;
	free(path);
}

static void vdex_release(struct vdex_fixture *v)
{
	fk.vdex = NULL;
	free(v->dd[0]);
	free(v->dd[1]);
	free(v->bytes);
}

/* Android 10/11 registered a compact dex with the header's file_size: the code in the vdex's
 * shared data section lies outside every entry, and is still named. */
START_TEST(test_list_cdex_file_size)
{
	struct vdex_fixture v;
	struct art_dex *d;
	uint64_t ents[2][2];

	if (!have_fixtures())
		return;
	vdex_load(&v);
	for (int k = 0; k < 2; k++) {
		ents[1 - k][0] = FK_VDEX + v.hdr[k];
		ents[1 - k][1] = v.file_size[k];
	}
	fk_list(ents, 2, 2);
	d = art_dex_new(&fk_mem, FK_DESC, EM_X86_64, 1);
	ck_assert_int_eq(art_dex_update(d, 1, 1), 1);
	ck_assert_uint_eq(art_dex_count(d), 2);
	for (int k = 0; k < 2; k++) {
		ck_assert_uint_gt(v.owned_lo[k], ents[1 - k][0] + ents[1 - k][1]); /* outside */
		check_list(d, v.dd[k], v.nr[k], FK_VDEX + v.hdr[k] + v.data_off[k] + 4);
	}
	art_dex_free(d);
	vdex_release(&v);
}
END_TEST

/* Android 12-14 register up to the end of the data section: a pc of the first dex is inside
 * both entries. Only its owner is opened (nothing of the other dex's owned part is read), and
 * what is read stays well below the two spans (which hold 2 x 64 KiB of padding). */
START_TEST(test_list_cdex_shared)
{
	struct vdex_fixture v;
	struct art_dex *d;
	uint64_t ents[2][2];

	if (!have_fixtures())
		return;
	vdex_load(&v);
	for (int k = 0; k < 2; k++) {
		ents[1 - k][0] = FK_VDEX + v.hdr[k];
		ents[1 - k][1] = v.span[k];
	}
	ck_assert_uint_le(v.owned_hi[0], ents[0][0] + ents[0][1]); /* dex 0's code in both */
	fk_list(ents, 2, 2);
	d = art_dex_new(&fk_mem, FK_DESC, EM_X86_64, 1);
	ck_assert_int_eq(art_dex_update(d, 1, 1), 1);
	fk.bytes = 0;
	fk.forbidden = 0;
	fk.forbid_lo = v.owned_lo[1];
	fk.forbid_hi = v.owned_hi[1];
	check_list(d, v.dd[0], v.nr[0], FK_VDEX + v.hdr[0] + v.data_off[0] + 4);
	ck_assert_uint_eq(fk.forbidden, 0);
	check_list(d, v.dd[1], v.nr[1], FK_VDEX + v.hdr[1] + v.data_off[1] + 4);
	ck_assert_msg(fk.bytes * 2 < (uint64_t)v.span[0] + v.span[1], "read %llu bytes",
		      (unsigned long long)fk.bytes);
	/* the entry of dex 0 leaves the list: its code is no longer named */
	fk_list(ents, 1, 4);
	ck_assert_int_eq(art_dex_update(d, 2, 1), 1);
	ck_assert_int_eq(
	    art_dex_lookup(d, FK_VDEX + v.hdr[0] + v.data_off[0] + 4 + v.dd[0][0].code_off,
			   &(struct dex_method){0}),
	    -ENOENT);
	check_list(d, v.dd[1], v.nr[1], FK_VDEX + v.hdr[1] + v.data_off[1] + 4);
	art_dex_free(d);
	vdex_release(&v);
}
END_TEST

/* A dex 041 container registers each of its dex files with its own header and file_size
 * (ART 15 AddNativeDebugInfoForDex); all offsets count from the container's start. Methods of
 * both parts are named, as dexdump lists them in the original files. */
START_TEST(test_list_container)
{
	char *path, *p1, *p2;
	struct dd_method *dd1, *dd2;
	struct art_dex *d;
	uint8_t *bytes;
	size_t nr1, nr2, size;
	uint64_t ents[2][2];
	uint32_t h2;

	if (!have_fixtures())
		return;
	path = dex_path("container.dex");
	p1 = dex_path("Hello.dex");
	p2 = dex_path("multi.dex");
	dd1 = dexdump(p1, &nr1);
	dd2 = dexdump(p2, &nr2);
	bytes = testutil_read_file(path, &size);
	fk.cont = bytes;
	fk.cont_size = size;
	h2 = rd32(bytes + 32);
	ents[0][0] = FK_CONT + h2;
	ents[0][1] = rd32(bytes + h2 + 32);
	ents[1][0] = FK_CONT;
	ents[1][1] = h2;
	fk_list(ents, 2, 2);
	d = art_dex_new(&fk_mem, FK_DESC, EM_X86_64, 1);
	ck_assert_int_eq(art_dex_update(d, 1, 1), 1);
	fk.bytes = 0;
	check_list(d, dd1, nr1, FK_CONT + 16);
	check_list(d, dd2, nr2, FK_CONT + h2 + 16);
	/* one container, opened once for both parts */
	ck_assert_uint_le(fk.bytes, size + 2 * 0x88);
	art_dex_free(d);
	fk.cont = NULL;
	free(bytes);
	free(dd1);
	free(dd2);
	free(p1);
	free(p2);
	free(path);
}
END_TEST

/* The same method run by the JIT and by the interpreter gets one name: a JIT symbol with full
 * debug info (ART's PrettyMethod with signature, here built from dexdump's listing) and one
 * with MiniDebugInfo (no signature) both come out as the dex frame's name. */
START_TEST(test_jit_dex_same_name)
{
	char *path;
	struct dd_method *dd;
	struct art_dex *d;
	struct art_jit *j;
	struct art_jit_sym y;
	struct dex_method m;
	uint8_t *bytes;
	size_t nr, size;
	uint64_t ents[1][2], code = 0x30000000;

	(void)sf_compress; /* (fakeart_symfile.h's; not needed here) */
	if (!have_fixtures())
		return;
	path = dex_path("Hello.dex");
	dd = dexdump(path, &nr);
	ck_assert_uint_gt(nr, 1);
	bytes = testutil_read_file(path, &size);
	fk.cont = bytes;
	fk.cont_size = size;
	ents[0][0] = FK_CONT;
	ents[0][1] = size;
	fk_list(ents, 1, 2);
	d = art_dex_new(&fk_mem, FK_DESC, EM_X86_64, 1);
	ck_assert_int_eq(art_dex_update(d, 1, 1), 1);
	for (int form = 0; form < 2; form++) {
		struct sf_method sm = {form ? dd[1].name : dd[1].full, code, 0x40, 4, 0x3c, 1};
		struct sf_buf b = {0};

		sf_build(&b, &sm, 1, 1, EM_X86_64, 1);
		ck_assert_uint_le(b.len, sizeof(fk.meta) - FK_SYMFILE);
		memcpy(fk.meta + FK_SYMFILE, b.p, b.len);
		ents[0][0] = FK_SYMFILE;
		ents[0][1] = b.len;
		fk_list_at(FK_JIT_DESC, FK_JIT_ENTRY(0), ents, 1, 2 + 2 * form);
		j = art_jit_new(&fk_mem, FK_JIT_DESC, EM_X86_64, 1);
		ck_assert_int_eq(art_jit_update(j, 100, 1), 1);
		ck_assert_int_eq(art_jit_find(j, code + 8, 0, &y, NULL), 0);
		ck_assert_int_eq(art_dex_lookup(d, FK_CONT + dd[1].code_off + 16, &m), 0);
		ck_assert_str_eq(y.name, m.name);
		ck_assert_str_eq(y.name, dd[1].name);
		art_jit_free(j);
		free(b.p);
	}
	art_dex_free(d);
	fk.cont = NULL;
	free(bytes);
	free(dd);
	free(path);
}
END_TEST

/* The one naming function on every form ART gives a method's name
 * (docs/design/android-art.md 1.8, 2.4, 4.2): JIT and AOT symbols with MiniDebugInfo (no signature)
 * and with full debug info (ART's PrettyMethod with signature), dedup markers, and names that are
 * not Java methods. The expected column is our reading of those forms. */
START_TEST(test_java_name)
{
	static const char *const cases[][2] = {
	    {"com.example.Main.fib", "com.example.Main.fib"},
	    {"int com.example.Main.fib(int)", "com.example.Main.fib"},
	    {"void Main.main(java.lang.String[])", "Main.main"},
	    {"java.lang.String[] a.B.c(int[], java.util.List)", "a.B.c"},
	    {"void a.B.<init>()", "a.B.<init>"},
	    {"a.B$1.run", "a.B$1.run"},
	    {"boolean a.B$$ExternalSyntheticLambda0.test(java.lang.Object)",
	     "a.B$$ExternalSyntheticLambda0.test"},
	    {"[DEDUPED] void a.B.c()", "[DEDUPED] a.B.c"},
	    {"[DEDUPED] a.B.c", "[DEDUPED] a.B.c"},
	    {"art_jni_trampoline", "art_jni_trampoline"},
	    {"art_quick_invoke_stub", "art_quick_invoke_stub"},
	    {"std::vector<int>::push_back(int const&)", "std::vector<int>::push_back(int const&)"},
	    {"operator new(unsigned long)", "operator new(unsigned long)"},
	    {"main.(*T).run", "main.(*T).run"},
	    {"main", "main"},
	    {"", ""},
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
	ck_assert_int_eq(dex_lookup(d, 0x70, &(struct dex_method){0}), -ENOENT);
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
	static const char *const names[] = {"multi.dex", "multi.cdex", "container.dex"};
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
	tcase_add_test(tc, test_list_cdex_file_size);
	tcase_add_test(tc, test_list_cdex_shared);
	tcase_add_test(tc, test_list_container);
	tcase_add_test(tc, test_jit_dex_same_name);
	tcase_add_test(tc, test_bad_headers);
	tcase_add_test(tc, test_hostile);
	suite_add_tcase(s, tc);
	return s;
}
