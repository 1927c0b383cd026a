/* fakeart: a stand-in for ART's debugger interfaces (docs/design/android-art.md sections 1-3), so
 * that perch's ART support is tested without a device. fakeart_libart.c is the "libart.so"
 * (descriptors, interpreter trampolines), fakeart_main.c the runtime (JIT cache, list writer, Java
 * calls). */
#ifndef FAKEART_H
#define FAKEART_H

#include <stdint.h>

/* The public descriptor (spec 1.2): 56 bytes on 64-bit, 48 on 32-bit (pointers are the target's;
 * fakeart_libart.c checks every offset against the spec's table). */
struct fakeart_descriptor {
	uint32_t version;
	uint32_t action_flag;
	uintptr_t relevant_entry;
	uintptr_t first_entry;
	uint8_t magic[8];
	uint32_t flags;
	uint32_t sizeof_descriptor;
	uint32_t sizeof_entry;
	uint32_t seqlock;
	uint64_t timestamp;
};

/* The public JIT/dex entry, "Android2" layout (spec 1.3). "Android1" ends before seqlock, the GDB
 * layout before timestamp. symfile_size is a u64 even on 32-bit: at offset 12 on i386, where a
 * u64 is only 4-byte aligned (the spec's most common porting bug). */
struct fakeart_entry {
	uintptr_t next;
	uintptr_t prev;
	uintptr_t symfile_addr;
	uint64_t symfile_size;
	uint64_t timestamp;
	uint32_t seqlock;
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
