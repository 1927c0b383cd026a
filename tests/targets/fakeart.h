/* fakeart: a stand-in for ART's debugger interfaces (android-art.md sections 1-3), so that perch's
 * ART support is tested without a device. fakeart_libart.c is the "libart.so" (descriptors,
 * interpreter trampolines), fakeart_main.c the runtime (JIT cache, list writer, Java calls). */
#ifndef FAKEART_H
#define FAKEART_H

#include <stdint.h>

/* The public descriptor, 64-bit layout (spec 1.2). */
struct fakeart_descriptor {
	uint32_t version;
	uint32_t action_flag;
	uint64_t relevant_entry;
	uint64_t first_entry;
	uint8_t magic[8];
	uint32_t flags;
	uint32_t sizeof_descriptor;
	uint32_t sizeof_entry;
	uint32_t seqlock;
	uint64_t timestamp;
};

/* __jit_debug_descriptor (@dex 0) or __dex_debug_descriptor (1), and the hook pointer ART
 * calls after each change. Through a function: a direct reference from the executable would
 * get a copy relocation, and the live descriptor would sit in the executable, not libart.so. */
struct fakeart_descriptor *fakeart_descriptor(int dex);
void (**fakeart_hook(int dex))(void);

/* Run @body(@arg) as the interpreter would run a method: the trampoline's CFI reports @dex_pc
 * (switch interpreter: the method's first instruction; nterp: the current one). */
void fakeart_switch_interp(const void *dex_pc, void (*body)(void *), void *arg);
void fakeart_nterp(const void *dex_pc, void (*body)(void *), void *arg);

#endif
