/* Unit tests for the path helpers. */
#include <check.h>
#include <stddef.h>
#include <stdlib.h>

#include "perch/base/path.h"

START_TEST(test_path_base)
{
	ck_assert_str_eq(path_base("/usr/lib/libc.so.6"), "libc.so.6");
	ck_assert_str_eq(path_base("libart.so"), "libart.so");
	ck_assert_str_eq(path_base("/data/app/x/base.apk!/lib/arm64-v8a/libfoo.so"), "libfoo.so");
	ck_assert_str_eq(path_base("/dir/"), "/dir/");
	ck_assert_str_eq(path_base("/"), "/");
	ck_assert_str_eq(path_base(""), "");
	ck_assert_str_eq(path_base(NULL), "");
}
END_TEST

START_TEST(test_path_dir)
{
	static const char *const cases[][2] = {
	    {"a/b", "a"},	{"/x", "/"},	       {"b", "."},
	    {"/a/b/c", "/a/b"}, {"./out.folded", "."}, {"dir/", "dir"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = path_dir(cases[i][0]);

		ck_assert_str_eq(d, cases[i][1]);
		free(d);
	}
}
END_TEST

Suite *path_suite(void)
{
	Suite *s = suite_create("path");
	TCase *tc = tcase_create("base");

	tcase_add_test(tc, test_path_base);
	tcase_add_test(tc, test_path_dir);
	suite_add_tcase(s, tc);
	return s;
}
