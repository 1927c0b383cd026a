/* Android Runtime awareness, read from outside the process (docs/design/android-art.md,
 * sections 1-3): the JIT and dex debugger interfaces (`__jit_debug_descriptor`,
 * `__dex_debug_descriptor`, also the plain GDB JIT interface of other runtimes), the in-memory
 * ELF symfiles the JIT registers, and the dex files behind interpreted frames. Every byte comes
 * through a struct perch_mem (the target's memory, or a buffer in tests and fuzzing), is read
 * only, and may be torn or gone: a failed or inconsistent read is a race to retry later, never
 * a crash and never a wrong name. Dex parsing itself is dex.h; unwinding is unwind.c. */
#ifndef PERCH_ART_H
#define PERCH_ART_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perch/arch.h"

struct cfi_table;
struct dex_method;
struct modules;
struct modules_map;

/* Limits for hostile lists and symfiles. */
#define ART_MAX_ENTRIES	     100000	   /* entries walked per snapshot of one list */
#define ART_MAX_RACE_RETRIES 16		   /* snapshot restarts after a race (libunwindstack's) */
#define ART_MAX_HEAD_PASSES  16		   /* passes from the head until no new entry appears */
#define ART_MAX_SYMFILE	     (4u << 20)	   /* symfile bytes copied (packed groups are ~100 KiB) */
#define ART_MAX_DEX	     (64u << 20)   /* dex bytes copied out of the target */
#define ART_RETIRED_NS	     2000000000ULL /* entries gone from the list still name older samples */

/* The interface generation, from the descriptor's magic (never from an API level). */
enum art_kind {
	ART_KIND_GDB,	   /* no magic: the GDB JIT interface (O, other runtimes) */
	ART_KIND_ANDROID1, /* "Android1" (P, Q): timestamps and a global seqlock */
	ART_KIND_ANDROID2, /* "Android2" (R+): plus a seqlock per entry */
};

/* Offsets of one target ABI (spec 1.2/1.3); computed by art_layout_init(). */
struct art_layout {
	unsigned int machine; /* EM_* of the runtime library */
	int is_64;
	enum art_kind kind;
	size_t ptr;	  /* pointer size */
	size_t desc_size; /* bytes of the descriptor read (24/16 for GDB) */
	size_t d_first, d_magic, d_seqlock, d_timestamp;
	size_t entry_size; /* bytes of one entry read */
	size_t e_next, e_prev, e_addr, e_size, e_timestamp, e_seqlock;
};

/* The descriptor as read, e.g. [DEB] libart.so's initial bytes:
 *   version=1 action=0 relevant=0 first=0 magic="Android2" flags=0 sizeof_descriptor=56
 *   sizeof_entry=48 seqlock=0 timestamp=1 */
struct art_descriptor {
	uint32_t version, action;
	uint64_t relevant, first;
	char magic[8];
	uint32_t flags, sizeof_descriptor, sizeof_entry, seqlock;
	uint64_t timestamp;
};

/* Fill @l for a runtime of ELF class @is_64 and machine @machine with interface @kind. */
void art_layout_init(struct art_layout *l, unsigned int machine, int is_64, enum art_kind kind);

/* Read the descriptor at @addr and detect its layout: 0, -EFAULT (unreadable), -EPROTO (version
 * is not 1), -EINVAL (magic "Android1/2" with sizes that do not match @is_64/@machine). */
int art_descriptor_read(const struct perch_mem *mem, uint64_t addr, unsigned int machine, int is_64,
			struct art_descriptor *d, struct art_layout *l);

/* One entry of a list, as read (spec 1.3). */
struct art_entry {
	uint64_t addr; /* where the entry lives in the target */
	uint64_t next, prev;
	uint64_t symfile_addr, symfile_size;
	uint64_t timestamp; /* 0 for GDB layouts */
	uint32_t seqlock;   /* 0 for layouts without one */
};

/* A consistent snapshot of one list (protocol A of spec 1.6 for Android2; for Android1 and GDB
 * the global seqlock, when there is one, must be even and unchanged around the walk). Entries
 * in list order, empty ones (symfile 0: markers) left out. 0, -EAGAIN when every retry met a
 * race (try again later: never wait for the writer), -EFAULT, -ELOOP (a cycle), -E2BIG (more
 * than ART_MAX_ENTRIES). *@out is malloc'ed (free it) also when 0 entries. */
int art_list_snapshot(const struct perch_mem *mem, uint64_t desc_addr, const struct art_layout *l,
		      struct art_entry **out, size_t *nr);
/* Re-read the seqlock of @e: 0 when the entry is still the one snapshotted (always 0 without
 * entry seqlocks), -ESTALE when it changed, -EFAULT. */
int art_entry_check(const struct perch_mem *mem, const struct art_layout *l,
		    const struct art_entry *e);

/* ---- JIT symfiles (spec 1.8): single, packed and xz-compressed in-memory ELF files ---- */

struct art_symfile;

/* One named code range of a symfile (absolute run-time addresses). */
struct art_jit_sym {
	uint64_t start, end;
	const char *name; /* borrowed from the symfile */
};

/* Parse a copy of a symfile (@data is copied). NULL with errno ENOEXEC (not an ELF of the
 * expected @machine and class), EBADMSG (corrupt .gnu_debugdata), ENOENT (no function symbol:
 * e.g. a "types" file). */
struct art_symfile *art_symfile_new(const uint8_t *data, size_t size, unsigned int machine,
				    int is_64);
void art_symfile_free(struct art_symfile *s);
size_t art_symfile_count(const struct art_symfile *s);
const struct art_jit_sym *art_symfile_get(const struct art_symfile *s, size_t i);
/* The symbol holding @pc, or NULL. */
const struct art_jit_sym *art_symfile_find(const struct art_symfile *s, uint64_t pc);
/* The symfile's CFI (.debug_frame, .eh_frame, inner .gnu_debugdata), addresses absolute (bias
 * 0); NULL when it has none. Borrowed. */
const struct cfi_table *art_symfile_cfi(const struct art_symfile *s);
/* Was @s parsed from exactly these bytes? */
int art_symfile_equal(const struct art_symfile *s, const uint8_t *data, size_t size);

/* ---- the JIT list ---- */

struct art_jit;

struct art_jit_stats {
	uint64_t snapshots; /* successful list snapshots */
	uint64_t races;	    /* snapshots abandoned after ART_MAX_RACE_RETRIES */
	uint64_t bad;	    /* entries skipped: unreadable or unparseable symfile */
	size_t entries;	    /* live entries with a symfile */
	size_t retired;	    /* entries gone from the list still kept for older samples */
};

/* A reader of the JIT list whose descriptor is at @desc_addr; @mem is copied (its context is
 * borrowed). Nothing is read until art_jit_update(). */
struct art_jit *art_jit_new(const struct perch_mem *mem, uint64_t desc_addr, unsigned int machine,
			    int is_64);
void art_jit_free(struct art_jit *j);
/* Read the descriptor and, when its seqlock or timestamp changed since the last snapshot (or
 * @force), snapshot the list and load the new symfiles. @now_ns (CLOCK_MONOTONIC, taken before
 * the call) dates the look: every entry seen (or known unchanged) is valid for samples up to
 * then; entries that left the list are kept ART_RETIRED_NS for samples taken before.
 * 1 when the list was re-read, 0 when unchanged, -errno (the old state is kept). */
int art_jit_update(struct art_jit *j, uint64_t now_ns, int force);
/* The JIT method holding @pc at time @time_ns (0: the last snapshot): among the entries
 * registered before @time_ns and seen in the list at or after it, the newest whose symbol
 * holds @pc. *@cfi (may be NULL) gets the CFI of its symfile (may be NULL). 0, or -ENOENT (also
 * for a sample newer than the last update: never a name that may be stale). The name is
 * dex_java_name() of the symbol's (the form of every Java frame), valid until the next find;
 * the rest is borrowed until the next update. */
int art_jit_find(struct art_jit *j, uint64_t pc, uint64_t time_ns, struct art_jit_sym *out,
		 const struct cfi_table **cfi);
const struct art_jit_stats *art_jit_stats(const struct art_jit *j);
/* The descriptor kind found by the last update (ART_KIND_GDB before any). */
enum art_kind art_jit_kind(const struct art_jit *j);

/* ---- the dex list (spec 2.1/2.2): registered dex files, opened with dex.h on demand ---- */

struct art_dex;

struct art_dex *art_dex_new(const struct perch_mem *mem, uint64_t desc_addr, unsigned int machine,
			    int is_64);
void art_dex_free(struct art_dex *d);
/* As art_jit_update(). Dex files already opened are kept, keyed by (address, size). */
int art_dex_update(struct art_dex *d, uint64_t now_ns, int force);
/* Method and line of the dex pc @dex_pc (an absolute address inside a registered dex file).
 * 0, or -ENOENT. */
int art_dex_lookup(struct art_dex *d, uint64_t dex_pc, struct dex_method *out);
size_t art_dex_count(const struct art_dex *d); /* registered dex files in the last snapshot */

/* ---- one traced process ---- */

struct art_proc;

/* Memory of @pid through process_vm_readv, falling back to /proc/PID/mem (read only). */
struct art_proc *art_proc_new(pid_t pid);
void art_proc_free(struct art_proc *a);
/* Find the descriptors in the modules of @ms: `__jit_debug_descriptor` and
 * `__dex_debug_descriptor` of ART's runtime library (art_module_flags(): by content, not by
 * name), else a GDB `__jit_debug_descriptor` in any module. Cheap when @ms did not change since the
 * last call. 1 when a JIT or dex list is known, 0 when none. */
int art_proc_locate(struct art_proc *a, struct modules *ms);
/* Before naming a sample taken at @sample_ns: unless the lists were looked at after that time
 * already (one look per batch of samples), read the descriptors and re-read the lists whose
 * descriptor changed (every list every second regardless: zygote entries change no
 * descriptor). */
void art_proc_update(struct art_proc *a, uint64_t sample_ns);
/* JIT method at @pc for a sample at @time_ns; retries with a fresh snapshot (once per update
 * period) when nothing holds @pc. 0 or -ENOENT. */
int art_proc_jit_find(struct art_proc *a, uint64_t pc, uint64_t time_ns, struct art_jit_sym *out,
		      const struct cfi_table **cfi);
/* Method and line of @dex_pc, cached per dex pc (dropped when the dex list changes). */
int art_proc_dex_lookup(struct art_proc *a, uint64_t dex_pc, struct dex_method *out);
/* The dex pc to show for an interpreter frame whose CFI marker gave @dex_pc, its frame's stack
 * pointer @sp in the copied stack @stack (reads outside the copy fail): for the switch
 * interpreter (whose marker is the method's first instruction) the current instruction from
 * its ShadowFrame (art_switch_dex_pc()), else @dex_pc itself. ART keeps the
 * SwitchImplContext, the accessor and the ShadowFrame of an interpreted call on the native
 * stack (allocas and locals of interpreter.cc, interpreter_common.cc,
 * quick_trampoline_entrypoints.cc); a heap ShadowFrame (deoptimization) or a stack deeper than
 * the copy gives no answer, and the search costs no system call. *@unknown is set to 1 when
 * the marker is a method's first instruction and the copy ended before the search could tell
 * (the frame's line is then unknown: never shown as the method's first line), else 0. */
uint64_t art_proc_interp_dex_pc(struct art_proc *a, const struct perch_mem *stack, uint64_t sp,
				uint64_t dex_pc, int *unknown);
/* ART's threads now (art-thread.h: states, monitors), read through the process's memory with
 * the runtime found by art_proc_locate(). 0, -ENOENT (no ART runtime, or not started yet),
 * -EPROTO (a runtime whose layout perch does not know: said once as a warning), -EAGAIN. */
struct art_threads;
int art_proc_threads(struct art_proc *a, struct art_threads *out);
/* The wait-reason frame of Java thread @tid now ("[java blocked on Foo held by tid 7]",
 * art_thread_wait_frame()) into @buf: 0, or -ENOENT when it is not an ART thread in a Java
 * wait (or the runtime's threads cannot be read): keep the kernel's reason then. */
int art_proc_java_wait(struct art_proc *a, pid_t tid, char *buf, size_t size);
/* The native method ("java.lang.Object.wait") thread @tid is in, for its snapshot taken at
 * @time_ns whose copied stack @stack reads (art_thread_native_frame(); the thread's words are
 * read once per snapshot for this and art_proc_callers()): 0, or -ENOENT. */
int art_proc_native_method(struct art_proc *a, pid_t tid, uint64_t time_ns,
			   const struct perch_mem *stack, char *name, size_t size);
/* The top ShadowFrames of thread @tid's managed-stack fragments, for its snapshot taken at
 * @time_ns whose copied stack @stack reads (art_thread_callers()): how many in @out. The thread
 * must have been seen (art_proc_native_method() reads the list). */
struct art_shadow_frame;
int art_proc_callers(struct art_proc *a, pid_t tid, uint64_t time_ns, const struct perch_mem *stack,
		     struct art_shadow_frame *out, size_t max);
/* The dex pc (an address in its dex file) of ShadowFrame @sf (art_proc_callers()), its
 * method's first instruction cached per method; 0 when unknown. */
uint64_t art_proc_shadow_dex_pc(struct art_proc *a, const struct art_shadow_frame *sf);
/* The real return address for the return-address slot @slot of thread @tid when ART's method
 * tracing replaced it with its exit routine (art_quick_instrumentation_exit) (looked up in the
 * thread's instrumentation stack, a map keyed by the slot, in the live process), else @ip. */
uint64_t art_proc_return(struct art_proc *a, pid_t tid, uint64_t slot, uint64_t ip);
/* Is any list known (so that JIT and dex lookups can succeed)? */
int art_proc_active(const struct art_proc *a);
/* Where the descriptors are (0 when not found), for tests and `perch dump`. */
uint64_t art_proc_jit_descriptor(const struct art_proc *a);
uint64_t art_proc_dex_descriptor(const struct art_proc *a);

/* What a module is to ART, from its content whatever the file is called (libart.so,
 * libart.so.0 in Debian, an APEX path, libartd.so): ART_MOD_RUNTIME when it exports
 * `__dex_debug_descriptor` or its CFI carries the DEX PC marker (spec 3.1: DW_OP_const4u "DEX1",
 * DW_OP_drop), ART_MOD_JIT when it exports `__jit_debug_descriptor` (ART, or any runtime with
 * the GDB JIT interface). Looked at once per module (kept in module->art_flags). */
#define ART_MOD_CHECKED 1u
#define ART_MOD_RUNTIME 2u
#define ART_MOD_JIT	4u
unsigned int art_module_flags(struct modules *ms, const struct modules_map *mm);
/* The same test on an ELF file image (for tests). */
unsigned int art_elf_flags(const uint8_t *image, size_t size);

/* Which frames of a stack (leaf first, @n frames of kinds @kind) are ART's own between Java
 * frames, as simpleperf hides them (report_utils.cpp MarkArtFrame): every run of consecutive
 * ART_FRAME_RUNTIME frames next to an ART_FRAME_JAVA frame, on either side, gets @hide[i] = 1
 * (others 0). Returns how many. */
enum { ART_FRAME_OTHER, ART_FRAME_JAVA, ART_FRAME_RUNTIME };
size_t art_hide_runtime_frames(const uint8_t *kind, size_t n, uint8_t *hide);

/* The switch interpreter's current dex pc (src/art/art-interp.c has the layouts and their ART
 * sources): @insns is the value of the DEX PC marker of an ExecuteSwitchImplAsm frame (the
 * method's first instruction), @sp that frame's stack pointer; the SwitchImplContext is
 * searched for on the stack above it, through @mem (pointers of @is_64 bits). 0 with *@dex_pc,
 * -ENOENT when nothing matches every check, -ERANGE when @mem ended before the search did
 * (the stack copy is too short to tell), -EINVAL. */
int art_switch_dex_pc(const struct perch_mem *mem, int is_64, uint64_t sp, uint64_t insns,
		      uint64_t *dex_pc);

/* Find the data symbol @name in the ELF image @image (.dynsym first, then .symtab) and turn its
 * vaddr into a file offset through the section holding it. 0 with *@vaddr, *@size and
 * *@file_off set, -ENOENT, -ENOEXEC. */
int art_elf_data_symbol(const uint8_t *image, size_t size, const char *name, uint64_t *vaddr,
			uint64_t *sym_size, uint64_t *file_off);

#endif
