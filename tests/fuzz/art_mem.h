/* A fake target address space for the ART harnesses (fuzz_jit.c, fuzz_dexdesc.c): input byte 0
 * picks the target ABI, the rest is target memory at ART_FUZZ_BASE with the descriptor at its
 * start; every read outside it fails, as an unmapped page would. */
#ifndef PERCH_FUZZ_ART_MEM_H
#define PERCH_FUZZ_ART_MEM_H

#include <elf.h>
#include <errno.h>

#include "fuzz.h"
#include "perch/arch.h"

#define ART_FUZZ_BASE 0x10000ULL

struct art_fuzz_mem {
	const uint8_t *p;
	size_t size;
	unsigned int machine;
	int is_64;
};

static int art_fuzz_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct art_fuzz_mem *m = ctx;

	if (addr < ART_FUZZ_BASE || addr - ART_FUZZ_BASE > m->size ||
	    len > m->size - (addr - ART_FUZZ_BASE))
		return -EFAULT;
	memcpy(buf, m->p + (addr - ART_FUZZ_BASE), len);
	return 0;
}

/* 0: x86-64, 1: i386, 2: ARM32, 3: aarch64 (tagged pointers) */
static void art_fuzz_abi(uint8_t b, struct art_fuzz_mem *m)
{
	static const unsigned int machines[] = {EM_X86_64, EM_386, EM_ARM, EM_AARCH64};

	m->machine = machines[b & 3];
	m->is_64 = m->machine == EM_X86_64 || m->machine == EM_AARCH64;
}

#endif
