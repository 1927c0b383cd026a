/* Unit tests of the record options shared by `perch record` and the REPL (record-core.h):
 * defaults, the command line with -p or a program, the REPL's `set` names, errors that leave
 * the value as it was, deep copies. */
#include <check.h>
#include <signal.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/out/output.h"
#include "perch/proc/stall.h"
#include "perch/proc/timeline.h"
#include "perch/record/record-core.h"

static struct record_opts o;

static void setup(void)
{
	record_opts_init(&o);
}

static void teardown(void)
{
	record_opts_release(&o);
}

#define PARSE(flags, ...)                                                                          \
	({                                                                                         \
		char *av_[] = {"record", __VA_ARGS__, NULL};                                       \
		record_opts_parse(&o, (int)(sizeof(av_) / sizeof(av_[0])) - 1, av_, (flags));      \
	})

START_TEST(defaults)
{
	ck_assert(o.hz == RECORD_DEFAULT_HZ);
	ck_assert_uint_eq(o.stack_size, RECORD_DEFAULT_STACK);
	ck_assert_uint_eq(o.cpu_ms, TIMELINE_DEFAULT_CPU_MS);
	ck_assert_uint_eq(o.mem_ms, TIMELINE_DEFAULT_MEM_MS);
	ck_assert(o.stall_ms == STALL_DEFAULT_MS);
	ck_assert(o.duration == 0);
	ck_assert_int_eq(o.nr_outputs, 0);
}
END_TEST

START_TEST(cli_pid_and_outputs)
{
	ck_assert_int_eq(PARSE(RECORD_PARSE_CLI, "-p", "42", "-F", "250", "-d", "1.5", "-o",
			       "a.svg", "-o", "b.weird", "--format", "pprof", "--mode", "cpu",
			       "--stack-size", "0x2000", "--stall", "50", "--stall-thread", "io",
			       "--cpu-interval", "0", "--mem-interval", "20", "--verify", "--lines",
			       "--symfs", "/s", "--sysroot", "/r", "--top", "7", "-q"),
			 0);
	ck_assert(o.nr_pids == 1 && o.pids[0] == 42);
	ck_assert(o.hz == 250 && o.duration == 1.5 && o.cpu_mode == 1);
	ck_assert_uint_eq(o.stack_size, 0x2000);
	ck_assert(o.stall_ms == 50);
	ck_assert_str_eq(o.stall_thread, "io");
	ck_assert_uint_eq(o.cpu_ms, 0);
	ck_assert_uint_eq(o.mem_ms, 20);
	ck_assert(o.verify && o.lines && o.quiet);
	ck_assert_str_eq(o.symfs, "/s");
	ck_assert_str_eq(o.sysroot, "/r");
	ck_assert_int_eq(o.top, 7);
	ck_assert_int_eq(o.nr_outputs, 2);
	/* the ending picks the format; otherwise --format */
	ck_assert_str_eq(o.outputs[0].fmt->name, "svg");
	ck_assert_str_eq(o.outputs[1].fmt->name, "pprof");
	ck_assert_ptr_null(o.argv);
}
END_TEST

START_TEST(cli_program_and_usage_errors)
{
	/* o.argv borrows the caller's argv */
	char *av[] = {"record", "-F", "10", "--", "prog", "arg", NULL};

	ck_assert_int_eq(record_opts_parse(&o, 6, av, RECORD_PARSE_CLI), 0);
	ck_assert_ptr_eq(o.argv, av + 4);
	ck_assert_str_eq(o.argv[0], "prog");
	ck_assert_str_eq(o.argv[1], "arg");
	record_opts_release(&o);
	record_opts_init(&o);
	/* neither -p nor a program; both */
	ck_assert_int_eq(PARSE(RECORD_PARSE_CLI, "-F", "10"), -EINVAL);
	record_opts_release(&o);
	record_opts_init(&o);
	ck_assert_int_eq(PARSE(RECORD_PARSE_CLI, "-p", "1", "prog"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_CLI, "--help"), RECORD_PARSE_HELP);
	/* the session form takes no -p and no words */
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "-p", "1"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "-d", "1", "extra"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "--bogus"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "-F", "0"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "-d", "-1"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "--cpu-interval", "5"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "--mode", "both"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "--format", "nope"), -EINVAL);
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "--stack-size", "99999999"), -EINVAL);
}
END_TEST

/* One fresh parse per case: --ring / --chunk / --trigger and what they need. */
#define PARSE_FRESH(...)                                                                           \
	({                                                                                         \
		record_opts_release(&o);                                                           \
		record_opts_init(&o);                                                              \
		PARSE(RECORD_PARSE_CLI, __VA_ARGS__);                                              \
	})

START_TEST(cli_windows)
{
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--ring", "5", "--trigger", "stall:250",
				     "--trigger", "signal:SIGUSR2", "--trigger-max", "3", "-o",
				     "x.folded"),
			 0);
	ck_assert(o.ring_s == 5 && o.trigger_stall_ms == 250 && o.trigger_signal == SIGUSR2);
	ck_assert_int_eq(o.trigger_max, 3);
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--chunk", "60", "-o", "x.sentry.json"), 0);
	ck_assert(o.chunk_s == 60);
	/* a trigger without a ring; both windows; no file; stdout; bad values */
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--trigger", "stall:9", "-o", "x"), -EINVAL);
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--ring", "5", "--chunk", "1", "-o", "x"), -EINVAL);
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--ring", "5"), -EINVAL);
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--chunk", "5", "-o", "-"), -EINVAL);
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--ring", "0", "-o", "x"), -EINVAL);
	ck_assert_int_eq(
	    PARSE_FRESH("-p", "1", "--ring", "1", "--trigger", "signal:INT", "-o", "x"), -EINVAL);
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--ring", "1", "--trigger", "stall:", "-o", "x"),
			 -EINVAL);
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--ring", "1", "--trigger", "exit", "-o", "x"),
			 -EINVAL);
	ck_assert_int_eq(PARSE_FRESH("-p", "1", "--ring", "1", "--trigger-max", "0", "-o", "x"),
			 -EINVAL);
}
END_TEST

START_TEST(top_rows_and_no_output)
{
	ck_assert_int_eq(PARSE(RECORD_PARSE_TOP, "-n", "5", "-F", "50"), 0);
	ck_assert_int_eq(o.top, 5);
	ck_assert(o.hz == 50);
	ck_assert_int_eq(PARSE(RECORD_PARSE_TOP, "-o", "x.folded"), -EINVAL);
	ck_assert_int_eq(o.nr_outputs, 0);
	/* -n is top's alone */
	ck_assert_int_eq(PARSE(RECORD_PARSE_PROMPT, "-n", "5"), -EINVAL);
}
END_TEST

START_TEST(set_by_name)
{
	char buf[64];

	ck_assert_int_eq(record_opts_set(&o, "rate", "300", "rate"), 0);
	ck_assert(o.hz == 300);
	/* a bad value changes nothing */
	ck_assert_int_eq(record_opts_set(&o, "rate", "-5", "rate"), -EINVAL);
	ck_assert(o.hz == 300);
	ck_assert_int_eq(record_opts_set(&o, "stall", "x", NULL), -EINVAL);
	ck_assert(o.stall_ms == STALL_DEFAULT_MS);
	ck_assert_int_eq(record_opts_set(&o, "top", "0", NULL), -EINVAL);
	ck_assert_int_eq(o.top, 0);
	ck_assert_int_eq(record_opts_set(&o, "nonsense", "1", NULL), -ENOENT);
	ck_assert_int_eq(record_opts_set(&o, "mode", NULL, NULL), -EINVAL);
	/* flags: bare, on, off */
	ck_assert_int_eq(record_opts_set(&o, "verify", NULL, NULL), 0);
	ck_assert_int_eq(o.verify, 1);
	ck_assert_int_eq(record_opts_set(&o, "verify", "off", NULL), 0);
	ck_assert_int_eq(o.verify, 0);
	ck_assert_int_eq(record_opts_set(&o, "lines", "maybe", NULL), -EINVAL);
	ck_assert_int_eq(record_opts_set(&o, "symfs", "/a", NULL), 0);
	ck_assert_int_eq(record_opts_set(&o, "symfs", "/b", NULL), 0);
	ck_assert_int_eq(record_opts_get(&o, "symfs", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/b");
	ck_assert_int_eq(record_opts_get(&o, "freq", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "300");
	ck_assert_int_eq(record_opts_get(&o, "no-idle-reuse", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "off");
	ck_assert_int_eq(record_opts_get(&o, "nonsense", buf, sizeof(buf)), -ENOENT);
	/* every listed name is known */
	for (size_t i = 0; record_opts_name(i); i++)
		ck_assert_int_eq(record_opts_get(&o, record_opts_name(i), buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(copy_is_deep)
{
	struct record_opts c;

	ck_assert_int_eq(
	    PARSE(RECORD_PARSE_PROMPT, "-o", "x.folded", "--symfs", "/s", "--stall-thread", "t"),
	    0);
	record_opts_copy(&c, &o);
	record_opts_release(&o);
	record_opts_init(&o);
	ck_assert_int_eq(c.nr_outputs, 1);
	ck_assert_str_eq(c.outputs[0].path, "x.folded");
	ck_assert_str_eq(c.symfs, "/s");
	ck_assert_str_eq(c.stall_thread, "t");
	/* options parsed over a copy add to it */
	{
		char *av[] = {"record", "-o", "y.svg", NULL};

		ck_assert_int_eq(record_opts_parse(&c, 3, av, RECORD_PARSE_PROMPT), 0);
	}
	ck_assert_int_eq(c.nr_outputs, 2);
	ck_assert_str_eq(c.outputs[1].fmt->name, "svg");
	record_opts_release(&c);
}
END_TEST

Suite *record_core_suite(void)
{
	Suite *s = suite_create("record_core");
	TCase *tc = tcase_create("opts");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, cli_pid_and_outputs);
	tcase_add_test(tc, cli_program_and_usage_errors);
	tcase_add_test(tc, cli_windows);
	tcase_add_test(tc, top_rows_and_no_output);
	tcase_add_test(tc, set_by_name);
	tcase_add_test(tc, copy_is_deep);
	suite_add_tcase(s, tc);
	return s;
}
