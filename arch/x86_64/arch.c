/* x86_64: DWARF register numbering, ptrace register read, rbp-chain step. */
#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "perch/arch.h"

/* DWARF numbers (System V psABI, table 3.36) */
enum {
	DW_RAX,
	DW_RDX,
	DW_RCX,
	DW_RBX,
	DW_RSI,
	DW_RDI,
	DW_RBP,
	DW_RSP,
	DW_R8,
	DW_R9,
	DW_R10,
	DW_R11,
	DW_R12,
	DW_R13,
	DW_R14,
	DW_R15,
	DW_RIP,
	DW_NR,
};

/* The kernel's struct user_regs_struct for x86_64, spelled out so that any host can build
 * this file (its layout is ABI). */
struct x86_64_user_regs {
	uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi, orig_rax,
	    rip, cs, eflags, rsp, ss, fs_base, gs_base, ds, es, fs, gs;
};

static int x86_64_regs_read(pid_t tid, struct perch_regs *out)
{
#if defined(__x86_64__)
	struct x86_64_user_regs u;
	struct iovec iov = {.iov_base = &u, .iov_len = sizeof(u)};

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	if (perch_arch_regset_class(EM_X86_64, iov.iov_len) != ELFCLASS64)
		return -ENOEXEC; /* a 32-bit (compat) thread's registers: perch_arch_i386 reads them
				  */
	memset(out, 0, sizeof(*out));
	out->r[DW_RAX] = u.rax;
	out->r[DW_RDX] = u.rdx;
	out->r[DW_RCX] = u.rcx;
	out->r[DW_RBX] = u.rbx;
	out->r[DW_RSI] = u.rsi;
	out->r[DW_RDI] = u.rdi;
	out->r[DW_RBP] = u.rbp;
	out->r[DW_RSP] = u.rsp;
	out->r[DW_R8] = u.r8;
	out->r[DW_R9] = u.r9;
	out->r[DW_R10] = u.r10;
	out->r[DW_R11] = u.r11;
	out->r[DW_R12] = u.r12;
	out->r[DW_R13] = u.r13;
	out->r[DW_R14] = u.r14;
	out->r[DW_R15] = u.r15;
	out->r[DW_RIP] = u.rip;
	out->valid = (1ULL << DW_NR) - 1;
	/* orig_rax: the call's number after a system call, a fault's error code, ~vector (< 0)
	 * after an interrupt in user mode */
	out->from_kernel = (int64_t)u.orig_rax >= 0 ? 1 : -1;
	if ((int64_t)u.orig_rax >= 0 && perch_is_erestart((int64_t)u.rax))
		out->broken_call = (uint32_t)u.orig_rax + 1;
	if ((int64_t)u.orig_rax >= 0 && (int64_t)u.rax == -EINTR)
		out->eintr_call = (uint32_t)u.orig_rax + 1;
	return 0;
#else
	(void)tid;
	(void)out;
	return -ENOSYS;
#endif
}

/* Caller frame from the rbp chain: [rbp] = caller's rbp, [rbp+8] = return address. */
static int x86_64_fp_step(const struct perch_regs *in, const struct perch_mem *mem,
			  struct perch_regs *out)
{
	return perch_frame_record_step(&perch_arch_x86_64, 8, in, mem, out);
}

/* `mov $NR,%eax` (b8 imm32) or `mov $NR,%rax` (48 c7 c0 imm32) right before `syscall`
 * (0f 05), as glibc's and Go's wrappers load the number. */
static long x86_64_syscall_at(const uint8_t *code, size_t len)
{
	const uint8_t *end = code + len;
	const uint8_t *imm;

	if (len < 7 || end[-2] != 0x0f || end[-1] != 0x05)
		return -1;
	if (end[-7] == 0xb8)
		imm = end - 6;
	else if (len >= 9 && end[-9] == 0x48 && end[-8] == 0xc7 && end[-7] == 0xc0)
		imm = end - 6;
	else
		return -1;
	if (imm[2] || imm[3] || imm[1] > 3) /* a system-call number is small */
		return -1;
	return (long)imm[0] | (long)imm[1] << 8;
}

/* runtime.asmcgocall after `call *%rax` (Go 1.17 to 1.22 at least):
 *   48 8b 7c 24 G    mov G(%rsp),%rdi      the goroutine's g
 *   48 8b 77 H       mov H(%rdi),%rsi      g.stack.hi
 *   48 2b 74 24 D    sub D(%rsp),%rsi      minus the depth saved before the call */
static int x86_64_go_cgo_return(const uint8_t *c, size_t len, int *g_off, int *hi_off,
				int *depth_off)
{
	static const uint8_t mov_g[] = {0x48, 0x8b, 0x7c, 0x24}, mov_hi[] = {0x48, 0x8b, 0x77},
			     sub_d[] = {0x48, 0x2b, 0x74, 0x24};

	if (len < 14 || memcmp(c, mov_g, 4) || memcmp(c + 5, mov_hi, 3) || memcmp(c + 9, sub_d, 4))
		return -1;
	*g_off = c[4];
	*hi_off = c[8];
	*depth_off = c[13];
	return 0;
}

/* rt_sigreturn's ucontext: uc_flags, uc_link, uc_stack (24 bytes), then mcontext's gregs in
 * the kernel's struct sigcontext order (asm/sigcontext.h): r8-r15, rdi, rsi, rbp, rbx, rdx,
 * rax, rcx, rsp, rip. */
#define UC_MCONTEXT 40
static int x86_64_sigreturn_regs(const struct perch_mem *mem, uint64_t pc, uint64_t sp,
				 struct perch_regs *out)
{
	static const uint8_t dw[17] = {DW_R8,  DW_R9,  DW_R10, DW_R11, DW_R12, DW_R13,
				       DW_R14, DW_R15, DW_RDI, DW_RSI, DW_RBP, DW_RBX,
				       DW_RDX, DW_RAX, DW_RCX, DW_RSP, DW_RIP};
	uint8_t code[9];
	uint64_t g[17];

	if (mem->read(mem->ctx, pc, code, sizeof(code)) < 0 ||
	    (x86_64_syscall_at(code, 9) != 15 && x86_64_syscall_at(code, 7) != 15) ||
	    mem->read(mem->ctx, sp + UC_MCONTEXT, g, sizeof(g)) < 0)
		return -1;
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 17; i++)
		out->r[dw[i]] = g[i];
	out->valid = (1ULL << DW_NR) - 1;
	return 0;
}

const struct perch_arch perch_arch_x86_64 = {
    .name = "x86_64",
    .e_machine = EM_X86_64,
    .nr_regs = DW_NR,
    .dw_pc = DW_RIP,
    .dw_sp = DW_RSP,
    .dw_fp = DW_RBP,
    .dw_lr = -1,
    .cs_arch = CS_ARCH_X86,
    .cs_mode = CS_MODE_64,
    .dw_sysargs = {DW_RDI, DW_RSI, DW_RDX, DW_R10, DW_R8, DW_R9},
    .syscalls = &perch_syscalls_x86_64,
    .regs_read = x86_64_regs_read,
    .fp_step = x86_64_fp_step,
    .syscall_at = x86_64_syscall_at,
    .go_cgo_return = x86_64_go_cgo_return,
    .sigreturn_regs = x86_64_sigreturn_regs,
};
