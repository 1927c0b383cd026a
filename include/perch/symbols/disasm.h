/* capstone, loaded when first needed. Linking it would make every perch run pay for it: the
 * dynamic loader applies libcapstone.so.4's 77,000 relative relocations before main (about half
 * of a warm `perch dump`, docs/benchmark.md), and only `perch annotate` disassembles. So the
 * dynamic build dlopen()s the library of the capstone version perch was compiled against
 * (libcapstone.so.<CS_API_MAJOR>: its cs_insn layout is the one the headers describe); a static
 * build (-DPERCH_CAPSTONE_LINKED) links it in and this only points at it. */
#ifndef PERCH_DISASM_H
#define PERCH_DISASM_H

#include <capstone/capstone.h>

/* The capstone entry points perch uses. */
struct disasm_lib {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	size_t (*disasm)(csh handle, const uint8_t *code, size_t size, uint64_t address,
			 size_t count, cs_insn **insn);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
	unsigned int (*version)(int *major, int *minor);
};

/* The library, loaded on the first call (later calls return the same). NULL when it cannot be
 * loaded, with the reason in @why (may be NULL; a static string or dlerror()'s, valid until
 * the next call). */
const struct disasm_lib *disasm_lib(const char **why);

#endif
