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
#include <sys/auxv.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/base/log.h"

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
	case EM_386:
		return "i386";
	case EM_X86_64:
		return cls == ELFCLASS32 ? "x32" : "x86_64";
	case EM_AARCH64:
		return cls == ELFCLASS32 ? "aarch64 ILP32" : "aarch64";
	case EM_ARM:
		return "32-bit ARM";
	case EM_RISCV:
		return cls == ELFCLASS32 ? "riscv32" : "riscv64";
	}
	snprintf(buf, len, "ELF machine %u (%d-bit)", machine, cls == ELFCLASS32 ? 32 : 64);
	return buf;
}

/* The table for an ELF of @machine and @cls, or NULL after saying why: into @why (@size
 * bytes) when it is not NULL, else as an error message. */
static const struct perch_arch *arch_for(unsigned int machine, int cls, const char *how, char *why,
					 size_t size)
{
	const struct perch_arch *host = perch_arch_host();
	char name[64], msg[256];

	if (machine == host->e_machine && cls == ELFCLASS64)
		return host;
	if (host->e_machine == EM_X86_64 && machine == EM_386 && cls == ELFCLASS32)
		return &perch_arch_i386;
	snprintf(msg, sizeof(msg), "perch cannot profile %s processes on this host (%s)%s",
		 machine_name(machine, cls, name, sizeof(name)), host->name,
		 machine == EM_ARM && host->e_machine == EM_AARCH64
		     ? ": it has no unwinder for 32-bit ARM code (ARM EHABI)"
		     : "");
	if (why)
		snprintf(why, size, "%s", msg);
	else
		log_err(0, "%s", msg);
	log_debug("(decided from %s)", how);
	errno = ENOEXEC;
	return NULL;
}

/* Machine and class from an ELF header, -1 when @h (@n bytes) is not one. */
static int elf_ident(const unsigned char *h, ssize_t n, unsigned int *machine, int *cls)
{
	if (n < EI_NIDENT + 4 || memcmp(h, ELFMAG, SELFMAG))
		return -1;
	*cls = h[EI_CLASS];
	/* e_type (2 bytes) then e_machine, in the file's byte order */
	*machine = h[EI_DATA] == ELFDATA2MSB
		       ? (unsigned int)h[EI_NIDENT + 2] << 8 | h[EI_NIDENT + 3]
		       : (unsigned int)h[EI_NIDENT + 3] << 8 | h[EI_NIDENT + 2];
	return 0;
}

static int read_ident(const char *path, unsigned int *machine, int *cls)
{
	unsigned char h[EI_NIDENT + 4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	return elf_ident(h, n, machine, cls);
}

int perch_arch_auxv_class(const uint8_t *auxv, size_t len)
{
	int ok[2] = {0, 0}; /* 32, 64 */

	for (int w = 0; w < 2; w++) {
		size_t word = w ? 8 : 4, pagesz = 0;

		if (!len || len % (2 * word))
			continue;
		for (size_t i = 0; i + 2 * word <= len; i += 2 * word) {
			uint64_t type = 0, val = 0;

			memcpy(&type, auxv + i, word); /* host byte order: the kernel's */
			memcpy(&val, auxv + i + word, word);
			if (type == AT_NULL) {
				/* the vector ends here, with AT_PAGESZ (a power of two) seen; a
				 * compat process's file has zero padding after it (recorded on
				 * arm64: 20 pairs of 32-bit words, then 16 zero bytes) */
				ok[w] = pagesz >= 4096 && !(pagesz & (pagesz - 1));
				for (size_t k = i; k < len; k++)
					ok[w] &= auxv[k] == 0;
				break;
			}
			if (type > 4096) /* AT_* values are small numbers */
				break;
			if (type == AT_PAGESZ)
				pagesz = val;
		}
	}
	if (ok[0] == ok[1])
		return 0;
	return ok[1] ? ELFCLASS64 : ELFCLASS32;
}

int perch_arch_regset_class(unsigned int host_machine, size_t len)
{
	/* the kernel's user_regs_struct (x86_64: 27 x 8, i386: 17 x 4) and user_pt_regs
	 * (aarch64: 34 x 8; compat ARM: 18 x 4, r0-r15, cpsr, orig_r0) */
	if (host_machine == EM_X86_64)
		return len == 216 ? ELFCLASS64 : len == 68 ? ELFCLASS32 : 0;
	if (host_machine == EM_AARCH64)
		return len == 272 ? ELFCLASS64 : len == 72 ? ELFCLASS32 : 0;
	return 0;
}

/* The class of @pid from /proc/PID/auxv, 0 when unreadable or unclear. */
static int auxv_class_of(pid_t pid)
{
	uint8_t buf[4096];
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? perch_arch_auxv_class(buf, (size_t)n) : 0;
}

/* Machine and class of the first file @pid mapped at offset 0 (its executable or the loader),
 * read through /proc/PID/root. -1 when none can be read. */
static int mapped_ident(pid_t pid, unsigned int *machine, int *cls)
{
	char path[4200], line[4096], file[4096];
	unsigned long long off;
	FILE *fp;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fp = fopen(path, "re");
	while (fp && ret < 0 && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%*x-%*x %*s %llx %*s %*u %4095[^\n]", &off, file) != 2 || off ||
		    file[0] != '/' || strstr(file, " (deleted)"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, file);
		ret = read_ident(path, machine, cls);
	}
	if (fp)
		fclose(fp);
	return ret;
}

const struct perch_arch *perch_arch_of_pid(pid_t pid)
{
	return perch_arch_of_pid_why(pid, NULL, 0);
}

const struct perch_arch *perch_arch_of_pid_why(pid_t pid, char *why, size_t size)
{
	const struct perch_arch *host = perch_arch_host();
	unsigned int machine;
	char path[64];
	int cls;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (read_ident(path, &machine, &cls) == 0)
		return arch_for(machine, cls, path, why, size);
	/* the executable cannot be read: the auxiliary vector's word size tells the class, and
	 * a 32-bit process on a 64-bit host runs the host's 32-bit instruction set */
	cls = auxv_class_of(pid);
	if (cls == ELFCLASS64)
		return host;
	if (cls == ELFCLASS32)
		return arch_for(host->e_machine == EM_X86_64	? EM_386
				: host->e_machine == EM_AARCH64 ? EM_ARM
								: host->e_machine,
				cls, "auxv", why, size);
	if (mapped_ident(pid, &machine, &cls) == 0)
		return arch_for(machine, cls, "a mapped file", why, size);
	return host; /* nothing perch can judge: let attaching and sampling tell */
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
