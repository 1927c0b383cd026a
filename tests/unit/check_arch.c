/* Unit tests for the arch tables: fp_step of x86_64 and aarch64 walked over recorded -O0
 * frame-pointer snapshots against gdb's backtraces, over truncated and garbage stacks, and the
 * tables' register numbering against the recorder's. Fixtures: fixtures/cfi/chain-*-fp.* */
#include <capstone/capstone.h>
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/base/xalloc.h"
#include "testutil.h"

#define MAX_FRAMES   64
#define MAX_REG_NAME 8

/* ---- snapshots: <bin>.<point>.{regs,stack,frames}, written by fixtures/cfi/build-fp.sh ---- */

struct snap {
	const struct perch_arch *a;
	struct perch_regs regs;
	char names[PERCH_MAX_DWREGS][MAX_REG_NAME]; /* gdb's register names, by DWARF number */
	uint64_t stack_addr;
	uint8_t *stack;
	size_t stack_len;
	uint64_t frames[MAX_FRAMES]; /* gdb's pcs: frame 0's pc, then return addresses */
	int nr_frames;
};

static FILE *snap_file(const char *bin, const char *point, const char *ext)
{
	char *path = testutil_fixture_path("cfi/%s.%s.%s", bin, point, ext);
	FILE *f = fopen(path, "rb");

	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	free(path);
	return f;
}

static void snap_load(struct snap *s, const char *bin, const char *point)
{
	char line[256], name[MAX_REG_NAME], *path;
	unsigned long long addr, v;
	size_t len = 0;
	int reg;
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->a = strstr(bin, "aarch64") ? &perch_arch_aarch64 : &perch_arch_x86_64;
	f = snap_file(bin, point, "regs");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "stack %llx %zu", &addr, &len) == 2) {
			s->stack_addr = addr;
			s->stack_len = len;
		} else if (sscanf(line, "reg %d %llx %7s", &reg, &v, name) == 3) {
			ck_assert_int_ge(reg, 0);
			ck_assert_int_lt(reg, s->a->nr_regs);
			s->regs.r[reg] = v;
			s->regs.valid |= 1ULL << reg;
			memcpy(s->names[reg], name, sizeof(name));
		}
	}
	fclose(f);
	ck_assert_uint_eq(s->regs.valid, (1ULL << s->a->nr_regs) - 1);

	path = testutil_fixture_path("cfi/%s.%s.stack", bin, point);
	s->stack = testutil_read_file(path, &len);
	ck_assert_uint_eq(len, s->stack_len);
	free(path);
	ck_assert_uint_eq(s->stack_addr, perch_regs_sp(s->a, &s->regs));

	f = snap_file(bin, point, "frames");
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%llx", &v) == 1 && s->nr_frames < MAX_FRAMES)
			s->frames[s->nr_frames++] = v;
	fclose(f);
	ck_assert_int_ge(s->nr_frames, 5);
	ck_assert_uint_eq(s->frames[0], perch_regs_pc(s->a, &s->regs));
}

static void snap_release(struct snap *s)
{
	free(s->stack);
}

/* Only the recorded stack is readable: a frame-pointer walk needs nothing else. */
static int snap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct snap *s = ctx;

	if (addr < s->stack_addr || addr - s->stack_addr > s->stack_len ||
	    len > s->stack_len - (addr - s->stack_addr))
		return -EFAULT;
	memcpy(buf, s->stack + (addr - s->stack_addr), len);
	return 0;
}

static uint64_t stack_word(const struct snap *s, uint64_t addr)
{
	uint64_t w = 0;

	ck_assert_int_eq(snap_read((void *)s, addr, &w, sizeof(w)), 0);
	return w;
}

/* Walk @s with fp_step only, from the recorded registers. Returns the number of pcs (frame 0
 * is the recorded pc); *@end gets the last step's result. Every step must move SP up. */
static int fp_walk(const struct snap *s, uint64_t *pcs, int *end)
{
	struct perch_mem mem = {snap_read, (void *)s};
	struct perch_regs cur = s->regs, next;
	const struct perch_arch *a = s->a;
	int n = 0;

	pcs[n++] = perch_regs_pc(a, &cur);
	*end = 0;
	while (n < MAX_FRAMES) {
		*end = a->fp_step(&cur, &mem, &next);
		if (*end < 0)
			break;
		ck_assert(next.valid & (1ULL << a->dw_pc));
		ck_assert(next.valid & (1ULL << a->dw_sp));
		ck_assert_msg(perch_regs_sp(a, &next) > perch_regs_sp(a, &cur),
			      "step %d: sp %#llx does not grow from %#llx", n,
			      (unsigned long long)perch_regs_sp(a, &next),
			      (unsigned long long)perch_regs_sp(a, &cur));
		pcs[n++] = perch_regs_pc(a, &next);
		cur = next;
	}
	return n;
}

/*
 * What a pure frame-pointer walk recovers, as indexes into gdb's frames. Built -O0
 * -fno-omit-frame-pointer, every function of chain.c keeps a frame record {saved fp, return
 * address} at its fp, except where noted:
 * - a function that has not pushed its record yet (entry) or has popped it (epilogue: after
 *   leave / ldp x29, x30) still has its caller's fp: the walk's first step returns from the
 *   caller, so the caller (gdb frame 1) is lost. Its return address is only at [sp] (x86_64)
 *   or in x30 (aarch64); the test checks that it is there.
 * - aarch64 leaf: gcc gives a leaf function no frame record even at -O0 (the return address
 *   stays in x30), so a sample in leaf loses inner the same way.
 * - x86_64: Debian's glibc is built without frame pointers, so main's saved rbp is not a frame
 *   pointer: the walk ends at the return into __libc_start_call_main, and
 *   __libc_start_main_impl and _start are not recovered. aarch64 glibc keeps frame records, and
 *   _start clears x29: the walk reaches _start.
 */
static const struct fp_case {
	const char *bin, *point;
	int lost; /* gdb frame the walk skips (its return address is in LR / at [sp]) */
	int last; /* the last gdb frame the walk recovers */
} fp_cases[] = {
    {"chain-x86_64-fp", "leaf", -1, 5},	   {"chain-x86_64-fp", "entry", 1, 3},
    {"chain-x86_64-fp", "alloca", -1, 4},  {"chain-x86_64-fp", "epilogue", 1, 3},
    {"chain-aarch64-fp", "leaf", 1, 7},	   {"chain-aarch64-fp", "entry", 1, 5},
    {"chain-aarch64-fp", "alloca", -1, 6}, {"chain-aarch64-fp", "epilogue", 1, 5},
};

/* Each snapshot's fp walk gives exactly gdb's return addresses minus the one frame record that
 * does not exist yet (or any more), and ends with -ENOENT where the chain ends. */
START_TEST(test_fp_walk_vs_gdb)
{
	const struct fp_case *c = &fp_cases[_i];
	uint64_t pcs[MAX_FRAMES], want[MAX_FRAMES];
	int n, nwant = 0, end;
	struct snap s;

	snap_load(&s, c->bin, c->point);
	ck_assert_int_lt(c->last, s.nr_frames);
	for (int i = 0; i <= c->last; i++)
		if (i != c->lost)
			want[nwant++] = s.frames[i];
	n = fp_walk(&s, pcs, &end);
	for (int i = 0; i < n && i < nwant; i++)
		ck_assert_msg(pcs[i] == want[i], "%s.%s: fp frame %d is %#llx, want %#llx", c->bin,
			      c->point, i, (unsigned long long)pcs[i], (unsigned long long)want[i]);
	ck_assert_msg(n == nwant, "%s.%s: %d frames, want %d (gdb has %d)", c->bin, c->point, n,
		      nwant, s.nr_frames);
	ck_assert_msg(end == -ENOENT, "%s.%s: the walk ends with %d", c->bin, c->point, end);

	/* the frame the walk skips is where the ABI leaves it */
	if (c->lost >= 0) {
		uint64_t ra = s.a->dw_lr >= 0 ? s.regs.r[s.a->dw_lr]
					      : stack_word(&s, perch_regs_sp(s.a, &s.regs));

		ck_assert_msg(ra == s.frames[c->lost], "%s.%s: %#llx is not gdb's frame %d", c->bin,
			      c->point, (unsigned long long)ra, c->lost);
	}
	snap_release(&s);
}
END_TEST

/* The first step's output: pc and sp from the frame record at fp, the caller's fp; on aarch64
 * x30 too (the return address). */
START_TEST(test_fp_step_regs)
{
	struct perch_regs out;
	struct perch_mem mem;
	struct snap s;
	uint64_t fp;

	snap_load(&s, "chain-aarch64-fp", "alloca");
	mem = (struct perch_mem){snap_read, &s};
	fp = s.regs.r[29];
	ck_assert_int_eq(perch_arch_aarch64.fp_step(&s.regs, &mem, &out), 0);
	ck_assert_uint_eq(out.r[32], stack_word(&s, fp + 8));
	ck_assert_uint_eq(out.r[30], out.r[32]);
	ck_assert_uint_eq(out.r[31], fp + 16);
	ck_assert_uint_eq(out.r[29], stack_word(&s, fp));
	ck_assert(out.valid & (1ULL << 29));
	/* nothing else is known about the caller */
	ck_assert_uint_eq(out.valid & ~((1ULL << 29) | (1ULL << 30) | (1ULL << 31) | (1ULL << 32)),
			  0);
	snap_release(&s);

	snap_load(&s, "chain-x86_64-fp", "alloca");
	mem = (struct perch_mem){snap_read, &s};
	fp = s.regs.r[6];
	ck_assert_int_eq(perch_arch_x86_64.fp_step(&s.regs, &mem, &out), 0);
	ck_assert_uint_eq(out.r[16], stack_word(&s, fp + 8));
	ck_assert_uint_eq(out.r[7], fp + 16);
	ck_assert_uint_eq(out.r[6], stack_word(&s, fp));
	ck_assert_uint_eq(out.valid & ~((1ULL << 6) | (1ULL << 7) | (1ULL << 16)), 0);
	snap_release(&s);
}
END_TEST

/* A stack cut short inside the chain: the step that needs the missing record fails with the
 * reader's -EFAULT, after the frames whose records are there. */
START_TEST(test_fp_truncated)
{
	const struct fp_case *c = &fp_cases[_i];
	uint64_t pcs[MAX_FRAMES], full[MAX_FRAMES];
	int n, nfull, end;
	struct snap s;

	snap_load(&s, c->bin, c->point);
	nfull = fp_walk(&s, full, &end);
	ck_assert_int_ge(nfull, 3);
	/* keep the stack up to the middle of the record that gives frame 2 */
	{
		struct perch_mem mem = {snap_read, &s};
		struct perch_regs r1;

		ck_assert_int_eq(s.a->fp_step(&s.regs, &mem, &r1), 0);
		s.stack_len = r1.r[s.a->dw_fp] - s.stack_addr + 8;
	}
	n = fp_walk(&s, pcs, &end);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(end, -EFAULT);
	ck_assert_uint_eq(pcs[1], full[1]);
	/* nothing left at all */
	s.stack_len = 0;
	n = fp_walk(&s, pcs, &end);
	ck_assert_int_eq(n, 1);
	ck_assert(end == -EFAULT || end == -ENOENT);
	snap_release(&s);
}
END_TEST

/* ---- hand-made frames ---- */

struct fake_stack {
	uint64_t base;
	uint64_t w[64];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fake_stack *f = ctx;

	if (addr < f->base || addr - f->base > sizeof(f->w) ||
	    len > sizeof(f->w) - (addr - f->base))
		return -EFAULT;
	memcpy(buf, (const uint8_t *)f->w + (addr - f->base), len);
	return 0;
}

static void set_frame(const struct perch_arch *a, struct perch_regs *r, uint64_t pc, uint64_t sp,
		      uint64_t fp)
{
	memset(r, 0, sizeof(*r));
	r->r[a->dw_pc] = pc;
	r->r[a->dw_sp] = sp;
	r->r[a->dw_fp] = fp;
	r->valid = (1ULL << a->dw_pc) | (1ULL << a->dw_sp) | (1ULL << a->dw_fp);
}

/* Everything that is not a frame record ends the walk (-ENOENT) or reports the reader's error,
 * on both architectures, and a record that does not move up the stack is not followed. */
START_TEST(test_fp_hostile)
{
	const struct perch_arch *a = _i ? &perch_arch_aarch64 : &perch_arch_x86_64;
	struct fake_stack f = {.base = 0x7ff000};
	struct perch_mem mem = {fake_read, &f};
	uint64_t sp = f.base, fp = f.base + 0x40;
	struct perch_regs in, out;

	/* a good record: [fp] = caller's fp, [fp + 8] = return address */
	f.w[8] = f.base + 0x80;
	f.w[9] = 0x401234;
	set_frame(a, &in, 0x401000, sp, fp);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), 0);
	ck_assert_uint_eq(perch_regs_pc(a, &out), 0x401234);
	ck_assert_uint_eq(perch_regs_sp(a, &out), fp + 16);
	ck_assert(out.valid & (1ULL << a->dw_fp));

	/* fp unknown, 0, misaligned, below sp */
	in.valid &= ~(1ULL << a->dw_fp);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -ENOENT);
	set_frame(a, &in, 0x401000, sp, 0);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -ENOENT);
	set_frame(a, &in, 0x401000, sp, fp + 4);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -ENOENT);
	set_frame(a, &in, 0x401000, fp + 8, fp);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -ENOENT);

	/* unreadable record (above the stack), record half readable (the last word of it) */
	set_frame(a, &in, 0x401000, sp, f.base + 0x1000);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -EFAULT);
	set_frame(a, &in, 0x401000, sp, f.base + sizeof(f.w) - 8);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -EFAULT);

	/* return address 0: the end (thread roots) */
	f.w[9] = 0;
	set_frame(a, &in, 0x401000, sp, fp);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -ENOENT);

	/* a record pointing at itself or down the stack: this step is fine, the caller's fp is
	 * not valid, so the next step ends */
	f.w[9] = 0x401234;
	for (int i = 0; i < 2; i++) {
		f.w[8] = i ? fp : f.base + 0x10;
		ck_assert_int_eq(a->fp_step(&in, &mem, &out), 0);
		ck_assert(!(out.valid & (1ULL << a->dw_fp)));
		ck_assert_int_eq(a->fp_step(&out, &mem, &in), -ENOENT);
		set_frame(a, &in, 0x401000, sp, fp);
	}
}
END_TEST

/* A recorded stack overwritten with pseudo-random words: the walk ends by itself, each step
 * moving up, and never reads outside the stack (the reader would say -EFAULT first). */
START_TEST(test_fp_garbage)
{
	const struct fp_case *c = &fp_cases[_i];
	uint64_t pcs[MAX_FRAMES], x = 0x9e3779b97f4a7c15ULL;
	struct snap s;
	int n, end;

	snap_load(&s, c->bin, c->point);
	for (int round = 0; round < 32; round++) {
		for (size_t off = 0; off + 8 <= s.stack_len; off += 8) {
			uint64_t w;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* half of the words point into the stack, aligned, so chains form */
			w = (x & 1) ? s.stack_addr + ((x >> 8) % s.stack_len & ~7ULL) : x;
			memcpy(s.stack + off, &w, 8);
		}
		n = fp_walk(&s, pcs, &end);
		ck_assert_int_lt(n, MAX_FRAMES);
		ck_assert(end == -ENOENT || end == -EFAULT);
	}
	snap_release(&s);
}
END_TEST

/* ---- the tables ---- */

/* DWARF numbers of pc, sp, fp and lr match the register names gdb recorded under them
 * (record.py maps gdb's names to DWARF numbers independently of perch). */
START_TEST(test_table_regs)
{
	struct snap s;

	snap_load(&s, "chain-x86_64-fp", "leaf");
	ck_assert_str_eq(s.names[perch_arch_x86_64.dw_pc], "rip");
	ck_assert_str_eq(s.names[perch_arch_x86_64.dw_sp], "rsp");
	ck_assert_str_eq(s.names[perch_arch_x86_64.dw_fp], "rbp");
	ck_assert_int_eq(perch_arch_x86_64.dw_lr, -1);
	ck_assert_int_eq(perch_arch_x86_64.nr_regs, 17);
	snap_release(&s);

	snap_load(&s, "chain-aarch64-fp", "leaf");
	ck_assert_str_eq(s.names[perch_arch_aarch64.dw_pc], "pc");
	ck_assert_str_eq(s.names[perch_arch_aarch64.dw_sp], "sp");
	ck_assert_str_eq(s.names[perch_arch_aarch64.dw_fp], "x29");
	ck_assert_str_eq(s.names[perch_arch_aarch64.dw_lr], "x30");
	ck_assert_int_eq(perch_arch_aarch64.nr_regs, 33);
	ck_assert_int_le(perch_arch_aarch64.nr_regs, PERCH_MAX_DWREGS);
	snap_release(&s);

	ck_assert_ptr_eq(perch_arch_by_machine(EM_X86_64), &perch_arch_x86_64);
	ck_assert_ptr_eq(perch_arch_by_machine(EM_AARCH64), &perch_arch_aarch64);
	ck_assert_ptr_eq(perch_arch_by_machine(EM_386), &perch_arch_i386);
	ck_assert_ptr_null(perch_arch_by_machine(EM_ARM));
	ck_assert_ptr_null(perch_arch_by_machine(0));
	ck_assert_str_eq(perch_arch_x86_64.name, "x86_64");
	ck_assert_str_eq(perch_arch_aarch64.name, "aarch64");
	ck_assert_ptr_null(perch_arch_x86_64.pac_mask_read);
	ck_assert_ptr_nonnull(perch_arch_aarch64.pac_mask_read);
}
END_TEST

/* The other architecture's register read is compiled in but refuses to run here. */
START_TEST(test_table_host)
{
	const struct perch_arch *host = perch_arch_host(), *other;
	struct perch_regs r;
	uint64_t mask;

	ck_assert_ptr_nonnull(host);
#if defined(__x86_64__)
	ck_assert_ptr_eq(host, &perch_arch_x86_64);
#elif defined(__aarch64__)
	ck_assert_ptr_eq(host, &perch_arch_aarch64);
#endif
	other = host == &perch_arch_x86_64 ? &perch_arch_aarch64 : &perch_arch_x86_64;
	ck_assert_int_eq(other->regs_read(getpid(), &r), -ENOSYS);
	if (other->pac_mask_read)
		ck_assert_int_eq(other->pac_mask_read(getpid(), &mask), -ENOSYS);
}
END_TEST

/* ---- i386 (a 32-bit x86 target on an x86_64 host) ---- */

/* 4-byte words: [ebp] = caller's ebp, [ebp + 4] = return address; the next word is junk that
 * an 8-byte read would fold into the return address. */
START_TEST(test_i386_fp_step)
{
	const struct perch_arch *a = &perch_arch_i386;
	uint32_t words[32] = {0};
	struct fake_stack f = {.base = 0xffd0c000};
	struct perch_mem mem = {fake_read, &f};
	struct perch_regs in, out;

	words[4] = 0xffd0c040; /* frame at base + 0x10: caller's ebp */
	words[5] = 0x5655a1b3; /* return address */
	words[6] = 0xdeadbeef; /* junk */
	words[16] = 0;	       /* frame at base + 0x40: the outermost (ebp 0) */
	words[17] = 0x5655a0f7;
	memcpy(f.w, words, sizeof(words));
	set_frame(a, &in, 0x5655a436, f.base, f.base + 0x10);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), 0);
	ck_assert_uint_eq(perch_regs_pc(a, &out), 0x5655a1b3);
	ck_assert_uint_eq(perch_regs_sp(a, &out), f.base + 0x18);
	ck_assert_uint_eq(out.r[5], 0xffd0c040);
	ck_assert(out.valid & (1ULL << 5));
	in = out;
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), 0);
	ck_assert_uint_eq(perch_regs_pc(a, &out), 0x5655a0f7);
	ck_assert(!(out.valid & (1ULL << 5))); /* ebp 0 does not move up: not a frame pointer */
	/* misaligned, below sp, past the 32-bit address space, unreadable */
	set_frame(a, &in, 0x5655a436, f.base, f.base + 0x12);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -ENOENT);
	set_frame(a, &in, 0x5655a436, f.base + 0x20, f.base + 0x10);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -ENOENT);
	set_frame(a, &in, 0x5655a436, f.base, 0xfffffffcULL);
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -ENOENT);
	set_frame(a, &in, 0x5655a436, f.base, 0x1000);
	in.r[a->dw_sp] = 0;
	ck_assert_int_eq(a->fp_step(&in, &mem, &out), -EFAULT);
}
END_TEST

/* DWARF numbering of the i386 psABI (what GCC's CFI and libdwarf use), capstone's mode. */
START_TEST(test_i386_table)
{
	const struct perch_arch *a = &perch_arch_i386;

	ck_assert_str_eq(a->name, "i386");
	ck_assert_uint_eq(a->e_machine, EM_386);
	ck_assert_int_eq(a->nr_regs, 9);
	ck_assert_int_eq(a->dw_sp, 4);
	ck_assert_int_eq(a->dw_fp, 5);
	ck_assert_int_eq(a->dw_pc, 8);
	ck_assert_int_eq(a->dw_lr, -1);
	ck_assert_int_eq(a->cs_arch, CS_ARCH_X86);
	ck_assert_int_eq(a->cs_mode, CS_MODE_32);
	ck_assert_ptr_null(a->pac_mask_read);
	ck_assert_ptr_eq(perch_arch_by_machine(EM_386), a);
	ck_assert_ptr_eq(perch_arch_by_machine(EM_X86_64), &perch_arch_x86_64);
	ck_assert_ptr_eq(perch_arch_by_machine(EM_AARCH64), &perch_arch_aarch64);
	ck_assert_ptr_null(perch_arch_by_machine(EM_ARM));
	ck_assert(!perch_arch_is_host(a));
	/* perch's own process is of the host's architecture */
	ck_assert_ptr_eq(perch_arch_of_pid(getpid()), perch_arch_host());
}
END_TEST

/* The register read tells layouts apart by size: a native (64-bit) tracee is not read as
 * i386, the host's table reads it. */
START_TEST(test_i386_regs_native_tracee)
{
	struct perch_regs r;
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSTOPPED(status));
	ck_assert_int_eq(perch_arch_i386.regs_read(pid, &r), -EINVAL);
	ck_assert_int_eq(perch_arch_host()->regs_read(pid, &r), 0);
	ck_assert(r.valid & (1ULL << perch_arch_host()->dw_pc));
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}
END_TEST

/* The first field of /proc/PID/syscall of a stopped thread: the call it is in, or -1. */
static long proc_syscall_nr(pid_t pid)
{
	char *path = xasprintf("/proc/%d/syscall", (int)pid);
	FILE *f = fopen(path, "r");
	long nr = -2;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%ld", &nr), 1);
	fclose(f);
	free(path);
	return nr;
}

/* The state letter of process @pid (/proc/PID/stat), or 0; its user time in clock ticks in
 * *@utime. */
static char proc_state(pid_t pid, unsigned long *utime)
{
	char *path = xasprintf("/proc/%d/stat", (int)pid), state = 0;
	FILE *f = fopen(path, "r");

	*utime = 0;
	if (f && fscanf(f, "%*d (%*[^)]) %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu", &state,
			utime) != 2)
		state = 0;
	if (f)
		fclose(f);
	free(path);
	return state;
}

/* A child that spins in user code (@block 0) or waits in pause() (@block 1), interrupted by
 * PTRACE_INTERRUPT: its registers say how it came to the stop, and the kernel's own account
 * (/proc/PID/syscall: the call's number, or -1 outside a call) agrees. The child says it
 * started through a pipe, and a blocking one is waited for until it sleeps (no time is
 * assumed: under valgrind 50 ms was not enough to reach pause()). */
static void regs_from_kernel(int block)
{
	const struct perch_arch *a = perch_arch_host();
	struct perch_regs r;
	int status;
	long nr;
	int ready[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		volatile unsigned long x = 0;

		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		if (block)
			for (;;)
				pause();
		for (;;)
			x++;
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	/* asleep in pause(), or spinning in user code (its user time moved: out of its write());
	 * a bound in iterations, not time: unit tests also run without a fork, under valgrind */
	for (int i = 0; i < 100000; i++) {
		unsigned long utime;
		char state = proc_state(pid, &utime);

		if (block ? state == 'S' : utime > 0)
			break;
		usleep(1000);
	}
	ck_assert_int_eq(ptrace(PTRACE_SEIZE, pid, NULL, NULL), 0);
	ck_assert_int_eq(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSTOPPED(status));
	ck_assert_int_eq(a->regs_read(pid, &r), 0);
	nr = proc_syscall_nr(pid);
	ck_assert_int_eq(nr >= 0, block);
	if (a->e_machine == EM_X86_64)
		ck_assert_int_eq(r.from_kernel, block ? 1 : -1);
	else
		ck_assert_int_eq(r.from_kernel, 0); /* aarch64: not said by these registers */
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}

START_TEST(test_regs_from_kernel)
{
	regs_from_kernel(_i);
}
END_TEST

/* ---- call sites: the system call a site makes, Go's asmcgocall return ----
 * The bytes are as the disassemblers read them (objdump -D -b binary -m i386:x86-64,
 * llvm-mc-14 --disassemble -triple=aarch64): the number is the immediate moved into
 * eax/rax (x86_64) or x8/w8 (aarch64) before the system-call instruction. */
struct site_case {
	const struct perch_arch *a;
	uint8_t code[16];
	size_t len;
	long want; /* -1: the code does not say */
};

static const struct site_case site_cases[] = {
    /* glibc's clock_nanosleep: mov $0xe6,%eax; syscall */
    {&perch_arch_x86_64, {0xb8, 0xe6, 0, 0, 0, 0x0f, 0x05}, 7, 230},
    /* Go's sigreturn: mov $0xf,%rax; syscall */
    {&perch_arch_x86_64, {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05}, 9, 15},
    /* the number comes from another register: not told */
    {&perch_arch_x86_64, {0x89, 0xf8, 0x0f, 0x05}, 4, -1},
    {&perch_arch_x86_64, {0xb8, 0xe6, 0, 0, 0, 0x90}, 6, -1},
    /* aarch64: mov x8, #0x73; svc #0 */
    {&perch_arch_aarch64, {0x68, 0x0e, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}, 8, 115},
    /* mov w8, #0x65; mov x0, x1; svc #0 */
    {&perch_arch_aarch64,
     {0xa8, 0x0c, 0x80, 0x52, 0xe0, 0x03, 0x01, 0xaa, 0x01, 0x00, 0x00, 0xd4},
     12,
     101},
    /* mov x0, x1; svc #0: no number */
    {&perch_arch_aarch64, {0xe0, 0x03, 0x01, 0xaa, 0x01, 0x00, 0x00, 0xd4}, 8, -1},
};

START_TEST(test_syscall_at)
{
	const struct site_case *c = &site_cases[_i];

	ck_assert_int_eq(c->a->syscall_at(c->code, c->len), c->want);
}
END_TEST

/* runtime.asmcgocall after its call of C code, as Go 1.19 builds it (go tool objdump) */
START_TEST(test_go_cgo_return)
{
	static const uint8_t go119[] = {0x48, 0x8b, 0x7c, 0x24, 0x30, 0x48, 0x8b, 0x77,
					0x08, 0x48, 0x2b, 0x74, 0x24, 0x28, 0x64, 0x48};
	uint8_t other[sizeof(go119)];
	int g, hi, depth;

	ck_assert_int_eq(perch_arch_x86_64.go_cgo_return(go119, sizeof(go119), &g, &hi, &depth), 0);
	ck_assert_int_eq(g, 0x30);
	ck_assert_int_eq(hi, 8);
	ck_assert_int_eq(depth, 0x28);
	memcpy(other, go119, sizeof(other));
	other[9] = 0x8b; /* mov, not sub: another function */
	ck_assert_int_eq(perch_arch_x86_64.go_cgo_return(other, sizeof(other), &g, &hi, &depth),
			 -1);
	ck_assert_ptr_null(perch_arch_aarch64.go_cgo_return);
}
END_TEST

Suite *arch_suite(void)
{
	Suite *s = suite_create("arch");
	TCase *tc = tcase_create("fp_step");
	int ncases = (int)(sizeof(fp_cases) / sizeof(fp_cases[0]));

	tcase_add_loop_test(tc, test_fp_walk_vs_gdb, 0, ncases);
	tcase_add_test(tc, test_fp_step_regs);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_loop_test(tc, test_fp_truncated, 0, ncases);
	tcase_add_loop_test(tc, test_fp_hostile, 0, 2);
	tcase_add_loop_test(tc, test_fp_garbage, 0, ncases);
	suite_add_tcase(s, tc);

	tc = tcase_create("tables");
	tcase_add_loop_test(tc, test_syscall_at, 0, (int)ARRAY_SIZE(site_cases));
	tcase_add_test(tc, test_go_cgo_return);
	tcase_add_test(tc, test_table_regs);
	tcase_add_test(tc, test_table_host);
	suite_add_tcase(s, tc);

	tc = tcase_create("i386");
	tcase_add_test(tc, test_i386_fp_step);
	tcase_add_test(tc, test_i386_table);
	/* x86_64 hosts only (where i386 tracees exist): it ptraces a child, which qemu-aarch64's
	 * user mode, the aarch64 unit runner, cannot */
	if (perch_arch_host()->e_machine == EM_X86_64)
		tcase_add_test(tc, test_i386_regs_native_tracee);
	suite_add_tcase(s, tc);

	/* a live child under ptrace: not under qemu-aarch64's user mode (as above) */
	tc = tcase_create("stops");
	if (perch_arch_host()->e_machine == EM_X86_64)
		tcase_add_loop_test(tc, test_regs_from_kernel, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
