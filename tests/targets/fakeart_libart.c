/* fakeart's "libart.so": what perch looks for in ART's runtime library (android-art.md 1.1,
 * 1.2, 3.1). Exports the JIT and dex debugger descriptors in .data with the initial bytes of the
 * real Android 11 libart.so (version 1, magic "Android2", sizes 56/48, timestamp 1), the
 * registration hooks and size globals, and two interpreter trampolines whose CFI carries ART's
 * DEX PC marker (spec 3.2): fakeart_switch_interp (the switch interpreter's
 * ExecuteSwitchImplAsm: dex pc in rbx, tmp rax on x86-64; x19, tmp x0 on aarch64) and
 * fakeart_nterp (nterp: r12, tmp rdi; x22, tmp x0). The list writer lives in fakeart_main.c;
 * this file only holds what must be in "libart.so". */
#include <stdint.h>

#include "fakeart.h"

_Static_assert(sizeof(struct fakeart_descriptor) == 56, "descriptor layout (spec 1.2)");

/* the hooks a debugger would break on; ART calls them through the _ptr globals */
void __jit_debug_register_code(void);
void __dex_debug_register_code(void);

__attribute__((noinline, used)) void __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) void __dex_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

extern void (*__jit_debug_register_code_ptr)(void);
extern void (*__dex_debug_register_code_ptr)(void);
extern struct fakeart_descriptor __jit_debug_descriptor, __dex_debug_descriptor;
extern uint32_t g_art_sizeof_jit_code_entry, g_art_sizeof_jit_descriptor;

void (*__jit_debug_register_code_ptr)(void) = __jit_debug_register_code;
void (*__dex_debug_register_code_ptr)(void) = __dex_debug_register_code;

struct fakeart_descriptor __jit_debug_descriptor = {
	.version = 1,
	.magic = { 'A', 'n', 'd', 'r', 'o', 'i', 'd', '2' },
	.sizeof_descriptor = 56,
	.sizeof_entry = 48,
	.timestamp = 1,
};
struct fakeart_descriptor __dex_debug_descriptor = {
	.version = 1,
	.magic = { 'A', 'n', 'd', 'r', 'o', 'i', 'd', '2' },
	.sizeof_descriptor = 56,
	.sizeof_entry = 48,
	.timestamp = 1,
};
uint32_t g_art_sizeof_jit_code_entry = 48;
uint32_t g_art_sizeof_jit_descriptor = 56;

struct fakeart_descriptor *fakeart_descriptor(int dex)
{
	return dex ? &__dex_debug_descriptor : &__jit_debug_descriptor;
}

void (**fakeart_hook(int dex))(void)
{
	return dex ? &__dex_debug_register_code_ptr : &__jit_debug_register_code_ptr;
}

#if defined(__x86_64__)
/* void fakeart_switch_interp(const uint16_t *insns, void (*body)(void *), void *arg)
 * void fakeart_nterp(const uint16_t *dex_pc, void (*body)(void *), void *arg)
 * The marker: DW_CFA_val_expression tmp, 9 bytes: DW_OP_const4u "DEX1", DW_OP_drop,
 * DW_OP_bregx dexreg 0 (bytes as [DEB] libart.so's ExecuteSwitchImplAsm). */
__asm__(".text\n"
	".globl fakeart_switch_interp\n"
	".type fakeart_switch_interp, @function\n"
	"fakeart_switch_interp:\n"
	".cfi_startproc\n"
	"	push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rbx, 0\n"
	"	mov %rdi, %rbx\n"
	".cfi_escape 0x16, 0x00, 0x09, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 0x03, 0x00\n"
	"	mov %rdx, %rdi\n"
	"	call *%rsi\n"
	"	pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbx\n"
	".cfi_restore %rax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size fakeart_switch_interp, .-fakeart_switch_interp\n"
	"\n"
	".globl fakeart_nterp\n"
	".type fakeart_nterp, @function\n"
	"fakeart_nterp:\n"
	".cfi_startproc\n"
	"	push %r12\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %r12, 0\n"
	"	mov %rdi, %r12\n"
	".cfi_escape 0x16, 0x05, 0x09, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 0x0c, 0x00\n"
	"	mov %rdx, %rdi\n"
	"	call *%rsi\n"
	"	pop %r12\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %r12\n"
	".cfi_restore %rdi\n"
	"	ret\n"
	".cfi_endproc\n"
	".size fakeart_nterp, .-fakeart_nterp\n");
#elif defined(__aarch64__)
/* The same two trampolines with a frame record; the marker's DWARF numbers: tmp x0 (0x00),
 * dexreg x19 (0x13) for the switch interpreter, x22 (0x16) for nterp. Both dex registers are
 * callee-saved, as in ART, so the unwinder finds their values in the callers' frames. */
__asm__(".text\n"
	".globl fakeart_switch_interp\n"
	".type fakeart_switch_interp, %function\n"
	".p2align 2\n"
	"fakeart_switch_interp:\n"
	".cfi_startproc\n"
	"	stp x29, x30, [sp, #-32]!\n"
	".cfi_def_cfa_offset 32\n"
	".cfi_offset x29, -32\n"
	".cfi_offset x30, -24\n"
	"	str x19, [sp, #16]\n"
	".cfi_offset x19, -16\n"
	"	mov x29, sp\n"
	"	mov x19, x0\n"
	".cfi_escape 0x16, 0x00, 0x09, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 0x13, 0x00\n"
	"	mov x0, x2\n"
	"	blr x1\n"
	"	ldr x19, [sp, #16]\n"
	".cfi_restore x19\n"
	".cfi_restore x0\n"
	"	ldp x29, x30, [sp], #32\n"
	".cfi_def_cfa_offset 0\n"
	".cfi_restore x29\n"
	".cfi_restore x30\n"
	"	ret\n"
	".cfi_endproc\n"
	".size fakeart_switch_interp, .-fakeart_switch_interp\n"
	"\n"
	".globl fakeart_nterp\n"
	".type fakeart_nterp, %function\n"
	".p2align 2\n"
	"fakeart_nterp:\n"
	".cfi_startproc\n"
	"	stp x29, x30, [sp, #-32]!\n"
	".cfi_def_cfa_offset 32\n"
	".cfi_offset x29, -32\n"
	".cfi_offset x30, -24\n"
	"	str x22, [sp, #16]\n"
	".cfi_offset x22, -16\n"
	"	mov x29, sp\n"
	"	mov x22, x0\n"
	".cfi_escape 0x16, 0x00, 0x09, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 0x16, 0x00\n"
	"	mov x0, x2\n"
	"	blr x1\n"
	"	ldr x22, [sp, #16]\n"
	".cfi_restore x22\n"
	".cfi_restore x0\n"
	"	ldp x29, x30, [sp], #32\n"
	".cfi_def_cfa_offset 0\n"
	".cfi_restore x29\n"
	".cfi_restore x30\n"
	"	ret\n"
	".cfi_endproc\n"
	".size fakeart_nterp, .-fakeart_nterp\n");
#else
#error "fakeart: no interpreter trampoline for this architecture"
#endif
