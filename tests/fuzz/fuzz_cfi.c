/* Fuzz perch's DWARF CFI evaluator (src/symbols/cfi.c): the FDE index, the CFA program interpreter,
 * DWARF expressions and one unwind step, over section bytes and memory that both come from
 * the input. Layout:
 *   byte 0: bit 0 aarch64 (else x86_64), bit 1 the bytes are .debug_frame (else .eh_frame),
 *           bit 2 the bytes are one DWARF expression (cfi_expr_eval alone), bit 4 i386
 *           (ELF32: 4-byte addresses; overrides bit 0)
 *   bytes 1-8: a pc to probe (little-endian, an offset from the section address)
 *   the rest: the section (or expression); it is also the memory the step reads, at MEM_BASE */
#include <elf.h>
#include <errno.h>

#include "fuzz.h"
#include "perch/arch.h"
#include "perch/symbols/cfi.h"
#include "perch/symbols/ehframe.h"

#define FUZZ_VADDR 0x401000
#define MEM_BASE   0x7ff000000000ULL
#define MEM_BASE32 0xff000000ULL /* i386: the stack below 4 GiB */
#define HDR	   9

struct fuzz_mem {
	const uint8_t *p;
	size_t size;
	uint64_t base;
};

static uint64_t mem_base = MEM_BASE;

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fuzz_mem *m = ctx;

	if (addr < m->base || addr - m->base > m->size || len > m->size - (addr - m->base))
		return -EFAULT;
	memcpy(buf, m->p + (addr - m->base), len);
	return 0;
}

static void regs_init(struct perch_regs *r, const struct perch_arch *a, uint64_t pc)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < a->nr_regs && i < PERCH_MAX_DWREGS; i++) {
		r->r[i] = mem_base + 8 * (uint64_t)i;
		r->valid |= 1ULL << i;
	}
	r->r[a->dw_pc] = pc;
	r->r[a->dw_sp] = mem_base + 64;
}

static void probe(const struct perch_arch *a, const struct cfi_table *t,
		  const struct perch_mem *mem, uint64_t pc)
{
	struct perch_regs in, out;
	struct cfi_row row;
	unsigned int flags;
	uint64_t dex_pc;
	int ret;

	ret = cfi_row_find(t, pc, &row);
	FUZZ_CHECK(ret == 0 || ret == -ENOENT || ret == -ENOEXEC);
	if (ret == 0) {
		FUZZ_CHECK(row.fde_start <= pc && pc < row.fde_end);
		regs_init(&in, a, pc);
		(void)cfi_row_dex_pc(&row, &in, mem, &dex_pc);
	}
	for (unsigned int exact = 0; exact <= CFI_PC_EXACT; exact += CFI_PC_EXACT) {
		regs_init(&in, a, pc);
		flags = 0;
		ret = cfi_step(a, t, 0, &in, exact, mem, 0, &out, &flags);
		FUZZ_CHECK(ret <= 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct perch_arch *a;
	struct ehframe_entry *e = NULL;
	struct cfi_table *t;
	struct perch_regs regs;
	struct fuzz_mem fm;
	struct perch_mem mem = {mem_read, &fm};
	uint64_t pc, val;
	uint8_t *sec;
	size_t len;
	int n, is_64;

	if (size < HDR)
		return 0;
	a = data[0] & 1 ? &perch_arch_aarch64 : &perch_arch_x86_64;
	if (data[0] & 16)
		a = &perch_arch_i386;
	is_64 = a != &perch_arch_i386;
	mem_base = is_64 ? MEM_BASE : MEM_BASE32;
	pc = FUZZ_VADDR + fuzz_u64(data + 1, 8);
	len = size - HDR;
	sec = fuzz_dup(data + HDR, len);
	fm.p = sec;
	fm.size = len;
	fm.base = mem_base;

	if (data[0] & 4) {
		regs_init(&regs, a, pc);
		(void)cfi_expr_eval(sec, len, &regs, &mem, 0x1000, data[0] & 8, mem_base, &val);
		free(sec);
		return 0;
	}
	if (data[0] & 2)
		t = cfi_table_new_raw(NULL, 0, 0, sec, len, a->e_machine, is_64);
	else
		t = cfi_table_new_raw(sec, len, FUZZ_VADDR, NULL, 0, a->e_machine, is_64);
	if (t) {
		(void)cfi_table_count(t);
		probe(a, t, &mem, pc);
		if (!(data[0] & 2)) {
			n = ehframe_parse(sec, len, FUZZ_VADDR, is_64, &e);
			for (int i = 0; i < n && i < 16; i++) {
				probe(a, t, &mem, e[i].start);
				probe(a, t, &mem, e[i].start + 1);
				probe(a, t, &mem, e[i].start + 7);
				probe(a, t, &mem, e[i].start + 40);
			}
			free(e);
		}
		cfi_table_free(t);
	}
	free(sec);
	return 0;
}
