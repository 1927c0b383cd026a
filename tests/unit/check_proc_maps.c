/* Unit tests for proc-maps: real captures from fixtures/proc, hostile and truncated input. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "testutil.h"

/* The table invariant: each map non-empty, sorted, no overlap, path never NULL. */
static void assert_sane_maps(const struct proc_maps *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++) {
		ck_assert_ptr_nonnull(m->maps[i].path);
		ck_assert_uint_lt(m->maps[i].start, m->maps[i].end);
		if (i)
			ck_assert_uint_le(m->maps[i - 1].end, m->maps[i].start);
	}
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

START_TEST(test_threaded)
{
	char *text = testutil_fixture_text("proc/threaded/maps", NULL);
	struct proc_maps *m;
	const struct proc_map *pm;
	size_t bad = 99;

	m = proc_maps_parse(text, &bad);
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(m->nr, count_lines(text));
	assert_sane_maps(m);

	/* PIE main binary text: 55777c7e8000-55777c7e9000 r-xp 00001000 fe:00 10952973 */
	pm = proc_maps_find(m, 0x55777c7e8123);
	ck_assert_ptr_nonnull(pm);
	ck_assert_uint_eq(pm->start, 0x55777c7e8000);
	ck_assert_uint_eq(pm->end, 0x55777c7e9000);
	ck_assert_uint_eq(pm->offset, 0x1000);
	ck_assert_uint_eq(pm->prot, PROC_MAPS_PROT_READ | PROC_MAPS_PROT_EXEC);
	ck_assert_uint_eq(pm->dev_major, 0xfe);
	ck_assert_uint_eq(pm->dev_minor, 0);
	ck_assert_uint_eq(pm->inode, 10952973);
	ck_assert_str_eq(pm->path, "/tmp/cap/cap");
	ck_assert_int_eq(pm->deleted, 0);

	/* libc text at offset 0x26000 */
	pm = proc_maps_find(m, 0x7f94650ad000);
	ck_assert_ptr_nonnull(pm);
	ck_assert_uint_eq(pm->offset, 0x26000);
	ck_assert_str_eq(pm->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	ck_assert_str_eq(proc_map_basename(pm), "libc.so.6");

	/* a deleted file whose name has a space */
	pm = proc_maps_find(m, 0x7f9465273fff);
	ck_assert_ptr_nonnull(pm);
	ck_assert_str_eq(pm->path, "/tmp/cap/scratch lib.so");
	ck_assert_int_eq(pm->deleted, 1);
	ck_assert_str_eq(proc_map_basename(pm), "scratch lib.so");

	/* anonymous (path ends at the padding), vdso, rw heap, the last line */
	pm = proc_maps_find(m, 0x7f9463882000);
	ck_assert_ptr_nonnull(pm);
	ck_assert_str_eq(pm->path, "");
	ck_assert_uint_eq(pm->prot, PROC_MAPS_PROT_READ | PROC_MAPS_PROT_WRITE);
	pm = proc_maps_find(m, 0x7f946527c000);
	ck_assert_str_eq(pm->path, "[vdso]");
	ck_assert_str_eq(proc_map_basename(pm), "[vdso]");
	pm = proc_maps_find(m, 0xffffffffff600fff);
	ck_assert_ptr_nonnull(pm);
	ck_assert_str_eq(pm->path, "[vsyscall]");
	ck_assert_uint_eq(pm->prot, PROC_MAPS_PROT_EXEC);

	/* boundaries: end is exclusive, gaps and outside find nothing */
	ck_assert_ptr_null(proc_maps_find(m, 0));
	ck_assert_ptr_null(proc_maps_find(m, 0x55777c7e6fff));
	ck_assert_ptr_eq(proc_maps_find(m, 0x55777c7e7000), &m->maps[0]);
	ck_assert_ptr_eq(proc_maps_find(m, 0x55777c7e7fff), &m->maps[0]);
	ck_assert_ptr_eq(proc_maps_find(m, 0x55777c7e8000), &m->maps[1]);
	ck_assert_ptr_null(proc_maps_find(m, 0x55779068d000)); /* just past [heap] */
	ck_assert_ptr_null(proc_maps_find(m, 0x7f946526d000)); /* gap */
	ck_assert_ptr_null(proc_maps_find(m, UINT64_MAX));

	proc_maps_free(m);
	free(text);
}
END_TEST

/* Every map is found by its first and last byte and nothing else is found in between. */
START_TEST(test_find_every_map)
{
	static const char *const files[] = {"proc/threaded/maps", "proc/traced-busy/maps",
					    "proc/android-launcher/maps",
					    "proc/android-memorylab/maps"};
	size_t f, i;

	for (f = 0; f < ARRAY_SIZE(files); f++) {
		char *text = testutil_fixture_text(files[f], NULL);
		struct proc_maps *m = proc_maps_parse(text, NULL);

		ck_assert_uint_eq(m->nr, count_lines(text));
		assert_sane_maps(m);
		for (i = 0; i < m->nr; i++) {
			ck_assert_ptr_eq(proc_maps_find(m, m->maps[i].start), &m->maps[i]);
			ck_assert_ptr_eq(proc_maps_find(m, m->maps[i].end - 1), &m->maps[i]);
			if (i + 1 < m->nr && m->maps[i].end < m->maps[i + 1].start)
				ck_assert_ptr_null(proc_maps_find(m, m->maps[i].end));
		}
		proc_maps_free(m);
		free(text);
	}
}
END_TEST

START_TEST(test_android)
{
	char *text = testutil_fixture_text("proc/android-memorylab/maps", NULL);
	struct proc_maps *m = proc_maps_parse(text, NULL);
	const struct proc_map *pm;

	/* 8- and 10-digit addresses mixed: 9debc000-9febc000 r-xs 02000000 00:01 46584
	 * /memfd:jit-cache (deleted) */
	pm = proc_maps_find(m, 0x9debc000);
	ck_assert_ptr_nonnull(pm);
	ck_assert_str_eq(pm->path, "/memfd:jit-cache");
	ck_assert_int_eq(pm->deleted, 1);
	ck_assert_uint_eq(pm->prot,
			  PROC_MAPS_PROT_READ | PROC_MAPS_PROT_EXEC | PROC_MAPS_PROT_SHARED);
	ck_assert_uint_eq(pm->offset, 0x2000000);
	ck_assert_uint_eq(pm->dev_minor, 1);
	ck_assert_str_eq(proc_map_basename(pm), "memfd:jit-cache");

	/* [anon:...] with spaces and parentheses, kept whole */
	pm = proc_maps_find(m, 0x0eec0000);
	ck_assert_ptr_nonnull(pm);
	ck_assert_str_eq(pm->path, "[anon:dalvik-main space (region space)]");
	ck_assert_str_eq(proc_map_basename(pm), "[anon:dalvik-main space (region space)]");
	ck_assert_int_eq(pm->deleted, 0);

	/* a library inside base.apk, device 07:70 style (hex minor) */
	pm = proc_maps_find(m, 0x6c7b53a000);
	ck_assert_ptr_nonnull(pm);
	ck_assert_str_eq(proc_map_basename(pm), "base.apk");
	ck_assert_uint_eq(pm->offset, 0x8000);
	pm = proc_maps_find(m, 0x6cfd63a000);
	ck_assert_str_eq(pm->path, "/apex/com.android.art/lib64/libart.so");
	ck_assert_uint_eq(pm->dev_major, 7);
	ck_assert_uint_eq(pm->dev_minor, 0x70);
	proc_maps_free(m);
	free(text);

	text = testutil_fixture_text("proc/android-launcher/maps", NULL);
	m = proc_maps_parse(text, NULL);
	pm = proc_maps_find(m, 0x78d4c71000);
	ck_assert_str_eq(pm->path, "/dev/ashmem/AudioFlinger::Client(10396)");
	ck_assert_int_eq(pm->deleted, 1);
	pm = proc_maps_find(m, 0x984b4000);
	ck_assert_str_eq(pm->path, "[anon:dalvik-zygote-jit-code-cache]");
	ck_assert_uint_eq(pm->prot, PROC_MAPS_PROT_READ | PROC_MAPS_PROT_EXEC);
	pm = proc_maps_find(m, 0x798aa95000); /* execute-only: --xp */
	ck_assert_uint_eq(pm->prot, PROC_MAPS_PROT_EXEC);
	proc_maps_free(m);
	free(text);
}
END_TEST

/* Where a copy of the stack from SP stops: the end of the anonymous writable run around it */
START_TEST(test_stack_end)
{
	char *text = testutil_fixture_text("proc/threaded/maps", NULL);
	struct proc_maps *m = proc_maps_parse(text, NULL);

	/* a thread stack followed by its neighbour's guard page (---p) */
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x7f9464000000), 0x7f9464082000);
	/* a thread stack followed by another anonymous rw mapping, then libc: the run ends at
	 * libc, whose pages a copy must not read */
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x7f9465000000), 0x7f9465087000);
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x7f9465086ff8), 0x7f9465087000);
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x7ffe9ae1d000), 0x7ffe9ae1e000); /* [stack] */
	/* not stack memory: a library's data, a guard page, a hole */
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x7f946525b000), 0);
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x7f9464082800), 0);
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x7f946526a000), 0);
	proc_maps_free(m);
	free(text);

	/* Android: [anon:stack_and_tls:TID] */
	text = testutil_fixture_text("proc/android-memorylab/maps", NULL);
	m = proc_maps_parse(text, NULL);
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x6c16000000), 0x6c16005000);
	ck_assert_uint_eq(proc_maps_stack_end(m, 0x6c15efd800), 0); /* its guard page */
	proc_maps_free(m);
	free(text);
}
END_TEST

START_TEST(test_basename)
{
	struct proc_map pm = {0};

	pm.path = "";
	ck_assert_str_eq(proc_map_basename(&pm), "");
	pm.path = "/usr/lib/libc.so.6";
	ck_assert_str_eq(proc_map_basename(&pm), "libc.so.6");
	pm.path = "relative";
	ck_assert_str_eq(proc_map_basename(&pm), "relative");
	pm.path = "/dir/";
	ck_assert_str_eq(proc_map_basename(&pm), "/dir/");
	pm.path = "[anon:dalvik-/data/x.art]";
	ck_assert_str_eq(proc_map_basename(&pm), "[anon:dalvik-/data/x.art]");
}
END_TEST

START_TEST(test_hostile)
{
	static const char text[] =
	    "1000-2000 r-xp 00000000 08:01 42 /ok/first\n"
	    "garbage\n"
	    "\n"
	    "3000-2000 r-xp 00000000 08:01 42 /end/before/start\n"
	    "3000-3000 r-xp 00000000 08:01 42 /empty\n"
	    "1800-2800 r-xp 00000000 08:01 42 /overlaps/first\n"
	    "3000-4000 rwxq 00000000 08:01 42 /bad/perm\n"
	    "3000-4000 r-x 00000000 08:01 42 /short/perm\n"
	    "3000-4000 r-xp 00000000 0801 42 /no/colon\n"
	    "3000-4000 r-xp 00000000 08:01 /no/inode\n"
	    "3000-4000 r-xp 00000000 08:01 42x/junk/after/inode\n"
	    "3000-4000 r-xp 00000000 08:01 99999999999999999999999 /inode/overflow\n"
	    "10000000000000000-10000000000000001 r-xp 00000000 08:01 1 /17/digits\n"
	    "3000-4000 r-xp 00000000 123456789:01 1 /major/too/long\n"
	    "-4000 r-xp 00000000 08:01 1 /no/start\n"
	    "3000-4000\n"
	    "3000-4000 r-xp 00000000 08:01 7\n"		  /* ok: anonymous, nothing after inode */
	    "5000-6000 r--s 00001000 08:01 8 (deleted)\n" /* ok: a path "(deleted)" */
	    "6000-7000 r--p 0 0:0 0      /tmp/a (deleted) (deleted)\n" /* ok */
	    "7000-8000 r--p 00000000 08:01 9 /last/without/newline";
	struct proc_maps *m;
	size_t bad = 0;

	m = proc_maps_parse(text, &bad);
	ck_assert_uint_eq(bad, 14);
	assert_sane_maps(m);
	ck_assert_uint_eq(m->nr, 5);
	ck_assert_str_eq(m->maps[0].path, "/ok/first");
	ck_assert_uint_eq(m->maps[1].start, 0x3000);
	ck_assert_str_eq(m->maps[1].path, "");
	ck_assert_uint_eq(m->maps[1].inode, 7);
	ck_assert_str_eq(m->maps[2].path, "(deleted)");
	ck_assert_int_eq(m->maps[2].deleted, 0);
	ck_assert_uint_eq(m->maps[2].prot, PROC_MAPS_PROT_READ | PROC_MAPS_PROT_SHARED);
	ck_assert_str_eq(m->maps[3].path, "/tmp/a (deleted)");
	ck_assert_int_eq(m->maps[3].deleted, 1);
	ck_assert_str_eq(m->maps[4].path, "/last/without/newline");
	proc_maps_free(m);

	m = proc_maps_parse("", &bad);
	ck_assert_uint_eq(m->nr, 0);
	ck_assert_uint_eq(bad, 0);
	ck_assert_ptr_null(proc_maps_find(m, 0x1000));
	proc_maps_free(m);
}
END_TEST

/* Every prefix of a real file parses without crashing into a sane table; a cut inside a
 * line makes at most that line bad (or shortens its path). */
START_TEST(test_truncated)
{
	size_t len, cut, full_nr;
	char *text = testutil_fixture_text("proc/android-memorylab/maps", &len);
	struct proc_maps *full = proc_maps_parse(text, NULL);

	full_nr = full->nr;
	proc_maps_free(full);
	for (cut = 0; cut <= len; cut++) {
		char *prefix = xstrndup(text, cut);
		struct proc_maps *m;
		size_t bad;

		m = proc_maps_parse(prefix, &bad);
		assert_sane_maps(m);
		ck_assert_uint_le(bad, 1);
		ck_assert_uint_le(m->nr, full_nr);
		ck_assert_uint_ge(m->nr + bad, count_lines(prefix));
		proc_maps_free(m);
		free(prefix);
	}
	free(text);
}
END_TEST

/* Random bytes and random line-shaped junk: no crash, the invariant holds. */
START_TEST(test_garbage)
{
	static const char alphabet[] = "0123456789abcdef- :rwxps/()[]\n";
	uint64_t seed = 0x1234567;
	char buf[4096];
	int round;
	size_t i;

	for (round = 0; round < 300; round++) {
		struct proc_maps *m;

		for (i = 0; i < sizeof(buf) - 1; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			buf[i] = round % 2 ? alphabet[(seed >> 33) % (sizeof(alphabet) - 1)]
					   : (char)((seed >> 33) % 255 + 1);
		}
		buf[i] = '\0';
		m = proc_maps_parse(buf, NULL);
		assert_sane_maps(m);
		proc_maps_free(m);
	}
}
END_TEST

START_TEST(test_load_file)
{
	const char *dir = getenv("PERCH_FIXTURES");
	char *path = xasprintf("%s/proc/traced-busy/maps", dir ? dir : "fixtures");
	struct proc_maps *m = proc_maps_load_file(path);

	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->nr, 25);
	ck_assert_str_eq(proc_map_basename(proc_maps_find(m, 0x555944fdf000)), "dash");
	proc_maps_free(m);
	free(path);

	errno = 0;
	ck_assert_ptr_null(proc_maps_load_file("/nonexistent/perch/maps"));
	ck_assert_int_eq(errno, ENOENT);
	proc_maps_free(NULL);
}
END_TEST

Suite *proc_maps_suite(void)
{
	Suite *s = suite_create("proc_maps");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_threaded);
	tcase_add_test(tc, test_find_every_map);
	tcase_add_test(tc, test_android);
	tcase_add_test(tc, test_stack_end);
	tcase_add_test(tc, test_basename);
	tcase_add_test(tc, test_load_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_test(tc, test_hostile);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_garbage);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}
