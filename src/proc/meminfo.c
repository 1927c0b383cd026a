/* dumpsys-meminfo-style breakdown of parsed smaps: the classification rules documented in
 * meminfo.h, the sums, the App Summary, and the text and JSON writers. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/proc/meminfo.h"

static const struct heap_name {
	const char *label, *key;
} heap_names[MEMINFO_NR_HEAPS] = {
    [MEMINFO_HEAP_UNKNOWN] = {"Unknown", "unknown"},
    [MEMINFO_HEAP_DALVIK] = {"Dalvik Heap", "dalvik_heap"},
    [MEMINFO_HEAP_NATIVE] = {"Native Heap", "native_heap"},
    [MEMINFO_HEAP_DALVIK_OTHER] = {"Dalvik Other", "dalvik_other"},
    [MEMINFO_HEAP_STACK] = {"Stack", "stack"},
    [MEMINFO_HEAP_CURSOR] = {"Cursor", "cursor"},
    [MEMINFO_HEAP_ASHMEM] = {"Ashmem", "ashmem"},
    [MEMINFO_HEAP_GFX_DEV] = {"Gfx dev", "gfx_dev"},
    [MEMINFO_HEAP_OTHER_DEV] = {"Other dev", "other_dev"},
    [MEMINFO_HEAP_SO] = {".so mmap", "so_mmap"},
    [MEMINFO_HEAP_JAR] = {".jar mmap", "jar_mmap"},
    [MEMINFO_HEAP_APK] = {".apk mmap", "apk_mmap"},
    [MEMINFO_HEAP_TTF] = {".ttf mmap", "ttf_mmap"},
    [MEMINFO_HEAP_DEX] = {".dex mmap", "dex_mmap"},
    [MEMINFO_HEAP_OAT] = {".oat mmap", "oat_mmap"},
    [MEMINFO_HEAP_ART] = {".art mmap", "art_mmap"},
    [MEMINFO_HEAP_OTHER_MMAP] = {"Other mmap", "other_mmap"},
    [MEMINFO_HEAP_EGL_MTRACK] = {"EGL mtrack", "egl_mtrack"},
    [MEMINFO_HEAP_GL_MTRACK] = {"GL mtrack", "gl_mtrack"},
    [MEMINFO_HEAP_OTHER_MTRACK] = {"Other mtrack", "other_mtrack"},
    [MEMINFO_HEAP_MEMFD] = {"memfd", "memfd"},
    [MEMINFO_HEAP_EXE] = {"Exe mmap", "exe_mmap"},
    [MEMINFO_HEAP_DALVIK_NORMAL] = {".Heap", "heap"},
    [MEMINFO_HEAP_DALVIK_LARGE] = {".LOS", "los"},
    [MEMINFO_HEAP_DALVIK_ZYGOTE] = {".Zygote", "zygote"},
    [MEMINFO_HEAP_DALVIK_NON_MOVING] = {".NonMoving", "non_moving"},
    [MEMINFO_HEAP_DALVIK_OTHER_LINEARALLOC] = {".LinearAlloc", "linear_alloc"},
    [MEMINFO_HEAP_DALVIK_OTHER_ACCOUNTING] = {".GC", "gc"},
    [MEMINFO_HEAP_DALVIK_OTHER_ZYGOTE_CODE_CACHE] = {".ZygoteJIT", "zygote_jit"},
    [MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE] = {".AppJIT", "app_jit"},
    [MEMINFO_HEAP_DALVIK_OTHER_COMPILER_METADATA] = {".CompilerMetadata", "compiler_metadata"},
    [MEMINFO_HEAP_DALVIK_OTHER_INDIRECT_REF] = {".IndirectRef", "indirect_ref"},
    [MEMINFO_HEAP_DEX_BOOT_VDEX] = {".Boot vdex", "boot_vdex"},
    [MEMINFO_HEAP_DEX_APP_DEX] = {".App dex", "app_dex"},
    [MEMINFO_HEAP_DEX_APP_VDEX] = {".App vdex", "app_vdex"},
    [MEMINFO_HEAP_ART_APP] = {".App art", "app_art"},
    [MEMINFO_HEAP_ART_BOOT] = {".Boot art", "boot_art"},
};

/* Order of the main table's rows (Unknown and TOTAL follow). */
static const uint8_t row_order[] = {
    MEMINFO_HEAP_NATIVE,     MEMINFO_HEAP_DALVIK,     MEMINFO_HEAP_DALVIK_OTHER,
    MEMINFO_HEAP_STACK,	     MEMINFO_HEAP_CURSOR,     MEMINFO_HEAP_ASHMEM,
    MEMINFO_HEAP_GFX_DEV,    MEMINFO_HEAP_OTHER_DEV,  MEMINFO_HEAP_SO,
    MEMINFO_HEAP_EXE,	     MEMINFO_HEAP_JAR,	      MEMINFO_HEAP_APK,
    MEMINFO_HEAP_TTF,	     MEMINFO_HEAP_DEX,	      MEMINFO_HEAP_OAT,
    MEMINFO_HEAP_ART,	     MEMINFO_HEAP_OTHER_MMAP, MEMINFO_HEAP_MEMFD,
    MEMINFO_HEAP_EGL_MTRACK, MEMINFO_HEAP_GL_MTRACK,  MEMINFO_HEAP_OTHER_MTRACK,
};

const char *meminfo_heap_label(enum meminfo_heap h)
{
	return (unsigned int)h < MEMINFO_NR_HEAPS ? heap_names[h].label : "?";
}

const char *meminfo_heap_key(enum meminfo_heap h)
{
	return (unsigned int)h < MEMINFO_NR_HEAPS ? heap_names[h].key : "?";
}

const char *meminfo_rules_name(enum meminfo_rules r)
{
	switch (r) {
	case MEMINFO_RULES_ANDROID:
		return "android";
	case MEMINFO_RULES_ANDROID_10:
		return "android-10";
	case MEMINFO_RULES_LINUX:
		return "linux";
	default:
		return "auto";
	}
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int ends(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

static int boot_image(const char *name)
{
	return strstr(name, "@boot") || strstr(name, "/boot") || strstr(name, "/apex");
}

enum meminfo_rules meminfo_detect_rules(const struct proc_smaps *s)
{
	static const char *const android_prefixes[] = {
	    "[anon:dalvik-",	  "/system/",	  "/apex/",   "/dev/ashmem",
	    "[anon:libc_malloc]", "[anon:scudo:", "/vendor/",
	};
	size_t i, j;

	for (i = 0; i < s->nr; i++)
		for (j = 0; j < ARRAY_SIZE(android_prefixes); j++)
			if (starts(s->maps[i].map.path, android_prefixes[j]))
				return MEMINFO_RULES_ANDROID;
	return MEMINFO_RULES_LINUX;
}

/* Rules 1-6 (native and stack names): 1 when one matched. */
static int classify_native_stack(const char *name, struct meminfo_class *c)
{
	if (starts(name, "[heap]") || starts(name, "[anon:libc_malloc]") ||
	    starts(name, "[anon:scudo:") || starts(name, "[anon:GWP-ASan")) {
		c->heap = MEMINFO_HEAP_NATIVE;
		return 1;
	}
	if (starts(name, "[stack") || starts(name, "[anon:stack_and_tls:")) {
		c->heap = MEMINFO_HEAP_STACK;
		return 1;
	}
	return 0;
}

/* Rules 8-14 (file suffixes other than .so): 1 when one matched. */
static int classify_suffix(const char *name, size_t len, struct meminfo_class *c)
{
	if (ends(name, len, ".jar")) {
		c->heap = MEMINFO_HEAP_JAR;
	} else if (ends(name, len, ".apk")) {
		c->heap = MEMINFO_HEAP_APK;
	} else if (ends(name, len, ".ttf")) {
		c->heap = MEMINFO_HEAP_TTF;
	} else if (ends(name, len, ".odex") || (len > 4 && strstr(name, ".dex"))) {
		c->heap = MEMINFO_HEAP_DEX;
		c->sub = MEMINFO_HEAP_DEX_APP_DEX;
	} else if (ends(name, len, ".vdex")) {
		c->heap = MEMINFO_HEAP_DEX;
		c->sub = boot_image(name) ? MEMINFO_HEAP_DEX_BOOT_VDEX : MEMINFO_HEAP_DEX_APP_VDEX;
	} else if (ends(name, len, ".oat")) {
		c->heap = MEMINFO_HEAP_OAT;
	} else if (ends(name, len, ".art") || ends(name, len, ".art]")) {
		c->heap = MEMINFO_HEAP_ART;
		c->sub = boot_image(name) ? MEMINFO_HEAP_ART_BOOT : MEMINFO_HEAP_ART_APP;
	} else {
		return 0;
	}
	return 1;
}

static const struct {
	const char *prefix;
	uint8_t heap, sub;
} dalvik_names[] = {
    {"LinearAlloc", MEMINFO_HEAP_DALVIK_OTHER, MEMINFO_HEAP_DALVIK_OTHER_LINEARALLOC},
    {"alloc space", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_NORMAL},
    {"main space", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_NORMAL},
    {"large object space", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_LARGE},
    {"free list large object space", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_LARGE},
    {"non moving space", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_NON_MOVING},
    {"zygote space", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_ZYGOTE},
    {"indirect ref", MEMINFO_HEAP_DALVIK_OTHER, MEMINFO_HEAP_DALVIK_OTHER_INDIRECT_REF},
    {"jit-code-cache", MEMINFO_HEAP_DALVIK_OTHER, MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE},
    {"data-code-cache", MEMINFO_HEAP_DALVIK_OTHER, MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE},
    {"CompilerMetadata", MEMINFO_HEAP_DALVIK_OTHER, MEMINFO_HEAP_DALVIK_OTHER_COMPILER_METADATA},
};

/* Rule 18: a "[anon:" name. */
static void classify_anon(const char *name, struct meminfo_class *c)
{
	static const char dalvik[] = "[anon:dalvik-";
	size_t i;

	c->heap = MEMINFO_HEAP_UNKNOWN;
	if (!starts(name, dalvik))
		return;
	c->heap = MEMINFO_HEAP_DALVIK_OTHER;
	c->sub = MEMINFO_HEAP_DALVIK_OTHER_ACCOUNTING;
	for (i = 0; i < ARRAY_SIZE(dalvik_names); i++) {
		if (starts(name + sizeof(dalvik) - 1, dalvik_names[i].prefix)) {
			c->heap = dalvik_names[i].heap;
			c->sub = dalvik_names[i].sub;
			return;
		}
	}
}

/* The Android rules for mapping @m; @prev_end/@prev_heap describe the mapping before it. */
static void classify_android(const struct proc_map *m, int memfd_rule, uint64_t prev_end,
			     int prev_heap, struct meminfo_class *c)
{
	const char *name = m->path;
	size_t len = strlen(name);

	if (classify_native_stack(name, c))
		return;
	if (ends(name, len, ".so")) {
		c->heap = MEMINFO_HEAP_SO;
	} else if (classify_suffix(name, len, c)) {
		return;
	} else if (strstr(name, "kgsl-3d0")) {
		c->heap = MEMINFO_HEAP_GFX_DEV;
	} else if (starts(name, "/dev/")) {
		c->heap = MEMINFO_HEAP_OTHER_DEV;
		if (starts(name, "/dev/ashmem/CursorWindow")) {
			c->heap = MEMINFO_HEAP_CURSOR;
		} else if (starts(name, "/dev/ashmem/jit-zygote-cache")) {
			c->heap = MEMINFO_HEAP_DALVIK_OTHER;
			c->sub = MEMINFO_HEAP_DALVIK_OTHER_ZYGOTE_CODE_CACHE;
		} else if (starts(name, "/dev/ashmem")) {
			c->heap = MEMINFO_HEAP_ASHMEM;
		}
	} else if (memfd_rule && starts(name, "/memfd:")) {
		c->heap = MEMINFO_HEAP_MEMFD;
		if (starts(name, "/memfd:jit-cache")) {
			c->heap = MEMINFO_HEAP_DALVIK_OTHER;
			c->sub = MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE;
		} else if (starts(name, "/memfd:jit-zygote-cache")) {
			c->heap = MEMINFO_HEAP_DALVIK_OTHER;
			c->sub = MEMINFO_HEAP_DALVIK_OTHER_ZYGOTE_CODE_CACHE;
		} else if (starts(name, "/memfd:CursorWindow")) {
			c->heap = MEMINFO_HEAP_CURSOR;
		}
	} else if (starts(name, "[anon:")) {
		classify_anon(name, c);
	} else if (len) {
		c->heap = MEMINFO_HEAP_OTHER_MMAP;
	} else if (m->start == prev_end && prev_heap == MEMINFO_HEAP_SO) {
		c->heap = MEMINFO_HEAP_SO; /* the library's .bss */
	} else {
		c->heap = MEMINFO_HEAP_UNKNOWN;
	}
}

/* "libc.so.6", "libstdc++.so.6.0.30": ".so." then only digits and dots. */
static int versioned_so(const char *name)
{
	const char *p = NULL, *q;

	for (q = strstr(name, ".so."); q; q = strstr(q + 1, ".so."))
		p = q;
	if (!p)
		return 0;
	for (p += 4; *p; p++)
		if (!(*p >= '0' && *p <= '9') && *p != '.')
			return 0;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted paths of files that have an executable mapping (rule L9). */
struct exec_paths {
	const char **v;
	size_t nr;
};

static void exec_paths_init(struct exec_paths *e, const struct proc_smaps *s)
{
	size_t i, alloc = 0;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < s->nr; i++) {
		const struct proc_map *m = &s->maps[i].map;

		if ((m->prot & PROC_MAPS_PROT_EXEC) && m->path[0] && m->path[0] != '[') {
			ALLOC_GROW(e->v, e->nr + 1, alloc);
			e->v[e->nr++] = m->path;
		}
	}
	if (e->nr)
		qsort(e->v, e->nr, sizeof(*e->v), cmp_str);
}

static int exec_paths_has(const struct exec_paths *e, const char *path)
{
	return e->nr && bsearch(&path, e->v, e->nr, sizeof(*e->v), cmp_str);
}

static void classify_linux(const struct proc_map *m, const struct exec_paths *exec,
			   const struct proc_map *prev, int prev_heap, struct meminfo_class *c)
{
	const char *name = m->path;
	size_t len = strlen(name);
	int adjacent = prev && prev->end == m->start;

	if (classify_native_stack(name, c))
		return;
	if (strstr(name, "kgsl-3d0") || starts(name, "/dev/dri/") || starts(name, "/dev/kgsl") ||
	    starts(name, "/dev/mali") || starts(name, "/dev/nvidia") || starts(name, "/dmabuf:") ||
	    starts(name, "anon_inode:dmabuf")) {
		c->heap = MEMINFO_HEAP_GFX_DEV;
	} else if (ends(name, len, ".so") || versioned_so(name)) {
		c->heap = MEMINFO_HEAP_SO;
	} else if (classify_suffix(name, len, c)) {
		return;
	} else if (starts(name, "/dev/shm/") || starts(name, "/dev/zero") ||
		   starts(name, "/SYSV") || starts(name, "/memfd:")) {
		c->heap = MEMINFO_HEAP_ASHMEM;
	} else if (starts(name, "/dev/")) {
		c->heap = MEMINFO_HEAP_OTHER_DEV;
	} else if (starts(name, "[anon:")) {
		c->heap = MEMINFO_HEAP_UNKNOWN;
	} else if (len) {
		c->heap = name[0] != '[' && exec_paths_has(exec, name) ? MEMINFO_HEAP_EXE
								       : MEMINFO_HEAP_OTHER_MMAP;
	} else if (adjacent && (prev_heap == MEMINFO_HEAP_SO || prev_heap == MEMINFO_HEAP_EXE) &&
		   (prev->prot & PROC_MAPS_PROT_WRITE)) {
		c->heap = (uint8_t)prev_heap; /* .bss */
	} else if (adjacent && !prev->path[0] && !prev->prot &&
		   prev->end - prev->start <= 64 * 1024 &&
		   (m->prot & (PROC_MAPS_PROT_READ | PROC_MAPS_PROT_WRITE)) ==
		       (PROC_MAPS_PROT_READ | PROC_MAPS_PROT_WRITE) &&
		   !(m->prot & (PROC_MAPS_PROT_EXEC | PROC_MAPS_PROT_SHARED))) {
		c->heap = MEMINFO_HEAP_STACK; /* a thread stack above its guard */
	} else if (!(m->prot & (PROC_MAPS_PROT_EXEC | PROC_MAPS_PROT_SHARED))) {
		c->heap = MEMINFO_HEAP_NATIVE;
	} else {
		c->heap = MEMINFO_HEAP_UNKNOWN;
	}
}

enum meminfo_rules meminfo_classify(const struct proc_smaps *s, enum meminfo_rules rules,
				    struct meminfo_class *out)
{
	struct exec_paths exec = {NULL, 0};
	uint64_t prev_end = 0;
	int prev_heap = MEMINFO_HEAP_UNKNOWN;
	size_t i;

	if (rules != MEMINFO_RULES_ANDROID && rules != MEMINFO_RULES_ANDROID_10 &&
	    rules != MEMINFO_RULES_LINUX)
		rules = meminfo_detect_rules(s);
	if (rules == MEMINFO_RULES_LINUX)
		exec_paths_init(&exec, s);
	for (i = 0; i < s->nr; i++) {
		const struct proc_map *m = &s->maps[i].map;
		struct meminfo_class *c = &out[i];

		c->heap = MEMINFO_HEAP_UNKNOWN;
		c->sub = MEMINFO_HEAP_UNKNOWN;
		if (rules == MEMINFO_RULES_LINUX)
			classify_linux(m, &exec, i ? &s->maps[i - 1].map : NULL, prev_heap, c);
		else
			classify_android(m, rules == MEMINFO_RULES_ANDROID, prev_end, prev_heap, c);
		prev_end = m->end;
		prev_heap = c->heap;
	}
	free(exec.v);
	return rules;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void stats_add(struct meminfo_stats *a, const struct meminfo_stats *b)
{
	a->pss = sat_add(a->pss, b->pss);
	a->swappable_pss = sat_add(a->swappable_pss, b->swappable_pss);
	a->rss = sat_add(a->rss, b->rss);
	a->private_dirty = sat_add(a->private_dirty, b->private_dirty);
	a->shared_dirty = sat_add(a->shared_dirty, b->shared_dirty);
	a->private_clean = sat_add(a->private_clean, b->private_clean);
	a->shared_clean = sat_add(a->shared_clean, b->shared_clean);
	a->swap = sat_add(a->swap, b->swap);
	a->swap_pss = sat_add(a->swap_pss, b->swap_pss);
}

static int swappable_heap(int heap)
{
	return heap == MEMINFO_HEAP_SO || heap == MEMINFO_HEAP_JAR || heap == MEMINFO_HEAP_APK ||
	       heap == MEMINFO_HEAP_TTF || heap == MEMINFO_HEAP_DEX || heap == MEMINFO_HEAP_OAT ||
	       heap == MEMINFO_HEAP_ART;
}

void meminfo_compute(const struct proc_smaps *s, enum meminfo_rules rules, struct meminfo *mi)
{
	struct meminfo_class *cls = xcalloc(s->nr ? s->nr : 1, sizeof(*cls));
	size_t i;

	memset(mi, 0, sizeof(*mi));
	mi->rules = meminfo_classify(s, rules, cls);
	mi->nr_maps = s->nr;
	for (i = 0; i < s->nr; i++) {
		const struct proc_smaps_usage *u = &s->maps[i].u;
		struct meminfo_stats st = {
		    .pss = u->pss,
		    .rss = u->rss,
		    .private_dirty = u->private_dirty,
		    .shared_dirty = u->shared_dirty,
		    .private_clean = u->private_clean,
		    .shared_clean = u->shared_clean,
		    .swap = u->swap,
		    .swap_pss = u->swap_pss,
		};

		if (swappable_heap(cls[i].heap) && u->pss > 0) {
			uint64_t uss = proc_smaps_uss(u),
				 shared = sat_add(u->shared_clean, u->shared_dirty);
			double prop = 0;

			if (shared && u->pss > uss)
				prop = (double)(u->pss - uss) / (double)shared;
			st.swappable_pss =
			    sat_add((uint64_t)(prop * (double)u->shared_clean), u->private_clean);
		}
		if (u->swap_pss > 0)
			mi->has_swap_pss = 1;
		stats_add(&mi->heap[cls[i].heap], &st);
		if (cls[i].sub != MEMINFO_HEAP_UNKNOWN)
			stats_add(&mi->heap[cls[i].sub], &st);
	}
	free(cls);
	meminfo_summarize(mi);
}

static uint64_t private_of(const struct meminfo_stats *st)
{
	return sat_add(st->private_clean, st->private_dirty);
}

void meminfo_summarize(struct meminfo *mi)
{
	static const uint8_t code_heaps[] = {
	    MEMINFO_HEAP_SO,
	    MEMINFO_HEAP_JAR,
	    MEMINFO_HEAP_APK,
	    MEMINFO_HEAP_TTF,
	    MEMINFO_HEAP_DEX,
	    MEMINFO_HEAP_OAT,
	    MEMINFO_HEAP_EXE,
	    MEMINFO_HEAP_DALVIK_OTHER_ZYGOTE_CODE_CACHE,
	    MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE,
	};
	static const uint8_t gfx_heaps[] = {
	    MEMINFO_HEAP_GFX_DEV,
	    MEMINFO_HEAP_EGL_MTRACK,
	    MEMINFO_HEAP_GL_MTRACK,
	};
	const struct meminfo_stats *h = mi->heap;
	uint64_t total_private, known_private, known_rss;
	size_t i;

	memset(&mi->total, 0, sizeof(mi->total));
	for (i = 0; i < MEMINFO_FIRST_SUBHEAP; i++)
		stats_add(&mi->total, &h[i]);
	mi->total.pss = sat_add(mi->total.pss, mi->total.swap_pss);

	mi->java_heap.pss =
	    sat_add(h[MEMINFO_HEAP_DALVIK].private_dirty, private_of(&h[MEMINFO_HEAP_ART]));
	mi->java_heap.rss = sat_add(h[MEMINFO_HEAP_DALVIK].rss, h[MEMINFO_HEAP_ART].rss);
	mi->native_heap.pss = h[MEMINFO_HEAP_NATIVE].private_dirty;
	mi->native_heap.rss = h[MEMINFO_HEAP_NATIVE].rss;
	memset(&mi->code, 0, sizeof(mi->code));
	for (i = 0; i < ARRAY_SIZE(code_heaps); i++) {
		mi->code.pss = sat_add(mi->code.pss, private_of(&h[code_heaps[i]]));
		mi->code.rss = sat_add(mi->code.rss, h[code_heaps[i]].rss);
	}
	mi->stack.pss = h[MEMINFO_HEAP_STACK].private_dirty;
	mi->stack.rss = h[MEMINFO_HEAP_STACK].rss;
	memset(&mi->graphics, 0, sizeof(mi->graphics));
	for (i = 0; i < ARRAY_SIZE(gfx_heaps); i++) {
		mi->graphics.pss = sat_add(mi->graphics.pss, private_of(&h[gfx_heaps[i]]));
		mi->graphics.rss = sat_add(mi->graphics.rss, h[gfx_heaps[i]].rss);
	}
	total_private = private_of(&mi->total);
	known_private = mi->java_heap.pss;
	known_rss = mi->java_heap.rss;
	known_private = sat_add(known_private, mi->native_heap.pss);
	known_rss = sat_add(known_rss, mi->native_heap.rss);
	known_private = sat_add(known_private, mi->code.pss);
	known_rss = sat_add(known_rss, mi->code.rss);
	known_private = sat_add(known_private, mi->stack.pss);
	known_rss = sat_add(known_rss, mi->stack.rss);
	known_private = sat_add(known_private, mi->graphics.pss);
	known_rss = sat_add(known_rss, mi->graphics.rss);
	mi->private_other.pss = sat_sub(total_private, known_private);
	mi->private_other.rss = 0;
	mi->system.pss = sat_sub(mi->total.pss, total_private);
	mi->system.rss = 0;
	mi->unknown.pss = 0;
	mi->unknown.rss = sat_sub(mi->total.rss, known_rss);
}

/* -------- writers -------- */

/* dumpsys prints a row when one of these is non-zero (the swap column it shows counts) */
static int row_used(const struct meminfo_stats *st, int swap_pss)
{
	return st->pss || st->private_dirty || st->private_clean || st->rss || st->shared_dirty ||
	       st->shared_clean || (swap_pss ? st->swap_pss : st->swap);
}

static void text_row(FILE *f, const char *label, const struct meminfo_stats *st, int swap_pss)
{
	fprintf(f, "%13s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n", label,
		st->pss, st->private_dirty, st->private_clean, swap_pss ? st->swap_pss : st->swap,
		st->rss);
}

static void text_header(FILE *f, int swap_pss)
{
	fprintf(f, "%13s %8s %8s %8s %8s %8s\n", "", "Pss", "Private", "Private",
		swap_pss ? "SwapPss" : "Swap", "Rss");
	fprintf(f, "%13s %8s %8s %8s %8s %8s\n", "", "Total", "Dirty", "Clean", "Dirty", "Total");
	fprintf(f, "%13s %8s %8s %8s %8s %8s\n", "", "------", "------", "------", "------",
		"------");
}

int meminfo_write_text(const struct meminfo *mi, FILE *f)
{
	int android = mi->rules == MEMINFO_RULES_ANDROID || mi->rules == MEMINFO_RULES_ANDROID_10;
	size_t i;
	int any;

	fprintf(f, "** MEMINFO (%s rules, %zu mappings) **\n", meminfo_rules_name(mi->rules),
		mi->nr_maps);
	text_header(f, mi->has_swap_pss);
	for (i = 0; i < ARRAY_SIZE(row_order); i++) {
		int h = row_order[i];

		if (h == MEMINFO_HEAP_NATIVE || (h == MEMINFO_HEAP_DALVIK && android) ||
		    row_used(&mi->heap[h], mi->has_swap_pss))
			text_row(f, heap_names[h].label, &mi->heap[h], mi->has_swap_pss);
	}
	text_row(f, "Unknown", &mi->heap[MEMINFO_HEAP_UNKNOWN], mi->has_swap_pss);
	text_row(f, "TOTAL", &mi->total, mi->has_swap_pss);

	for (any = 0, i = MEMINFO_FIRST_SUBHEAP; android && i < MEMINFO_NR_HEAPS; i++) {
		if (!row_used(&mi->heap[i], mi->has_swap_pss))
			continue;
		if (!any++)
			fprintf(f, " \n Dalvik Details\n");
		text_row(f, heap_names[i].label, &mi->heap[i], mi->has_swap_pss);
	}

	fprintf(f, " \n App Summary\n");
	fprintf(f, "%21s %8s %21s %8s\n", "", "Pss(KB)", "", "Rss(KB)");
	fprintf(f, "%21s %8s %21s %8s\n", "", "------", "", "------");
#define LINE(label, l)                                                                             \
	fprintf(f, "%21s %8" PRIu64 " %21s %8" PRIu64 "\n", label, mi->l.pss, "", mi->l.rss)
	LINE("Java Heap:", java_heap);
	LINE("Native Heap:", native_heap);
	LINE("Code:", code);
	LINE("Stack:", stack);
	LINE("Graphics:", graphics);
#undef LINE
	fprintf(f, "%21s %8" PRIu64 "\n", "Private Other:", mi->private_other.pss);
	fprintf(f, "%21s %8" PRIu64 "\n", "System:", mi->system.pss);
	fprintf(f, "%21s %8s %21s %8" PRIu64 "\n", "Unknown:", "", "", mi->unknown.rss);
	fprintf(f, " \n%21s %8" PRIu64 " %21s %8" PRIu64 " %21s %8" PRIu64 "\n",
		"TOTAL PSS:", mi->total.pss, "TOTAL RSS:", mi->total.rss,
		mi->has_swap_pss ? "TOTAL SWAP PSS:" : "TOTAL SWAP (KB):",
		mi->has_swap_pss ? mi->total.swap_pss : mi->total.swap);
	return ferror(f) ? -EIO : 0;
}

static void json_stats(FILE *f, const struct meminfo_stats *st)
{
	fprintf(f,
		"{\"pss\": %" PRIu64 ", \"private_dirty\": %" PRIu64 ", \"private_clean\": %" PRIu64
		", \"swap_pss\": %" PRIu64 ", \"rss\": %" PRIu64 ", \"shared_dirty\": %" PRIu64
		", \"shared_clean\": %" PRIu64 ", \"swap\": %" PRIu64
		", \"swappable_pss\": %" PRIu64 "}",
		st->pss, st->private_dirty, st->private_clean, st->swap_pss, st->rss,
		st->shared_dirty, st->shared_clean, st->swap, st->swappable_pss);
}

int meminfo_write_json(const struct meminfo *mi, FILE *f)
{
	size_t i;

	fprintf(f, "{\n  \"rules\": \"%s\",\n  \"maps\": %zu,\n  \"has_swap_pss\": %s,\n",
		meminfo_rules_name(mi->rules), mi->nr_maps, mi->has_swap_pss ? "true" : "false");
	fprintf(f, "  \"heaps\": {\n");
	for (i = 0; i < MEMINFO_FIRST_SUBHEAP; i++) {
		fprintf(f, "    \"%s\": ", heap_names[i].key);
		json_stats(f, &mi->heap[i]);
		fprintf(f, "%s\n", i + 1 < MEMINFO_FIRST_SUBHEAP ? "," : "");
	}
	fprintf(f, "  },\n  \"details\": {\n");
	for (i = MEMINFO_FIRST_SUBHEAP; i < MEMINFO_NR_HEAPS; i++) {
		fprintf(f, "    \"%s\": ", heap_names[i].key);
		json_stats(f, &mi->heap[i]);
		fprintf(f, "%s\n", i + 1 < MEMINFO_NR_HEAPS ? "," : "");
	}
	fprintf(f, "  },\n  \"total\": ");
	json_stats(f, &mi->total);
	fprintf(f, ",\n  \"summary\": {\n");
#define LINE(key, l, sep)                                                                          \
	fprintf(f, "    \"" key "\": {\"pss\": %" PRIu64 ", \"rss\": %" PRIu64 "}" sep "\n",       \
		mi->l.pss, mi->l.rss)
	LINE("java_heap", java_heap, ",");
	LINE("native_heap", native_heap, ",");
	LINE("code", code, ",");
	LINE("stack", stack, ",");
	LINE("graphics", graphics, ",");
	LINE("private_other", private_other, ",");
	LINE("system", system, ",");
	LINE("unknown", unknown, "");
#undef LINE
	fprintf(f, "  }\n}\n");
	return ferror(f) ? -EIO : 0;
}
