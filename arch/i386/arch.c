/* i386 (32-bit x86): DWARF register numbering, ptrace register read, ebp-chain step.
 *
 * Never a host architecture: perch runs as a 64-bit process and profiles 32-bit x86
 * processes (compat tasks) on an x86_64 kernel. The register read is arch-neutral: the kernel
 * answers PTRACE_GETREGSET NT_PRSTATUS of a compat tracee with the 32-bit layout, and its size
 * tells which layout came back. */
#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "perch/arch.h"

/* DWARF numbers (i386 System V psABI, table 2.14) */
enum {
	DW_EAX,
	DW_ECX,
	DW_EDX,
	DW_EBX,
	DW_ESP,
	DW_EBP,
	DW_ESI,
	DW_EDI,
	DW_EIP,
	DW_NR,
};

/* The kernel's struct user_regs_struct for i386 (what a compat tracee's NT_PRSTATUS holds),
 * spelled out so that any host can build this file (its layout is ABI). */
struct i386_user_regs {
	uint32_t ebx, ecx, edx, esi, edi, ebp, eax, xds, xes, xfs, xgs, orig_eax, eip, xcs, eflags,
	    esp, xss;
};

static int i386_regs_read(pid_t tid, struct perch_regs *out)
{
	/* room for the largest layout a kernel may answer with, to tell it from the i386 one */
	union {
		struct i386_user_regs r;
		uint64_t big[64];
	} u;
	struct iovec iov = {.iov_base = &u, .iov_len = sizeof(u)};

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	/* a native tracee (or a host whose compat layout differs) answers with another size */
	if (iov.iov_len != sizeof(u.r))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->r[DW_EAX] = u.r.eax;
	out->r[DW_ECX] = u.r.ecx;
	out->r[DW_EDX] = u.r.edx;
	out->r[DW_EBX] = u.r.ebx;
	out->r[DW_ESP] = u.r.esp;
	out->r[DW_EBP] = u.r.ebp;
	out->r[DW_ESI] = u.r.esi;
	out->r[DW_EDI] = u.r.edi;
	out->r[DW_EIP] = u.r.eip;
	out->valid = (1ULL << DW_NR) - 1;
	out->from_kernel = (int32_t)u.r.orig_eax >= 0 ? 1 : -1; /* as on x86_64 */
	if ((int32_t)u.r.orig_eax >= 0 && perch_is_erestart((int32_t)u.r.eax))
		out->broken_call = (uint32_t)u.r.orig_eax + 1;
	if ((int32_t)u.r.orig_eax >= 0 && (int32_t)u.r.eax == -EINTR)
		out->eintr_call = (uint32_t)u.r.orig_eax + 1;
	return 0;
}

/* Caller frame from the ebp chain: [ebp] = caller's ebp, [ebp+4] = return address. */
static int i386_fp_step(const struct perch_regs *in, const struct perch_mem *mem,
			struct perch_regs *out)
{
	return perch_frame_record_step(&perch_arch_i386, 4, in, mem, out);
}

const struct perch_arch perch_arch_i386 = {
    .name = "i386",
    .e_machine = EM_386,
    .nr_regs = DW_NR,
    .dw_pc = DW_EIP,
    .dw_sp = DW_ESP,
    .dw_fp = DW_EBP,
    .dw_lr = -1,
    .cs_arch = CS_ARCH_X86,
    .cs_mode = CS_MODE_32,
    .dw_sysargs = {DW_EBX, DW_ECX, DW_EDX, DW_ESI, DW_EDI, DW_EBP},
    .syscalls = &perch_syscalls_i386,
    .regs_read = i386_regs_read,
    .fp_step = i386_fp_step,
};
