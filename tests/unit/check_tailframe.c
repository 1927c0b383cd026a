/* Unit tests for tail-call frames in the outputs (profile.h's tailcall flag): a synthetic
 * profile where main calls sem_wait's slow path through two tail calls. Folded, pprof and
 * speedscope names carry "_[t]" (pprof's system_name does not; go tool pprof shows the frame
 * in its place), and so do the flame graph and the Chrome trace; text says "(tail call)", a
 * .perch recording keeps the flag, and the frame never has self time (it is never a leaf). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/out/writers.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"
#include "testutil.h"

/* main -> __new_sem_wait (tail call) -> __new_sem_wait_slow64 -> do_futex_wait (tail call)
 * -> futex_wait, 10 samples; main -> spin, 5 samples. */
static struct profile *build(void)
{
	struct profile *p = profile_new();
	uint32_t mod = profile_intern_str(p, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t exe = profile_intern_str(p, "/usr/bin/prog");
	const struct {
		const char *name;
		int tail;
		uint64_t addr;
		uint32_t module;
	} fr[] = {
	    {"futex_wait", 0, 0x85e96, mod},
	    {"do_futex_wait", 1, 0x90cfe, mod},
	    {"__new_sem_wait_slow64", 0, 0x90d8f, mod},
	    {"__new_sem_wait", 1, 0x90df8, mod},
	    {"main", 0, 0x1136, exe},
	    {"spin", 0, 0x1120, exe},
	};
	uint32_t locs[6], stack, t = profile_thread(p, 4242, "prog");

	profile_keep_samples(p, 1); /* the Chrome trace is made of them */

	for (int i = 0; i < 6; i++) {
		struct profile_frame f = {.name = profile_intern_str(p, fr[i].name),
					  .module = fr[i].module,
					  .kind = PROFILE_FRAME_NATIVE,
					  .tailcall = (uint8_t)fr[i].tail};

		locs[i] = profile_intern_location(p, fr[i].module, fr[i].addr, &f, 1);
	}
	stack = profile_intern_stack(p, locs, 5);
	for (int i = 0; i < 10; i++)
		profile_add_sample(p, t, stack, 1000000 * (uint64_t)(i + 1), 'S');
	locs[0] = locs[5];
	locs[1] = locs[4];
	stack = profile_intern_stack(p, locs, 2);
	for (int i = 0; i < 5; i++)
		profile_add_sample(p, t, stack, 20000000 + 1000000 * (uint64_t)i, 'R');
	profile_set_meta(p, "pid", "4242");
	return p;
}

START_TEST(test_folded_text)
{
	struct profile *p = build();
	char *out = testutil_render(out_folded_write, p, NULL, NULL);

	ck_assert_ptr_nonnull(strstr(out, "prog-4242;main;__new_sem_wait_[t];__new_sem_wait_slow64;"
					  "do_futex_wait_[t];futex_wait 10\n"));
	ck_assert_ptr_nonnull(strstr(out, "prog-4242;main;spin 5\n"));
	free(out);
	out = testutil_render(out_text_write, p, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(out, "do_futex_wait (libc.so.6) (tail call)"));
	ck_assert_ptr_nonnull(strstr(out, "__new_sem_wait (libc.so.6) (tail call)"));
	ck_assert_ptr_null(strstr(out, "main (prog) (tail call)"));
	free(out);
	profile_free(p);
}
END_TEST

/* The flame graph and the Chrome trace show the same name; the flame graph keeps the frame
 * apart from a real frame of that function. */
START_TEST(test_flamegraph_chrome)
{
	struct profile *p = build();
	char *out = testutil_render(out_flamegraph_write, p, NULL, NULL);

	ck_assert_ptr_nonnull(strstr(out, "do_futex_wait_[t]"));
	ck_assert_ptr_nonnull(strstr(out, "__new_sem_wait_[t]"));
	free(out);
	out = testutil_render(out_chrome_write, p, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(out, "\"do_futex_wait_[t]\""));
	ck_assert_ptr_nonnull(strstr(out, "\"__new_sem_wait_slow64\""));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_speedscope)
{
	struct profile *p = build();
	char *out = testutil_render(out_speedscope_write, p, NULL, NULL);

	ck_assert_ptr_nonnull(strstr(out, "\"name\": \"do_futex_wait_[t]\""));
	ck_assert_ptr_nonnull(strstr(out, "\"name\": \"__new_sem_wait_[t]\""));
	ck_assert_ptr_nonnull(strstr(out, "\"name\": \"__new_sem_wait_slow64\""));
	free(out);
	profile_free(p);
}
END_TEST

/* go tool pprof reads the names, places the frame between its caller and callee, and gives it
 * no flat (self) time. */
START_TEST(test_pprof_go)
{
	struct profile *p = build();
	size_t len;
	char *gz = testutil_render(out_pprof_write, p, NULL, &len), *path, *cmd, *out, *at;
	int st;

	if (!testutil_have_tool("go"))
		goto out;
	path = testutil_tmp_file("t.pb.gz", gz, len);
	cmd = xasprintf("HOME=%s go tool pprof -symbolize=none -traces '%s'", testutil_tmp, path);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
	at = strstr(out, "futex_wait\n");
	ck_assert_msg(at, "%s", out);
	ck_assert_ptr_nonnull(strstr(at, "do_futex_wait_[t]\n"));
	ck_assert_ptr_nonnull(strstr(at, "__new_sem_wait_slow64\n"));
	ck_assert_ptr_nonnull(strstr(at, "__new_sem_wait_[t]\n"));
	free(out);
	free(cmd);
	cmd = xasprintf("HOME=%s go tool pprof -symbolize=none -top '%s'", testutil_tmp, path);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s:\n%.3000s", cmd, out);
	/* "  0     0%  ...   100ms 66.67%  do_futex_wait_[t]": flat 0, cumulative 10 samples */
	at = strstr(out, "do_futex_wait_[t]");
	ck_assert_msg(at, "%s", out);
	while (at > out && at[-1] != '\n')
		at--;
	ck_assert_msg(!strncmp(at, "         0     0%", 17), "flat time on a tail-call frame:\n%s",
		      out);
	free(out);
	free(cmd);
	free(path);
out:
	free(gz);
	profile_free(p);
}
END_TEST

START_TEST(test_recording)
{
	struct profile *p = build(), *q = NULL;
	struct recording_info info;
	size_t len, n, tails = 0;
	char *data = testutil_render(out_recording_write, p, NULL, &len);

	ck_assert_int_eq(recording_read_mem((const uint8_t *)data, len, &q, &info), 0);
	for (size_t i = 0; i < profile_nr_frames(q); i++) {
		const struct profile_frame *f = profile_frame(q, (uint32_t)i);

		if (f->tailcall)
			ck_assert(!strcmp(profile_str(q, f->name), "do_futex_wait") ||
				  !strcmp(profile_str(q, f->name), "__new_sem_wait"));
		tails += f->tailcall;
	}
	ck_assert_uint_eq(tails, 2);
	/* the same stacks */
	ck_assert_uint_eq(profile_nr_stacks(q), profile_nr_stacks(p));
	profile_stack(q, 0, &n);
	ck_assert_uint_eq(n, 5);
	free(data);
	profile_free(q);
	profile_free(p);
}
END_TEST

Suite *tailframe_suite(void)
{
	Suite *s = suite_create("tailframe");
	TCase *tc = tcase_create("writers");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_folded_text);
	tcase_add_test(tc, test_speedscope);
	tcase_add_test(tc, test_flamegraph_chrome);
	tcase_add_test(tc, test_pprof_go);
	tcase_add_test(tc, test_recording);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
