/* Unit tests for the maps-name classifier: every maps line of the real Android captures in
 * fixtures/android-meminfo (smaps) classified, as a golden table (fixtures/golden/android-maps,
 * one row per distinct executable-bit/offset/name, with how often it occurs), plus the names of
 * docs/design/android-art.md 5.1 that those captures lack. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/art/mapkind.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "testutil.h"

struct row {
	char *key; /* "x 0 name" */
	unsigned long count;
};

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->key, ((const struct row *)b)->key);
}

static void golden_for(const char *capture)
{
	char *rel = xasprintf("android-meminfo/%s/smaps", capture), *text, *save = NULL;
	struct row *rows = NULL;
	size_t nr = 0, alloc = 0, lines = 0;
	struct strbuf sb = STRBUF_INIT;

	text = testutil_fixture_text(rel, NULL);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, off;
		char perms[8];
		int name_at = 0;

		if (sscanf(l, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &name_at) < 4 ||
		    !name_at)
			continue;
		lines++;
		char *key = xasprintf("%c %s %s", perms[2], off ? "N" : "0", l + name_at);
		size_t i;

		for (i = 0; i < nr && strcmp(rows[i].key, key); i++)
			;
		if (i < nr) {
			rows[i].count++;
			free(key);
			continue;
		}
		ALLOC_GROW(rows, nr + 1, alloc);
		rows[nr++] = (struct row){key, 1};
	}
	ck_assert_uint_gt(lines, 1000);
	qsort(rows, nr, sizeof(*rows), row_cmp);
	strbuf_addf(&sb, "# %s: %zu maps lines; exec offset name -> kind [flags] xcount\n", capture,
		    lines);
	for (size_t i = 0; i < nr; i++) {
		unsigned int fl;
		enum mapkind k = mapkind_classify(rows[i].key + 4, rows[i].key[0] == 'x',
						  rows[i].key[2] == 'N', &fl);

		strbuf_addf(&sb, "%s -> %s%s%s x%lu\n", rows[i].key, mapkind_name(k),
			    fl & MAPKIND_DELETED ? " deleted" : "",
			    fl & MAPKIND_BOOT ? " boot" : "", rows[i].count);
		free(rows[i].key);
	}
	free(rel);
	rel = xasprintf("android-maps/%s.txt", capture);
	testutil_check_golden(rel, sb.buf, sb.len);
	strbuf_release(&sb);
	free(rel);
	free(rows);
	free(text);
}

START_TEST(test_captures)
{
	golden_for("launcher");
	golden_for("memorylab");
}
END_TEST

/* Names from docs/design/android-art.md 5.1 that the captures do not have. */
START_TEST(test_spec_names)
{
	static const struct {
		const char *name;
		int exec;
		uint64_t off;
		enum mapkind want;
		unsigned int flags;
	} t[] = {
	    {"/memfd:jit-cache (deleted)", 1, 0, MAPKIND_JIT_CACHE, MAPKIND_DELETED},
	    {"/memfd:jit-zygote-cache (deleted)", 1, 0, MAPKIND_JIT_CACHE, MAPKIND_DELETED},
	    {"/dev/ashmem/jit-zygote-cache (deleted)", 1, 0, MAPKIND_JIT_CACHE, MAPKIND_DELETED},
	    {"[anon:dalvik-zygote-jit-code-cache]", 1, 0, MAPKIND_JIT_CACHE, 0},
	    {"/dev/ashmem/dalvik-jit-code-cache (deleted)", 1, 0, MAPKIND_JIT_CACHE,
	     MAPKIND_DELETED},
	    {"/data/app/x/base.apk", 1, 0x4000, MAPKIND_APK_LIB, 0},
	    {"/data/app/x/base.apk", 0, 0x4000, MAPKIND_APK, 0},
	    {"/data/app/x/oat/arm64/base.odex", 1, 0x1000, MAPKIND_ODEX, 0},
	    {"/apex/com.android.art/javalib/arm64/boot.oat", 1, 0, MAPKIND_OAT, MAPKIND_BOOT},
	    {"/data/misc/apexdata/com.android.art/dalvik-cache/arm64/system@framework@boot.art", 0,
	     0, MAPKIND_ART, MAPKIND_BOOT},
	    {"/dev/ashmem/dalvik-classes.dex extracted in memory from /data/app/x/base.apk "
	     "(deleted)",
	     0, 0, MAPKIND_DEX_EXTRACTED, MAPKIND_DELETED},
	    {"/dev/kgsl-3d0", 0, 0, MAPKIND_GPU, 0},
	    {"/dmabuf:", 0, 0, MAPKIND_DMABUF, 0},
	    {"", 1, 0, MAPKIND_ANON, 0},
	    {"/lib/x86_64-linux-gnu/libc.so.6", 1, 0x28000, MAPKIND_ELF, 0},
	};
	unsigned int fl;

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		enum mapkind k = mapkind_classify(t[i].name, t[i].exec, t[i].off, &fl);

		ck_assert_msg(k == t[i].want && fl == t[i].flags, "%s: %s flags %u", t[i].name,
			      mapkind_name(k), fl);
	}
	ck_assert(mapkind_is_aot(MAPKIND_ODEX) && mapkind_is_aot(MAPKIND_OAT));
	ck_assert(!mapkind_is_aot(MAPKIND_VDEX));
}
END_TEST

Suite *mapkind_suite(void)
{
	Suite *s = suite_create("mapkind");
	TCase *tc = tcase_create("mapkind");

	tcase_add_test(tc, test_captures);
	tcase_add_test(tc, test_spec_names);
	suite_add_tcase(s, tc);
	return s;
}
