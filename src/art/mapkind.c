/* Maps names -> kinds. Order matters: first match wins, as in dumpsys meminfo's classifier
 * (docs/design/android-art.md 5.3), with the JIT caches and extracted dex picked out first. */
#include <stdio.h>
#include <string.h>

#include "perch/art/mapkind.h"
#include "perch/base/xalloc.h"

#define MAPKIND_MAX_NAME 4096

static const char *const names[MAPKIND_NR] = {
    [MAPKIND_ANON] = "anon",
    [MAPKIND_HEAP] = "heap",
    [MAPKIND_STACK] = "stack",
    [MAPKIND_KERNEL] = "kernel",
    [MAPKIND_JIT_CACHE] = "jit-cache",
    [MAPKIND_DALVIK_HEAP] = "dalvik-heap",
    [MAPKIND_DEX_EXTRACTED] = "dex-extracted",
    [MAPKIND_DALVIK_OTHER] = "dalvik-other",
    [MAPKIND_ELF] = "so",
    [MAPKIND_APK_LIB] = "apk-lib",
    [MAPKIND_APK] = "apk",
    [MAPKIND_JAR] = "jar",
    [MAPKIND_OAT] = "oat",
    [MAPKIND_ODEX] = "odex",
    [MAPKIND_VDEX] = "vdex",
    [MAPKIND_ART] = "art",
    [MAPKIND_DEX] = "dex",
    [MAPKIND_DMABUF] = "dmabuf",
    [MAPKIND_GPU] = "gpu",
    [MAPKIND_ASHMEM] = "ashmem",
    [MAPKIND_DEVICE] = "device",
    [MAPKIND_MEMFD] = "memfd",
    [MAPKIND_ANON_NAMED] = "anon-named",
    [MAPKIND_FILE] = "file",
    [MAPKIND_OTHER] = "other",
};

const char *mapkind_name(enum mapkind k)
{
	return (unsigned int)k < MAPKIND_NR ? names[k] : "?";
}

int mapkind_is_aot(enum mapkind k)
{
	return k == MAPKIND_OAT || k == MAPKIND_ODEX;
}

static int starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

static int ends(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

static int has(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* [anon:dalvik-X] or /dev/ashmem/dalvik-X (P): the X part. */
static enum mapkind dalvik(const char *s, size_t n)
{
	static const char *const jit[] = {"jit-code-cache", "data-code-cache"};
	static const char *const heap[] = {"main space", "alloc space", "zygote space",
					   "non moving space", "large object space"};

	for (size_t i = 0; i < ARRAY_SIZE(jit); i++)
		if (has(s, n, jit[i]))
			return MAPKIND_JIT_CACHE;
	if (has(s, n, " extracted in memory from "))
		return MAPKIND_DEX_EXTRACTED;
	for (size_t i = 0; i < ARRAY_SIZE(heap); i++)
		if (starts(s, n, heap[i]))
			return MAPKIND_DALVIK_HEAP;
	return MAPKIND_DALVIK_OTHER;
}

enum mapkind mapkind_classify(const char *name, int exec, uint64_t offset, unsigned int *flags)
{
	size_t n = strnlen(name, MAPKIND_MAX_NAME);
	unsigned int fl = 0;
	enum mapkind k;

	if (ends(name, n, " (deleted)")) {
		fl |= MAPKIND_DELETED;
		n -= strlen(" (deleted)");
	}
	if (flags)
		*flags = 0;
	if (!n)
		return MAPKIND_ANON;
	if (starts(name, n, "/memfd:jit-cache") || starts(name, n, "/memfd:jit-zygote-cache") ||
	    starts(name, n, "/memfd:/jit-cache") ||
	    starts(name, n, "/dev/ashmem/jit-zygote-cache")) {
		k = MAPKIND_JIT_CACHE;
	} else if (starts(name, n, "[anon:dalvik-")) {
		k = dalvik(name + 13, n - 13);
	} else if (starts(name, n, "/dev/ashmem/dalvik-")) {
		k = dalvik(name + 19, n - 19);
	} else if (starts(name, n, "[heap]") || starts(name, n, "[anon:libc_malloc]") ||
		   starts(name, n, "[anon:scudo:") || starts(name, n, "[anon:GWP-ASan") ||
		   starts(name, n, "/dev/ashmem/libc malloc")) {
		k = MAPKIND_HEAP;
	} else if (starts(name, n, "[stack") || starts(name, n, "[anon:stack_and_tls:") ||
		   starts(name, n, "[anon:thread signal stack")) {
		k = MAPKIND_STACK;
	} else if (starts(name, n, "[vdso]") || starts(name, n, "[vvar]") ||
		   starts(name, n, "[vsyscall]")) {
		k = MAPKIND_KERNEL;
	} else if (ends(name, n, ".so") || (name[0] == '/' && has(name, n, ".so."))) {
		k = MAPKIND_ELF;
	} else if (ends(name, n, ".apk")) {
		k = exec && offset ? MAPKIND_APK_LIB : MAPKIND_APK;
	} else if (ends(name, n, ".jar")) {
		k = MAPKIND_JAR;
	} else if (ends(name, n, ".odex") ||
		   (ends(name, n, ".dex") && has(name, n, "/dalvik-cache/"))) {
		/* dalvik-cache's "...@classes.dex" files are oat (ELF) files too */
		k = MAPKIND_ODEX;
	} else if (ends(name, n, ".oat")) {
		k = MAPKIND_OAT;
	} else if (ends(name, n, ".vdex")) {
		k = MAPKIND_VDEX;
	} else if (ends(name, n, ".art") || ends(name, n, ".art]")) {
		k = MAPKIND_ART;
	} else if (ends(name, n, ".dex")) {
		k = MAPKIND_DEX;
	} else if (has(name, n, "kgsl-3d0") || starts(name, n, "/dev/kgsl") ||
		   starts(name, n, "/dev/mali") || starts(name, n, "/dev/dri/")) {
		k = MAPKIND_GPU;
	} else if (starts(name, n, "/dmabuf") || starts(name, n, "anon_inode:dmabuf")) {
		k = MAPKIND_DMABUF;
	} else if (starts(name, n, "/dev/ashmem/")) {
		k = MAPKIND_ASHMEM;
	} else if (starts(name, n, "/dev/")) {
		k = MAPKIND_DEVICE;
	} else if (starts(name, n, "/memfd:")) {
		k = MAPKIND_MEMFD;
	} else if (name[0] == '[') {
		k = MAPKIND_ANON_NAMED;
	} else if (name[0] == '/') {
		k = MAPKIND_FILE;
	} else {
		k = MAPKIND_OTHER;
	}
	if ((k == MAPKIND_OAT || k == MAPKIND_ODEX || k == MAPKIND_VDEX || k == MAPKIND_ART) &&
	    (has(name, n, "@boot") || has(name, n, "/boot") || has(name, n, "/apex")))
		fl |= MAPKIND_BOOT;
	if (flags)
		*flags = fl;
	return k;
}
