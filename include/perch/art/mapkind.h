/* What a /proc/PID/maps name is, Android's names included (docs/design/android-art.md 5.1, 5.3):
 * JIT caches, ART's named anonymous memory, libraries run from an APK, boot and app
 * oat/odex/vdex/art files, extracted dex, GPU and dma-buf memory. Decides from the name (and
 * protection and offset for APK libraries) only; nothing is opened. */
#ifndef PERCH_MAPKIND_H
#define PERCH_MAPKIND_H

#include <stdint.h>

enum mapkind {
	MAPKIND_ANON = 0,    /* no name */
	MAPKIND_HEAP,	     /* [heap], [anon:libc_malloc], scudo, GWP-ASan */
	MAPKIND_STACK,	     /* [stack], [anon:stack_and_tls:TID], signal stacks */
	MAPKIND_KERNEL,	     /* [vdso], [vvar], [vsyscall] */
	MAPKIND_JIT_CACHE,   /* ART JIT code cache: memfd jit-cache, [anon:dalvik-jit-code-cache] */
	MAPKIND_DALVIK_HEAP, /* Java heap spaces */
	MAPKIND_DEX_EXTRACTED, /* [anon:dalvik-classes.dex extracted in memory from APK] */
	MAPKIND_DALVIK_OTHER,  /* other ART memory ([anon:dalvik-LinearAlloc], ...) */
	MAPKIND_ELF,	       /* a shared object (.so) */
	MAPKIND_APK_LIB,       /* an executable mapping of an .apk at an offset: a stored library */
	MAPKIND_APK,	       /* other mappings of an .apk */
	MAPKIND_JAR,
	MAPKIND_OAT,  /* AOT-compiled Java code (ELF) */
	MAPKIND_ODEX, /* the same for an app */
	MAPKIND_VDEX, /* dex container (not ELF) */
	MAPKIND_ART,  /* ART image (not ELF, no code) */
	MAPKIND_DEX,
	MAPKIND_DMABUF,
	MAPKIND_GPU,	    /* kgsl, mali, dri */
	MAPKIND_ASHMEM,	    /* other /dev/ashmem/ */
	MAPKIND_DEVICE,	    /* other /dev/: never read or unwound into */
	MAPKIND_MEMFD,	    /* other /memfd: (not a file on disk) */
	MAPKIND_ANON_NAMED, /* other [anon:...] and [...] */
	MAPKIND_FILE,	    /* any other path */
	MAPKIND_OTHER,	    /* anything else (anon_inode:...) */
	MAPKIND_NR
};

#define MAPKIND_DELETED 0x1 /* the name ended in " (deleted)": do not open it by path */
#define MAPKIND_BOOT	0x2 /* oat/vdex/art of the boot image (@boot, /boot, /apex) */

/* Classify the maps name @name of a mapping with protection @exec (non-zero: executable) at
 * file offset @offset; MAPKIND_* flags into *@flags (may be NULL). */
enum mapkind mapkind_classify(const char *name, int exec, uint64_t offset, unsigned int *flags);
/* Short stable name of @k ("jit-cache", "oat", ...). */
const char *mapkind_name(enum mapkind k);
/* Code in it is ahead-of-time compiled Java (frame kind PROFILE_FRAME_AOT). */
int mapkind_is_aot(enum mapkind k);

#endif
