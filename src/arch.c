/* Picks the host architecture's table (the only place that tests the compiler's arch macros)
 * and the table of a target process, which can differ: a 32-bit x86 process on an x86_64
 * host. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/log.h"

const struct perch_arch *perch_arch_host(void)
{
#if defined(__x86_64__)
	return &perch_arch_x86_64;
#elif defined(__aarch64__)
	return &perch_arch_aarch64;
#else
#error "perch supports x86_64 and aarch64 hosts"
#endif
}

const struct perch_arch *perch_arch_by_machine(unsigned int e_machine)
{
	if (e_machine == EM_X86_64)
		return &perch_arch_x86_64;
	if (e_machine == EM_AARCH64)
		return &perch_arch_aarch64;
	if (e_machine == EM_386)
		return &perch_arch_i386;
	return NULL;
}

/* A name for error messages: what a user would call processes of @machine and @cls. */
static const char *machine_name(unsigned int machine, int cls, char *buf, size_t len)
{
	switch (machine) {
	case EM_386: return "i386";
	case EM_X86_64: return cls == ELFCLASS32 ? "x32" : "x86_64";
	case EM_AARCH64: return cls == ELFCLASS32 ? "aarch64 ILP32" : "aarch64";
	case EM_ARM: return "32-bit ARM";
	case EM_RISCV: return cls == ELFCLASS32 ? "riscv32" : "riscv64";
	}
	snprintf(buf, len, "ELF machine %u (%d-bit)", machine, cls == ELFCLASS32 ? 32 : 64);
	return buf;
}

const struct perch_arch *perch_arch_of_pid_why(pid_t pid, char *why, size_t size)
{
	const struct perch_arch *host = perch_arch_host();
	unsigned char h[EI_NIDENT + 4];
	char path[64], name[64];
	unsigned int machine;
	ssize_t n;
	int fd, cls;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return host;
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return host; /* not an ELF file perch can judge: let attaching and sampling tell */
	cls = h[EI_CLASS];
	/* e_type (2 bytes) then e_machine, in the file's byte order */
	machine = h[EI_DATA] == ELFDATA2MSB ? (unsigned int)h[EI_NIDENT + 2] << 8 | h[EI_NIDENT + 3]
					     : (unsigned int)h[EI_NIDENT + 3] << 8 | h[EI_NIDENT + 2];
	if (machine == host->e_machine && cls == ELFCLASS64)
		return host;
	if (host->e_machine == EM_X86_64 && machine == EM_386 && cls == ELFCLASS32)
		return &perch_arch_i386;
	snprintf(why, size, "perch cannot profile %s processes on this host (%s)",
		 machine_name(machine, cls, name, sizeof(name)), host->name);
	errno = ENOEXEC;
	return NULL;
}

const struct perch_arch *perch_arch_of_pid(pid_t pid)
{
	char why[160];
	const struct perch_arch *a = perch_arch_of_pid_why(pid, why, sizeof(why));

	if (!a) {
		log_err(0, "%s", why);
		errno = ENOEXEC;
	}
	return a;
}

int perch_frame_record_step(const struct perch_arch *a, unsigned int word,
			    const struct perch_regs *in, const struct perch_mem *mem,
			    struct perch_regs *out)
{
	uint64_t fp = in->r[a->dw_fp], limit = word == 4 ? UINT32_MAX : UINT64_MAX;
	uint64_t caller_fp, ra;
	union {
		uint32_t w4[2];
		uint64_t w8[2];
	} frame;
	int ret;

	if (!(in->valid & (1ULL << a->dw_fp)) || fp == 0 || (fp & (word - 1)) ||
	    fp > limit - 2 * word)
		return -ENOENT;
	if (fp < in->r[a->dw_sp])
		return -ENOENT; /* a frame pointer below SP is not a frame of this stack */
	ret = mem->read(mem->ctx, fp, &frame, 2 * word);
	if (ret < 0)
		return ret;
	caller_fp = word == 4 ? frame.w4[0] : frame.w8[0];
	ra = word == 4 ? frame.w4[1] : frame.w8[1];
	if (ra == 0)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->r[a->dw_pc] = ra;
	out->r[a->dw_sp] = fp + 2 * word;
	out->r[a->dw_fp] = caller_fp;
	out->valid = (1ULL << a->dw_pc) | (1ULL << a->dw_sp);
	/* the chain must move up the stack; otherwise the caller's fp is not a frame pointer */
	if (caller_fp > fp)
		out->valid |= 1ULL << a->dw_fp;
	return 0;
}
