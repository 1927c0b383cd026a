/* Unit tests for tail-call frames (tailcall.c over debuginfo.c's call sites): programs with
 * tail calls (fixtures/elf/tailcall/tail.c) built here by gcc and clang, run under gdb to a
 * breakpoint in leaf(); gdb's frames say which are tail-call frames (gdb.TAILCALL_FRAME) and
 * their pcs. perch, given the real frames' pcs only, must find the same tail-call frames
 * between each pair: a unique chain, an ambiguous one (none), one whose paths share their end,
 * a function that tail-calls itself. Built -no-pie, so gdb's addresses are the file's. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/symbolize.h"
#include "perch/unwind/tailcall.h"
#include "testutil.h"

#define MAX_FRAMES 32

static const char gdb_script[] = "import gdb, sys\n"
				 "gdb.execute('set pagination off')\n"
				 "gdb.execute('set confirm off')\n"
				 "gdb.Breakpoint('leaf')\n"
				 "for v in ['chain', 'ambiguous', 'common', 'count']:\n"
				 "    gdb.execute('run %s' % v, to_string=True)\n"
				 "    f = gdb.newest_frame()\n"
				 "    print('variant', v)\n"
				 "    while f is not None:\n"
				 "        t = 1 if f.type() == gdb.TAILCALL_FRAME else 0\n"
				 "        print('F 0x%x %d %s' % (f.pc(), t, f.name()))\n"
				 "        if f.name() == 'main':\n"
				 "            break\n"
				 "        f = f.older()\n"
				 "    gdb.execute('kill', to_string=True)\n";

struct gframe {
	uint64_t pc;
	int tail;
	char name[64];
};

struct variant {
	char name[32];
	struct gframe f[MAX_FRAMES];
	int n;
};

static struct elffile *the_ef;

/* One module: the program, not relocated (-no-pie). */
static int locate(void *arg, uint64_t addr, const struct elffile **ef, uint64_t *bias)
{
	(void)arg;
	for (size_t i = 0; i < the_ef->nr_loads; i++) {
		const struct elffile_load *l = &the_ef->loads[i];

		if (addr >= l->vaddr && addr - l->vaddr < l->memsz) {
			*ef = the_ef;
			*bias = 0;
			return 0;
		}
	}
	return -ENOENT;
}

/* gdb's frames at leaf() for every variant. */
static int gdb_frames(const char *bin, struct variant *v, int max)
{
	char *script = testutil_tmp_file("tail.py", gdb_script, strlen(gdb_script));
	char *cmd = xasprintf("gdb -nx -batch -x %s %s 2>&1", script, bin), *out, *line,
	     *save = NULL;
	int st, nv = 0;

	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s: %s", cmd, out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct gframe g;

		if (!strncmp(line, "variant ", 8) && nv < max) {
			snprintf(v[nv].name, sizeof(v[nv].name), "%s", line + 8);
			v[nv++].n = 0;
		} else if (nv && sscanf(line, "F %lx %d %63s", &g.pc, &g.tail, g.name) == 3 &&
			   v[nv - 1].n < MAX_FRAMES) {
			v[nv - 1].f[v[nv - 1].n++] = g;
		}
	}
	free(out);
	free(cmd);
	free(script);
	return nv;
}

/* perch's tail-call frames between every pair of real frames, against gdb's. Returns how
 * many tail-call frames gdb showed. */
static int check_variant(struct tailcall *tc, const char *build, const struct variant *v)
{
	int callee = 0, shown = 0;

	ck_assert_msg(v->n >= 2 && !v->f[0].tail && !strcmp(v->f[v->n - 1].name, "main"),
		      "%s %s: gdb did not stop in leaf under main", build, v->name);
	while (callee < v->n - 1) {
		uint64_t got[TAILCALL_MAX];
		int caller = callee + 1, want = 0, n;

		while (caller < v->n && v->f[caller].tail)
			caller++;
		ck_assert_int_lt(caller, v->n);
		want = caller - callee - 1;
		n = tailcall_frames(tc, v->f[caller].pc,
				    callee ? v->f[callee].pc - 1 : v->f[callee].pc, got,
				    TAILCALL_MAX);
		ck_assert_msg(n == want, "%s %s: %d tail-call frames between %s and %s, gdb has %d",
			      build, v->name, n, v->f[callee].name, v->f[caller].name, want);
		for (int i = 0; i < n; i++)
			ck_assert_msg(got[i] == v->f[callee + 1 + i].pc,
				      "%s %s: tail-call frame %d at 0x%llx, gdb has 0x%llx (%s)",
				      build, v->name, i, (unsigned long long)got[i],
				      (unsigned long long)v->f[callee + 1 + i].pc,
				      v->f[callee + 1 + i].name);
		/* the second time from the cache */
		ck_assert_int_eq(tailcall_frames(tc, v->f[caller].pc,
						 callee ? v->f[callee].pc - 1 : v->f[callee].pc,
						 got, TAILCALL_MAX),
				 n);
		shown += want;
		callee = caller;
	}
	return shown;
}

START_TEST(test_gdb_chains)
{
	static const char *const builds[] = {
	    "gcc -O2 -g",
	    "gcc -O2 -gdwarf-4",
	    "gcc -O3 -g",
	    "clang-14 -O2 -gdwarf-4",
	    "clang-14 -O2 -gdwarf-5",
	};
	char *src = testutil_fixture_path("elf/tailcall/tail.c");

	if (!testutil_have_tool("gdb"))
		return;
	for (size_t b = 0; b < sizeof(builds) / sizeof(builds[0]); b++) {
		char *bin = testutil_tmp_path("tail"), *cmd, *out;
		struct variant v[4];
		struct symbolizer *s;
		struct tailcall *tc;
		int st, nv, shown = 0, clang5 = !strcmp(builds[b], "clang-14 -O2 -gdwarf-5");

		if (!strncmp(builds[b], "clang", 5) && !testutil_have_tool("clang-14"))
			continue;
		cmd = xasprintf("%s -no-pie -o %s %s", builds[b], bin, src);
		out = testutil_run(cmd, &st);
		ck_assert_msg(st == 0, "%s: %s", cmd, out);
		free(out);
		free(cmd);
		nv = gdb_frames(bin, v, 4);
		ck_assert_int_eq(nv, 4);
		the_ef = elffile_open(bin);
		ck_assert_ptr_nonnull(the_ef);
		s = symbolizer_new(testutil_tmp, NULL);
		tc = tailcall_new(s, locate, NULL);
		for (int i = 0; i < nv; i++)
			shown += check_variant(tc, builds[b], &v[i]);
		/* gcc's call sites give gdb the chain, the shared end and the self call (clang's
		 * DWARF 5 tail calls have DW_AT_call_pc but no return pc: gdb and perch skip them)
		 */
		if (!clang5)
			ck_assert_int_ge(shown, 5);
		tailcall_flush(tc);
		ck_assert_int_eq(check_variant(tc, builds[b], &v[0]), clang5 ? 0 : 3);
		tailcall_free(tc);
		symbolizer_free(s);
		elffile_free(the_ef);
		free(bin);
	}
	free(src);
}
END_TEST

/* The resolver's order: name each frame (symbolizer_lookup), then ask for tail-call frames.
 * Run twice with an on-disk cache: the second symbolizer must give the same frames without
 * reading the module (symcache.h keeps call sites, tail-call lists, entries and names). */
START_TEST(test_from_cache)
{
	char *src = testutil_fixture_path("elf/tailcall/tail.c");
	char *bin = testutil_tmp_path("tail"), *cmd, *out;
	struct variant v[4];
	int st, nv;

	if (!testutil_have_tool("gdb"))
		return;
	cmd = xasprintf("gcc -O2 -g -no-pie -o %s %s", bin, src);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s: %s", cmd, out);
	nv = gdb_frames(bin, v, 4);
	ck_assert_int_eq(nv, 4);
	the_ef = elffile_open(bin);
	ck_assert_ptr_nonnull(the_ef);
	setenv("PERCH_CACHE_DIR", testutil_tmp, 1);
	for (int run = 0; run < 2; run++) {
		struct symbolizer *s = symbolizer_new(testutil_tmp, NULL);
		struct tailcall *tc = tailcall_new(s, locate, NULL);
		struct sym_frame f[SYM_MAX_INLINE];
		int shown = 0;

		for (int i = 0; i < nv; i++) {
			for (int k = 0; k < v[i].n; k++)
				if (!v[i].f[k].tail)
					symbolizer_lookup(s, the_ef,
							  k ? v[i].f[k].pc - 1 : v[i].f[k].pc, f,
							  SYM_MAX_INLINE);
			shown += check_variant(tc, run ? "cached" : "first", &v[i]);
		}
		ck_assert_int_ge(shown, 5);
		ck_assert_int_eq(symbolizer_modules_loaded(s), run ? 0 : 1);
		tailcall_free(tc);
		symbolizer_free(s); /* writes the cache */
	}
	setenv("PERCH_CACHE_DIR", "off", 1);
	elffile_free(the_ef);
	free(out);
	free(cmd);
	free(bin);
	free(src);
}
END_TEST

START_TEST(test_no_dwarf)
{
	char *src = testutil_fixture_path("elf/tailcall/tail.c");
	char *bin = testutil_tmp_path("tail-nodbg"), *cmd, *out;
	struct symbolizer *s;
	struct tailcall *tc;
	uint64_t f[TAILCALL_MAX];
	int st;

	cmd = xasprintf("gcc -O2 -no-pie -o %s %s", bin, src);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s: %s", cmd, out);
	the_ef = elffile_open(bin);
	ck_assert_ptr_nonnull(the_ef);
	s = symbolizer_new(testutil_tmp, NULL);
	tc = tailcall_new(s, locate, NULL);
	/* no call sites: nothing, for any pair, and no crash on nonsense */
	for (uint64_t a = 0x401000; a < 0x401400; a += 7)
		ck_assert_int_eq(tailcall_frames(tc, a, a + 3, f, TAILCALL_MAX), 0);
	ck_assert_int_eq(tailcall_frames(tc, 0, 0x401000, f, TAILCALL_MAX), 0);
	ck_assert_int_eq(tailcall_frames(tc, 0x401000, 0x401000, f, 0), 0);
	ck_assert_int_eq(tailcall_frames(NULL, 0x401000, 0x401000, f, 4), 0);
	tailcall_free(tc);
	tailcall_free(NULL);
	symbolizer_free(s);
	elffile_free(the_ef);
	free(out);
	free(cmd);
	free(bin);
	free(src);
}
END_TEST

Suite *tailcall_suite(void)
{
	Suite *s = suite_create("tailcall");
	TCase *tc = tcase_create("gdb");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_gdb_chains);
	tcase_add_test(tc, test_from_cache);
	tcase_add_test(tc, test_no_dwarf);
	tcase_set_timeout(tc, 240);
	suite_add_tcase(s, tc);
	return s;
}
