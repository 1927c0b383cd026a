/* Unit tests for the file descriptor budget: the limits as the kernel reports them
 * (getrlimit) and the descriptor table's size as /proc/self/status's FDSize shows it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "perch/base/fdlimit.h"

/* The size of this process's descriptor table, or -1. */
static long fd_table_size(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long n = -1;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "FDSize:", 7))
			n = strtol(line + 7, NULL, 10);
	fclose(f);
	return n;
}

START_TEST(test_fdlimit_raise_restore)
{
	struct rlimit start, low, rl;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &start), 0);
	if (start.rlim_max != RLIM_INFINITY && start.rlim_max < 512)
		return; /* (nothing to raise on such a machine) */
	low.rlim_cur = 256;
	low.rlim_max = start.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	fdlimit_raise();
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_uint_eq(rl.rlim_cur, start.rlim_max);
	fdlimit_restore();
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_uint_eq(rl.rlim_cur, 256);
	ck_assert_uint_eq(rl.rlim_max, start.rlim_max);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &start), 0);
}
END_TEST

START_TEST(test_fdlimit_reserve)
{
	struct rlimit start, rl;
	long before;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &start), 0);
	if (start.rlim_max != RLIM_INFINITY && start.rlim_max < 4096)
		return;
	rl.rlim_cur = 4096;
	rl.rlim_max = start.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	fdlimit_reserve(3000);
	before = fd_table_size();
	ck_assert_int_ge(before, 3000);
	/* capped at the soft limit, without an error (the table never shrinks: under valgrind,
	 * every suite in one process, it may be larger already) */
	fdlimit_reserve(1000000);
	ck_assert_int_le(fd_table_size(), before > 4096 ? before : 4096);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &start), 0);
}
END_TEST

Suite *fdlimit_suite(void)
{
	Suite *s = suite_create("fdlimit");
	TCase *tc = tcase_create("fdlimit");

	tcase_add_test(tc, test_fdlimit_raise_restore);
	tcase_add_test(tc, test_fdlimit_reserve);
	suite_add_tcase(s, tc);
	return s;
}
