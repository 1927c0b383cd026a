/* Picks the host architecture's table; the only place that tests the compiler's arch macros. */
#include <elf.h>
#include <stddef.h>

#include "perch/arch.h"

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
	return NULL;
}
