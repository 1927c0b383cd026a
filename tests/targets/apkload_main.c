/* Maps the library stored at byte OFFSET of ZIP (an APK built by tests/targets/apk.mk) the way
 * Android's linker maps a library straight out of base.apk: each PT_LOAD from the zip file at
 * OFFSET + p_offset, so /proc/PID/maps shows the zip with non-zero offsets. Then runs its entry
 * for SECONDS, printing "ready <pid>" first.
 * Usage: apkload ZIP OFFSET [SECONDS] */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "target_common.h"

#define PAGE 4096UL

int main(int argc, char **argv)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[16];
	uint64_t off, lo = UINT64_MAX, hi = 0;
	double secs, t0;
	uint8_t *base;
	int fd;

	if (argc < 3)
		return 64;
	off = strtoull(argv[2], NULL, 0);
	secs = target_arg(argc, argv, 3, 2);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), (off_t)off) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_phnum > 16 || (off & (PAGE - 1)) ||
	    pread(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)(off + eh.e_phoff)) !=
		(ssize_t)(eh.e_phnum * sizeof(ph[0]))) {
		fprintf(stderr, "apkload: no ELF at %s+%#llx\n", argv[1], (unsigned long long)off);
		return 1;
	}
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr & ~(PAGE - 1);
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	base = mmap(NULL, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 1;
	for (int i = 0; i < eh.e_phnum; i++) {
		uint64_t va = ph[i].p_vaddr & ~(PAGE - 1), skew = ph[i].p_vaddr - va;
		int prot = (ph[i].p_flags & PF_R ? PROT_READ : 0) |
			   (ph[i].p_flags & PF_W ? PROT_WRITE : 0) |
			   (ph[i].p_flags & PF_X ? PROT_EXEC : 0);

		if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz)
			continue;
		if (mmap(base + va - lo, ph[i].p_filesz + skew, prot, MAP_PRIVATE | MAP_FIXED, fd,
			 (off_t)(off + ph[i].p_offset - skew)) == MAP_FAILED) {
			perror("apkload: mmap");
			return 1;
		}
	}
	uint64_t (*entry)(uint64_t) = (uint64_t(*)(uint64_t))(base + eh.e_entry - lo);

	target_allow_ptrace();
	target_ready();
	t0 = target_now();
	uint64_t sum = 0;

	while (target_now() - t0 < secs)
		sum += entry(20);
	return sum == 1; /* keeps the calls */
}
