/* e2e: in wall mode a waiting thread's stack ends in why it waits (I/O with the file's path,
 * lock, sleep); in cpu mode only running threads are sampled. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

/* The leaf frame starts with @arg. */
static int leaf_starts(const struct harness_folded_line *l, const void *arg)
{
	const char *prefix = arg;

	return l->nr_frames && !strncmp(l->frames[l->nr_frames - 1], prefix, strlen(prefix));
}

static void record_waits(const char *mode, struct harness_folded *f, char *fifo_out)
{
	const char *out = harness_tmpfile(harness_fmt("waits-%s.folded", mode));
	const char *fifo = harness_tmpfile(harness_fmt("waits-%s.fifo", mode));
	struct harness_proc *perch;

	H_ASSERT(mkfifo(fifo, 0600) == 0, "cannot make a FIFO at %s", fifo);
	strcpy(fifo_out, fifo);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "-F", "200", "--mode", mode,
					   "-o", out, "--", harness_target("waits"), "1.5", fifo));
	H_ASSERT(harness_proc_wait(perch, 15) == 0, "perch did not finish with the waits target");
	H_CHECK_RECORD(perch, 0, out, f);
}

START_TEST(wall_mode_reasons)
{
	struct harness_folded f;
	char fifo[512];
	struct {
		const char *thread, *leaf;
	} want[] = {
	    {"reader", NULL}, /* set below: the FIFO's path */
	    {"locker", "[lock futex]"},
	    {"sleeper", "[sleep "},
	};
	char io[600];

	record_waits("wall", &f, fifo);
	snprintf(io, sizeof(io), "[io read %s]", fifo);
	want[0].leaf = io;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		unsigned long all =
		    harness_folded_count(&f, want[i].thread, harness_pred_any, NULL);
		unsigned long hit =
		    harness_folded_count(&f, want[i].thread, leaf_starts, want[i].leaf);

		if (hit * 100 < all * 90)
			harness_folded_context(&f, want[i].thread, 10);
		H_ASSERT(all >= 100 && hit * 100 >= all * 90,
			 "%s: %lu of %lu samples end in \"%s\" (want >= 90%%)", want[i].thread, hit,
			 all, want[i].leaf);
	}
	/* the running thread has no wait frame */
	H_ASSERT(harness_folded_count(&f, "spinner", leaf_starts, "[") * 10 <
		     harness_folded_count(&f, "spinner", harness_pred_any, NULL),
		 "the spinning thread's samples end in wait frames");
	harness_folded_release(&f);
}
END_TEST

START_TEST(cpu_mode_drops_waiting)
{
	struct harness_folded f;
	char fifo[512];
	unsigned long spin;

	record_waits("cpu", &f, fifo);
	spin = harness_folded_count(&f, "spinner", harness_pred_any, NULL);
	H_ASSERT(spin >= 100, "cpu mode: %lu samples of the spinning thread (want >= 100)", spin);
	/* a few samples from before they blocked (thread start-up) are right; being sampled
	 * while blocked for 1.5 s at 200 Hz would give about 300 */
	H_ASSERT(harness_folded_count(&f, "reader", harness_pred_any, NULL) <= 5 &&
		     harness_folded_count(&f, "locker", harness_pred_any, NULL) <= 5,
		 "cpu mode sampled threads blocked in read or on a lock");
	/* the sleeper runs for microseconds every 50 ms, longer on a busy machine where it waits
	 * for a CPU in state R: at most a tenth of the ~300 ticks of a wall-mode recording */
	H_ASSERT(harness_folded_count(&f, "sleeper", harness_pred_any, NULL) <= 30,
		 "cpu mode sampled the sleeping thread %lu times",
		 harness_folded_count(&f, "sleeper", harness_pred_any, NULL));
	H_ASSERT(harness_folded_count(&f, NULL, leaf_starts, "[") == 0,
		 "cpu mode wrote wait frames");
	harness_folded_release(&f);
}
END_TEST

Suite *waits_suite(void)
{
	Suite *s = suite_create("e2e-waits");
	TCase *tc = tcase_create("modes");

	harness_tcase_init(tc, 25);
	tcase_add_test(tc, wall_mode_reasons);
	tcase_add_test(tc, cpu_mode_drops_waiting);
	suite_add_tcase(s, tc);
	return s;
}
