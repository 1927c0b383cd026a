/* Unit tests of the REPL's pure parts: splitting command lines into words (quotes, escapes,
 * comments), finding processes by pid, and matching process and Android package names. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/cli/repl.h"
#include "perch/profile/profile.h"

static void check_split(const char *line, int want_n, const char *const *want)
{
	char **argv = NULL;
	int n = repl_split(line, &argv);

	ck_assert_int_eq(n, want_n);
	for (int i = 0; i < n; i++)
		ck_assert_str_eq(argv[i], want[i]);
	ck_assert_ptr_null(argv[n]);
	free(argv);
}

START_TEST(split_words)
{
	check_split("", 0, NULL);
	check_split("   \t\n", 0, NULL);
	check_split("# only a comment", 0, NULL);
	check_split("attach 1234", 2, (const char *[]){"attach", "1234"});
	check_split("  record   start\t-d 2  \r\n", 4,
		    (const char *[]){"record", "start", "-d", "2"});
	check_split("save 'a b.folded' # comment", 2, (const char *[]){"save", "a b.folded"});
	check_split("save \"x\\\"y\" z\\ w", 3, (const char *[]){"save", "x\"y", "z w"});
	check_split("a''b \"\"", 2, (const char *[]){"ab", ""});
	check_split("x#y", 1, (const char *[]){"x#y"});
}
END_TEST

START_TEST(split_unterminated)
{
	char **argv = NULL;

	ck_assert_int_eq(repl_split("save 'open", &argv), -EINVAL);
	ck_assert_int_eq(repl_split("save \"open\\\"", &argv), -EINVAL);
}
END_TEST

START_TEST(find_by_pid)
{
	pid_t pids[4];

	ck_assert_int_eq(repl_find_process("1234", pids, 4), 1);
	ck_assert_int_eq(pids[0], 1234);
	ck_assert_int_eq(repl_find_process("", pids, 4), -EINVAL);
	ck_assert_int_eq(repl_find_process(NULL, pids, 4), -EINVAL);
	/* perch never finds itself */
	ck_assert_int_eq(repl_find_process("no-such-process-name-for-sure", pids, 4), 0);
}
END_TEST

START_TEST(name_matching)
{
	/* comm, argv[0], its basename */
	ck_assert(repl_name_matches("server", "server", "/usr/bin/other"));
	ck_assert(repl_name_matches("server", "srv", "/usr/bin/server"));
	ck_assert(repl_name_matches("server", "", "server"));
	ck_assert(!repl_name_matches("server", "servers", "/usr/bin/servers"));
	ck_assert(!repl_name_matches("server", NULL, NULL));
	ck_assert(!repl_name_matches("server", "", ""));
	/* Android: the package is argv[0]; pkg:name is a secondary process of it */
	ck_assert(repl_name_matches("com.example.app", "example.app", "com.example.app"));
	ck_assert(repl_name_matches("com.example.app", "ple.app:remote", "com.example.app:remote"));
	ck_assert(repl_name_matches("com.example.app:remote", "x", "com.example.app:remote"));
	ck_assert(!repl_name_matches("com.example", "x", "com.example.app:remote"));
	ck_assert(!repl_name_matches("com.example.app", "x", "com.example.application"));
	ck_assert(!repl_name_matches("com.example.app", "x", "com.example.ap:remote"));
	/* a path with a colon is not a package */
	ck_assert(!repl_name_matches("/opt/a", "x", "/opt/a:b"));
}
END_TEST

/* top before any sample (the first second of a quiet target): a table with no rows, no
 * crash (UBSan flagged qsort on the empty, never allocated array). */
START_TEST(top_without_samples)
{
	struct profile *p = profile_new();
	struct repl_top *t = repl_top_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	repl_top_update(t, p);
	repl_top_print(t, p, 100, 10, f);
	fclose(f);
	ck_assert_uint_eq(repl_top_interval_samples(t), 0);
	ck_assert_ptr_nonnull(buf);
	free(buf);
	repl_top_free(t);
	profile_free(p);
}
END_TEST

Suite *repl_suite(void)
{
	Suite *s = suite_create("repl");
	TCase *tc = tcase_create("split");

	tcase_add_test(tc, split_words);
	tcase_add_test(tc, split_unterminated);
	tcase_add_test(tc, find_by_pid);
	tcase_add_test(tc, name_matching);
	tcase_add_test(tc, top_without_samples);
	suite_add_tcase(s, tc);
	return s;
}
