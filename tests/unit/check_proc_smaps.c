/* Unit tests for proc-smaps: real Linux and Android captures from fixtures/, checked against
 * the kernel's own smaps_rollup and the capture README's sums; hostile and truncated input. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/proc/proc-smaps.h"
#include "testutil.h"

/* Header lines start with a lower-case hex address; field keys start with a capital. */
static size_t count_headers(const char *text)
{
	const char *p = text;
	size_t n = 0;

	for (; *p; p = strchrnul(p, '\n'), p += *p == '\n') {
		if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
			n++;
	}
	return n;
}

/* Sum of "@key: N kB" over every line, computed without the parser. */
static uint64_t sum_key(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;
	uint64_t sum = 0;

	for (; *p; p = strchrnul(p, '\n'), p += *p == '\n') {
		if (!strncmp(p, key, klen) && p[klen] == ':')
			sum += strtoull(p + klen + 1, NULL, 10);
	}
	return sum;
}

/* The table invariant, and total == sum of the entries. */
static void assert_sane(const struct proc_smaps *s)
{
	struct proc_smaps_usage sum;
	size_t i;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < s->nr; i++) {
		ck_assert_ptr_nonnull(s->maps[i].map.path);
		ck_assert_uint_lt(s->maps[i].map.start, s->maps[i].map.end);
		if (i)
			ck_assert_uint_le(s->maps[i - 1].map.end, s->maps[i].map.start);
		proc_smaps_usage_add(&sum, &s->maps[i].u);
	}
	ck_assert_mem_eq(&sum, &s->total, sizeof(sum));
}

static const struct proc_smap *find_path(const struct proc_smaps *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->maps[i].map.path, path))
			return &s->maps[i];
	return NULL;
}

/* Every Linux capture against smaps_rollup read from the same paused process. */
START_TEST(test_linux_vs_rollup)
{
	static const char *const cases[] = {"small", "malloc50", "waiters"};
	char *rel = xasprintf("smaps/%s/smaps", cases[_i]);
	char *rrel = xasprintf("smaps/%s/smaps_rollup", cases[_i]);
	char *text = testutil_fixture_text(rel, NULL), *rtext = testutil_fixture_text(rrel, NULL);
	struct proc_smaps_rollup r;
	struct proc_smaps *s = proc_smaps_parse(text);

	ck_assert_uint_eq(s->bad_lines, 0);
	ck_assert_uint_eq(s->nr, count_headers(text));
	assert_sane(s);
	ck_assert_int_eq(proc_smaps_rollup_parse(rtext, &r), 0);
	ck_assert_uint_eq(r.bad_lines, 0);
	/* the rollup spans the first to the last mapping but the [vsyscall] gate page */
	ck_assert_uint_eq(r.start, s->maps[0].map.start);
	ck_assert_str_eq(s->maps[s->nr - 1].map.path, "[vsyscall]");
	ck_assert_uint_eq(r.end, s->maps[s->nr - 2].map.end);
	ck_assert_uint_eq(s->total.rss, r.u.rss);
	ck_assert_uint_eq(s->total.pss_dirty, r.u.pss_dirty);
	ck_assert_uint_eq(s->total.shared_clean, r.u.shared_clean);
	ck_assert_uint_eq(s->total.shared_dirty, r.u.shared_dirty);
	ck_assert_uint_eq(s->total.private_clean, r.u.private_clean);
	ck_assert_uint_eq(s->total.private_dirty, r.u.private_dirty);
	ck_assert_uint_eq(s->total.anonymous, r.u.anonymous);
	ck_assert_uint_eq(s->total.referenced, r.u.referenced);
	ck_assert_uint_eq(s->total.swap, r.u.swap);
	ck_assert_uint_eq(s->total.swap_pss, r.u.swap_pss);
	/* the kernel rounds each mapping's Pss down to kB, the rollup only once */
	ck_assert_uint_le(s->total.pss, r.u.pss);
	ck_assert_uint_lt(r.u.pss - s->total.pss, s->nr);
	/* and the parser's sums match a plain scan of the text */
	ck_assert_uint_eq(s->total.pss, sum_key(text, "Pss"));
	ck_assert_uint_eq(s->total.size, sum_key(text, "Size"));
	ck_assert_uint_eq(s->total.swap_pss, sum_key(text, "SwapPss"));
	/* rollup-only fields; per-mapping Pss_Dirty on this 6.x kernel */
	ck_assert(r.has & PROC_SMAPS_HAS_PSS_ANON);
	ck_assert(!(s->has & PROC_SMAPS_HAS_PSS_ANON));
	ck_assert(s->has & PROC_SMAPS_HAS_PSS_DIRTY);
	ck_assert_uint_eq(r.u.pss_anon + r.u.pss_file + r.u.pss_shmem, r.u.pss);
	proc_smaps_free(s);
	free(text);
	free(rtext);
	free(rel);
	free(rrel);
}
END_TEST

START_TEST(test_linux_entries)
{
	char *text = testutil_fixture_text("smaps/malloc50/smaps", NULL);
	struct proc_smaps *s = proc_smaps_parse(text);
	const struct proc_smap *heap, *libc;
	size_t i;
	int found_big = 0;

	/* 55d0b1ba2000-55d0b1bc3000 rw-p 00000000 00:00 0    [heap]: Rss 4 kB, all private */
	heap = find_path(s, "[heap]");
	ck_assert_ptr_nonnull(heap);
	ck_assert_uint_eq(heap->map.prot, PROC_MAPS_PROT_READ | PROC_MAPS_PROT_WRITE);
	ck_assert_uint_eq(heap->u.size, (heap->map.end - heap->map.start) / 1024);
	ck_assert_uint_eq(proc_smaps_uss(&heap->u), heap->u.rss);
	/* libc's text is shared: Pss below Rss */
	libc = NULL;
	for (i = 0; i < s->nr; i++)
		if ((s->maps[i].map.prot & PROC_MAPS_PROT_EXEC) &&
		    strstr(s->maps[i].map.path, "/libc.so.6"))
			libc = &s->maps[i];
	ck_assert_ptr_nonnull(libc);
	ck_assert_uint_ne(libc->map.inode, 0);
	ck_assert_uint_gt(libc->u.rss, libc->u.pss);
	ck_assert_uint_gt(libc->u.shared_clean, 0);
	/* the 50 MB malloc is one anonymous mapping with (at least) 50 MB resident, private */
	for (i = 0; i < s->nr; i++) {
		const struct proc_smap *m = &s->maps[i];

		if (!m->map.path[0] && m->u.rss >= 50 * 1024) {
			found_big++;
			ck_assert_uint_eq(m->u.private_dirty, m->u.rss);
			ck_assert_uint_eq(m->u.anonymous, m->u.rss);
			ck_assert_uint_eq(m->u.pss, m->u.rss);
		}
	}
	ck_assert_int_eq(found_big, 1);
	proc_smaps_free(s);
	free(text);
}
END_TEST

/* Android: "Name:" lines, " (deleted)", no Pss_Dirty; sums from the capture's README. */
START_TEST(test_android)
{
	static const struct {
		const char *rel;
		uint64_t pss, swap_pss;
	} cases[] = {
	    {"android-meminfo/memorylab/smaps", 282363, 162},
	    {"android-meminfo/launcher/smaps", 121304, 0},
	};
	char *text = testutil_fixture_text(cases[_i].rel, NULL);
	struct proc_smaps *s = proc_smaps_parse(text);
	size_t i, deleted = 0;

	ck_assert_uint_eq(s->bad_lines, 0);
	ck_assert_uint_eq(s->nr, count_headers(text));
	assert_sane(s);
	ck_assert_uint_eq(s->total.pss, cases[_i].pss);
	ck_assert_uint_eq(s->total.swap_pss, cases[_i].swap_pss);
	ck_assert(!(s->has & PROC_SMAPS_HAS_PSS_DIRTY));
	for (i = 0; i < s->nr; i++) {
		if (!s->maps[i].map.deleted)
			continue;
		deleted++;
		ck_assert_ptr_null(strstr(s->maps[i].map.path, "(deleted)"));
	}
	ck_assert_uint_gt(deleted, 0);
	proc_smaps_free(s);
	free(text);
}
END_TEST

START_TEST(test_load_file)
{
	char *path = testutil_fixture_path("smaps/small/smaps"),
	     *rpath = testutil_fixture_path("smaps/small/smaps_rollup");
	struct proc_smaps_rollup r;
	struct proc_smaps *s;

	s = proc_smaps_load_file(path);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->nr, 24);
	proc_smaps_free(s);
	ck_assert_int_eq(proc_smaps_rollup_load_file(rpath, &r), 0);
	ck_assert_uint_gt(r.u.rss, 0);
	errno = 0;
	ck_assert_ptr_null(proc_smaps_load_file("fixtures/no/such/smaps"));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(proc_smaps_rollup_load_file("fixtures/no/such/rollup", &r), -ENOENT);
	proc_smaps_free(NULL);
	free(path);
	free(rpath);
}
END_TEST

static const char two_maps[] = "00400000-00401000 r-xp 00000000 fe:00 12  /bin/a\n"
			       "Rss:                   4 kB\n"
			       "Pss:                   4 kB\n"
			       "Private_Clean:         4 kB\n"
			       "VmFlags: rd ex mr mw me\n"
			       "00600000-00602000 rw-p 00000000 00:00 0\n"
			       "Rss:                   8 kB\n"
			       "Private_Dirty:         8 kB\n"
			       "Anonymous:             8 kB\n";

START_TEST(test_hostile)
{
	static const struct {
		const char *text;
		size_t nr, bad;
		uint64_t rss;
	} cases[] = {
	    /* a field line before any header */
	    {"Rss: 4 kB\n00400000-00401000 r--p 00000000 00:00 0\nRss: 4 kB\n", 1, 1, 4},
	    /* value overflow, missing unit, negative, trailing junk */
	    {"00400000-00401000 r--p 00000000 00:00 0\nRss: 99999999999999999999999 kB\n"
	     "Pss: 4\nSwap: -4 kB\nLocked: 4 kB x\nAnonymous: 4 kB\n",
	     1, 4, 0},
	    /* a bad header: its fields must not land on the previous mapping */
	    {"00400000-00401000 r--p 00000000 00:00 0\nRss: 4 kB\n"
	     "00500000-00400000 r--p 00000000 00:00 0\nRss: 100 kB\nPss: 100 kB\n",
	     1, 3, 4},
	    /* overlap with the previous mapping */
	    {"00400000-00402000 r--p 00000000 00:00 0\nRss: 4 kB\n"
	     "00401000-00403000 r--p 00000000 00:00 0\nRss: 100 kB\n",
	     1, 2, 4},
	    /* bad prot, short device, no inode */
	    {"00400000-00401000 rwzp 00000000 00:00 0\n00400000-00401000 r--p 0 0 0\n"
	     "00400000-00401000 r--p 00000000 00:00\n",
	     0, 3, 0},
	    /* unknown keys and non-kB lines are fine; garbage without a colon is not */
	    {"00400000-00401000 r--p 00000000 00:00 0\nFutureField: 12 kB\nTHPeligible: 0\n"
	     "Rss: 4 kB\nthis is not a field\n: 4 kB\n",
	     1, 2, 4},
	    /* saturating sums */
	    {"00400000-00401000 r--p 00000000 00:00 0\nRss: 18446744073709551615 kB\n"
	     "00500000-00501000 r--p 00000000 00:00 0\nRss: 5 kB\n",
	     2, 0, UINT64_MAX},
	    {"", 0, 0, 0},
	    {"\n\n\n", 0, 0, 0},
	};
	struct proc_smaps *s = proc_smaps_parse(cases[_i].text);

	ck_assert_uint_eq(s->nr, cases[_i].nr);
	ck_assert_uint_eq(s->bad_lines, cases[_i].bad);
	ck_assert_uint_eq(s->total.rss, cases[_i].rss);
	if (s->nr)
		assert_sane(s);
	proc_smaps_free(s);
}
END_TEST

START_TEST(test_overlong)
{
	size_t n = PROC_SMAPS_MAX_LINE + 100;
	char *path = xmalloc(n + 1), *text;
	struct proc_smaps *s;

	memset(path, 'x', n);
	path[0] = '/';
	path[n] = '\0';
	text = xasprintf("00400000-00401000 r--p 00000000 00:00 0 %s\nRss: 4 kB\n"
			 "00500000-00501000 r--p 00000000 00:00 0 /ok\nRss: 8 kB\n",
			 path);
	s = proc_smaps_parse(text);
	/* the overlong header and its orphaned field are dropped, the next entry is kept */
	ck_assert_uint_eq(s->nr, 1);
	ck_assert_uint_eq(s->bad_lines, 2);
	ck_assert_str_eq(s->maps[0].map.path, "/ok");
	ck_assert_uint_eq(s->total.rss, 8);
	proc_smaps_free(s);
	free(text);
	free(path);
}
END_TEST

/* Every prefix of a real capture parses into a sane table no larger than the whole. */
START_TEST(test_truncated)
{
	char *text = testutil_fixture_text("smaps/waiters/smaps", NULL);
	size_t len = strlen(text), cut;
	struct proc_smaps *full = proc_smaps_parse(text);

	for (cut = 0; cut < len; cut += 7) {
		char *part = xstrndup(text, cut);
		struct proc_smaps *s = proc_smaps_parse(part);

		ck_assert_uint_le(s->nr, full->nr);
		ck_assert_uint_le(s->total.rss, full->total.rss);
		ck_assert_uint_le(s->bad_lines, 1); /* only the cut line can be bad */
		assert_sane(s);
		proc_smaps_free(s);
		free(part);
	}
	proc_smaps_free(full);
	free(text);
}
END_TEST

START_TEST(test_garbage)
{
	unsigned int seed = 12345;
	int round;

	for (round = 0; round < 300; round++) {
		size_t len = (size_t)(rand_r(&seed) % 4096), i;
		char *buf = xmalloc(len + 1);
		struct proc_smaps *s;
		struct proc_smaps_rollup r;

		for (i = 0; i < len; i++) {
			/* mostly smaps-like characters so some lines get far into the parser */
			static const char alphabet[] = "0123456789abcdef-: \nrwxps kBRssPz()[]/";
			int c = rand_r(&seed);

			buf[i] = c & 0x100 ? (char)(c >> 9 | 1)
					   : alphabet[(c >> 9) % (sizeof(alphabet) - 1)];
		}
		buf[len] = '\0';
		s = proc_smaps_parse(buf);
		assert_sane(s);
		proc_smaps_free(s);
		proc_smaps_rollup_parse(buf, &r);
		free(buf);
	}
	/* and mutations of a real file: flip bytes, parse, never crash */
	{
		char *text = testutil_fixture_text("smaps/small/smaps", NULL);
		size_t len = strlen(text);

		for (round = 0; round < 200; round++) {
			char *copy = xstrdup(text);
			struct proc_smaps *s;
			int k;

			for (k = 0; k < 8; k++)
				copy[(size_t)rand_r(&seed) % len] = (char)(rand_r(&seed) % 255 + 1);
			s = proc_smaps_parse(copy);
			assert_sane(s);
			proc_smaps_free(s);
			free(copy);
		}
		free(text);
	}
}
END_TEST

START_TEST(test_rollup_hostile)
{
	struct proc_smaps_rollup r;

	ck_assert_int_eq(proc_smaps_rollup_parse("", &r), -EINVAL);
	ck_assert_int_eq(proc_smaps_rollup_parse("Rss: 4 kB\n", &r), -EINVAL);
	/* header but no field */
	ck_assert_int_eq(
	    proc_smaps_rollup_parse("00400000-7fff0000 ---p 00000000 00:00 0 [rollup]\n", &r),
	    -EINVAL);
	/* a second header is bad, its fields still count (it is one process) */
	ck_assert_int_eq(
	    proc_smaps_rollup_parse("00400000-7fff0000 ---p 00000000 00:00 0 [rollup]\n"
				    "Rss: 4 kB\n"
				    "00400000-7fff0000 ---p 00000000 00:00 0 [rollup]\n",
				    &r),
	    0);
	ck_assert_uint_eq(r.bad_lines, 1);
	ck_assert_uint_eq(r.u.rss, 4);
	ck_assert_uint_eq(r.start, 0x400000);
	ck_assert_uint_eq(r.end, 0x7fff0000);
}
END_TEST

START_TEST(test_two_maps)
{
	struct proc_smaps *s = proc_smaps_parse(two_maps);

	ck_assert_uint_eq(s->nr, 2);
	ck_assert_uint_eq(s->bad_lines, 0);
	ck_assert_str_eq(s->maps[0].map.path, "/bin/a");
	ck_assert_str_eq(s->maps[1].map.path, "");
	ck_assert_uint_eq(s->maps[0].map.prot, PROC_MAPS_PROT_READ | PROC_MAPS_PROT_EXEC);
	ck_assert_uint_eq(s->maps[0].map.inode, 12);
	ck_assert_uint_eq(s->maps[0].u.private_clean, 4);
	ck_assert_uint_eq(s->maps[1].u.private_dirty, 8);
	ck_assert_uint_eq(s->total.rss, 12);
	ck_assert_uint_eq(proc_smaps_uss(&s->total), 12);
	ck_assert_uint_eq(s->has, PROC_SMAPS_HAS_RSS | PROC_SMAPS_HAS_PSS |
				      PROC_SMAPS_HAS_PRIVATE_CLEAN | PROC_SMAPS_HAS_PRIVATE_DIRTY |
				      PROC_SMAPS_HAS_ANONYMOUS);
	proc_smaps_free(s);
}
END_TEST

Suite *proc_smaps_suite(void)
{
	Suite *s = suite_create("proc_smaps");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_linux_vs_rollup, 0, 3);
	tcase_add_test(tc, test_linux_entries);
	tcase_add_loop_test(tc, test_android, 0, 2);
	tcase_add_test(tc, test_load_file);
	tcase_add_test(tc, test_two_maps);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_loop_test(tc, test_hostile, 0, 9);
	tcase_add_test(tc, test_overlong);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_rollup_hostile);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}
