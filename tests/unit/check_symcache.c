/* Unit tests for the on-disk symbolization cache (symcache.h): the line format round trip,
 * hostile and torn files, size limits, paths, and the symbolizer answering a second run from
 * the cache without reading the module's DWARF. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/symbolize.h"
#include "perch/symbols/symcache.h"
#include "sym-fixture.h"
#include "testutil.h"

struct got {
	int n;
	uint64_t vaddr[8], entry[8];
	int frames[8];
	char func[8][64], file[8][64];
	unsigned int line[8];
	int inlined[8];
	/* S, T and N lines, each as text: "S 90d90 found=1 n=1 [pc tail kind name addrs...]" */
	int nc;
	char calls[8][256];
};

static void collect_frames(void *arg, uint64_t vaddr, const struct sym_frame *f, int n,
			   uint64_t entry)
{
	struct got *g = arg;

	if (g->n == 8)
		return;
	g->vaddr[g->n] = vaddr;
	g->entry[g->n] = entry;
	g->frames[g->n] = n;
	snprintf(g->func[g->n], 64, "%s", f[0].func ? f[0].func : "(null)");
	snprintf(g->file[g->n], 64, "%s", f[0].file ? f[0].file : "(null)");
	g->line[g->n] = f[0].line;
	g->inlined[g->n] = f[0].inlined;
	g->n++;
}

static void collect_calls(void *arg, char kind, uint64_t key, int found,
			  const struct debuginfo_call *c, size_t n)
{
	struct got *g = arg;
	char *p;
	size_t left;

	if (g->nc == 8)
		return;
	p = g->calls[g->nc++];
	left = sizeof(g->calls[0]);
	p += snprintf(p, left, "%c %llx found=%d n=%zu", kind, (unsigned long long)key, found, n);
	for (size_t i = 0; i < n; i++) {
		p += sprintf(p, " [%llx %d %d %s", (unsigned long long)c[i].pc, c[i].tail,
			     c[i].kind, c[i].name ? c[i].name : "-");
		for (size_t k = 0; k < c[i].nr_addrs; k++)
			p += sprintf(p, " %llx", (unsigned long long)c[i].addrs[k]);
		p += sprintf(p, "]");
	}
}

static void collect_name(void *arg, const char *name, uint64_t addr)
{
	struct got *g = arg;

	if (g->nc < 8)
		snprintf(g->calls[g->nc++], sizeof(g->calls[0]), "N %s %llx", name,
			 (unsigned long long)addr);
}

static const struct symcache_ops collect_ops = {
    .frames = collect_frames,
    .calls = collect_calls,
    .name = collect_name,
};
#define collect (&collect_ops)

static void setup(void)
{
	testutil_tmp_setup();
}

static void teardown(void)
{
	unsetenv("PERCH_CACHE_DIR");
	setenv("PERCH_CACHE_DIR", "off", 1);
	testutil_tmp_teardown();
}

START_TEST(test_round_trip)
{
	struct sym_frame f[2] = {
	    {"inner", "/src/a.c", 10, 1},
	    {"outer(int, char const*)", "/src/a.c", 31, 0},
	};
	char *buf = NULL, path[4096];
	size_t len = 0, cap = 0;
	struct got g = {0};

	snprintf(path, sizeof(path), "%s/c", testutil_tmp);
	ck_assert_int_eq(symcache_format(0x1199, f, 2, 0x1180, &buf, &len, &cap), 0);
	f[0].file = NULL;
	f[0].func = NULL;
	ck_assert_int_eq(symcache_format(0xffffffffffffffffULL, f, 1, 0, &buf, &len, &cap), 0);
	ck_assert_int_eq(symcache_append(path, buf, len), 0);
	ck_assert_int_eq(symcache_read(path, collect, &g), 0);
	ck_assert_int_eq(g.n, 2);
	ck_assert_uint_eq(g.vaddr[0], 0x1199);
	ck_assert_uint_eq(g.entry[0], 0x1180);
	ck_assert_uint_eq(g.entry[1], 0);
	ck_assert_int_eq(g.frames[0], 2);
	ck_assert_str_eq(g.func[0], "inner");
	ck_assert_str_eq(g.file[0], "/src/a.c");
	ck_assert_uint_eq(g.line[0], 10);
	ck_assert_int_eq(g.inlined[0], 1);
	ck_assert_uint_eq(g.vaddr[1], 0xffffffffffffffffULL);
	ck_assert_str_eq(g.func[1], "(null)");
	ck_assert_str_eq(g.file[1], "(null)");
	/* a name with a tab or newline is not written */
	f[0].func = "a\tb";
	ck_assert_int_eq(symcache_format(1, f, 1, 0, &buf, &len, &cap), -EINVAL);
	f[0].func = "a\nb";
	ck_assert_int_eq(symcache_format(1, f, 1, 0, &buf, &len, &cap), -EINVAL);
	ck_assert_int_eq(symcache_format(1, f, 0, 0, &buf, &len, &cap), -EINVAL);
	ck_assert_int_eq(symcache_format(1, f, SYM_MAX_INLINE + 1, 0, &buf, &len, &cap), -EINVAL);
	free(buf);
}
END_TEST

/* S, T and N lines (call sites, tail-call lists, names) come back as written. */
START_TEST(test_round_trip_calls)
{
	static const uint64_t addrs[] = {0x90cf0, 0x91000};
	struct debuginfo_call c[3] = {
	    {.pc = 0x90d90, .kind = DEBUGINFO_TARGET_ADDRS, .addrs = addrs, .nr_addrs = 2},
	    {.pc = 0x90cff,
	     .tail = 1,
	     .kind = DEBUGINFO_TARGET_NAME,
	     .name = "__futex_abstimed_wait_cancelable64"},
	    {.pc = 0x90e00, .tail = 1, .kind = DEBUGINFO_TARGET_NONE},
	};
	char *buf = NULL, path[4096];
	size_t len = 0, cap = 0;
	struct got g = {0};

	snprintf(path, sizeof(path), "%s/c", testutil_tmp);
	ck_assert_int_eq(symcache_format_calls('S', 0x90d90, 1, c, 1, &buf, &len, &cap), 0);
	ck_assert_int_eq(symcache_format_calls('S', 0x1234, 0, NULL, 0, &buf, &len, &cap), 0);
	ck_assert_int_eq(symcache_format_calls('T', 0x90cf0, 1, c + 1, 2, &buf, &len, &cap), 0);
	ck_assert_int_eq(symcache_format_calls('T', 0x5678, 0, NULL, 0, &buf, &len, &cap), 0);
	ck_assert_int_eq(symcache_format_calls('T', 0x9abc, 1, NULL, 0, &buf, &len, &cap), 0);
	ck_assert_int_eq(symcache_format_name("sem_wait", 0x90dd0, &buf, &len, &cap), 0);
	ck_assert_int_eq(symcache_append(path, buf, len), 0);
	ck_assert_int_eq(symcache_read(path, collect, &g), 0);
	ck_assert_int_eq(g.nc, 6);
	ck_assert_str_eq(g.calls[0], "S 90d90 found=1 n=1 [90d90 0 1 - 90cf0 91000]");
	ck_assert_str_eq(g.calls[1], "S 1234 found=0 n=0");
	ck_assert_str_eq(g.calls[2],
			 "T 90cf0 found=1 n=2 [90cff 1 2 __futex_abstimed_wait_cancelable64] "
			 "[90e00 1 0 -]");
	ck_assert_str_eq(g.calls[3], "T 5678 found=0 n=0");
	ck_assert_str_eq(g.calls[4], "T 9abc found=1 n=0");
	ck_assert_str_eq(g.calls[5], "N sem_wait 90dd0");
	/* what cannot be written */
	ck_assert_int_eq(symcache_format_calls('S', 1, 1, c, 2, &buf, &len, &cap), -EINVAL);
	ck_assert_int_eq(symcache_format_calls('X', 1, 0, NULL, 0, &buf, &len, &cap), -EINVAL);
	c[1].name = "a\tb";
	ck_assert_int_eq(symcache_format_calls('T', 1, 1, c + 1, 1, &buf, &len, &cap), -EINVAL);
	c[1].name = NULL; /* a NAME target without its name */
	ck_assert_int_eq(symcache_format_calls('T', 1, 1, c + 1, 1, &buf, &len, &cap), -EINVAL);
	ck_assert_int_eq(symcache_format_name("", 1, &buf, &len, &cap), -EINVAL);
	ck_assert_int_eq(symcache_format_name("a\nb", 1, &buf, &len, &cap), -EINVAL);
	free(buf);
}
END_TEST

START_TEST(test_hostile)
{
	static const char text[] =
	    "perch-symcache 2\n"
	    "10\t1\tok\t/f.c\t3\t0\t-\n"	     /* good */
	    "zz\t1\tf\t/f.c\t3\t0\t-\n"		     /* bad address */
	    "20\t2\tf\t/f.c\t3\t1\t-\n"		     /* says 2 frames, has 1 */
	    "30\t1\tf\t/f.c\t3\t0\t-\textra\n"	     /* trailing field */
	    "31\t1\tf\t/f.c\t3\t0\n"		     /* no entry field (version 1) */
	    "40\t99\tf\t/f.c\t3\t0\t-\n"	     /* more frames than SYM_MAX_INLINE */
	    "50\t1\tf\t/f.c\t-3\t0\t-\n"	     /* negative line */
	    "60\t1\tf\t/f.c\t3\t2\t-\n"		     /* inlined not 0/1 */
	    "70\t0\n"				     /* no frames */
	    "S\t10\t1\n"			     /* a call site without its fields */
	    "S\t10\t2\t1\t0\t0\t\t0\t2\t0\t0\t\t0\n" /* two sites under one return pc */
	    "T\t10\t1\t1\t0\t1\t\t0\n"		     /* ADDRS without addresses */
	    "T\t10\t1\t1\t0\t2\t\t0\n"		     /* NAME without a name */
	    "T\t10\t1\t1\t0\t9\tx\t0\n"		     /* unknown kind */
	    "T\t10\t1\t1\t0\t0\t\t0\textra\n"	     /* trailing field */
	    "N\t10\n"				     /* a name line without its name */
	    "\n"
	    "perch-symcache 2\n"	/* a second writer's header */
	    "80\t1\tlast\t\t0\t0\t1f\n" /* good */
	    "90\t1\ttorn\t/f.c";	/* a run still writing: no newline */
	char path[4096];
	struct got g = {0};

	snprintf(path, sizeof(path), "%s/h", testutil_tmp);
	testutil_write_file(path, text, sizeof(text) - 1);
	ck_assert_int_eq(symcache_read(path, collect, &g), 0);
	ck_assert_int_eq(g.n, 2);
	ck_assert_int_eq(g.nc, 0);
	ck_assert_uint_eq(g.vaddr[0], 0x10);
	ck_assert_uint_eq(g.vaddr[1], 0x80);
	ck_assert_uint_eq(g.entry[1], 0x1f);
	ck_assert_str_eq(g.file[1], "(null)");
	/* a version 1 file is not read */
	{
		static const char v1[] = "perch-symcache 1\n10\t1\tok\t/f.c\t3\t0\n";

		testutil_write_file(path, v1, sizeof(v1) - 1);
	}
	ck_assert_int_eq(symcache_read(path, collect, &g), -EINVAL);
	/* no header: not a cache file */
	testutil_write_file(path, "10\t1\tok\t/f.c\t3\t0\n", 18);
	ck_assert_int_eq(symcache_read(path, collect, &g), -EINVAL);
	ck_assert_int_eq(symcache_read(testutil_tmp, collect, &g), -EINVAL); /* a directory */
	ck_assert_int_eq(symcache_read("/nonexistent/x", collect, &g), -ENOENT);
}
END_TEST

START_TEST(test_size_limit)
{
	char path[4096];
	struct got g = {0};
	int fd;

	snprintf(path, sizeof(path), "%s/big", testutil_tmp);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "perch-symcache 2\n", 17), 17);
	ck_assert_int_eq(ftruncate(fd, SYMCACHE_MAX_BYTES + 1), 0);
	close(fd);
	ck_assert_int_eq(symcache_read(path, collect, &g), -EFBIG);
	ck_assert_int_eq(symcache_append(path, "1\t1\tf\t/f\t1\t0\n", 13), -EFBIG);
}
END_TEST

START_TEST(test_paths)
{
	static const uint8_t id[] = {0xcf, 0xd5, 0x30, 0xa2};
	char buf[4096];

	setenv("PERCH_CACHE_DIR", "/c", 1);
	ck_assert_int_eq(symcache_path(id, sizeof(id), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/c/symbols-v2/cf/d530a2");
	ck_assert_int_eq(symcache_path(id, 0, buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(symcache_path(id, sizeof(id), buf, 10), -ENAMETOOLONG);
	setenv("PERCH_CACHE_DIR", "off", 1);
	ck_assert_int_eq(symcache_path(id, sizeof(id), buf, sizeof(buf)), -ENOENT);
	unsetenv("PERCH_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "/x", 1);
	ck_assert_int_eq(symcache_path(id, sizeof(id), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/x/perch/symbols-v2/cf/d530a2");
	unsetenv("XDG_CACHE_HOME");
}
END_TEST

/* The first symbolizer reads the DWARF and leaves its answers in the cache; a second one gets
 * the same frames without loading the module; a changed answer in the file is believed (the
 * build-id is the key), which shows that the second answer came from the cache. */
START_TEST(test_symbolizer_uses_cache)
{
	struct elffile *ef = elffile_open(SYMFIX_DIR "prog.dbglink");
	struct sym_frame a[SYM_MAX_INLINE], b[SYM_MAX_INLINE];
	char func[SYM_MAX_INLINE][128], file[SYM_MAX_INLINE][256];
	struct symbolizer *s;
	char path[4096];
	int na, nb;

	ck_assert_ptr_nonnull(ef);
	ck_assert_uint_gt(ef->build_id_len, 0);
	setenv("PERCH_CACHE_DIR", testutil_tmp, 1);
	s = symbolizer_new(testutil_tmp, NULL);
	na = symbolizer_lookup(s, ef, 0x1199, a, SYM_MAX_INLINE);
	ck_assert_int_eq(na, 2);
	ck_assert_int_eq(symbolizer_modules_loaded(s), 1);
	for (int i = 0; i < na; i++) { /* the strings belong to the symbolizer */
		snprintf(func[i], sizeof(func[i]), "%s", a[i].func);
		snprintf(file[i], sizeof(file[i]), "%s", a[i].file);
	}
	symbolizer_free(s); /* writes the cache */

	ck_assert_int_eq(symcache_path(ef->build_id, ef->build_id_len, path, sizeof(path)), 0);
	ck_assert_int_eq(access(path, R_OK), 0);
	s = symbolizer_new(testutil_tmp, NULL);
	nb = symbolizer_lookup(s, ef, 0x1199, b, SYM_MAX_INLINE);
	ck_assert_int_eq(nb, na);
	for (int i = 0; i < na; i++) {
		ck_assert_str_eq(b[i].func, func[i]);
		ck_assert_str_eq(b[i].file, file[i]);
		ck_assert_uint_eq(b[i].line, a[i].line);
		ck_assert_int_eq(b[i].inlined, a[i].inlined);
	}
	ck_assert_int_eq(symbolizer_modules_loaded(s), 0);
	symbolizer_free(s);

	{
		static const char fake[] = "perch-symcache 2\n1199\t1\tfrom_cache\t/c.c\t7\t0\t-\n";

		testutil_write_file(path, fake, sizeof(fake) - 1);
	}
	s = symbolizer_new(testutil_tmp, NULL);
	nb = symbolizer_lookup(s, ef, 0x1199, b, SYM_MAX_INLINE);
	ck_assert_int_eq(nb, 1);
	ck_assert_str_eq(b[0].func, "from_cache");
	symbolizer_free(s);

	/* cache off: DWARF again */
	setenv("PERCH_CACHE_DIR", "off", 1);
	s = symbolizer_new(testutil_tmp, NULL);
	nb = symbolizer_lookup(s, ef, 0x1199, b, SYM_MAX_INLINE);
	ck_assert_int_eq(nb, 2);
	ck_assert_int_eq(symbolizer_modules_loaded(s), 1);
	symbolizer_free(s);
	elffile_free(ef);
}
END_TEST

Suite *symcache_suite(void)
{
	Suite *s = suite_create("symcache");
	TCase *tc = tcase_create("symcache");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_round_trip_calls);
	tcase_add_test(tc, test_hostile);
	tcase_add_test(tc, test_size_limit);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_symbolizer_uses_cache);
	suite_add_tcase(s, tc);
	return s;
}
