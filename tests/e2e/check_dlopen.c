/* e2e: a library dlopen()ed after perch attached is symbolized (perch must notice new maps). */
#include <string.h>

#include "harness.h"

START_TEST(dlopen_after_attach)
{
	const char *out = harness_tmpfile("dlopen.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long all, hot;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("dlopen"), "1.5"));
	pid = harness_proc_wait_ready(t, 5);
	/* No -d: perch stops when the target exits. */
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o",
						    out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach within 5 s");
	harness_sleep(0.2); /* let perch take its first samples with the old maps */
	harness_proc_write(t, "go\n");
	H_ASSERT(harness_proc_wait(t, 8) == 0, "dlopen target did not finish");
	H_ASSERT(harness_proc_exit_code(t) == 0, "dlopen target exited with %d",
		 harness_proc_exit_code(t));
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not exit after its target");
	H_CHECK_RECORD(perch, 0, out, &f);
	all = harness_folded_count(&f, NULL, harness_pred_any, NULL);
	hot = harness_folded_count(&f, NULL, harness_pred_has, "plugin_hot");
	if (hot * 100 < all * 50)
		harness_folded_context(&f, NULL, 30);
	H_ASSERT(hot >= 100 && hot * 100 >= all * 50,
		 "%lu of %lu samples name plugin_hot (want >= 100 and >= 50%%)", hot, all);
	harness_folded_release(&f);
}
END_TEST

/* The same under `perch record -- dlopen`: the program's stdin passes through perch. */
START_TEST(dlopen_command_stdin)
{
	const char *out = harness_tmpfile("dlopen.folded");
	struct harness_proc *perch;
	struct harness_folded f;
	unsigned long hot;
	pid_t pid;

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o",
						    out, "--", harness_target("dlopen"), "1"));
	pid = harness_proc_wait_ready(perch, 5);
	harness_track_pid(pid);
	harness_proc_write(perch, "go\n");
	H_ASSERT(harness_proc_wait(perch, 8) == 0, "perch did not exit after its program");
	H_CHECK_RECORD(perch, 0, out, &f);
	H_ASSERT(harness_proc_wait_line(perch, "plugin ", 0) != NULL,
		 "the program did not get its stdin line (no \"plugin N\" output)");
	hot = harness_folded_count(&f, NULL, harness_pred_has, "plugin_hot");
	if (hot < 100)
		harness_folded_context(&f, NULL, 30);
	H_ASSERT(hot >= 100, "%lu samples name plugin_hot (want >= 100)", hot);
	harness_folded_release(&f);
}
END_TEST

Suite *dlopen_suite(void)
{
	Suite *s = suite_create("e2e-dlopen");
	TCase *tc = tcase_create("dlopen");

	harness_tcase_init(tc, 20);
	tcase_add_test(tc, dlopen_after_attach);
	tcase_add_test(tc, dlopen_command_stdin);
	suite_add_tcase(s, tc);
	return s;
}
