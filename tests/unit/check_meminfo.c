/* Unit tests for meminfo: the classification rules one by one, the Android oracle (real smaps
 * against the dumpsys meminfo taken with it), golden tables for Linux captures, hostile input.
 *
 * Golden files: run with PERCH_UPDATE_GOLDEN=1 to (re)write them instead of comparing, e.g.
 *   PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=meminfo build/tests/unit/run
 */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/proc/meminfo.h"
#include "perch/proc/proc-smaps.h"
#include "testutil.h"

static struct proc_smaps *fixture_smaps(const char *rel)
{
	char *text = testutil_fixture_text(rel, NULL);
	struct proc_smaps *s = proc_smaps_parse(text);

	ck_assert_uint_eq(s->bad_lines, 0);
	free(text);
	return s;
}

static char *render(const struct meminfo *mi, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(json ? meminfo_write_json(mi, f) : meminfo_write_text(mi, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* -------- the rules, one mapping at a time -------- */

/* Build smaps text: one mapping per name, 1 MiB apart (so no two are adjacent), each with
 * Pss = Rss = 4 kB private dirty. */
static struct proc_smaps *smaps_of(const char *const *names, size_t n)
{
	char *text = xstrdup(""), *next;
	struct proc_smaps *s;
	size_t i;

	for (i = 0; i < n; i++) {
		next = xasprintf("%s%08zx-%08zx rw-p 00000000 00:00 0 %s\nRss: 4 kB\nPss: 4 kB\n"
				 "Private_Dirty: 4 kB\n",
				 text, 0x100000 * (i + 1), 0x100000 * (i + 1) + 0x1000, names[i]);
		free(text);
		text = next;
	}
	s = proc_smaps_parse(text);
	ck_assert_uint_eq(s->nr, n);
	free(text);
	return s;
}

static const struct rule_case {
	const char *name;
	uint8_t heap, sub;
} android_cases[] = {
    {"[heap]", MEMINFO_HEAP_NATIVE, 0},
    {"[anon:libc_malloc]", MEMINFO_HEAP_NATIVE, 0},
    {"[anon:scudo:primary]", MEMINFO_HEAP_NATIVE, 0},
    {"[anon:scudo:secondary]", MEMINFO_HEAP_NATIVE, 0},
    {"[anon:GWP-ASan Guard Page]", MEMINFO_HEAP_NATIVE, 0},
    {"[stack]", MEMINFO_HEAP_STACK, 0},
    {"[anon:stack_and_tls:4242]", MEMINFO_HEAP_STACK, 0},
    {"/system/lib64/libc.so", MEMINFO_HEAP_SO, 0},
    {"/system/lib64/libc.so (deleted)", MEMINFO_HEAP_SO, 0},
    {"/system/framework/framework.jar", MEMINFO_HEAP_JAR, 0},
    {"/data/app/~~x==/com.example-y==/base.apk", MEMINFO_HEAP_APK, 0},
    {"/system/fonts/Roboto-Regular.ttf", MEMINFO_HEAP_TTF, 0},
    {"/data/app/x/oat/arm64/base.odex", MEMINFO_HEAP_DEX, MEMINFO_HEAP_DEX_APP_DEX},
    {"/data/dalvik-cache/arm64/system@app@A@A.apk@classes.dex", MEMINFO_HEAP_DEX,
     MEMINFO_HEAP_DEX_APP_DEX},
    /* ".dex" anywhere in a name longer than 4, before the suffix rules that follow */
    {"[anon:dalvik-classes.dex extracted in memory from /data/app/x/base.apk]", MEMINFO_HEAP_DEX,
     MEMINFO_HEAP_DEX_APP_DEX},
    {"/system/framework/arm64/boot-framework.vdex", MEMINFO_HEAP_DEX, MEMINFO_HEAP_DEX_BOOT_VDEX},
    {"/apex/com.android.art/javalib/arm64/x.vdex", MEMINFO_HEAP_DEX, MEMINFO_HEAP_DEX_BOOT_VDEX},
    {"/data/dalvik-cache/arm64/system@framework@boot-core.vdex", MEMINFO_HEAP_DEX,
     MEMINFO_HEAP_DEX_BOOT_VDEX},
    {"/data/app/x/oat/arm64/base.vdex", MEMINFO_HEAP_DEX, MEMINFO_HEAP_DEX_APP_VDEX},
    {"/system/framework/arm64/boot.oat", MEMINFO_HEAP_OAT, 0},
    {"/system/framework/arm64/boot.art", MEMINFO_HEAP_ART, MEMINFO_HEAP_ART_BOOT},
    {"[anon:dalvik-/system/framework/boot.art]", MEMINFO_HEAP_ART, MEMINFO_HEAP_ART_BOOT},
    {"/data/app/x/oat/arm64/base.art", MEMINFO_HEAP_ART, MEMINFO_HEAP_ART_APP},
    {"/dev/kgsl-3d0", MEMINFO_HEAP_GFX_DEV, 0},
    {"/dev/ashmem/CursorWindow: x (deleted)", MEMINFO_HEAP_CURSOR, 0},
    {"/dev/ashmem/jit-zygote-cache (deleted)", MEMINFO_HEAP_DALVIK_OTHER,
     MEMINFO_HEAP_DALVIK_OTHER_ZYGOTE_CODE_CACHE},
    {"/dev/ashmem/some-region (deleted)", MEMINFO_HEAP_ASHMEM, 0},
    {"/dev/mali0", MEMINFO_HEAP_OTHER_DEV, 0},
    {"/memfd:jit-cache (deleted)", MEMINFO_HEAP_DALVIK_OTHER,
     MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE},
    {"/memfd:jit-zygote-cache (deleted)", MEMINFO_HEAP_DALVIK_OTHER,
     MEMINFO_HEAP_DALVIK_OTHER_ZYGOTE_CODE_CACHE},
    {"/memfd:CursorWindow (deleted)", MEMINFO_HEAP_CURSOR, 0},
    {"/memfd:/jit-cache (deleted)", MEMINFO_HEAP_MEMFD, 0},
    {"[anon:dalvik-main space (region space)]", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_NORMAL},
    {"[anon:dalvik-alloc space]", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_NORMAL},
    {"[anon:dalvik-large object space allocation]", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_LARGE},
    {"[anon:dalvik-free list large object space]", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_LARGE},
    {"[anon:dalvik-non moving space]", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_NON_MOVING},
    {"[anon:dalvik-zygote space]", MEMINFO_HEAP_DALVIK, MEMINFO_HEAP_DALVIK_ZYGOTE},
    {"[anon:dalvik-LinearAlloc]", MEMINFO_HEAP_DALVIK_OTHER, MEMINFO_HEAP_DALVIK_OTHER_LINEARALLOC},
    {"[anon:dalvik-indirect ref table]", MEMINFO_HEAP_DALVIK_OTHER,
     MEMINFO_HEAP_DALVIK_OTHER_INDIRECT_REF},
    {"[anon:dalvik-jit-code-cache]", MEMINFO_HEAP_DALVIK_OTHER,
     MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE},
    {"[anon:dalvik-data-code-cache]", MEMINFO_HEAP_DALVIK_OTHER,
     MEMINFO_HEAP_DALVIK_OTHER_APP_CODE_CACHE},
    {"[anon:dalvik-CompilerMetadata]", MEMINFO_HEAP_DALVIK_OTHER,
     MEMINFO_HEAP_DALVIK_OTHER_COMPILER_METADATA},
    {"[anon:dalvik-card table]", MEMINFO_HEAP_DALVIK_OTHER, MEMINFO_HEAP_DALVIK_OTHER_ACCOUNTING},
    /* zygote-jit-code-cache does not start with jit-code-cache: accounting (.GC) */
    {"[anon:dalvik-zygote-jit-code-cache]", MEMINFO_HEAP_DALVIK_OTHER,
     MEMINFO_HEAP_DALVIK_OTHER_ACCOUNTING},
    {"[anon:.bss]", MEMINFO_HEAP_UNKNOWN, 0},
    {"[anon:thread signal stack]", MEMINFO_HEAP_UNKNOWN, 0},
    {"anon_inode:dmabuf", MEMINFO_HEAP_OTHER_MMAP, 0},
    {"/data/misc/shared_relro/libwebviewchromium64.relro", MEMINFO_HEAP_OTHER_MMAP, 0},
    {"[vdso]", MEMINFO_HEAP_OTHER_MMAP, 0},
    {"", MEMINFO_HEAP_UNKNOWN, 0},
};

static void check_rules(const struct rule_case *cases, size_t n, enum meminfo_rules rules)
{
	const char **names = xcalloc(n, sizeof(*names));
	struct meminfo_class *cls = xcalloc(n, sizeof(*cls));
	struct proc_smaps *s;
	size_t i;

	for (i = 0; i < n; i++)
		names[i] = cases[i].name;
	s = smaps_of(names, n);
	ck_assert_int_eq(meminfo_classify(s, rules, cls), rules);
	for (i = 0; i < n; i++) {
		ck_assert_msg(cls[i].heap == cases[i].heap && cls[i].sub == cases[i].sub,
			      "\"%s\": got %s/%s, want %s/%s", cases[i].name,
			      meminfo_heap_label(cls[i].heap), meminfo_heap_label(cls[i].sub),
			      meminfo_heap_label(cases[i].heap), meminfo_heap_label(cases[i].sub));
	}
	proc_smaps_free(s);
	free(cls);
	free(names);
}

START_TEST(test_android_rules)
{
	check_rules(android_cases, ARRAY_SIZE(android_cases), MEMINFO_RULES_ANDROID);
}
END_TEST

START_TEST(test_android10_rules)
{
	/* without the memfd rule every /memfd: name is Other mmap, the rest is the same */
	struct rule_case *c = xmalloc(sizeof(android_cases));
	size_t i;

	memcpy(c, android_cases, sizeof(android_cases));
	for (i = 0; i < ARRAY_SIZE(android_cases); i++) {
		if (!strncmp(c[i].name, "/memfd:", 7)) {
			c[i].heap = MEMINFO_HEAP_OTHER_MMAP;
			c[i].sub = 0;
		}
	}
	check_rules(c, ARRAY_SIZE(android_cases), MEMINFO_RULES_ANDROID_10);
	free(c);
}
END_TEST

START_TEST(test_linux_rules)
{
	static const struct rule_case cases[] = {
	    {"[heap]", MEMINFO_HEAP_NATIVE, 0},
	    {"[stack]", MEMINFO_HEAP_STACK, 0},
	    {"/usr/lib/x86_64-linux-gnu/libc.so.6", MEMINFO_HEAP_SO, 0},
	    {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", MEMINFO_HEAP_SO, 0},
	    {"/usr/lib/x86_64-linux-gnu/libfoo.so", MEMINFO_HEAP_SO, 0},
	    {"/usr/lib/x86_64-linux-gnu/libfoo.so.6x", MEMINFO_HEAP_OTHER_MMAP, 0},
	    {"/usr/lib/locale/locale-archive", MEMINFO_HEAP_OTHER_MMAP, 0},
	    {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", MEMINFO_HEAP_TTF, 0},
	    {"/dev/dri/renderD128", MEMINFO_HEAP_GFX_DEV, 0},
	    {"/dmabuf:", MEMINFO_HEAP_GFX_DEV, 0},
	    {"anon_inode:dmabuf", MEMINFO_HEAP_GFX_DEV, 0},
	    {"/dev/shm/pulse-shm-1", MEMINFO_HEAP_ASHMEM, 0},
	    {"/dev/zero (deleted)", MEMINFO_HEAP_ASHMEM, 0},
	    {"/SYSV00000000 (deleted)", MEMINFO_HEAP_ASHMEM, 0},
	    {"/memfd:wayland-shm (deleted)", MEMINFO_HEAP_ASHMEM, 0},
	    {"/dev/fb0", MEMINFO_HEAP_OTHER_DEV, 0},
	    {"[anon:my arena]", MEMINFO_HEAP_UNKNOWN, 0},
	    {"[vdso]", MEMINFO_HEAP_OTHER_MMAP, 0},
	    {"", MEMINFO_HEAP_NATIVE, 0}, /* rw-p, private: malloc */
	};

	check_rules(cases, ARRAY_SIZE(cases), MEMINFO_RULES_LINUX);
}
END_TEST

/* Adjacency rules: .bss after a library, thread stacks above guard pages, the exec file. */
START_TEST(test_adjacency)
{
	static const char android[] =
	    "10000000-10001000 r-xp 00000000 fe:00 1 /system/lib64/libx.so\n"
	    "10001000-10002000 rw-p 00001000 fe:00 1 /system/lib64/libx.so\n"
	    "10002000-10003000 rw-p 00000000 00:00 0\n"	 /* .bss: .so */
	    "10004000-10005000 rw-p 00000000 00:00 0\n"; /* not adjacent: Unknown */
	static const char linux_text[] =
	    "00400000-00401000 r--p 00000000 fe:00 7 /usr/bin/prog\n"
	    "00401000-00402000 r-xp 00001000 fe:00 7 /usr/bin/prog\n"
	    "00402000-00403000 rw-p 00002000 fe:00 7 /usr/bin/prog\n"
	    "00403000-00404000 rw-p 00000000 00:00 0\n"			 /* prog .bss: Exe */
	    "00500000-00501000 r--p 00000000 fe:00 8 /usr/share/x.dat\n" /* Other mmap */
	    "00501000-00502000 rw-p 00000000 00:00 0\n"		/* after r--p data: Native */
	    "7f0000000000-7f0000001000 ---p 00000000 00:00 0\n" /* guard: Native (empty) */
	    "7f0000001000-7f0000801000 rw-p 00000000 00:00 0\n" /* thread stack */
	    "7f0000801000-7f0000802000 r--p 00000000 fe:00 9 /lib/libz.so.1.2.13\n"
	    "7f0000802000-7f0000803000 r-xp 00001000 fe:00 9 /lib/libz.so.1.2.13\n"
	    "7f0000803000-7f0000804000 rw-p 00000000 00:00 0\n"	 /* after r-x: Native */
	    "7f1000000000-7f1000021000 rw-p 00000000 00:00 0\n"	 /* malloc arena */
	    "7f1000021000-7f1004000000 ---p 00000000 00:00 0\n"	 /* its reserve: Native */
	    "7f1004000000-7f1004001000 rw-p 00000000 00:00 0\n"	 /* above a big ---p: Native */
	    "7f2000000000-7f2000001000 rwxp 00000000 00:00 0\n"	 /* anonymous exec: Unknown */
	    "7f3000000000-7f3000001000 rw-s 00000000 00:01 5\n"; /* anonymous shared: Unknown */
	static const uint8_t want_android[] = {MEMINFO_HEAP_SO, MEMINFO_HEAP_SO, MEMINFO_HEAP_SO,
					       MEMINFO_HEAP_UNKNOWN};
	static const uint8_t want_linux[] = {
	    MEMINFO_HEAP_EXE,	  MEMINFO_HEAP_EXE,	   MEMINFO_HEAP_EXE,
	    MEMINFO_HEAP_EXE,	  MEMINFO_HEAP_OTHER_MMAP, MEMINFO_HEAP_NATIVE,
	    MEMINFO_HEAP_NATIVE,  MEMINFO_HEAP_STACK,	   MEMINFO_HEAP_SO,
	    MEMINFO_HEAP_SO,	  MEMINFO_HEAP_NATIVE,	   MEMINFO_HEAP_NATIVE,
	    MEMINFO_HEAP_NATIVE,  MEMINFO_HEAP_NATIVE,	   MEMINFO_HEAP_UNKNOWN,
	    MEMINFO_HEAP_UNKNOWN,
	};
	struct meminfo_class cls[ARRAY_SIZE(want_linux)];
	struct proc_smaps *s;
	size_t i;

	s = proc_smaps_parse(android);
	ck_assert_uint_eq(s->nr, ARRAY_SIZE(want_android));
	ck_assert_int_eq(meminfo_classify(s, MEMINFO_RULES_AUTO, cls), MEMINFO_RULES_ANDROID);
	for (i = 0; i < s->nr; i++)
		ck_assert_msg(cls[i].heap == want_android[i], "android map %zu: %s", i,
			      meminfo_heap_label(cls[i].heap));
	proc_smaps_free(s);

	s = proc_smaps_parse(linux_text);
	ck_assert_uint_eq(s->nr, ARRAY_SIZE(want_linux));
	ck_assert_int_eq(meminfo_classify(s, MEMINFO_RULES_AUTO, cls), MEMINFO_RULES_LINUX);
	for (i = 0; i < s->nr; i++)
		ck_assert_msg(cls[i].heap == want_linux[i], "linux map %zu (%s): %s", i,
			      s->maps[i].map.path, meminfo_heap_label(cls[i].heap));
	proc_smaps_free(s);
}
END_TEST

START_TEST(test_swappable_and_summary)
{
	/* pss 10, uss 2, shared clean 16: (10 - 2) / 16 * 16 + 2 = 10 */
	static const char text[] =
	    "10000000-10010000 r--p 00000000 fe:00 1 /system/lib64/libx.so\n"
	    "Rss: 18 kB\nPss: 10 kB\nShared_Clean: 16 kB\nPrivate_Clean: 2 kB\n"
	    "20000000-20010000 rw-p 00000000 00:00 0 [anon:dalvik-main space]\n"
	    "Rss: 30 kB\nPss: 30 kB\nPrivate_Dirty: 30 kB\nSwapPss: 3 kB\n"
	    "30000000-30010000 rw-p 00000000 00:00 0 [anon:dalvik-/system/framework/boot.art]\n"
	    "Rss: 8 kB\nPss: 5 kB\nShared_Dirty: 6 kB\nPrivate_Dirty: 2 kB\n"
	    "40000000-40010000 rw-p 00000000 00:00 0 [anon:libc_malloc]\n"
	    "Rss: 7 kB\nPss: 7 kB\nPrivate_Dirty: 7 kB\n";
	struct proc_smaps *s = proc_smaps_parse(text);
	struct meminfo mi;

	meminfo_compute(s, MEMINFO_RULES_AUTO, &mi);
	ck_assert_int_eq(mi.rules, MEMINFO_RULES_ANDROID);
	ck_assert_uint_eq(mi.heap[MEMINFO_HEAP_SO].swappable_pss, 10);
	/* .art: pss 5, uss 2, shared 6 (dirty only): 0 * ... + 0 */
	ck_assert_uint_eq(mi.heap[MEMINFO_HEAP_ART].swappable_pss, 0);
	ck_assert_uint_eq(mi.heap[MEMINFO_HEAP_ART_BOOT].pss, 5);
	ck_assert_int_eq(mi.has_swap_pss, 1);
	/* TOTAL PSS counts SwapPss */
	ck_assert_uint_eq(mi.total.pss, 10 + 30 + 5 + 7 + 3);
	ck_assert_uint_eq(mi.java_heap.pss, 30 + 2);
	ck_assert_uint_eq(mi.java_heap.rss, 30 + 8);
	ck_assert_uint_eq(mi.native_heap.pss, 7);
	ck_assert_uint_eq(mi.code.pss, 2);
	ck_assert_uint_eq(mi.private_other.pss, 0);
	ck_assert_uint_eq(mi.system.pss, 55 - (2 + 30 + 2 + 7));
	ck_assert_uint_eq(mi.unknown.rss, 0);

	/* mtrack rows filled in by the caller */
	mi.heap[MEMINFO_HEAP_GL_MTRACK].pss = 100;
	mi.heap[MEMINFO_HEAP_GL_MTRACK].private_dirty = 100;
	mi.heap[MEMINFO_HEAP_GL_MTRACK].rss = 100;
	meminfo_summarize(&mi);
	ck_assert_uint_eq(mi.total.pss, 155);
	ck_assert_uint_eq(mi.graphics.pss, 100);
	ck_assert_uint_eq(mi.graphics.rss, 100);
	ck_assert_uint_eq(mi.system.pss, 155 - (41 + 100));
	proc_smaps_free(s);
}
END_TEST

/* -------- the Android oracle -------- */

struct dumpsys_row {
	char label[32];
	long v[4]; /* Pss Total, Private Dirty, Private Clean, Swap(Pss) Dirty */
};

/* The main table and Dalvik Details of a dumpsys meminfo text (rows with >= 4 numbers). */
static size_t parse_dumpsys(const char *text, struct dumpsys_row *rows, size_t max)
{
	const char *line, *eol;
	size_t n = 0;

	for (line = text; *line && n < max; line = *eol ? eol + 1 : eol) {
		char buf[256], *tok[16], *save = NULL, *t;
		size_t nt = 0, first_num, i;

		eol = strchrnul(line, '\n');
		if ((size_t)(eol - line) >= sizeof(buf))
			continue;
		memcpy(buf, line, (size_t)(eol - line));
		buf[eol - line] = '\0';
		if (strstr(buf, "App Summary"))
			break;
		for (t = strtok_r(buf, " ", &save); t && nt < ARRAY_SIZE(tok);
		     t = strtok_r(NULL, " ", &save))
			tok[nt++] = t;
		for (first_num = 0; first_num < nt && !isdigit((unsigned char)tok[first_num][0]);
		     first_num++)
			;
		if (!first_num || nt - first_num < 4)
			continue;
		rows[n].label[0] = '\0';
		for (i = 0; i < first_num; i++) {
			if (i)
				strcat(rows[n].label, " ");
			strncat(rows[n].label, tok[i], sizeof(rows[n].label) - 12);
		}
		for (i = 0; i < 4; i++)
			rows[n].v[i] = strtol(tok[first_num + i], NULL, 10);
		n++;
	}
	return n;
}

static int label_heap(const char *label)
{
	int h;

	for (h = 0; h < MEMINFO_NR_HEAPS; h++)
		if (!strcmp(meminfo_heap_label(h), label))
			return h;
	return -1;
}

static int within(long got, long want, double pct)
{
	long d = got > want ? got - want : want - got;

	return (double)d <= (double)want * pct / 100.0;
}

/*
 * Every row dumpsys prints, against the breakdown of the smaps captured with it.
 * Excepted rows:
 *  - EGL mtrack, GL mtrack: dumpsys gets them from the memtrack HAL, not smaps (they are fed
 *    in below as the caller would, to check TOTAL and the App Summary).
 *  - launcher Dalvik Heap and Dalvik Other: its smaps and dumpsys were not read at the same
 *    instant. dumpsys's TOTAL is 670 kB below the smaps' Pss sum + mtrack, and its own Dalvik
 *    Heap row has Private Dirty 6272 where the smaps' [anon:dalvik-*space*] mappings have
 *    6976 (704 kB more, nearly all in "main space (region space)"): the Java heap shrank (a
 *    GC) between the two reads, and the GC's side tables (Dalvik Other) moved with it. These
 *    two rows are held to 12% and 2% instead of 1%.
 */
START_TEST(test_android_oracle)
{
	static const struct {
		const char *dir;
		enum meminfo_rules rules;
		const char *loose[2];
		double loose_pct[2];
	} cases[] = {
	    {"memorylab", MEMINFO_RULES_ANDROID, {NULL, NULL}, {0, 0}},
	    {"launcher", MEMINFO_RULES_ANDROID_10, {"Dalvik Heap", "Dalvik Other"}, {12, 2}},
	};
	char *rel = xasprintf("android-meminfo/%s/smaps", cases[_i].dir);
	char *drel = xasprintf("android-meminfo/%s/dumpsys-meminfo.txt", cases[_i].dir);
	struct proc_smaps *s = fixture_smaps(rel);
	char *dtext = testutil_fixture_text(drel, NULL);
	struct dumpsys_row rows[64];
	size_t n = parse_dumpsys(dtext, rows, ARRAY_SIZE(rows)), i, checked = 0;
	long total_pss = -1;
	struct meminfo mi;
	int h, details = 0, seen[MEMINFO_NR_HEAPS] = {0};

	meminfo_compute(s, cases[_i].rules, &mi);
	ck_assert_int_eq(mi.rules, cases[_i].rules);
	ck_assert_uint_ge(n, 15);
	for (i = 0; i < n; i++) {
		const struct dumpsys_row *r = &rows[i];
		double pct = 1.0;

		if (!strcmp(r->label, "TOTAL")) {
			total_pss = r->v[0];
			continue;
		}
		h = label_heap(r->label);
		ck_assert_msg(h >= 0, "dumpsys row \"%s\" has no perch heap", r->label);
		seen[h] = 1;
		if (h == MEMINFO_HEAP_EGL_MTRACK || h == MEMINFO_HEAP_GL_MTRACK) {
			mi.heap[h].pss = (uint64_t)r->v[0]; /* input, not a result */
			mi.heap[h].private_dirty = (uint64_t)r->v[1];
			mi.heap[h].private_clean = (uint64_t)r->v[2];
			continue;
		}
		if (cases[_i].loose[0] && !strcmp(r->label, cases[_i].loose[0]))
			pct = cases[_i].loose_pct[0];
		if (cases[_i].loose[1] && !strcmp(r->label, cases[_i].loose[1]))
			pct = cases[_i].loose_pct[1];
		ck_assert_msg(within((long)mi.heap[h].pss, r->v[0], pct),
			      "%s %s: Pss %lu, dumpsys %ld", cases[_i].dir, r->label,
			      (unsigned long)mi.heap[h].pss, r->v[0]);
		checked++;
	}
	ck_assert_uint_ge(checked, 14);
	/* and no heap with Pss that dumpsys did not print (sub-heaps only when dumpsys printed
	 * its Dalvik Details: the Android 10 one did not) */
	for (h = MEMINFO_FIRST_SUBHEAP; h < MEMINFO_NR_HEAPS && !details; h++)
		details = seen[h];
	for (h = 0; h < (details ? MEMINFO_NR_HEAPS : MEMINFO_FIRST_SUBHEAP); h++)
		ck_assert_msg(seen[h] || mi.heap[h].pss == 0, "%s: %s has Pss %lu, not in dumpsys",
			      cases[_i].dir, meminfo_heap_label(h), (unsigned long)mi.heap[h].pss);
	meminfo_summarize(&mi);
	ck_assert_int_gt(total_pss, 0);
	ck_assert_msg(within((long)mi.total.pss, total_pss, 1.0), "TOTAL %lu, dumpsys %ld",
		      (unsigned long)mi.total.pss, total_pss);
	if (cases[_i].rules == MEMINFO_RULES_ANDROID) {
		/* memorylab's App Summary, copied from its dumpsys-meminfo.txt */
		ck_assert(within((long)mi.java_heap.pss, 69716, 1.0));
		ck_assert(within((long)mi.native_heap.pss, 80824, 1.0));
		ck_assert(within((long)mi.code.pss, 30304, 1.0));
		ck_assert(within((long)mi.stack.pss, 2072, 1.0));
		ck_assert(within((long)mi.graphics.pss, 57172, 1.0));
		ck_assert(within((long)mi.private_other.pss, 72624, 1.0));
		ck_assert(within((long)mi.system.pss, 25078, 1.0));
		ck_assert(within((long)mi.java_heap.rss, 84804, 1.0));
		ck_assert(within((long)mi.code.rss, 119148, 1.0));
		ck_assert(within((long)mi.unknown.rss, 75752, 1.0));
		ck_assert_int_eq(mi.has_swap_pss, 1);
	} else {
		/* launcher's App Summary without the Java heap (see above) */
		ck_assert(within((long)mi.native_heap.pss, 69928, 1.0));
		ck_assert(within((long)mi.code.pss, 12504, 1.0));
		ck_assert(within((long)mi.stack.pss, 56, 1.0));
		ck_assert(within((long)mi.graphics.pss, 43532, 1.0));
		ck_assert_int_eq(mi.has_swap_pss, 0);
	}
	proc_smaps_free(s);
	free(dtext);
	free(rel);
	free(drel);
}
END_TEST

START_TEST(test_detect)
{
	static const struct {
		const char *rel;
		enum meminfo_rules want;
	} cases[] = {
	    {"android-meminfo/memorylab/smaps", MEMINFO_RULES_ANDROID},
	    {"android-meminfo/launcher/smaps", MEMINFO_RULES_ANDROID},
	    {"smaps/small/smaps", MEMINFO_RULES_LINUX},
	    {"smaps/waiters/smaps", MEMINFO_RULES_LINUX},
	};
	struct proc_smaps *s = fixture_smaps(cases[_i].rel);

	ck_assert_int_eq(meminfo_detect_rules(s), cases[_i].want);
	proc_smaps_free(s);
}
END_TEST

/* -------- Linux captures: properties, then golden tables -------- */

static const char *const linux_cases[] = {"small", "malloc50", "waiters"};

START_TEST(test_linux_captures)
{
	char *rel = xasprintf("smaps/%s/smaps", linux_cases[_i]);
	struct proc_smaps *s = fixture_smaps(rel);
	struct meminfo_class *cls = xcalloc(s->nr, sizeof(*cls));
	struct meminfo mi;
	uint64_t sum = 0;
	size_t i, stacks = 0, exe = 0;
	int h;

	meminfo_compute(s, MEMINFO_RULES_AUTO, &mi);
	ck_assert_int_eq(mi.rules, MEMINFO_RULES_LINUX);
	meminfo_classify(s, MEMINFO_RULES_LINUX, cls);
	/* every kB lands in exactly one heap */
	for (h = 0; h < MEMINFO_FIRST_SUBHEAP; h++)
		sum += mi.heap[h].pss;
	ck_assert_uint_eq(sum, s->total.pss);
	ck_assert_uint_eq(mi.total.rss, s->total.rss);
	for (i = 0; i < s->nr; i++) {
		const char *p = s->maps[i].map.path;

		stacks += cls[i].heap == MEMINFO_HEAP_STACK;
		if (cls[i].heap == MEMINFO_HEAP_EXE) {
			exe++;
			ck_assert_uint_lt(i, 5); /* the PIE program is mapped first */
			ck_assert_ptr_nonnull(strstr(p, linux_cases[_i]));
		}
		if (strstr(p, ".so"))
			ck_assert_int_eq(cls[i].heap, MEMINFO_HEAP_SO);
	}
	ck_assert_uint_eq(exe, 5); /* r--p r-xp r--p r--p rw-p of the PIE program */
	if (!strcmp(linux_cases[_i], "waiters")) {
		ck_assert_uint_eq(stacks, 5); /* 4 threads + [stack] */
	} else {
		ck_assert_uint_eq(stacks, 1);
	}
	if (!strcmp(linux_cases[_i], "malloc50"))
		ck_assert_uint_ge(mi.heap[MEMINFO_HEAP_NATIVE].pss, 50 * 1024);
	ck_assert_uint_eq(mi.code.pss, mi.heap[MEMINFO_HEAP_SO].private_clean +
					   mi.heap[MEMINFO_HEAP_SO].private_dirty +
					   mi.heap[MEMINFO_HEAP_EXE].private_clean +
					   mi.heap[MEMINFO_HEAP_EXE].private_dirty);
	free(cls);
	proc_smaps_free(s);
	free(rel);
}
END_TEST

START_TEST(test_golden)
{
	static const struct {
		const char *smaps, *golden;
		enum meminfo_rules rules;
	} cases[] = {
	    {"smaps/small/smaps", "small", MEMINFO_RULES_AUTO},
	    {"smaps/malloc50/smaps", "malloc50", MEMINFO_RULES_AUTO},
	    {"smaps/waiters/smaps", "waiters", MEMINFO_RULES_AUTO},
	    {"android-meminfo/memorylab/smaps", "android-memorylab", MEMINFO_RULES_ANDROID},
	    {"android-meminfo/launcher/smaps", "android-launcher", MEMINFO_RULES_ANDROID_10},
	};
	struct proc_smaps *s = fixture_smaps(cases[_i].smaps);
	char *txt_rel = xasprintf("meminfo/%s.txt", cases[_i].golden);
	char *json_rel = xasprintf("meminfo/%s.json", cases[_i].golden);
	struct meminfo mi;
	char *text, *json;

	meminfo_compute(s, cases[_i].rules, &mi);
	text = render(&mi, 0);
	json = render(&mi, 1);
	/* the rules that matter most, spelled out besides the golden files */
	ck_assert_ptr_nonnull(strstr(text, "  Native Heap "));
	ck_assert_ptr_nonnull(strstr(text, "\n        TOTAL "));
	ck_assert_ptr_nonnull(strstr(text, " App Summary\n"));
	ck_assert_ptr_nonnull(strstr(json, "\"native_heap\": {\"pss\": "));
	ck_assert_int_eq(json[0], '{');
	ck_assert_int_eq(json[strlen(json) - 2], '}');
	testutil_check_golden(txt_rel, text, strlen(text));
	testutil_check_golden(json_rel, json, strlen(json));
	free(text);
	free(json);
	free(txt_rel);
	free(json_rel);
	proc_smaps_free(s);
}
END_TEST

START_TEST(test_hostile)
{
	unsigned int seed = 777;
	struct proc_smaps *s = proc_smaps_parse("");
	struct meminfo mi;
	char *out;
	int round;

	/* nothing at all */
	meminfo_compute(s, MEMINFO_RULES_AUTO, &mi);
	ck_assert_int_eq(mi.rules, MEMINFO_RULES_LINUX);
	ck_assert_uint_eq(mi.total.pss, 0);
	out = render(&mi, 0);
	ck_assert_ptr_nonnull(strstr(out, "TOTAL"));
	free(out);
	proc_smaps_free(s);

	/* huge values saturate instead of wrapping */
	s = proc_smaps_parse(
	    "10000000-10001000 rw-p 00000000 00:00 0 [heap]\n"
	    "Pss: 18446744073709551615 kB\nPrivate_Dirty: 18446744073709551615 kB\n"
	    "SwapPss: 18446744073709551615 kB\n"
	    "20000000-20001000 rw-p 00000000 00:00 0 [heap]\nPss: 5 kB\n");
	meminfo_compute(s, MEMINFO_RULES_LINUX, &mi);
	ck_assert_uint_eq(mi.heap[MEMINFO_HEAP_NATIVE].pss, UINT64_MAX);
	ck_assert_uint_eq(mi.total.pss, UINT64_MAX);
	ck_assert_uint_eq(mi.system.pss, 0);
	proc_smaps_free(s);

	/* odd names from a mutated real capture: classify without crashing, sums still add */
	for (round = 0; round < 50; round++) {
		char *text = testutil_fixture_text("smaps/waiters/smaps", NULL);
		size_t len = strlen(text), k;
		uint64_t sum = 0;
		int h;

		for (k = 0; k < 40; k++)
			text[(size_t)rand_r(&seed) % len] = "[]/.-: \nso0"[rand_r(&seed) % 11];
		s = proc_smaps_parse(text);
		meminfo_compute(s, (enum meminfo_rules)(round % 4), &mi);
		for (h = 0; h < MEMINFO_FIRST_SUBHEAP; h++)
			sum += mi.heap[h].pss;
		ck_assert_uint_eq(sum, s->total.pss);
		out = render(&mi, round & 1);
		free(out);
		proc_smaps_free(s);
		free(text);
	}
}
END_TEST

START_TEST(test_names)
{
	int h;

	for (h = 0; h < MEMINFO_NR_HEAPS; h++) {
		ck_assert_str_ne(meminfo_heap_label(h), "?");
		ck_assert_str_ne(meminfo_heap_key(h), "?");
	}
	ck_assert_str_eq(meminfo_heap_label(MEMINFO_NR_HEAPS), "?");
	ck_assert_str_eq(meminfo_heap_label(MEMINFO_HEAP_SO), ".so mmap");
	ck_assert_str_eq(meminfo_rules_name(MEMINFO_RULES_ANDROID_10), "android-10");
}
END_TEST

Suite *meminfo_suite(void)
{
	Suite *s = suite_create("meminfo");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, test_android_rules);
	tcase_add_test(tc, test_android10_rules);
	tcase_add_test(tc, test_linux_rules);
	tcase_add_test(tc, test_adjacency);
	tcase_add_test(tc, test_swappable_and_summary);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("captures");
	tcase_add_loop_test(tc, test_android_oracle, 0, 2);
	tcase_add_loop_test(tc, test_detect, 0, 4);
	tcase_add_loop_test(tc, test_linux_captures, 0, 3);
	tcase_add_loop_test(tc, test_golden, 0, 5);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_test(tc, test_hostile);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}
