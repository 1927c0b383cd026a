/* Unit tests for the snapshot unwinder (unwind.c) on recorded snapshots of both architectures
 * (fixtures/cfi: chain.c at -O0 with frame records, stopped in a leaf, at a function's entry,
 * after alloca, in an epilogue; gdb's backtraces there are the expected frames). The CFI is
 * taken out of a copy of each binary (section names and PT_GNU_EH_FRAME), so the walk has only
 * frame records and the link register: it must still find gdb's frames, the caller that is
 * only in LR included (aarch64), and end where the stack is no longer code. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "perch/arch.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/module.h"
#include "perch/unwind/unwind.h"
#include "testutil.h"

#define MAX_FRAMES 64

struct snap {
	const struct perch_arch *a;
	struct unwind_snapshot us;
	uint64_t frames[MAX_FRAMES]; /* gdb's pcs */
	int nr_frames;
};

static void snap_load(struct snap *s, const char *bin, const char *point)
{
	char line[256], *path;
	unsigned long long addr, v;
	size_t len = 0;
	int reg;
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->a = strstr(bin, "aarch64") ? &perch_arch_aarch64 : &perch_arch_x86_64;
	path = testutil_fixture_path("cfi/%s.%s.regs", bin, point);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "stack %llx %zu", &addr, &len) == 2) {
			s->us.stack_addr = addr;
		} else if (sscanf(line, "reg %d %llx", &reg, &v) == 2) {
			ck_assert(reg >= 0 && reg < s->a->nr_regs);
			s->us.regs.r[reg] = v;
			s->us.regs.valid |= 1ULL << reg;
		}
	}
	fclose(f);
	free(path);
	path = testutil_fixture_path("cfi/%s.%s.stack", bin, point);
	s->us.stack = testutil_read_file(path, &s->us.stack_len);
	s->us.stack_cap = s->us.stack_len;
	free(path);
	path = testutil_fixture_path("cfi/%s.%s.frames", bin, point);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%llx", &v) == 1 && s->nr_frames < MAX_FRAMES)
			s->frames[s->nr_frames++] = v;
	fclose(f);
	free(path);
	ck_assert_int_ge(s->nr_frames, 5);
}

/* A copy of the fixture @bin without CFI: .eh_frame, .eh_frame_hdr and .debug_frame renamed
 * (.xh_frame...), PT_GNU_EH_FRAME made PT_NULL. Returns its path (malloc'ed). */
static char *copy_without_cfi(const char *bin)
{
	char *src = testutil_fixture_path("cfi/%s", bin);
	char *dst = testutil_tmp_path(bin);
	size_t size, shstrndx, phnum;
	uint8_t *img = testutil_read_file(src, &size);
	struct elffile *ef = elffile_open_memory(img, size, bin);
	Elf_Scn *scn;
	GElf_Shdr sh;
	int renamed = 0;

	ck_assert_ptr_nonnull(ef);
	ck_assert_int_eq(elf_getshdrstrndx(ef->elf, &shstrndx), 0);
	scn = elf_getscn(ef->elf, shstrndx);
	ck_assert(scn && gelf_getshdr(scn, &sh));
	for (size_t off = 0; off + 10 < sh.sh_size; off++) {
		char *name = (char *)img + sh.sh_offset + off;

		if (!strncmp(name, ".eh_frame", 9) || !strncmp(name, ".debug_frame", 12)) {
			name[1] = 'x';
			renamed++;
			off += 9;
		}
	}
	ck_assert_int_ge(renamed, 2);
	ck_assert_int_eq(elf_getphdrnum(ef->elf, &phnum), 0);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		ck_assert(gelf_getphdr(ef->elf, (int)i, &ph));
		if (ph.p_type == PT_GNU_EH_FRAME) {
			uint32_t null = PT_NULL; /* p_type: the first word of an Elf64_Phdr */

			ck_assert(ef->is_64);
			memcpy(img + ((Elf64_Ehdr *)img)->e_phoff + i * sizeof(Elf64_Phdr), &null,
			       sizeof(null));
		}
	}
	elffile_free(ef);
	testutil_write_file(dst, img, size);
	free(img);
	free(src);
	return dst;
}

/* Maps: the file's segments where they were loaded (no PIE), code around each gdb frame that
 * is not in the file (libc: no file needed, only "it is code"), and the stack. */
static struct proc_maps *snap_maps(const struct snap *s, const char *path)
{
	struct elffile *ef = elffile_open(path);
	struct strbuf sb = STRBUF_INIT;
	struct proc_maps *m;
	struct stat st;

	ck_assert_ptr_nonnull(ef);
	/* the file's own device and inode: perch checks that the file is the one mapped */
	ck_assert_int_eq(stat(path, &st), 0);
	for (size_t i = 0; i < ef->nr_loads; i++) {
		const struct elffile_load *l = &ef->loads[i];
		uint64_t start = l->vaddr & ~0xfffULL,
			 end = (l->vaddr + l->memsz + 0xfff) & ~0xfffULL;

		strbuf_addf(&sb, "%llx-%llx %c%c%cp %08llx %02x:%02x %llu %s\n",
			    (unsigned long long)start, (unsigned long long)end,
			    l->flags & PF_R ? 'r' : '-', l->flags & PF_W ? 'w' : '-',
			    l->flags & PF_X ? 'x' : '-',
			    (unsigned long long)(l->offset & ~0xfffULL), major(st.st_dev),
			    minor(st.st_dev), (unsigned long long)st.st_ino, path);
	}
	for (int i = 0; i < s->nr_frames; i++) {
		uint64_t pc = s->frames[i];
		int in_file = 0;

		for (size_t k = 0; k < ef->nr_loads; k++)
			in_file |= pc >= ef->loads[k].vaddr &&
				   pc < ef->loads[k].vaddr + ef->loads[k].memsz;
		if (!in_file)
			strbuf_addf(&sb, "%llx-%llx r-xp 00000000 00:00 0 \n",
				    (unsigned long long)(pc & ~0xfffULL),
				    (unsigned long long)((pc & ~0xfffULL) + 0x1000));
	}
	strbuf_addf(&sb, "%llx-%llx rw-p 00000000 00:00 0 [stack]\n",
		    (unsigned long long)(s->us.stack_addr & ~0xfffULL),
		    (unsigned long long)((s->us.stack_addr + s->us.stack_len + 0xfff) & ~0xfffULL));
	m = proc_maps_parse(sb.buf, NULL);
	strbuf_release(&sb);
	elffile_free(ef);
	return m;
}

static const struct nocfi_case {
	const char *bin, *point;
	int last; /* the last of gdb's frames the walk can know */
} nocfi_cases[] = {
    /* aarch64: frame records all the way to _start; the caller of a leaf, of a function at
     * its entry and in its epilogue is only in x30 */
    {"chain-aarch64-fp", "leaf", 7},
    {"chain-aarch64-fp", "entry", 5},
    {"chain-aarch64-fp", "alloca", 6},
    {"chain-aarch64-fp", "epilogue", 5},
    /* x86_64: Debian's glibc keeps no frame pointers, so the chain ends after the return into
     * __libc_start_call_main (main's saved rbp is not a frame pointer) */
    {"chain-x86_64-fp", "leaf", 5},
    {"chain-x86_64-fp", "alloca", 4},
};

START_TEST(test_nocfi_vs_gdb)
{
	const struct nocfi_case *c = &nocfi_cases[_i];
	uint64_t pcs[MAX_FRAMES];
	struct unwind_result res;
	struct modules *ms;
	struct unwinder *u;
	struct snap s;
	char *path;
	int n;

	snap_load(&s, c->bin, c->point);
	path = copy_without_cfi(c->bin);
	/* pid 0: nothing is read from a live process, files by their path */
	ms = modules_new(0);
	ck_assert_int_eq(modules_load_maps(ms, snap_maps(&s, path)), 0);
	u = unwinder_new(0, s.a, ms);
	ck_assert_ptr_nonnull(u);
	n = unwinder_unwind(u, &s.us, pcs, MAX_FRAMES, &res);
	for (int i = 0; i < n && i <= c->last; i++)
		ck_assert_msg(pcs[i] == s.frames[i], "%s.%s: frame %d is %#llx, gdb's %#llx",
			      c->bin, c->point, i, (unsigned long long)pcs[i],
			      (unsigned long long)s.frames[i]);
	ck_assert_msg(n == c->last + 1, "%s.%s: %d frames, want %d", c->bin, c->point, n,
		      c->last + 1);
	ck_assert_int_eq(res.fp_frames, n - 1);
	ck_assert(res.flags & UNWIND_STOPPED_EARLY);
	unwinder_free(u);
	modules_free(ms);
	free(path);
	free(s.us.stack);
}
END_TEST

/* The frame limit: a walk cut at @max says so; one that ends by itself at @max does not. */
START_TEST(test_truncated)
{
	uint64_t pcs[MAX_FRAMES];
	struct unwind_result res;
	struct modules *ms;
	struct unwinder *u;
	struct snap s;
	char *path;
	int n;

	snap_load(&s, "chain-aarch64-fp", "leaf");
	path = copy_without_cfi("chain-aarch64-fp");
	ms = modules_new(0);
	ck_assert_int_eq(modules_load_maps(ms, snap_maps(&s, path)), 0);
	u = unwinder_new(0, s.a, ms);
	n = unwinder_unwind(u, &s.us, pcs, 3, &res);
	ck_assert_int_eq(n, 3);
	ck_assert(res.flags & UNWIND_TRUNCATED);
	ck_assert(!(res.flags & UNWIND_STOPPED_EARLY));
	n = unwinder_unwind(u, &s.us, pcs, 8, &res);
	ck_assert_int_eq(n, 8);
	ck_assert(!(res.flags & UNWIND_TRUNCATED));
	ck_assert_str_eq(unwind_stop_name(res.stop), "no unwind info"); /* _start cleared x29 */
	unwinder_free(u);
	modules_free(ms);
	free(path);
	free(s.us.stack);
}
END_TEST

Suite *unwind_suite(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("nocfi");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_loop_test(tc, test_nocfi_vs_gdb, 0, (int)ARRAY_SIZE(nocfi_cases));
	tcase_add_test(tc, test_truncated);
	suite_add_tcase(s, tc);
	return s;
}
