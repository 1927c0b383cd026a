/* A `dumpsys meminfo`-style breakdown of a process's memory: every smaps mapping is put in one
 * heap (plus a sub-heap for Dalvik, Dalvik Other, .dex and .art), then summed into the table
 * and the "App Summary". Pure computation on struct proc_smaps; writers for text and JSON.
 *
 * Rules (first match wins; the name is the mapping's path with " (deleted)" stripped):
 *
 * MEMINFO_RULES_ANDROID: Android 15 libmeminfo ExtractAndroidHeapStatsFromFile, as written in
 *   docs/design/android-art.md 5.3:
 *    1-4  "[heap]", "[anon:libc_malloc]", "[anon:scudo:", "[anon:GWP-ASan"  -> Native Heap
 *    5-6  "[stack", "[anon:stack_and_tls:"                                  -> Stack
 *    7-10 ends ".so" / ".jar" / ".apk" / ".ttf"                 -> .so/.jar/.apk/.ttf mmap
 *    11   ends ".odex", or longer than 4 and contains ".dex"    -> .dex mmap (.App dex)
 *    12   ends ".vdex"      -> .dex mmap (.Boot vdex if it contains "@boot", "/boot" or
 *                              "/apex", else .App vdex)
 *    13   ends ".oat"       -> .oat mmap
 *    14   ends ".art"/".art]" -> .art mmap (.Boot art / .App art, as for .vdex)
 *    15   contains "kgsl-3d0" -> Gfx dev
 *    16   starts "/dev/"    -> Other dev; "/dev/ashmem/CursorWindow" -> Cursor;
 *                              "/dev/ashmem/jit-zygote-cache" -> Dalvik Other (.ZygoteJIT);
 *                              other "/dev/ashmem" -> Ashmem
 *    17   starts "/memfd:"  -> memfd (perch's label: the dumpsys one is unconfirmed);
 *                              "/memfd:jit-cache" -> Dalvik Other (.AppJIT);
 *                              "/memfd:jit-zygote-cache" -> Dalvik Other (.ZygoteJIT);
 *                              "/memfd:CursorWindow" -> Cursor
 *    18   starts "[anon:"   -> Unknown; "[anon:dalvik-" -> Dalvik Other (.GC), except
 *                              LinearAlloc (.LinearAlloc), alloc space / main space (Dalvik
 *                              Heap .Heap), large object space / free list large object space
 *                              (Dalvik .LOS), non moving space (Dalvik .NonMoving), zygote
 *                              space (Dalvik .Zygote), indirect ref (.IndirectRef),
 *                              jit-code-cache / data-code-cache (.AppJIT), CompilerMetadata
 *                              (.CompilerMetadata)
 *    19   any other non-empty name -> Other mmap
 *    20   empty name, starts where the previous mapping ended and that one was .so -> .so
 *    21   otherwise -> Unknown
 *   "Swappable PSS" of .so/.jar/.apk/.ttf/.dex/.oat/.art mappings with Pss > 0:
 *   private_clean + shared_clean * (pss - uss) / (shared_clean + shared_dirty).
 *
 * MEMINFO_RULES_ANDROID_10: as ANDROID without rule 17: "/memfd:" names fall to Other mmap.
 *   That is what the Android 10 era dumpsys of fixtures/android-meminfo/launcher does (its
 *   "/memfd:/jit-cache" is in Other mmap); older rule sets (P-era "/dev/ashmem/dalvik-") are
 *   not implemented.
 *
 * MEMINFO_RULES_LINUX: the same table and summary for a plain Linux (glibc) process:
 *    L1  "[heap]", and rules 2-4 above                           -> Native Heap
 *    L2  "[stack" (main thread), "[anon:stack_and_tls:"           -> Stack
 *    L3  contains "kgsl-3d0", starts "/dev/dri/", "/dev/kgsl", "/dev/mali", "/dev/nvidia",
 *        "/dmabuf:" or "anon_inode:dmabuf"                         -> Gfx dev
 *    L4  ends ".so" or has ".so." followed by only digits and dots (libc.so.6) -> .so mmap
 *    L5  rules 8-14 (.jar, .apk, .ttf, .dex, .vdex, .oat, .art), as for Android
 *    L6  starts "/dev/shm/", "/dev/zero", "/SYSV", "/memfd:" (shared memory) -> Ashmem
 *    L7  other "/dev/"                                             -> Other dev
 *    L8  "[anon:" (named anonymous memory, Linux 5.17+)            -> Unknown
 *    L9  other non-empty name: a file with at least one executable mapping in this process
 *        (the main program, a plugin without ".so") -> Exe mmap, every segment of it;
 *        anything else ("[vdso]", "[vvar]", data files, locale-archive) -> Other mmap
 *    L10 empty name, starts where the previous mapping ended, and that one is a writable
 *        .so or Exe mmap segment -> the same heap (the library's .bss)
 *    L11 empty name, read-write, directly above an empty-named inaccessible ("---p") mapping
 *        of at most 64 KiB -> Stack (glibc's allocate_stack() puts a thread stack's guard
 *        pages at its low end; a malloc arena's reserve is above its used part and large)
 *    L12 empty name, private, not executable -> Native Heap (glibc malloc: main-arena
 *        mmap()ed chunks, per-thread arenas and their reserved tails)
 *    L13 otherwise (anonymous executable: JIT code; anonymous shared) -> Unknown
 *
 * App Summary (Android's Debug.java, the same for every rule set; "private" = private clean +
 * private dirty): Java Heap = Dalvik private dirty + .art private; Native Heap = Native
 * private dirty; Code = private of .so, .jar, .apk, .ttf, .dex, .oat, Exe mmap, .ZygoteJIT,
 * .AppJIT; Stack = Stack private dirty; Graphics = private of Gfx dev, EGL mtrack, GL mtrack;
 * Private Other = total private - the above; System = TOTAL PSS - total private.
 * TOTAL PSS is the sum of Pss plus the sum of SwapPss (when any mapping has a SwapPss line).
 * The mtrack rows come from Android's memtrack HAL, never from smaps: they stay 0 unless the
 * caller fills them in and calls meminfo_summarize().
 */
#ifndef PERCH_MEMINFO_H
#define PERCH_MEMINFO_H

#include <stdint.h>
#include <stdio.h>

#include "perch/proc/proc-smaps.h"

enum meminfo_rules {
	MEMINFO_RULES_AUTO = 0,	  /* meminfo_detect_rules() */
	MEMINFO_RULES_ANDROID,	  /* Android 15 dumpsys */
	MEMINFO_RULES_ANDROID_10, /* Android 10 era dumpsys: no /memfd: rule */
	MEMINFO_RULES_LINUX,	  /* a glibc process on Linux */
};

/* Heaps in Android's order (androidprocheaps.h; MEMFD and EXE are placed after the mtrack
 * rows), then the sub-heaps in Debug.java's order. */
enum meminfo_heap {
	MEMINFO_HEAP_UNKNOWN = 0,
	MEMINFO_HEAP_DALVIK,
	MEMINFO_HEAP_NATIVE,
	MEMINFO_HEAP_DALVIK_OTHER,
	MEMINFO_HEAP_STACK,
	MEMINFO_HEAP_CURSOR,
	MEMINFO_HEAP_ASHMEM,
	MEMINFO_HEAP_GFX_DEV,
	MEMINFO_HEAP_OTHER_DEV,
	MEMINFO_HEAP_SO,
	MEMINFO_HEAP_JAR,
	MEMINFO_HEAP_APK,
	MEMINFO_HEAP_TTF,
	MEMINFO_HEAP_DEX,
	MEMINFO_HEAP_OAT,
	MEMINFO_HEAP_ART,
	MEMINFO_HEAP_OTHER_MMAP,
	MEMINFO_HEAP_EGL_MTRACK,
	MEMINFO_HEAP_GL_MTRACK,
	MEMINFO_HEAP_OTHER_MTRACK,
	MEMINFO_HEAP_MEMFD,
	MEMINFO_HEAP_EXE, /* Linux rules only */
	/* sub-heaps: a mapping counts in its heap and in at most one of these */
	MEMINFO_HEAP_DALVIK_NORMAL, /* .Heap */
	MEMINFO_HEAP_DALVIK_LARGE,  /* .LOS */
	MEMINFO_HEAP_DALVIK_ZYGOTE,
	MEMINFO_HEAP_DALVIK_NON_MOVING,
	MEMINFO_HEAP_DALVIK_OTHER_LINEARALLOC,
	MEMINFO_HEAP_DALVIK_OTHER_ACCOUNTING, /* .GC */
	MEMINFO_HEAP_DALVIK_OTHER_ZYGOTE_CODE_CACHE,
	MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE,
	MEMINFO_HEAP_DALVIK_OTHER_COMPILER_METADATA,
	MEMINFO_HEAP_DALVIK_OTHER_INDIRECT_REF,
	MEMINFO_HEAP_DEX_BOOT_VDEX,
	MEMINFO_HEAP_DEX_APP_DEX,
	MEMINFO_HEAP_DEX_APP_VDEX,
	MEMINFO_HEAP_ART_APP,
	MEMINFO_HEAP_ART_BOOT,
	MEMINFO_NR_HEAPS,
	MEMINFO_FIRST_SUBHEAP = MEMINFO_HEAP_DALVIK_NORMAL,
};

/* One row of the table, kB. */
struct meminfo_stats {
	uint64_t pss, swappable_pss, rss;
	uint64_t private_dirty, shared_dirty, private_clean, shared_clean;
	uint64_t swap, swap_pss;
};

/* One App Summary line, kB (rss is 0 for Private Other and System, as in dumpsys). */
struct meminfo_line {
	uint64_t pss, rss;
};

struct meminfo {
	enum meminfo_rules rules; /* the rules applied; never AUTO */
	struct meminfo_stats heap[MEMINFO_NR_HEAPS];
	struct meminfo_stats total; /* sum of the heaps (not sub-heaps); pss includes swap_pss
				     * when has_swap_pss, like dumpsys's TOTAL */
	int has_swap_pss;	    /* some mapping had SwapPss > 0: dumpsys's "SwapPss" column */
	size_t nr_maps;
	/* App Summary; unknown is the Rss-only "Unknown" line (total rss - the five above) */
	struct meminfo_line java_heap, native_heap, code, stack, graphics, private_other, system,
	    unknown;
};

/* Which mapping went where; see meminfo_classify(). */
struct meminfo_class {
	uint8_t heap; /* enum meminfo_heap below MEMINFO_FIRST_SUBHEAP */
	uint8_t sub;  /* a sub-heap, or MEMINFO_HEAP_UNKNOWN for none */
};

/* ANDROID if some mapping has an Android-only name ("[anon:dalvik-", "/system/", "/apex/",
 * "/dev/ashmem", "[anon:libc_malloc]", "[anon:scudo:", "/vendor/"), else LINUX. */
enum meminfo_rules meminfo_detect_rules(const struct proc_smaps *s);
/* Classify every mapping of @s into @out[0 .. s->nr). AUTO is resolved; returns the rules
 * applied. */
enum meminfo_rules meminfo_classify(const struct proc_smaps *s, enum meminfo_rules rules,
				    struct meminfo_class *out);
/* Classify @s and fill @mi (heaps, totals, summary). */
void meminfo_compute(const struct proc_smaps *s, enum meminfo_rules rules, struct meminfo *mi);
/* Recompute the totals and the App Summary from mi->heap[] (after the caller has filled in
 * the mtrack rows, say). */
void meminfo_summarize(struct meminfo *mi);

/* "Native Heap", ".so mmap", ".Boot art", ... (dumpsys's labels). */
const char *meminfo_heap_label(enum meminfo_heap h);
/* "native_heap", "so_mmap", "boot_art", ...: the JSON keys. */
const char *meminfo_heap_key(enum meminfo_heap h);
/* "android", "android-10", "linux" ("auto" for AUTO). */
const char *meminfo_rules_name(enum meminfo_rules r);

/* dumpsys-like table: rows with anything non-zero, Unknown, TOTAL, Dalvik Details (Android
 * rules only), App Summary. 0 or -EIO. */
int meminfo_write_text(const struct meminfo *mi, FILE *f);
/* One JSON object, keys in a fixed order, every heap present (zeros included). 0 or -EIO. */
int meminfo_write_json(const struct meminfo *mi, FILE *f);

#endif
