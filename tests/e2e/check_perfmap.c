/* e2e: JIT code named by /tmp/perf-PID.map: node --perf-basic-prof runs a hot JavaScript
 * function (tests/targets/perfmap_hot.js); perch names it from the map node writes, as a JIT
 * frame ("_[j]" in folded output). SKIP when node is not installed. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static int has_hot_js(const struct harness_folded_line *l, const void *unused)
{
	for (size_t i = 0; i < l->nr_frames; i++)
		if (strstr(l->frames[i], "perchHotLoop") && strstr(l->frames[i], "_[j]"))
			return 1;
	return 0;
}

START_TEST(node_perf_basic_prof)
{
	const char *out = harness_tmpfile("node.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long all, hot;
	pid_t pid;

	if (access("/usr/bin/node", X_OK) != 0) {
		printf("SKIP: node not installed (/usr/bin/node): e2e-perfmap not run\n");
		return;
	}
	/* --perf-basic-prof turns V8's log on: keep its isolate-*.log out of the work tree */
	t = harness_spawn(
	    "node", HARNESS_ARGV("/usr/bin/node", "--perf-basic-prof", "--no-logfile-per-isolate",
				 harness_fmt("--logfile=%s", harness_tmpfile("v8.log")),
				 "tests/targets/perfmap_hot.js", "30"));
	pid = harness_proc_wait_ready(t, 15);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-d", "1.5",
						"-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 15) == 0, "perch did not finish");
	harness_proc_kill(t, 9);
	harness_proc_wait(t, 5);
	unlink(harness_fmt("/tmp/perf-%d.map", pid));
	H_CHECK_RECORD(perch, 0, out, &f);
	/* the main thread: samples in the hot loop, named from the map */
	all = harness_folded_count(&f, "node", harness_pred_any, NULL);
	hot = harness_folded_count(&f, NULL, has_hot_js, NULL);
	if (hot < 100)
		harness_folded_context(&f, NULL, 20);
	H_ASSERT(hot >= 100,
		 "%lu samples (of %lu on node threads) name perchHotLoop_[j] (want >= 100)", hot,
		 all);
	harness_folded_release(&f);
}
END_TEST

Suite *perfmap_suite(void)
{
	Suite *s = suite_create("e2e-perfmap");
	TCase *tc = tcase_create("perfmap");

	harness_tcase_init(tc, 40);
	tcase_add_test(tc, node_perf_basic_prof);
	suite_add_tcase(s, tc);
	return s;
}
