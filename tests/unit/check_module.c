/* Unit tests for module: which PT_LOAD is behind each mapping, as the load bias. The ELF files
 * are real: built at test time by gcc with GNU ld, gold and lld, with 4, 16 and 64 KiB maximum
 * page sizes, PIE, non-PIE, shared, based at a non-zero address (as prelink leaves a library),
 * and stored in an APK. The mappings are what glibc's loader (elf/dl-map-segments.h) makes of
 * them on a kernel with 4, 16 or 64 KiB pages: one mapping of the whole span with the first
 * segment's permissions, each segment mapped over it (MAP_FIXED), holes made PROT_NONE, .bss
 * past the file page anonymous, PT_GNU_RELRO made read-only; the kernel merges neighbours.
 * That model is our reading of the loader; e2e-elfload checks the same layouts against gdb with
 * the real loader. Expected: every allocated section's first and last byte lies in a mapping
 * whose bias is the load base the maps were made with. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "perch/base/fdlimit.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/module.h"
#include "testutil.h"

/* Code over several 64 KiB pages, read-only data over several 4 KiB pages, RELRO (a const
 * pointer table needs relocation in PIE), data and .bss. */
static const char elfload_src[] =
    "const char ro_table[20000] = {1};\n"
    "int f0(int x);\n"
    "int (*const relro_ptrs[512])(int) = {f0, f0};\n"
    "int rw_data[2048] = {1};\n"
    "int bss_data[40000];\n"
    "__asm__(\".pushsection .text\\n.globl pad_code\\n.type pad_code,@function\\n\"\n"
    "	\"pad_code:\\n.fill 140000,1,0x90\\nret\\n.size pad_code,.-pad_code\\n.popsection\");\n"
    "int f0(int x) { return x + ro_table[x] + rw_data[x] + bss_data[x]; }\n"
    "int main(int argc, char **argv) { (void)argv; return relro_ptrs[argc](argc); }\n";

struct layout {
	const char *name;
	const char *flags; /* gcc's */
	int in_apk;	   /* stored in an APK (a shared library) */
};

static const struct layout layouts[] = {
    {"bfd-pie", "-pie -fPIE", 0},
    {"bfd-noseparate", "-pie -fPIE -Wl,-z,noseparate-code", 0},
    {"bfd-exec", "-no-pie -fno-PIE", 0},
    {"bfd-64k", "-pie -fPIE -Wl,-z,max-page-size=65536", 0},
    {"bfd-prelinked", "-shared -fPIC -Wl,-Ttext-segment=0x40000000", 0},
    {"gold-pie", "-pie -fPIE -fuse-ld=gold", 0},
    {"lld-pie", "-pie -fPIE -fuse-ld=lld", 0},
    {"lld-exec", "-no-pie -fno-PIE -fuse-ld=lld", 0},
    {"lld-16k", "-pie -fPIE -fuse-ld=lld -Wl,-z,max-page-size=16384", 0},
    {"lld-64k", "-pie -fPIE -fuse-ld=lld -Wl,-z,max-page-size=65536", 0},
    {"lld-separate", "-pie -fPIE -fuse-ld=lld -Wl,-z,separate-code", 0},
    {"lld-shared", "-shared -fPIC -fuse-ld=lld", 0},
    {"lld-prelinked", "-shared -fPIC -fuse-ld=lld -Wl,--image-base=0x50000000", 0},
    {"lld-16k-apk", "-shared -fPIC -fuse-ld=lld -Wl,-z,max-page-size=16384", 1},
};

static const uint64_t page_sizes[] = {4096, 16384, 65536};

/* ---- a model of the loader's mappings ---- */

struct sim_map {
	uint64_t start, end, off;
	int prot; /* PF_R | PF_W | PF_X */
	int file;
};

struct sim {
	struct sim_map m[128];
	size_t nr;
};

/* Cut [a, b) out of every mapping (MAP_FIXED and munmap semantics). */
static void sim_punch(struct sim *s, uint64_t a, uint64_t b)
{
	struct sim out = {.nr = 0};

	for (size_t i = 0; i < s->nr; i++) {
		struct sim_map e = s->m[i];

		if (e.end <= a || e.start >= b) {
			out.m[out.nr++] = e;
			continue;
		}
		if (e.start < a) {
			out.m[out.nr] = e;
			out.m[out.nr++].end = a;
		}
		if (e.end > b) {
			out.m[out.nr] = e;
			out.m[out.nr].off += b - e.start;
			out.m[out.nr++].start = b;
		}
		ck_assert_uint_lt(out.nr, ARRAY_SIZE(out.m) - 2);
	}
	*s = out;
}

static int sim_cmp(const void *x, const void *y)
{
	const struct sim_map *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

static void sim_map(struct sim *s, uint64_t start, uint64_t end, uint64_t off, int prot, int file)
{
	if (start >= end)
		return;
	sim_punch(s, start, end);
	s->m[s->nr++] = (struct sim_map){start, end, off, prot, file};
	qsort(s->m, s->nr, sizeof(s->m[0]), sim_cmp);
}

/* mprotect(): split at the edges, set @prot inside. */
static void sim_protect(struct sim *s, uint64_t a, uint64_t b, int prot)
{
	struct sim inner = {.nr = 0};

	for (size_t i = 0; i < s->nr; i++) {
		struct sim_map e = s->m[i];

		if (e.end <= a || e.start >= b)
			continue;
		if (e.start < a) {
			e.off += a - e.start;
			e.start = a;
		}
		if (e.end > b)
			e.end = b;
		e.prot = prot;
		inner.m[inner.nr++] = e;
	}
	for (size_t i = 0; i < inner.nr; i++)
		sim_map(s, inner.m[i].start, inner.m[i].end, inner.m[i].off, inner.m[i].prot,
			inner.m[i].file);
}

/* The kernel merges neighbours that continue each other. */
static void sim_merge(struct sim *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr; i++) {
		struct sim_map *p = n ? &s->m[n - 1] : NULL, *e = &s->m[i];

		if (p && p->end == e->start && p->prot == e->prot && p->file == e->file &&
		    (!e->file || p->off + (p->end - p->start) == e->off)) {
			p->end = e->end;
			continue;
		}
		s->m[n++] = *e;
	}
	s->nr = n;
}

static uint64_t down(uint64_t v, uint64_t page)
{
	return v & ~(page - 1);
}

static uint64_t up(uint64_t v, uint64_t page)
{
	return (v + page - 1) & ~(page - 1);
}

/* What glibc makes of @ef at @base with @page-sized pages. 0, or -1 when the file cannot be
 * loaded with that page size (a segment's offset and address disagree modulo the page). */
static int sim_load(struct sim *s, const char *path, uint64_t base, uint64_t page)
{
	struct elffile *ef = elffile_open(path);
	const struct elffile_load *first = NULL, *last = NULL;
	uint64_t relro_vaddr = 0, relro_size = 0;
	size_t phnum;

	ck_assert_msg(ef, "cannot open %s", path);
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < ef->nr_loads; i++) {
		const struct elffile_load *l = &ef->loads[i];

		if ((l->vaddr - l->offset) % page) {
			elffile_free(ef);
			return -1;
		}
		if (!first)
			first = l;
		last = l;
	}
	ck_assert_ptr_nonnull(first);
	ck_assert_int_eq(elf_getphdrnum(ef->elf, &phnum), 0);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(ef->elf, (int)i, &ph) && ph.p_type == PT_GNU_RELRO) {
			relro_vaddr = ph.p_vaddr;
			relro_size = ph.p_memsz;
		}
	}
	/* the whole span from the first segment's offset, then each segment over it */
	sim_map(s, base + down(first->vaddr, page), base + up(last->vaddr + last->memsz, page),
		down(first->offset, page), (int)first->flags, 1);
	for (size_t i = 0; i < ef->nr_loads; i++) {
		const struct elffile_load *l = &ef->loads[i];
		uint64_t fend = base + up(l->vaddr + l->filesz, page);
		uint64_t mend = base + up(l->vaddr + l->memsz, page);

		if (i && l > first) {
			/* the hole before this segment: PROT_NONE */
			const struct elffile_load *p = l - 1;

			sim_protect(s, base + up(p->vaddr + p->memsz, page),
				    base + down(l->vaddr, page), 0);
		}
		if (l->filesz)
			sim_map(s, base + down(l->vaddr, page), fend, down(l->offset, page),
				(int)l->flags, 1);
		if (mend > fend)
			sim_map(s, l->filesz ? fend : base + down(l->vaddr, page), mend, 0,
				(int)l->flags, 0);
	}
	if (relro_size && down(relro_vaddr + relro_size, page) > down(relro_vaddr, page))
		sim_protect(s, base + down(relro_vaddr, page),
			    base + down(relro_vaddr + relro_size, page), PF_R);
	sim_merge(s);
	elffile_free(ef);
	return 0;
}

/* /proc/PID/maps text for @s: file mappings of @path at @off_add + their offset, with the
 * file's real device and inode (perch checks that the file is the one mapped). */
static char *sim_maps_text(const struct sim *s, const char *path, uint64_t off_add)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	char id[64];

	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(id, sizeof(id), "%02x:%02x %llu", major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino);
	for (size_t i = 0; i < s->nr; i++) {
		const struct sim_map *e = &s->m[i];

		strbuf_addf(&sb, "%llx-%llx %c%c%cp %08llx %s %s\n", (unsigned long long)e->start,
			    (unsigned long long)e->end, e->prot & PF_R ? 'r' : '-',
			    e->prot & PF_W ? 'w' : '-', e->prot & PF_X ? 'x' : '-',
			    (unsigned long long)(e->file ? e->off + off_add : 0),
			    e->file ? id : "00:00 0", e->file ? path : "");
	}
	return strbuf_detach(&sb, NULL);
}

/* ---- building the files ---- */

static char *build(const struct layout *lay)
{
	char *src = testutil_tmp_file("elfload.c", elfload_src, sizeof(elfload_src) - 1);
	char *out = testutil_tmp_path(lay->name);
	char *cmd = xasprintf("gcc -O1 -g %s -o %s %s", lay->flags, out, src);
	int status;
	char *log = testutil_run(cmd, &status);

	ck_assert_msg(status == 0, "%s failed:\n%s", cmd, log);
	free(log);
	free(cmd);
	free(src);
	return out;
}

/* Store @lib in an APK at an offset aligned to 64 KiB (what zipalign -p does for 4 KiB), with
 * Python's zipfile. The entry's data offset into *@data_off. */
static char *build_apk(const char *lib, uint64_t *data_off)
{
	static const char py[] =
	    "import sys, zipfile\n"
	    "apk, lib = sys.argv[1], sys.argv[2]\n"
	    "with zipfile.ZipFile(apk, 'w') as z:\n"
	    "    z.writestr('assets/a.txt', 'perch\\n')\n"
	    "    zi = zipfile.ZipInfo('lib/x86_64/libelfload.so')\n"
	    "    zi.compress_type = zipfile.ZIP_STORED\n"
	    "    here = z.fp.tell() + 30 + len(zi.filename)\n"
	    "    pad = (-(here + 4)) % 65536\n"
	    "    zi.extra = b'\\x35\\xd9' + pad.to_bytes(2, 'little') + bytes(pad)\n"
	    "    z.writestr(zi, open(lib, 'rb').read())\n"
	    "i = zipfile.ZipFile(apk).getinfo('lib/x86_64/libelfload.so')\n"
	    "print(i.header_offset + 30 + len(i.filename) + len(i.extra))\n";
	char *script = testutil_tmp_file("mkapk.py", py, sizeof(py) - 1);
	char *apk = testutil_tmp_path("base.apk");
	char *cmd = xasprintf("python3 %s %s %s", script, apk, lib);
	int status;
	char *log = testutil_run(cmd, &status);

	ck_assert_msg(status == 0, "%s failed:\n%s", cmd, log);
	*data_off = strtoull(log, NULL, 10);
	ck_assert_uint_eq(*data_off % 65536, 0);
	free(log);
	free(cmd);
	free(script);
	return apk;
}

/* ---- the checks ---- */

/* Every allocated section of @path (the ELF at @zip_off of @mapped) at @base: its first and last
 * byte are in a file mapping whose bias is @base. */
static void check_sections(struct modules *ms, const char *path, uint64_t base, const char *what)
{
	struct elffile *ef = elffile_open(path);
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int checked = 0;

	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(elf_getshdrstrndx(ef->elf, &shstrndx), 0);
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		name = elf_strptr(ef->elf, shstrndx, sh.sh_name);
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    (sh.sh_flags & SHF_TLS))
			continue;
		for (int end = 0; end < 2; end++) {
			uint64_t a = base + sh.sh_addr + (end ? sh.sh_size - 1 : 0);
			const struct modules_map *mm = modules_find(ms, a);

			ck_assert_msg(mm && mm->mod, "%s: %s at %#llx: no file mapping", what, name,
				      (unsigned long long)a);
			ck_assert_msg(modules_elf(ms, mm), "%s: %s at %#llx: no ELF file", what,
				      name, (unsigned long long)a);
			ck_assert_msg(mm->bias == base,
				      "%s: %s at %#llx (mapping %#llx offset %#llx): bias %#llx, "
				      "want %#llx",
				      what, name, (unsigned long long)a,
				      (unsigned long long)mm->start, (unsigned long long)mm->offset,
				      (unsigned long long)mm->bias, (unsigned long long)base);
			checked++;
		}
	}
	ck_assert_int_gt(checked, 10);
	elffile_free(ef);
}

static void check_layout(const struct layout *lay, uint64_t page, const char *maps_path,
			 uint64_t off_add, const char *elf_path)
{
	struct sim sim;
	struct modules *ms;
	uint64_t base;
	char *text, *what;
	struct elffile *ef = elffile_open(elf_path);

	ck_assert_ptr_nonnull(ef);
	base = ef->is_dyn ? 0x7f1230000000ULL : 0;
	elffile_free(ef);
	if (sim_load(&sim, elf_path, base, page) < 0)
		return; /* not loadable with this page size (the loader refuses it too) */
	text = sim_maps_text(&sim, maps_path, off_add);
	what = xasprintf("%s with %llu KiB pages", lay->name, (unsigned long long)page / 1024);
	ms = modules_new(getpid());
	ck_assert_int_eq(modules_load_maps(ms, proc_maps_parse(text, NULL)), 0);
	check_sections(ms, elf_path, base, what);
	modules_free(ms);
	free(what);
	free(text);
}

START_TEST(test_layout)
{
	const struct layout *lay = &layouts[_i];
	char *path = build(lay);
	char *apk = NULL;
	uint64_t off = 0;

	if (lay->in_apk)
		apk = build_apk(path, &off);
	for (size_t p = 0; p < ARRAY_SIZE(page_sizes); p++)
		check_layout(lay, page_sizes[p], apk ? apk : path, off, path);
	free(apk);
	free(path);
}
END_TEST

/* The executable mapping cut in three by mprotect (a patched page in the middle, as a hot
 * patcher or a JIT writing into file-backed code does): the middle part is neither executable
 * nor at the segment's first offset, yet still the same segment. */
START_TEST(test_mprotect_split)
{
	const struct layout *lay = &layouts[6]; /* lld-pie: segments share file pages */
	char *path = build(lay);
	struct elffile *ef = elffile_open(path);
	const uint64_t base = 0x7f1230000000ULL;
	struct modules *ms;
	struct sim sim;
	char *text;
	int done = 0;

	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(sim_load(&sim, path, base, 4096), 0);
	for (size_t i = 0; i < ef->nr_loads; i++) {
		const struct elffile_load *l = &ef->loads[i];

		if (!(l->flags & PF_X))
			continue;
		ck_assert_uint_gt(l->filesz, 3 * 4096);
		sim_protect(&sim, base + up(l->vaddr, 4096) + 4096,
			    base + up(l->vaddr, 4096) + 8192, PF_R | PF_W);
		done = 1;
	}
	ck_assert(done);
	text = sim_maps_text(&sim, path, 0);
	ms = modules_new(getpid());
	ck_assert_int_eq(modules_load_maps(ms, proc_maps_parse(text, NULL)), 0);
	check_sections(ms, path, base, "lld-pie split by mprotect");
	modules_free(ms);
	free(text);
	elffile_free(ef);
	free(path);
}
END_TEST

/* elffile_load_candidates() on lld's shared file page: the executable mapping at offset 0
 * has the executable segment first, the read-only one after it. */
START_TEST(test_candidates_order)
{
	char *path = build(&layouts[6]);
	struct elffile *ef = elffile_open(path);
	const struct elffile_load *c[8];
	size_t n;

	ck_assert_ptr_nonnull(ef);
	ck_assert_uint_ge(ef->nr_loads, 3);
	/* lld: the executable segment starts inside the read-only segment's last file page */
	n = elffile_load_candidates(ef, down(ef->loads[1].offset, 4096), PF_R | PF_X, c, 8);
	ck_assert_uint_ge(n, 1);
	ck_assert(c[0]->flags & PF_X);
	n = elffile_load_candidates(ef, 0, PF_R, c, 8);
	ck_assert_uint_ge(n, 1);
	ck_assert_ptr_eq(c[0], &ef->loads[0]);
	/* past every segment: none */
	ck_assert_uint_eq(elffile_load_candidates(ef, ef->size + 65536, PF_R, c, 8), 0);
	elffile_free(ef);
	free(path);
}
END_TEST

/* A module's ELF file that cannot be opened for lack of descriptors is counted (record then
 * warns, and exits 4 without --allow-partial); one that opens is not. */
START_TEST(test_fd_shortage_counted)
{
	struct modules *ms = modules_new(getpid());
	const struct modules_map *mm;
	unsigned long before = fdlimit_failures();
	struct rlimit old, low = {256, 256};
	int fds[256], n = 0;

	ck_assert_int_eq(modules_reload(ms), 0);
	mm = modules_find(ms, (uint64_t)(uintptr_t)&printf); /* libc, not opened yet */
	ck_assert_ptr_nonnull(mm);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low.rlim_max = old.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0); /* (Check forks each test) */
	while (n < (int)ARRAY_SIZE(fds) && (fds[n] = dup(0)) >= 0)
		n++;
	ck_assert_int_eq(errno, EMFILE);
	ck_assert_ptr_null(modules_elf(ms, mm));
	while (n > 0)
		close(fds[--n]);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	ck_assert_uint_eq(fdlimit_failures(), before + 1);
	modules_free(ms);

	ms = modules_new(getpid());
	ck_assert_int_eq(modules_reload(ms), 0);
	mm = modules_find(ms, (uint64_t)(uintptr_t)&printf);
	ck_assert_ptr_nonnull(modules_elf(ms, mm));
	ck_assert_uint_eq(fdlimit_failures(), before + 1);
	modules_free(ms);
}
END_TEST

Suite *module_suite(void)
{
	Suite *s = suite_create("module");
	TCase *tc = tcase_create("layouts");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_layout, 0, (int)ARRAY_SIZE(layouts));
	tcase_add_test(tc, test_mprotect_split);
	tcase_add_test(tc, test_candidates_order);
	tcase_add_test(tc, test_fd_shortage_counted);
	suite_add_tcase(s, tc);
	return s;
}
