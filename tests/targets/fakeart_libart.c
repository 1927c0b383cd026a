/* fakeart's "libart.so": what perch looks for in ART's runtime library (docs/design/android-art.md
 * 1.1, 1.2, 3.1). Exports the JIT and dex debugger descriptors in .data with the initial bytes of
 * the real Android 11 libart.so (version 1, magic "Android2", sizes 56/48 on 64-bit, 48/32 on i386,
 * timestamp 1), the registration hooks and size globals, and two interpreter trampolines whose CFI
 * carries ART's DEX PC marker (spec 3.2): fakeart_switch_interp (the switch interpreter's
 * ExecuteSwitchImplAsm: dex pc in rbx, tmp rax on x86-64; x19, tmp x0 on aarch64; ebx, tmp eax on
 * i386) and fakeart_nterp (nterp: r12, tmp rdi; x22, tmp x0; esi, tmp eax). The list writer lives
 * in fakeart_main.c; this file only holds what must be in "libart.so". */
#include <stddef.h>
#include <stdint.h>

#include "fakeart.h"

/* every public offset against the spec's tables (1.2, 1.3): the "32-bit" column is i386's */
#define OFF(type, field, off)                                                                      \
	_Static_assert(offsetof(struct type, field) == (off), #type "." #field " (spec 1.2, 1.3)")
#if defined(__i386__)
#define DESC_SIZE  48
#define ENTRY_SIZE 32
OFF(fakeart_descriptor, relevant_entry, 8);
OFF(fakeart_descriptor, first_entry, 12);
OFF(fakeart_descriptor, magic, 16);
OFF(fakeart_descriptor, flags, 24);
OFF(fakeart_descriptor, sizeof_descriptor, 28);
OFF(fakeart_descriptor, sizeof_entry, 32);
OFF(fakeart_descriptor, seqlock, 36);
OFF(fakeart_descriptor, timestamp, 40);
OFF(fakeart_entry, prev, 4);
OFF(fakeart_entry, symfile_addr, 8);
OFF(fakeart_entry, symfile_size, 12);
OFF(fakeart_entry, timestamp, 20); /* the end of the GDB entry (20), then Android1 (28) */
OFF(fakeart_entry, seqlock, 28);
#elif defined(__x86_64__) || defined(__aarch64__)
#define DESC_SIZE  56
#define ENTRY_SIZE 48
OFF(fakeart_descriptor, relevant_entry, 8);
OFF(fakeart_descriptor, first_entry, 16);
OFF(fakeart_descriptor, magic, 24);
OFF(fakeart_descriptor, flags, 32);
OFF(fakeart_descriptor, sizeof_descriptor, 36);
OFF(fakeart_descriptor, sizeof_entry, 40);
OFF(fakeart_descriptor, seqlock, 44);
OFF(fakeart_descriptor, timestamp, 48);
OFF(fakeart_entry, prev, 8);
OFF(fakeart_entry, symfile_addr, 16);
OFF(fakeart_entry, symfile_size, 24);
OFF(fakeart_entry, timestamp, 32); /* GDB 32, Android1 40 */
OFF(fakeart_entry, seqlock, 40);
#else
#error "fakeart: no descriptor layout for this architecture"
#endif
_Static_assert(sizeof(struct fakeart_descriptor) == DESC_SIZE, "descriptor size (spec 1.2)");
_Static_assert(sizeof(struct fakeart_entry) == ENTRY_SIZE, "Android2 entry size (spec 1.3)");

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
    .magic = {'A', 'n', 'd', 'r', 'o', 'i', 'd', '2'},
    .sizeof_descriptor = DESC_SIZE,
    .sizeof_entry = ENTRY_SIZE,
    .timestamp = 1,
};
struct fakeart_descriptor __dex_debug_descriptor = {
    .version = 1,
    .magic = {'A', 'n', 'd', 'r', 'o', 'i', 'd', '2'},
    .sizeof_descriptor = DESC_SIZE,
    .sizeof_entry = ENTRY_SIZE,
    .timestamp = 1,
};
uint32_t g_art_sizeof_jit_code_entry = ENTRY_SIZE;
uint32_t g_art_sizeof_jit_descriptor = DESC_SIZE;

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
#elif defined(__i386__)
/* cdecl: dex_pc at 4(%esp), body at 8, arg at 12 on entry. The dex registers ebx (switch) and
 * esi (nterp) are callee-saved, the marker's tmp register is eax (0) for both; the stack stays
 * 16-byte aligned at the call (push reg, sub 4, push arg). */
__asm__(".text\n"
	".globl fakeart_switch_interp\n"
	".type fakeart_switch_interp, @function\n"
	"fakeart_switch_interp:\n"
	".cfi_startproc\n"
	"	push %ebx\n"
	".cfi_adjust_cfa_offset 4\n"
	".cfi_rel_offset %ebx, 0\n"
	"	sub $4, %esp\n"
	".cfi_adjust_cfa_offset 4\n"
	"	mov 12(%esp), %ebx\n"
	".cfi_escape 0x16, 0x00, 0x09, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 0x03, 0x00\n"
	"	mov 16(%esp), %eax\n"
	"	push 20(%esp)\n"
	".cfi_adjust_cfa_offset 4\n"
	"	call *%eax\n"
	"	add $8, %esp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %ebx\n"
	".cfi_adjust_cfa_offset -4\n"
	".cfi_restore %ebx\n"
	".cfi_restore %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size fakeart_switch_interp, .-fakeart_switch_interp\n"
	"\n"
	".globl fakeart_nterp\n"
	".type fakeart_nterp, @function\n"
	"fakeart_nterp:\n"
	".cfi_startproc\n"
	"	push %esi\n"
	".cfi_adjust_cfa_offset 4\n"
	".cfi_rel_offset %esi, 0\n"
	"	sub $4, %esp\n"
	".cfi_adjust_cfa_offset 4\n"
	"	mov 12(%esp), %esi\n"
	".cfi_escape 0x16, 0x00, 0x09, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 0x06, 0x00\n"
	"	mov 16(%esp), %eax\n"
	"	push 20(%esp)\n"
	".cfi_adjust_cfa_offset 4\n"
	"	call *%eax\n"
	"	add $8, %esp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %esi\n"
	".cfi_adjust_cfa_offset -4\n"
	".cfi_restore %esi\n"
	".cfi_restore %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size fakeart_nterp, .-fakeart_nterp\n");
#else
#error "fakeart: no interpreter trampoline for this architecture"
#endif
