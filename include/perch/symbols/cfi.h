/* DWARF call frame information evaluated by perch itself: CIE/FDE parsing over .eh_frame and
 * .debug_frame, the CFA program interpreter (the row for a pc), the DWARF expressions CFI uses,
 * and one unwind step over a register set. Memory comes only through struct perch_mem, so the
 * same code walks live snapshots and recorded fixtures of any architecture on any host. */
#ifndef PERCH_CFI_H
#define PERCH_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "perch/arch.h"

struct elffile;
struct cfi_table;

/* Limits that keep hostile CFI bounded. */
#define CFI_MAX_STATE_DEPTH 16	 /* DW_CFA_remember_state nesting */
#define CFI_EXPR_MAX_STACK  64	 /* DWARF expression stack entries */
#define CFI_EXPR_MAX_STEPS  1024 /* DWARF expression operations executed (bra/skip can loop) */
/* columns kept; rules for higher ones are parsed, dropped */
#define CFI_MAX_REGS PERCH_MAX_DWREGS

/* Build the FDE index of @ef: .eh_frame, .debug_frame (decompressed when the file stores it
 * compressed) and the .debug_frame of its MiniDebugInfo (.gnu_debugdata); any may be missing,
 * an FDE in any counts, and where two cover a pc the first in that order wins. Borrows @ef's
 * image and decompressed sections: free the table before the file. NULL with errno ENOENT
 * when no section has a usable FDE. */
struct cfi_table *cfi_table_new(const struct elffile *ef);
/* The same over raw section bytes (fixtures, fuzzing): @eh at ELF vaddr @eh_vaddr and/or @dbg
 * (either may be NULL); @machine (EM_*) decides what DW_CFA 0x2d means; @is_64 the address
 * size. The bytes are borrowed. */
struct cfi_table *cfi_table_new_raw(const uint8_t *eh, size_t eh_size, uint64_t eh_vaddr,
				    const uint8_t *dbg, size_t dbg_size, unsigned int machine,
				    int is_64);
void cfi_table_free(struct cfi_table *t);
/* Number of FDEs indexed. */
size_t cfi_table_count(const struct cfi_table *t);

/* How to recover one register (a column of the row). */
enum cfi_rule_kind {
	CFI_RULE_UNSPEC,     /* no rule: treated as same value (what GCC's unwinder does) */
	CFI_RULE_UNDEF,	     /* DW_CFA_undefined: not recoverable (for the RA: outermost frame) */
	CFI_RULE_SAME,	     /* DW_CFA_same_value */
	CFI_RULE_OFFSET,     /* saved at CFA + off */
	CFI_RULE_VAL_OFFSET, /* the value is CFA + off */
	CFI_RULE_REG,	     /* in register @reg */
	CFI_RULE_EXPR,	     /* saved at the address the expression computes (CFA pushed first) */
	CFI_RULE_VAL_EXPR,   /* the value is what the expression computes (CFA pushed first) */
};

struct cfi_rule {
	const uint8_t *expr; /* EXPR, VAL_EXPR: borrowed from the section bytes */
	int64_t off;	     /* OFFSET, VAL_OFFSET */
	uint32_t expr_len;
	uint16_t reg; /* REG */
	uint8_t kind; /* enum cfi_rule_kind */
};

enum cfi_cfa_kind {
	CFI_CFA_REG_OFF, /* CFA = reg + off */
	CFI_CFA_EXPR,	 /* CFA = the expression's value (nothing pushed first) */
};

/* The row of the CFI table that applies at one pc; readelf --debug-dump=frames-interp prints
 * it under "   LOC           CFA      rbx   rbp   ra" as
 * "0000000000401691 rsp+16   u     c-16  c-8". */
struct cfi_row {
	uint64_t fde_start, fde_end; /* ELF vaddrs the FDE covers */
	uint64_t loc;		     /* ELF vaddr where this row starts */
	uint8_t cfa_kind;	     /* enum cfi_cfa_kind */
	uint16_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	uint32_t cfa_expr_len;
	uint16_t ra_reg;      /* the CIE's return address column */
	uint8_t ra_signed;    /* aarch64: an odd number of DW_CFA_AARCH64_negate_ra_state */
	uint8_t signal_frame; /* the CIE has 'S' */
	uint64_t args_size;   /* DW_CFA_GNU_args_size */
	uint8_t addr_size;    /* the target's: 4 (ELF32) or 8; saved registers and DW_OP_deref
			       * read this many bytes, addresses wrap at it */
	struct cfi_rule rules[CFI_MAX_REGS];
};

/* The row for ELF vaddr @pc (already adjusted: pass pc - 1 for a return address). 0, -ENOENT
 * when no FDE covers @pc, -ENOEXEC for CFI perch cannot parse (truncated, unknown opcode,
 * register out of range for the CFA, remember/restore_state unbalanced or deeper than
 * CFI_MAX_STATE_DEPTH). @row's expressions are borrowed from the table's bytes. */
int cfi_row_find(const struct cfi_table *t, uint64_t pc, struct cfi_row *row);

/* Evaluate a DWARF expression of the kind CFI uses (DW_OP_lit*, const*, breg*, bregx, dup,
 * drop, over, pick, swap, rot, deref, deref_size, arithmetic and logic, comparisons, skip,
 * bra, nop, addr (+@bias)). @push_initial: push @initial first (DW_CFA_expression and
 * val_expression push the CFA). Registers come from @regs (only those marked valid), memory
 * from @mem (64-bit little-endian target; cfi_step() evaluates a 32-bit target's rows with
 * 4-byte addresses). 0 with the top of the stack in *@out; -ENOEXEC for a
 * malformed expression, an empty stack, more than CFI_EXPR_MAX_STACK entries or
 * CFI_EXPR_MAX_STEPS operations, division by zero; -EOPNOTSUPP for ops CFI has no use for
 * (DW_OP_reg*, piece, call*, fbreg, TLS); -EINVAL for an unknown register; -EFAULT from @mem. */
int cfi_expr_eval(const uint8_t *expr, size_t len, const struct perch_regs *regs,
		  const struct perch_mem *mem, uint64_t bias, int push_initial, uint64_t initial,
		  uint64_t *out);

enum {
	/* in: @in's pc is where the thread was interrupted (the first frame, or the frame a
	 * signal interrupted), so the row of pc itself applies. Without it, @in's pc is a return
	 * address and the row of pc - 1 applies (the call may be the last instruction of its
	 * function: noreturn callees).
	 * out: set when the frame just stepped was a signal frame ('S'): the caller's pc is
	 * exact, pass CFI_PC_EXACT on the next step. */
	CFI_PC_EXACT = 1 << 0,
	/* out: the row said the return address was signed (aarch64 pointer authentication) and
	 * the PAC bits were cleared from the caller's pc. */
	CFI_RA_SIGNED = 1 << 1,
};

/* One unwind step with @t's CFI (ELF vaddr + @bias = run-time address): from the registers
 * @in of a frame (pc and whatever else is known, DWARF numbering of @a) compute the caller's
 * registers in @out: CFA -> sp, the return address column -> pc, callee-saved registers from
 * their rules; registers without a rule keep @in's values, DW_CFA_undefined ones are cleared
 * from @out->valid. @in_flags: CFI_PC_EXACT or 0. When the row has the RA signed, @pac_mask is
 * cleared from the return address (0: bits 48-63, the widest mask of a 48-bit address space).
 * @out may not alias @in.
 * Returns 0 with *@out_flags = CFI_* bits, -ENOENT at the outermost frame (return address
 * undefined or 0), -ENODATA when no FDE covers the pc (try another unwinder), -ELOOP when the
 * caller would be the same frame (same pc and sp), -EINVAL when the row needs a register
 * @in does not have, -ENOEXEC for unusable CFI, -EFAULT from @mem. */
int cfi_step(const struct perch_arch *a, const struct cfi_table *t, uint64_t bias,
	     const struct perch_regs *in, unsigned int in_flags, const struct perch_mem *mem,
	     uint64_t pac_mask, struct perch_regs *out, unsigned int *out_flags);

/* ART's DEX PC marker (docs/design/android-art.md, section 3): if @row has a DW_CFA_val_expression
 * that starts with DW_OP_const4u "DEX1", DW_OP_drop, evaluate it over @regs (the frame's own
 * registers) into *@dex_pc. 0, -ENOENT when the row has no marker, or cfi_expr_eval's errors. */
int cfi_row_dex_pc(const struct cfi_row *row, const struct perch_regs *regs,
		   const struct perch_mem *mem, uint64_t *dex_pc);

#endif
