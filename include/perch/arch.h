/* The per-architecture interface: register sets in DWARF numbering, reading them from a
 * stopped thread, and one frame-pointer step. Each arch/<name>/ folder provides one table;
 * both are compiled into every build so fixtures of either can be tested on any host. */
#ifndef PERCH_ARCH_H
#define PERCH_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERCH_MAX_DWREGS 33 /* aarch64: x0-x30, sp (31), pc (32); x86_64 uses 0-16 */

/* Registers indexed by DWARF register number (which is also libunwind's numbering on both
 * architectures). Bit i of @valid is set when r[i] is known. */
struct perch_regs {
	uint64_t r[PERCH_MAX_DWREGS];
	uint64_t valid;
	/* how a stopped thread came to its stop (regs_read): 1 on its way out of the kernel
	 * (the end of a system call or of a fault), -1 interrupted in user code, 0 unknown */
	int8_t from_kernel;
	/* 1 + the number of the system call this stop broke off (it returned -ERESTART*, so
	 * it runs again, as restart_syscall for a sleep with a timeout, once the thread goes
	 * on), 0 when none or not known */
	uint32_t broken_call;
	/* 1 + the number of the system call at whose exit this stop came with -EINTR (the stop
	 * may have broken it off: waitreason_stop_breaks()), 0 when none or not known (aarch64
	 * does not say whether a stop is at a system call's exit) */
	uint32_t eintr_call;
};

/* The kernel's -ERESTARTSYS .. -ERESTART_RESTARTBLOCK (never seen by user code): the value a
 * system call broken off by a stop leaves in the return register. */
static inline int perch_is_erestart(int64_t ret)
{
	return ret <= -512 && ret >= -516;
}

/* Memory access for frame walkers: 0 or -errno (-EFAULT for unreadable addresses). */
struct perch_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* System-call names indexed by number (NULL where a number has no name), as
 * /proc/PID/task/TID/syscall reports the call a thread is in: arch/<name>/syscalls.c. */
struct perch_syscall_table {
	const char *const *names;
	size_t nr;
};

struct perch_arch {
	const char *name;	/* "x86_64", "aarch64" */
	unsigned int e_machine; /* EM_X86_64, EM_AARCH64 */
	int nr_regs;		/* DWARF registers 0..nr_regs-1 are meaningful */
	int dw_pc, dw_sp, dw_fp;
	int dw_lr;	      /* link register, -1 when the return address is on the stack */
	int cs_arch, cs_mode; /* capstone engine selection */
	/* the registers holding system-call arguments 1-6, in the order /proc/PID/syscall
	 * lists them (a thread blocked where it cannot be stopped is known from that file) */
	int dw_sysargs[6];
	const struct perch_syscall_table *syscalls;
	/* Read the registers of a ptrace-stopped thread. Host arch only: -ENOSYS elsewhere.
	 * 0 or -errno. */
	int (*regs_read)(pid_t tid, struct perch_regs *out);
	/* One frame-pointer step from @in to the caller's registers in @out (pc, sp, fp).
	 * 0, -ENOENT at the end of the chain, or -errno. */
	int (*fp_step)(const struct perch_regs *in, const struct perch_mem *mem,
		       struct perch_regs *out);
	/* The bits of a code address that pointer authentication uses (to clear from return
	 * addresses), for a stopped thread. NULL when the architecture has none; -errno when
	 * the kernel does not report it (no PAC). Host arch only. */
	int (*pac_mask_read)(pid_t tid, uint64_t *mask);
	/* The system call a call site makes, from its code: @code holds the @len bytes that end
	 * at the site's pc (just after the system-call instruction, as /proc/PID/syscall shows
	 * it). The number loaded just before that instruction (x86_64 `mov $NR,%eax`, aarch64
	 * `mov x8, #NR`), or -1 when the code does not say. Names the call a thread goes on
	 * with when /proc shows restart_syscall. NULL when the architecture has no reader. */
	long (*syscall_at)(const uint8_t *code, size_t len);
	/* Go's runtime.asmcgocall: @code, the @len bytes at a return address, restores the
	 * goroutine's stack after a call of C code on the system stack (x86_64: `mov G(%rsp),%rdi;
	 * mov HI(%rdi),%rsi; sub D(%rsp),%rsi`). Then the goroutine's g is at SP + *@g_off, its
	 * stack.hi at g + *@hi_off, and the goroutine's SP is stack.hi minus the word at SP +
	 * *@depth_off. 0, or -1 when the code is not that. NULL when not known for the
	 * architecture. */
	int (*go_cgo_return)(const uint8_t *code, size_t len, int *g_off, int *hi_off,
			     int *depth_off);
	/* A signal handler returned to @pc, a trampoline with no unwind table (Go's
	 * runtime.sigreturn): when the code at @pc is the rt_sigreturn call, the registers of the
	 * frame the signal interrupted, from the ucontext at @sp (the handler's CFA), into @out.
	 * 0 or -1. NULL when not known for the architecture. */
	int (*sigreturn_regs)(const struct perch_mem *mem, uint64_t pc, uint64_t sp,
			      struct perch_regs *out);
};

/* How many bytes before a call site syscall_at() wants. */
#define PERCH_SYSCALL_SITE_BYTES 32

extern const struct perch_arch perch_arch_x86_64, perch_arch_aarch64, perch_arch_i386;
extern const struct perch_syscall_table perch_syscalls_x86_64, perch_syscalls_aarch64,
    perch_syscalls_i386;

/* The architecture perch was built for (the only place that tests __x86_64__/__aarch64__). */
const struct perch_arch *perch_arch_host(void);
/* The table for an ELF e_machine, or NULL. */
const struct perch_arch *perch_arch_by_machine(unsigned int e_machine);
/* The table for process @pid: the host's, or i386 for a 32-bit x86 process on an x86_64 host.
 * Decided from the ELF header of /proc/PID/exe; when that cannot be opened (an executable the
 * caller may not read, as app_process under Android's run-as), from /proc/PID/auxv, then from
 * the ELF header of the first file the process mapped. NULL with errno ENOEXEC (after printing
 * "perch cannot profile <machine> processes on this host") for any other, e.g. a 32-bit ARM
 * app on arm64 (perch has no ARM EHABI unwinder); the host's when nothing can be read (the
 * process is gone or not ours: attaching reports that). */
const struct perch_arch *perch_arch_of_pid(pid_t pid);
/* The same without a message: for a process perch cannot profile, NULL with @why holding the
 * sentence perch_arch_of_pid() prints (e.g. for a followed child that execs such a program). */
const struct perch_arch *perch_arch_of_pid_why(pid_t pid, char *why, size_t size);
/* The ELF class (ELFCLASS32, ELFCLASS64) of a process from its auxiliary vector (the @len
 * bytes of /proc/PID/auxv: pairs of the process's longs ending with AT_NULL), or 0 when the
 * bytes fit neither. */
int perch_arch_auxv_class(const uint8_t *auxv, size_t len);
/* The ELF class of a thread from the size of its register set (PTRACE_GETREGSET NT_PRSTATUS)
 * on a host of @host_machine: x86_64 216 bytes, or 68 for a 32-bit (i386) thread; aarch64 272,
 * or 72 for a 32-bit ARM thread (the kernel's compat user_regs). 0 for any other size. The
 * 64-bit register reads use it: a 32-bit thread's registers are never read as 64-bit ones. */
int perch_arch_regset_class(unsigned int host_machine, size_t len);
/* Is @a the architecture perch was built for (the only one libunwind can step)? */
static inline int perch_arch_is_host(const struct perch_arch *a)
{
	return a == perch_arch_host();
}

/* The frame-record step all three architectures share: [fp] = caller's fp, [fp + @word] =
 * return address, caller's sp = fp + 2 * @word, with @word 4 or 8 bytes. The caller's fp is
 * valid only when the chain moves up the stack. For fp_step implementations. */
int perch_frame_record_step(const struct perch_arch *a, unsigned int word,
			    const struct perch_regs *in, const struct perch_mem *mem,
			    struct perch_regs *out);

static inline uint64_t perch_regs_pc(const struct perch_arch *a, const struct perch_regs *r)
{
	return r->r[a->dw_pc];
}

static inline uint64_t perch_regs_sp(const struct perch_arch *a, const struct perch_regs *r)
{
	return r->r[a->dw_sp];
}

#endif
