/* Unit tests for cfi on a 32-bit x86 target: an ELF32 .eh_frame built here byte by byte
 * (absptr pointers are 4 bytes, as in GCC's i386 output for non-PIC code), stepped over a fake
 * 32-bit stack whose words are followed by junk, so that any 8-byte read of a saved register or
 * a DW_OP_deref shows in the result. The same bytes read as ELF64 must not give that answer. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "perch/arch.h"
#include "perch/symbols/cfi.h"

#define EH_VADDR 0x2000u
#define STACK	 0xffd0c000u
#define RET	 0x5655a1b3u
#define JUNK	 0xdeadbeefu

struct bytes {
	uint8_t b[256];
	size_t n;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	ck_assert_uint_le(b->n + n, sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put32(struct bytes *b, uint32_t v)
{
	put(b, &v, 4);
}

/* Pad the entry that started at @start with DW_CFA_nop to a multiple of 4 and set its length. */
static void close_entry(struct bytes *b, size_t start)
{
	uint32_t len;

	while ((b->n - start) % 4)
		b->b[b->n++] = 0;
	len = (uint32_t)(b->n - start - 4);
	memcpy(b->b + start, &len, 4);
}

/* CIE "zR" with DW_EH_PE_absptr (4 bytes in ELF32): code_align 1, data_align -4, RA column 8
 * (eip); CFA = esp + 4, eip at CFA - 4. Two FDEs:
 *   0x1000..0x1040: push %ebp (+1) then mov %esp,%ebp (+3): CFA = esp+8, ebp at CFA-8, then
 *                   CFA = ebp+8;
 *   0x1100..0x1110: CFA = *(esp + 4) (DW_CFA_def_cfa_expression: breg4 4, deref), like the
 *                   vDSO's signal return trampolines. */
static void build(struct bytes *b)
{
	static const uint8_t cie[] = {
	    0,	  0,	0,   0, /* CIE id */
	    1,	  'z',	'R', 0, /* version, augmentation */
	    1,	  0x7c, 8,	/* code_align 1, data_align -4, RA column 8 */
	    1,	  0x00,		/* augmentation data: FDE pointers absptr */
	    0x0c, 4,	4,	/* DW_CFA_def_cfa esp, 4 */
	    0x88, 1,		/* DW_CFA_offset eip, CFA - 4 */
	};
	static const uint8_t prog1[] = {
	    0,	     /* augmentation data length */
	    0x41,    /* DW_CFA_advance_loc 1 */
	    0x0e, 8, /* DW_CFA_def_cfa_offset 8 */
	    0x85, 2, /* DW_CFA_offset ebp, CFA - 8 */
	    0x43,    /* DW_CFA_advance_loc 3 */
	    0x0d, 5, /* DW_CFA_def_cfa_register ebp */
	};
	static const uint8_t prog2[] = {
	    0, 0x0f, 3, 0x74, 4, 0x06, /* DW_CFA_def_cfa_expression: breg4 +4, deref */
	};
	size_t start;

	b->n = 0;
	put32(b, 0);
	put(b, cie, sizeof(cie));
	close_entry(b, 0);

	start = b->n;
	put32(b, 0);
	put32(b, (uint32_t)(b->n)); /* CIE pointer: back to offset 0 */
	put32(b, 0x1000);
	put32(b, 0x40);
	put(b, prog1, sizeof(prog1));
	close_entry(b, start);

	start = b->n;
	put32(b, 0);
	put32(b, (uint32_t)(b->n));
	put32(b, 0x1100);
	put32(b, 0x10);
	put(b, prog2, sizeof(prog2));
	close_entry(b, start);
	put32(b, 0); /* terminator */
}

/* 32 words of stack at STACK; every word not set is JUNK. */
struct stack32 {
	uint32_t w[32];
};

static int stack_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct stack32 *s = ctx;

	if (addr < STACK || addr - STACK > sizeof(s->w) || len > sizeof(s->w) - (addr - STACK))
		return -EFAULT;
	memcpy(buf, (const uint8_t *)s->w + (addr - STACK), len);
	return 0;
}

static void regs(struct perch_regs *r, uint32_t pc, uint32_t sp, uint32_t fp)
{
	memset(r, 0, sizeof(*r));
	r->r[8] = pc;
	r->r[4] = sp;
	r->r[5] = fp;
	r->valid = (1ULL << 8) | (1ULL << 4) | (1ULL << 5);
}

static struct cfi_table *table(struct bytes *b, int is_64)
{
	build(b);
	return cfi_table_new_raw(b->b, b->n, EH_VADDR, NULL, 0, EM_386, is_64);
}

static void stack_init(struct stack32 *s)
{
	for (size_t i = 0; i < 32; i++)
		s->w[i] = JUNK;
}

START_TEST(test_parse_absptr4)
{
	struct bytes b;
	struct cfi_table *t = table(&b, 0);
	struct cfi_row row;

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(cfi_table_count(t), 2);
	ck_assert_int_eq(cfi_row_find(t, 0x1010, &row), 0);
	ck_assert_uint_eq(row.fde_start, 0x1000);
	ck_assert_uint_eq(row.fde_end, 0x1040);
	ck_assert_uint_eq(row.cfa_reg, 5);
	ck_assert_int_eq(row.cfa_off, 8);
	ck_assert_uint_eq(row.ra_reg, 8);
	ck_assert_uint_eq(row.addr_size, 4);
	ck_assert_int_eq(cfi_row_find(t, 0x1040, &row), -ENOENT);
	cfi_table_free(t);
}
END_TEST

/* After the prologue: CFA = ebp + 8, the return address and the caller's ebp are 4-byte words
 * with junk after them. */
START_TEST(test_step_body)
{
	struct bytes b;
	struct cfi_table *t = table(&b, 0);
	struct stack32 s;
	struct perch_mem mem = {stack_read, &s};
	struct perch_regs in, out;
	unsigned int fl;

	stack_init(&s);
	s.w[4] = STACK + 0x40; /* saved ebp at ebp = STACK + 0x10 */
	s.w[5] = RET;
	regs(&in, 0x1010, STACK, STACK + 0x10);
	ck_assert_int_eq(cfi_step(&perch_arch_i386, t, 0, &in, CFI_PC_EXACT, &mem, 0, &out, &fl),
			 0);
	ck_assert_uint_eq(out.r[8], RET);
	ck_assert_uint_eq(out.r[4], STACK + 0x18);
	ck_assert_uint_eq(out.r[5], STACK + 0x40);
	cfi_table_free(t);
}
END_TEST

/* At the function's entry: CFA = esp + 4, the return address at [esp]; with a bias (a PIE
 * loaded high). */
START_TEST(test_step_entry_biased)
{
	struct bytes b;
	struct cfi_table *t = table(&b, 0);
	struct stack32 s;
	struct perch_mem mem = {stack_read, &s};
	struct perch_regs in, out;
	uint64_t bias = 0x56555000;
	unsigned int fl;

	stack_init(&s);
	s.w[8] = RET;
	regs(&in, (uint32_t)(bias + 0x1000), STACK + 0x20, 0x1234);
	ck_assert_int_eq(cfi_step(&perch_arch_i386, t, bias, &in, CFI_PC_EXACT, &mem, 0, &out, &fl),
			 0);
	ck_assert_uint_eq(out.r[8], RET);
	ck_assert_uint_eq(out.r[4], STACK + 0x24);
	ck_assert_uint_eq(out.r[5], 0x1234); /* no rule: the caller's ebp is the same */
	/* a return address into the FDE's end is looked up at pc - 1 */
	regs(&in, (uint32_t)(bias + 0x1001), STACK + 0x20, 0x1234);
	ck_assert_int_eq(cfi_step(&perch_arch_i386, t, bias, &in, 0, &mem, 0, &out, &fl), 0);
	ck_assert_uint_eq(out.r[8], RET);
	cfi_table_free(t);
}
END_TEST

/* DW_OP_deref reads a 4-byte address. */
START_TEST(test_step_cfa_expression)
{
	struct bytes b;
	struct cfi_table *t = table(&b, 0);
	struct stack32 s;
	struct perch_mem mem = {stack_read, &s};
	struct perch_regs in, out;
	unsigned int fl;

	stack_init(&s);
	s.w[1] = STACK + 0x30; /* *(esp + 4): the CFA */
	s.w[11] = RET;	       /* CFA - 4 */
	regs(&in, 0x1104, STACK, 0);
	ck_assert_int_eq(cfi_step(&perch_arch_i386, t, 0, &in, CFI_PC_EXACT, &mem, 0, &out, &fl),
			 0);
	ck_assert_uint_eq(out.r[4], STACK + 0x30);
	ck_assert_uint_eq(out.r[8], RET);
	cfi_table_free(t);
}
END_TEST

/* The control: read as ELF64 (8-byte absptr), the same bytes do not describe these functions,
 * so the 4-byte results above come from the address size and nothing else. */
START_TEST(test_elf64_reading_differs)
{
	struct bytes b;
	struct cfi_table *t = table(&b, 1);
	struct cfi_row row;

	if (t) {
		ck_assert_int_ne(cfi_row_find(t, 0x1010, &row) == 0 && row.fde_start == 0x1000 &&
				     row.fde_end == 0x1040,
				 1);
		cfi_table_free(t);
	}
}
END_TEST

Suite *cfi32_suite(void)
{
	Suite *s = suite_create("cfi32");
	TCase *tc = tcase_create("i386");

	tcase_add_test(tc, test_parse_absptr4);
	tcase_add_test(tc, test_step_body);
	tcase_add_test(tc, test_step_entry_biased);
	tcase_add_test(tc, test_step_cfa_expression);
	tcase_add_test(tc, test_elf64_reading_differs);
	suite_add_tcase(s, tc);
	return s;
}
