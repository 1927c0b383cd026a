/* Unit tests for options.c: the --help lines and getopt arrays made from one option table, and
 * the record options' table read three ways (help, completion, `set`) that must agree. */
#include <check.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/record/record-opts.h"

enum { K_LONG = 256, K_HIDDEN, K_WIDE, K_WIDER };

static const struct opt_spec table[] = {
    {"pid", 'p', "PID", "the process", 0},
    {"long-only", K_LONG, NULL, "first line\nsecond line", 0},
    {"hidden", K_HIDDEN, NULL, NULL, 0},
    {"only-in-b", 'b', NULL, "scoped", 0x2},
    {"wide", K_WIDE, "TID|NAME", "past the column", 0},
    {"wider", K_WIDER, "FUNCTION_REGEX:+POINTS", "on its own line\nand on", 0},
};
#define NR (sizeof(table) / sizeof(table[0]))

START_TEST(help_lines)
{
	struct strbuf sb = STRBUF_INIT;

	opts_help(&sb, table, NR, 0x1, 16);
	ck_assert_str_eq(sb.buf, "  -p, --pid PID the process\n"
				 "      --long-only  first line\n"
				 "                second line\n"
				 "      --wide TID|NAME  past the column\n"
				 "      --wider FUNCTION_REGEX:+POINTS\n"
				 "                on its own line\n"
				 "                and on\n");
	strbuf_reset(&sb);
	opts_help(&sb, table, 1, 0, 25);
	ck_assert_str_eq(sb.buf, "  -p, --pid PID          the process\n");
	strbuf_reset(&sb);
	opts_help(&sb, table + 3, 1, 0x2, 25);
	ck_assert_str_eq(sb.buf, "  -b, --only-in-b        scoped\n");
	strbuf_release(&sb);
}
END_TEST

START_TEST(getopt_arrays)
{
	char *argv[] = {"cmd", "-p", "7", "--long-only", "--hidden", "-b", "word", "-p", "8", NULL};
	int argc = 9, c, seen[4] = {0};
	struct opts_getopt g;

	opts_getopt_init(&g, 1);
	opts_getopt_add(&g, table, NR, 0x2);
	ck_assert_str_eq(g.shorts, "+p:b");
	ck_assert_uint_eq(g.nr_longs, NR);
	ck_assert_ptr_null(g.longs[NR].name);
	opts_getopt_init(&g, 0);
	opts_getopt_add(&g, table, 2, 0x1);
	opts_getopt_add(&g, table + 2, NR - 2, 0x1);
	ck_assert_str_eq(g.shorts, "p:");
	ck_assert_uint_eq(g.nr_longs, NR - 1);

	opts_getopt_init(&g, 1);
	opts_getopt_add(&g, table, NR, 0x2);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		const struct opt_spec *s = opts_by_key(table, NR, c);

		ck_assert_ptr_nonnull(s);
		if (c == 'p')
			ck_assert_str_eq(optarg, "7");
		seen[c == 'p' ? 0 : c == K_LONG ? 1 : c == K_HIDDEN ? 2 : 3]++;
	}
	/* '+': the options end at "word" */
	ck_assert_int_eq(optind, 6);
	ck_assert_int_eq(seen[0], 1);
	ck_assert_int_eq(seen[1], 1);
	ck_assert_int_eq(seen[2], 1);
	ck_assert_int_eq(seen[3], 1);
}
END_TEST

START_TEST(lookups_and_pids)
{
	char buf[32];
	pid_t pid = 0;

	ck_assert_ptr_eq(opts_find(table, NR, "wide"), &table[4]);
	ck_assert_ptr_null(opts_find(table, NR, "wid"));
	ck_assert_ptr_eq(opts_by_key(table, NR, 'b'), &table[3]);
	ck_assert_str_eq(opt_what(&table[0], buf, sizeof(buf)), "-p");
	ck_assert_str_eq(opt_what(&table[1], buf, sizeof(buf)), "--long-only");

	log_level = LOG_LEVEL_QUIET;
	ck_assert_int_eq(opt_parse_pid("1234", &pid), 0);
	ck_assert_int_eq(pid, 1234);
	ck_assert_int_eq(opt_parse_pid("2147483647", &pid), 0);
	ck_assert_int_eq(opt_parse_pid("2147483648", &pid), -EINVAL);
	ck_assert_int_eq(opt_parse_pid("0", &pid), -EINVAL);
	ck_assert_int_eq(opt_parse_pid("-5", &pid), -EINVAL);
	ck_assert_int_eq(opt_parse_pid("12x", &pid), -EINVAL);
	ck_assert_int_eq(opt_parse_pid("", &pid), -EINVAL);
	ck_assert_int_eq(pid, 2147483647);
}
END_TEST

struct words {
	char list[80][40];
	size_t nr;
};

static void add_word(void *arg, const char *word)
{
	struct words *w = arg;

	ck_assert_uint_lt(w->nr, 80);
	snprintf(w->list[w->nr++], sizeof(w->list[0]), "%s", word);
}

/* The record table read as help, as completion words and by `set`: the same options. */
START_TEST(record_table_agrees)
{
	static const unsigned int flags[] = {RECORD_PARSE_CLI, RECORD_PARSE_PROMPT,
					     RECORD_PARSE_TOP};
	struct strbuf help = STRBUF_INIT;

	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		struct words w = {.nr = 0};

		strbuf_reset(&help);
		record_opts_help(&help, flags[f]);
		record_opts_complete(flags[f], add_word, &w);
		ck_assert_uint_gt(w.nr, 10);
		for (size_t i = 0; i < w.nr; i++) {
			char needle[48];

			snprintf(needle, sizeof(needle), "%s%s", w.list[i],
				 w.list[i][1] == '-' ? "" : ",");
			ck_assert_msg(strstr(help.buf, needle), "%s not in the help", w.list[i]);
			/* every option of the prompt's record is a name `set` knows */
			if (flags[f] == RECORD_PARSE_PROMPT && w.list[i][1] == '-') {
				struct record_opts o;
				char buf[256];

				record_opts_init(&o);
				ck_assert_int_eq(
				    record_opts_get(&o, w.list[i] + 2, buf, sizeof(buf)), 0);
				record_opts_release(&o);
			}
		}
	}
	/* what only the command line has */
	strbuf_reset(&help);
	record_opts_help(&help, RECORD_PARSE_PROMPT);
	ck_assert_ptr_null(strstr(help.buf, "--pid"));
	ck_assert_ptr_null(strstr(help.buf, "--wait"));
	ck_assert_ptr_null(strstr(help.buf, "--rows"));
	strbuf_reset(&help);
	record_opts_help(&help, RECORD_PARSE_TOP);
	ck_assert_ptr_null(strstr(help.buf, "--output"));
	ck_assert_ptr_nonnull(strstr(help.buf, "-n, --rows ROWS"));
	strbuf_release(&help);
}
END_TEST

Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, help_lines);
	tcase_add_test(tc, getopt_arrays);
	tcase_add_test(tc, lookups_and_pids);
	tcase_add_test(tc, record_table_agrees);
	suite_add_tcase(s, tc);
	return s;
}
