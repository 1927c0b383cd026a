/* The e2e harness's own parsers (folded lines, perch dump, gdb backtraces, the summary) on
 * known-good samples and on garbage. Needs no ptrace, so it is tagged "e2e" only. */
#include <errno.h>
#include <string.h>

#include "harness.h"

START_TEST(harness_folded_good)
{
	struct harness_folded f;

	harness_folded_parse(&f,
			     "lc-worker-99;clone3;start_thread;burn_a 2\n"
			     "main_thread-12;_start;main;f0 (chain_f0.c:7);Worker<int>::run() 3\n");
	ck_assert_uint_eq(f.nr_bad, 0);
	ck_assert_uint_eq(f.nr, 2);
	ck_assert_uint_eq(f.total, 5);
	ck_assert_str_eq(f.lines[0].thread, "lc-worker");
	ck_assert_int_eq(f.lines[0].tid, 99);
	ck_assert_uint_eq(f.lines[0].nr_frames, 3);
	ck_assert_str_eq(f.lines[1].frames[2], "f0 (chain_f0.c:7)");
	ck_assert(harness_frame_is(f.lines[1].frames[2], "f0"));
	ck_assert(!harness_frame_is(f.lines[1].frames[2], "f"));
	ck_assert(harness_frame_is(f.lines[1].frames[3], "Worker<int>::run"));
	ck_assert(harness_line_has_seq(&f.lines[1], HARNESS_ARGV("main", "f0"), 2));
	ck_assert(!harness_line_has_seq(&f.lines[1], HARNESS_ARGV("_start", "f0"), 2));
	ck_assert_uint_eq(harness_folded_count(&f, "lc-worker", harness_pred_has, "burn_a"), 2);
	ck_assert_uint_eq(harness_folded_count(&f, NULL, harness_pred_any, NULL), 5);
	harness_folded_release(&f);
}
END_TEST

START_TEST(harness_folded_garbage)
{
	static const char *const bad[] = {
	    "x-1;a 0\n",       /* zero count */
	    "x-1 5\n",	       /* no frame */
	    ";a 1\n",	       /* empty thread */
	    "x-1;;a 1\n",      /* empty frame */
	    "x-1;a 1 extra\n", /* trailing junk */
	    "x-1;a -1\n",      /* negative */
	    "x-1;a\n",	       /* no count */
	    "nodash;a 1\n",    /* no -tid */
	    "x-;a 1\n",	       /* empty tid */
	    "x-1;a 01\n",      /* leading zero */
	    "x-1;a 1",	       /* truncated: no newline */
	    "\xff\xfe;\x01 7 7\n",
	};
	struct harness_folded f;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		harness_folded_parse(&f, bad[i]);
		ck_assert_msg(f.nr_bad >= 1, "accepted \"%s\"", bad[i]);
		harness_folded_release(&f);
	}
	ck_assert_int_eq(harness_folded_parse(&f, NULL), -EINVAL);
	harness_folded_release(&f);
	harness_folded_parse(&f, "");
	ck_assert_uint_eq(f.nr + f.nr_bad, 0);
	harness_folded_release(&f);
}
END_TEST

START_TEST(harness_bt_perch)
{
	struct harness_bt bt;

	harness_bt_parse_perch(
	    &bt, "PID 1234 (comm x)\n"
		 "TID 1234 \"name\" (S)\n"
		 "#0  0x00007f3a2b4c5d6e clock_nanosleep (libc.so.6)\n"
		 "#1  0x000055d0c3a01234 f3 (chain) at chain_f3.c:12\n"
		 "#2  0x000055d0c3a01250 ns::f(int) const (cpp_target) at x.cpp:7 [inlined]\n"
		 "#3  0x000055d0c3a01250 [libfoo.so+0x1a2b] (libfoo.so)\n"
		 "\n"
		 "TID 1240 \"w A\" (R)\n"
		 "#0  0x00007f3a2b4c5d6e spin (chain)\n");
	ck_assert_uint_eq(bt.nr_bad, 0);
	ck_assert_int_eq(bt.pid, 1234);
	ck_assert_str_eq(bt.comm, "comm x");
	ck_assert_uint_eq(bt.nr, 2);
	ck_assert_uint_eq(bt.threads[0].nr, 4);
	ck_assert_int_eq(bt.threads[0].state, 'S');
	ck_assert_str_eq(bt.threads[0].frames[1].func, "f3");
	ck_assert_str_eq(bt.threads[0].frames[1].module, "chain");
	ck_assert_str_eq(bt.threads[0].frames[1].file, "chain_f3.c");
	ck_assert_int_eq(bt.threads[0].frames[1].line, 12);
	ck_assert_str_eq(bt.threads[0].frames[2].func, "ns::f(int) const");
	ck_assert_int_eq(bt.threads[0].frames[2].inlined, 1);
	ck_assert_str_eq(bt.threads[0].frames[3].func, "[libfoo.so+0x1a2b]");
	ck_assert_str_eq(bt.threads[1].name, "w A");
	ck_assert_ptr_nonnull(harness_bt_find(&bt, 1240));
	ck_assert_ptr_null(harness_bt_find(&bt, 1));
	harness_bt_release(&bt);

	harness_bt_parse_perch(&bt, "PID x\nTID\n#0  0x12 f (m)\n#1 garbage\n#\n\"\nTID 5 \"\n");
	ck_assert_uint_ge(bt.nr_bad, 5);
	harness_bt_release(&bt);
}
END_TEST

START_TEST(harness_bt_gdb)
{
	struct harness_bt bt;

	harness_bt_parse_gdb(
	    &bt,
	    "[New LWP 8711]\n"
	    "Thread 3 (Thread 0x7fbb6c56c6c0 (LWP 8712) \"reader\"):\n"
	    "#0  __GI___libc_read (nbytes=1, buf=0x7fbb6c56be97, fd=3) at "
	    "../sysdeps/unix/sysv/linux/read.c:26\n"
	    "#2  0x0000555e6ca6c527 in dump_reader_wait (fd=3) at tests/targets/dump_wait.c:32\n"
	    "#5  0x00007fbb6ce7a8ec in clone3 () from /lib/x86_64-linux-gnu/libc.so.6\n"
	    "Thread 1 (Thread 0x7fbb6cd6e740 (LWP 8709) \"dump\"):\n"
	    "#0  garbage\n");
	ck_assert_uint_eq(bt.nr, 2);
	ck_assert_uint_eq(bt.nr_bad, 1);
	ck_assert_int_eq(bt.threads[0].tid, 8712);
	ck_assert_str_eq(bt.threads[0].name, "reader");
	ck_assert_uint_eq(bt.threads[0].nr, 3);
	ck_assert_str_eq(bt.threads[0].frames[0].func, "__GI___libc_read");
	ck_assert_str_eq(bt.threads[0].frames[1].file, "tests/targets/dump_wait.c");
	ck_assert_int_eq(bt.threads[0].frames[1].line, 32);
	ck_assert_str_eq(bt.threads[0].frames[2].module, "libc.so.6");
	harness_bt_release(&bt);
}
END_TEST

START_TEST(harness_normalize)
{
	static const char *const cases[][2] = {
	    {"__GI___libc_read", "read"},
	    {"clock_nanosleep@GLIBC_2.17", "clock_nanosleep"},
	    {"__GI___clock_nanosleep", "clock_nanosleep"},
	    {"__libc_start_call_main", "start_call_main"},
	    {"read (fd=3)", "read"},
	    {"main", "main"},
	    {"_", "_"},
	    {"", ""},
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_str_eq(harness_func_normalize(cases[i][0], buf, sizeof(buf)),
				 cases[i][1]);
	ck_assert_str_eq(harness_func_normalize("__GI_abcdefgh", buf, 6), ""); /* "__GI_" */
	ck_assert_str_eq(harness_func_normalize("abcdefgh", buf, 4), "abc");
}
END_TEST

START_TEST(harness_summary)
{
	const char *err = "perch: recorded process 1 for 1.00 s at 100 Hz\n"
			  "perch:   samples: 99  threads seen: 1  ticks: 100\n"
			  "perch:   unwound to root: 97.5%  (frame-pointer fallback 0.0%)\n";

	ck_assert_int_eq(harness_summary_samples(err), 99);
	ck_assert(harness_summary_unwound(err) > 97.4 && harness_summary_unwound(err) < 97.6);
	ck_assert_int_eq(harness_summary_samples("no summary\nsamples: x\n"), -1);
	ck_assert_int_eq(harness_summary_samples("nothing here"), -1);
	ck_assert(harness_summary_unwound("") < 0);
}
END_TEST

Suite *harness_suite(void)
{
	Suite *s = suite_create("e2e-harness");
	TCase *tc = tcase_create("parsers");

	tcase_set_tags(tc, "e2e");
	tcase_add_test(tc, harness_folded_good);
	tcase_add_test(tc, harness_folded_garbage);
	tcase_add_test(tc, harness_bt_perch);
	tcase_add_test(tc, harness_bt_gdb);
	tcase_add_test(tc, harness_normalize);
	tcase_add_test(tc, harness_summary);
	suite_add_tcase(s, tc);
	return s;
}
