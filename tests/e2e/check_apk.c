/* e2e: a library mapped straight out of an APK (stored, page-aligned entry, maps show the zip at
 * non-zero offsets) is symbolized and unwound as the ELF file inside the zip. The library is
 * stripped as Android strips its own (scripts/android-strip.sh), so its static functions are
 * named by MiniDebugInfo only. The zip is built by tests/targets/apk.mk with zip -0 and
 * zipalign -p; the entry's offset comes from Python's zipfile, not from perch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The data offset of lib/x86_64/libapk.so in test.apk, written next to it at build time. */
static const char *apk_offset(void)
{
	const char *path = harness_fmt("%s.offset", harness_target("test.apk"));
	static char buf[32];
	FILE *f = fopen(path, "r");

	H_ASSERT(f && fgets(buf, sizeof(buf), f), "cannot read %s", path);
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

START_TEST(apk_library_named)
{
	static const char *const seq[] = {"main", "apk_entry", "apk_outer_spin", "apk_inner_spin"};
	const char *out = harness_tmpfile("apk.folded"), *txt = harness_tmpfile("apk.txt");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long all, named;
	char *text;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("apkload"),
						 harness_target("test.apk"), apk_offset(), "30"));
	pid = harness_proc_wait_ready(t, 5);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-d", "1.5",
						"-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	all = harness_folded_count(&f, NULL, harness_pred_any, NULL);
	named = 0;
	for (size_t i = 0; i < f.nr; i++)
		if (harness_line_has_seq(&f.lines[i], seq, 4))
			named += f.lines[i].count;
	if (named * 100 < all * 80)
		harness_folded_context(&f, NULL, 20);
	H_ASSERT(
	    all >= 100 && named * 100 >= all * 80,
	    "%lu of %lu samples in main;apk_entry;apk_outer_spin;apk_inner_spin (want >= 80%%)",
	    named, all);
	/* the module is the entry inside the zip, not the zip */
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "100", "-d",
						    "0.5", "-o", txt, "--format", "text", "-p",
						    harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch (text) did not finish");
	text = read_text(txt);
	H_ASSERT(text && strstr(text, "apk_inner_spin (libapk.so)"),
		 "the text profile does not show apk_inner_spin in module libapk.so");
	free(text);
	harness_folded_release(&f);
	harness_proc_kill(t, 9);
}
END_TEST

Suite *apk_suite(void)
{
	Suite *s = suite_create("e2e-apk");
	TCase *tc = tcase_create("apk");

	harness_tcase_init(tc, 20);
	tcase_add_test(tc, apk_library_named);
	suite_add_tcase(s, tc);
	return s;
}
