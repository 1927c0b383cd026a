/* Unit tests for procwait's name matching (the /proc texts are written here as the kernel
 * gives them: comm without its newline, cmdline as NUL-separated arguments). */
#include <check.h>
#include <string.h>

#include "perch/procwait.h"

#define CMD(s) (s), sizeof(s) - 1 /* a literal with its embedded NULs */

START_TEST(test_procwait_names)
{
	/* comm */
	ck_assert_int_eq(procwait_name_matches("server", "server", CMD("./srv\0-x\0")),
			 PROCWAIT_YES);
	/* argv[0] and its last component */
	ck_assert_int_eq(procwait_name_matches("/usr/bin/python3", "python3.11",
					       CMD("/usr/bin/python3\0a.py\0")),
			 PROCWAIT_YES);
	ck_assert_int_eq(
	    procwait_name_matches("python3", "python3.11", CMD("/usr/bin/python3\0a.py\0")),
	    PROCWAIT_YES);
	/* an argument is not the name */
	ck_assert_int_eq(
	    procwait_name_matches("a.py", "python3.11", CMD("/usr/bin/python3\0a.py\0")),
	    PROCWAIT_NO);
	/* Android: zygote writes the process name over argv (NULs after it) */
	ck_assert_int_eq(procwait_name_matches("com.example.app", "com.example.app",
					       CMD("com.example.app\0\0\0\0")),
			 PROCWAIT_YES);
	ck_assert_int_eq(procwait_name_matches("com.example.perch.waitapp", "e.perch.waitapp",
					       CMD("com.example.perch.waitapp\0\0")),
			 PROCWAIT_YES);
	/* a service process is another name */
	ck_assert_int_eq(procwait_name_matches("com.example.app", "mple.app:remote",
					       CMD("com.example.app:remote\0")),
			 PROCWAIT_NO);
	/* only the comm (cut to 15 characters, at the start or the end) matches: look again */
	ck_assert_int_eq(procwait_name_matches("com.example.perch.waitapp", "e.perch.waitapp",
					       CMD("zygote64\0")),
			 PROCWAIT_MAYBE);
	ck_assert_int_eq(procwait_name_matches("my-long-program-name", "my-long-program", CMD("")),
			 PROCWAIT_MAYBE);
	/* a short prefix is not a truncation */
	ck_assert_int_eq(procwait_name_matches("serverd", "server", CMD("server\0")), PROCWAIT_NO);
	ck_assert_int_eq(procwait_name_matches("", "", CMD("")), PROCWAIT_NO);
	ck_assert_int_eq(procwait_name_matches("x", NULL, NULL, 0), PROCWAIT_NO);
}
END_TEST

/* --app NAME: the names --wait matches, and an Android app's service processes */
START_TEST(test_procwait_app)
{
	ck_assert(
	    procwait_app_matches("com.example.app", "com.example.app", CMD("com.example.app\0")));
	ck_assert(procwait_app_matches("com.example.app", "le.app:remote",
				       CMD("com.example.app:remote\0")));
	ck_assert(procwait_app_matches("server", "server", CMD("./server\0-x\0")));
	/* a prefix, a path with a colon in it, an empty suffix: not the app's */
	ck_assert(
	    !procwait_app_matches("com.example", "com.example.app", CMD("com.example.app\0")));
	ck_assert(!procwait_app_matches("com.example.app", "sh", CMD("/x/com.example.app:y\0")));
	ck_assert(!procwait_app_matches("com.example.app", "sh", CMD("com.example.app:\0")));
	ck_assert(!procwait_app_matches("com.example.app", "sh", CMD("com.example.apps:a\0")));
	ck_assert(!procwait_app_matches("", "", CMD(":x\0")));
}
END_TEST

Suite *procwait_suite(void)
{
	Suite *s = suite_create("procwait");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, test_procwait_names);
	tcase_add_test(tc, test_procwait_app);
	suite_add_tcase(s, tc);
	return s;
}
