/* Unit tests for cpustat: two real /proc/stat readings and two /proc/PID/stat readings of a
 * busy loop pinned to CPU 1, 2.008 s apart (fixtures/cpustat), plus malformed input. The
 * expected numbers are worked out by hand from the fixture text in the comments. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/proc/cpustat.h"
#include "perch/proc/proc-task.h"
#include "testutil.h"

static void load_stat(const char *rel, struct cpustat *st)
{
	char *path = testutil_fixture_path("cpustat/%s", rel);

	ck_assert_msg(cpustat_load_file(path, st) == 0, "cannot load %s", path);
	free(path);
}

static void load_task(const char *rel, struct proc_stat *ps)
{
	char *path = testutil_fixture_path("cpustat/%s", rel), *text = proc_read_file(path, NULL);

	ck_assert_msg(text, "cannot read %s", path);
	ck_assert_int_eq(proc_stat_parse(text, ps), 0);
	free(text);
	free(path);
}

#define EPS 0.01

START_TEST(test_parse_real)
{
	struct cpustat a;

	load_stat("stat-a", &a);
	/* cpu  81384 32 18015 136595 1000 0 279 234 0 0 */
	ck_assert_uint_eq(a.all.user, 81384);
	ck_assert_uint_eq(a.all.nice, 32);
	ck_assert_uint_eq(a.all.system, 18015);
	ck_assert_uint_eq(a.all.idle, 136595);
	ck_assert_uint_eq(a.all.iowait, 1000);
	ck_assert_uint_eq(a.all.softirq, 279);
	ck_assert_uint_eq(a.all.steal, 234);
	ck_assert_uint_eq(a.nr_cpus, 2);
	ck_assert_uint_eq(a.bad_lines, 0);
	ck_assert_int_eq(a.cpus[0].id, 0);
	ck_assert_int_eq(a.cpus[1].id, 1);
	/* the per-CPU lines add up to the total line */
	ck_assert_uint_eq(a.cpus[0].t.user + a.cpus[1].t.user, a.all.user);
	ck_assert_uint_eq(a.cpus[0].t.idle + a.cpus[1].t.idle, a.all.idle);
	ck_assert_ptr_eq(cpustat_find(&a, 1), &a.cpus[1]);
	ck_assert_ptr_null(cpustat_find(&a, 2));
	ck_assert_ptr_null(cpustat_find(&a, -1));
	cpustat_release(&a);
	ck_assert_int_eq(cpustat_load_file("fixtures/no/such/stat", &a), -ENOENT);
}
END_TEST

START_TEST(test_usage_real)
{
	struct cpustat a, b;
	struct cpustat_usage u;

	load_stat("stat-a", &a);
	load_stat("stat-b", &b);
	/* all: user +358, system +44, nothing else: 402 ticks, no idle time (a loaded host) */
	ck_assert_int_eq(cpustat_usage(&a.all, &b.all, &u), 0);
	ck_assert_uint_eq(u.ticks, 402);
	ck_assert_double_eq_tol(u.user, 100.0 * 358 / 402, EPS);
	ck_assert_double_eq_tol(u.system, 100.0 * 44 / 402, EPS);
	ck_assert_double_eq_tol(u.idle, 0, EPS);
	ck_assert_double_eq_tol(u.busy, 100, EPS);
	/* cpu1: user +183, system +18, softirq +1 = 202 */
	ck_assert_int_eq(cpustat_usage(&cpustat_find(&a, 1)->t, &cpustat_find(&b, 1)->t, &u), 0);
	ck_assert_uint_eq(u.ticks, 202);
	ck_assert_double_eq_tol(u.user, 100.0 * 183 / 202, EPS);
	ck_assert_double_eq_tol(u.softirq, 100.0 / 202, EPS);
	/* the same reading twice: nothing elapsed */
	ck_assert_int_eq(cpustat_usage(&a.all, &a.all, &u), -EAGAIN);
	/* backwards counters (iowait on tickless kernels) count as 0, never wrap */
	ck_assert_int_eq(cpustat_usage(&b.all, &a.all, &u), -EAGAIN);
	cpustat_release(&a);
	cpustat_release(&b);
}
END_TEST

START_TEST(test_task_real)
{
	struct proc_stat a, b;
	struct cpustat sa, sb;
	struct cpustat_task_usage u;
	struct cpustat_usage cu;

	load_task("task-a", &a);
	load_task("task-b", &b);
	load_stat("stat-a", &sa);
	load_stat("stat-b", &sb);
	/* utime 40 -> 157, stime 0 -> 1: 118 ticks in 2.008316448 s at 100 Hz = 200.83 ticks */
	ck_assert_int_eq(cpustat_task_usage(&a, &b, 2008316448, 100, 2, &u), 0);
	ck_assert_uint_eq(u.ticks, 118);
	ck_assert_double_eq_tol(u.user, 100.0 * 117 / 200.8316448, EPS);
	ck_assert_double_eq_tol(u.system, 100.0 * 1 / 200.8316448, EPS);
	ck_assert_double_eq_tol(u.one_core, 100.0 * 118 / 200.8316448, EPS);
	ck_assert_double_eq_tol(u.all_cores, 100.0 * 118 / 200.8316448 / 2, EPS);
	/* pinned to cpu1: the task's ticks are part of cpu1's busy ticks */
	ck_assert_int_eq(cpustat_usage(&cpustat_find(&sa, 1)->t, &cpustat_find(&sb, 1)->t, &cu), 0);
	ck_assert_uint_le(u.ticks, cu.ticks);
	cpustat_release(&sa);
	cpustat_release(&sb);
}
END_TEST

START_TEST(test_task_errors)
{
	struct proc_stat a, b;
	struct cpustat_task_usage u;

	load_task("task-a", &a);
	load_task("task-b", &b);
	ck_assert_int_eq(cpustat_task_usage(&a, &b, 0, 100, 2, &u), -EINVAL);
	ck_assert_int_eq(cpustat_task_usage(&a, &b, 1000, 0, 2, &u), -EINVAL);
	ck_assert_int_eq(cpustat_task_usage(&a, &b, 1000, 100, 0, &u), -EINVAL);
	ck_assert_int_eq(cpustat_task_usage(&b, &a, 1000, 100, 2, &u), -ERANGE);
	b.starttime++; /* the pid was reused */
	ck_assert_int_eq(cpustat_task_usage(&a, &b, 1000, 100, 2, &u), -ESRCH);
	b.starttime--;
	b.pid++;
	ck_assert_int_eq(cpustat_task_usage(&a, &b, 1000, 100, 2, &u), -ESRCH);
	ck_assert_int_gt(cpustat_clk_tck(), 0);
	ck_assert_uint_ge(cpustat_ncpus(), 1);
}
END_TEST

START_TEST(test_hostile)
{
	static const struct {
		const char *text;
		int ret;
		size_t nr_cpus, bad;
	} cases[] = {
	    {"", -EINVAL, 0, 0},
	    {"cpu 1 2 3\n", -EINVAL, 0, 1},		       /* fewer than 4 */
	    {"cpu  1 2 3 4\n", 0, 0, 0},		       /* old kernels: 4 columns */
	    {"cpu  1 2 3 4 5 6 7 8 9 10 11\n", -EINVAL, 0, 1}, /* more than 10 */
	    {"cpu  1 2 3 4\ncpu  1 2 3 4\n", 0, 0, 1},	       /* a second total line */
	    {"cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu0 1 2 3 4\ncpu3 1 2 3 4\n", 0, 2, 1},
	    {"cpu  1 2 3 4\ncpu99999 1 2 3 4\ncpux 1 2 3 4\ncpu1 1 2 -3 4\n", 0, 0, 3},
	    {"cpu  99999999999999999999 2 3 4\n", -EINVAL, 0, 1},
	    {"cpu  1 2 3 4 \nintr 1 2 3\nctxt 5\n", 0, 0, 0},
	    {"cpu  1 2 3 4x\n", -EINVAL, 0, 1},
	    {"cp", -EINVAL, 0, 0},
	};
	struct cpustat st;

	ck_assert_int_eq(cpustat_parse(cases[_i].text, &st), cases[_i].ret);
	ck_assert_uint_eq(st.bad_lines, cases[_i].bad);
	ck_assert_uint_eq(st.nr_cpus, cases[_i].nr_cpus);
	cpustat_release(&st);
}
END_TEST

START_TEST(test_garbage)
{
	unsigned int seed = 99;
	int round;

	for (round = 0; round < 500; round++) {
		static const char alphabet[] = "cpu0123456789 \nx";
		char buf[300];
		size_t len = (size_t)rand_r(&seed) % (sizeof(buf) - 1), i;
		struct cpustat st;

		for (i = 0; i < len; i++)
			buf[i] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		buf[len] = '\0';
		if (!cpustat_parse(buf, &st)) {
			for (i = 1; i < st.nr_cpus; i++)
				ck_assert_int_lt(st.cpus[i - 1].id, st.cpus[i].id);
			cpustat_release(&st);
		}
	}
}
END_TEST

Suite *cpustat_suite(void)
{
	Suite *s = suite_create("cpustat");
	TCase *tc = tcase_create("usage");

	tcase_add_test(tc, test_parse_real);
	tcase_add_test(tc, test_usage_real);
	tcase_add_test(tc, test_task_real);
	tcase_add_test(tc, test_task_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_loop_test(tc, test_hostile, 0, 11);
	tcase_add_test(tc, test_garbage);
	suite_add_tcase(s, tc);
	return s;
}
