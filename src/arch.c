/* Picks the host architecture's table (the only place that tests the compiler's arch macros)
 * and the table of a target process, which can differ: a 32-bit x86 process on an x86_64
 * host. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
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

const struct perch_arch *perch_arch_of_pid(pid_t pid)
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
	log_err(0, "perch cannot profile %s processes on this host (%s)",
		machine_name(machine, cls, name, sizeof(name)), host->name);
	errno = ENOEXEC;
	return NULL;
}
