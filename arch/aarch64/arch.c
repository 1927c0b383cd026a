/* aarch64: DWARF register numbering, ptrace register read, x29-chain step. */
#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "perch/arch.h"

/* DWARF numbers (AAPCS64 DWARF supplement): x0-x30 = 0-30, sp = 31; libunwind uses 32 for pc */
enum { DW_X29 = 29, DW_X30 = 30, DW_SP = 31, DW_PC = 32, DW_NR = 33 };

/* The kernel's struct user_pt_regs for aarch64 (ABI). */
struct aarch64_user_regs {
	uint64_t regs[31];
	uint64_t sp, pc, pstate;
};

static int aarch64_regs_read(pid_t tid, struct perch_regs *out)
{
#if defined(__aarch64__)
	struct aarch64_user_regs u;
	struct iovec iov = {.iov_base = &u, .iov_len = sizeof(u)};

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	/* a 32-bit ARM (compat) thread answers with 72 bytes: never read them as these */
	if (perch_arch_regset_class(EM_AARCH64, iov.iov_len) != ELFCLASS64)
		return -ENOEXEC;
	memset(out, 0, sizeof(*out));
	memcpy(out->r, u.regs, sizeof(u.regs));
	out->r[DW_SP] = u.sp;
	out->r[DW_PC] = u.pc;
	out->valid = (1ULL << DW_NR) - 1;
	/* the call's number stays in x8 (the kernel rewrites it to restart_syscall only when
	 * the thread goes on); x0 holds its -ERESTART* result */
	if (perch_is_erestart((int64_t)u.regs[0]))
		out->broken_call = (uint32_t)u.regs[8] + 1;
	return 0;
#else
	(void)tid;
	(void)out;
	return -ENOSYS;
#endif
}

#ifndef NT_ARM_PAC_MASK
#define NT_ARM_PAC_MASK 0x406
#endif

/* PTRACE_GETREGSET NT_ARM_PAC_MASK: struct user_pac_mask { data_mask, insn_mask } */
static int aarch64_pac_mask_read(pid_t tid, uint64_t *mask)
{
#if defined(__aarch64__)
	uint64_t m[2];
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(m)};

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_PAC_MASK, &iov) < 0)
		return -errno;
	*mask = m[1];
	return 0;
#else
	(void)tid;
	(void)mask;
	return -ENOSYS;
#endif
}

/* Caller frame from the x29 chain: [x29] = caller's x29, [x29+8] = return address, which is
 * also the caller's x30 (LR). */
static int aarch64_fp_step(const struct perch_regs *in, const struct perch_mem *mem,
			   struct perch_regs *out)
{
	int ret = perch_frame_record_step(&perch_arch_aarch64, 8, in, mem, out);

	if (ret == 0) {
		out->r[DW_X30] = out->r[DW_PC];
		out->valid |= 1ULL << DW_X30;
	}
	return ret;
}

/* The last `mov x8, #NR` / `mov w8, #NR` (movz, no shift) among the few instructions before
 * `svc #0`, with nothing else between that names x8 as its destination. */
static long aarch64_syscall_at(const uint8_t *code, size_t len)
{
	uint32_t insn;
	size_t n = len / 4;

	if (n < 2)
		return -1;
	code += len - 4 * n;
	memcpy(&insn, code + 4 * (n - 1), 4);
	if (insn != 0xd4000001) /* svc #0 */
		return -1;
	for (size_t i = n - 1; i-- > 0 && n - i <= 8;) {
		memcpy(&insn, code + 4 * i, 4);
		if ((insn & 0x7fe0001f) == 0x52800008) /* movz x8|w8, #imm16 */
			return (long)((insn >> 5) & 0xffff);
		if ((insn & 0x1f) == 8) /* another write to x8 (or a store of it: give up) */
			return -1;
	}
	return -1;
}

const struct perch_arch perch_arch_aarch64 = {
    .name = "aarch64",
    .e_machine = EM_AARCH64,
    .nr_regs = DW_NR,
    .dw_pc = DW_PC,
    .dw_sp = DW_SP,
    .dw_fp = DW_X29,
    .dw_lr = DW_X30,
    .cs_arch = CS_ARCH_ARM64,
    .cs_mode = CS_MODE_ARM,
    .dw_sysargs = {0, 1, 2, 3, 4, 5}, /* x0-x5 */
    .syscalls = &perch_syscalls_aarch64,
    .regs_read = aarch64_regs_read,
    .fp_step = aarch64_fp_step,
    .pac_mask_read = aarch64_pac_mask_read,
    .syscall_at = aarch64_syscall_at,
};
