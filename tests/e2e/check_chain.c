/* e2e: `perch record` on the chain target (main -> f0 -> f1 -> f2 -> f3 -> spin), built with
 * frame pointers at -O0 and without them at -O2; attach by pid and start by command. */
#include <string.h>

#include "harness.h"

static const char *const chain_seq[] = {"main", "f0", "f1", "f2", "f3", "spin"};

static int has_chain(const struct harness_folded_line *l, const void *unused)
{
	(void)unused;
	return harness_line_has_seq(l, chain_seq, sizeof(chain_seq) / sizeof(chain_seq[0]));
}

/* Samples of the target's main thread (tid == pid) for which @pred holds. */
static unsigned long count_tid(const struct harness_folded *f, pid_t tid,
			       int (*pred)(const struct harness_folded_line *, const void *))
{
	unsigned long n = 0;
	size_t i;

	for (i = 0; i < f->nr; i++)
		if (f->lines[i].tid == tid && (!pred || pred(&f->lines[i], NULL)))
			n += f->lines[i].count;
	return n;
}

/* At least @min_pct % of the samples of thread @tid hold main;f0;f1;f2;f3;spin in order. */
static void assert_chain_share(const struct harness_folded *f, pid_t tid, double min_pct,
			       unsigned long min_samples)
{
	unsigned long all = count_tid(f, tid, NULL), good = count_tid(f, tid, has_chain);

	if (all < min_samples || good * 100.0 < min_pct * (double)all)
		harness_folded_context(f, NULL, 40);
	H_ASSERT(all >= min_samples, "only %lu samples of the chain thread %d (want >= %lu)", all,
		 (int)tid, min_samples);
	H_ASSERT(good * 100.0 >= min_pct * (double)all,
		 "%lu of %lu samples (%.1f%%) hold main;f0;f1;f2;f3;spin, want >= %.0f%%", good,
		 all, 100.0 * (double)good / (double)all, min_pct);
}

static void record_chain_by_pid(const char *target)
{
	const char *out = harness_tmpfile("chain.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	double unwound;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target(target), "4"));
	pid = harness_proc_wait_ready(t, 5);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-d", "1.5",
						"-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 8) == 0, "perch did not stop after -d 1.5");
	H_CHECK_RECORD(perch, 0, out, &f);
	assert_chain_share(&f, pid, 95, 100);
	unwound = harness_summary_unwound(perch->err.buf);
	H_ASSERT(unwound >= 90, "summary says unwound to root: %.1f%%, want >= 90%%", unwound);
	/* The target ran on, untouched: it finishes and prints its result. */
	H_ASSERT(harness_wait_traced(pid, 0, 1) == 0, "target still traced after perch exited");
	H_ASSERT(harness_proc_wait(t, 6) == 0, "target did not finish");
	H_ASSERT(harness_proc_exit_code(t) == 0, "target exited with %d",
		 harness_proc_exit_code(t));
	H_ASSERT(harness_proc_wait_line(t, "result ", 0) != NULL, "target printed no result");
	harness_folded_release(&f);
}

START_TEST(chain_fp_pid)
{
	record_chain_by_pid("chain-fp");
}
END_TEST

START_TEST(chain_o2_pid)
{
	record_chain_by_pid("chain-o2");
}
END_TEST

/* `perch record -- PROG`: the program's stdout passes through, perch exits with its status, and
 * the profile starts at exec (so a few samples before main are allowed: 90%). */
START_TEST(chain_command)
{
	const char *out = harness_tmpfile("chain.folded");
	struct harness_proc *perch;
	struct harness_folded f;
	const char *ready;
	pid_t pid;

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o",
						    out, "--", harness_target("chain-o2"), "1.5"));
	pid = harness_proc_wait_ready(perch, 5);
	harness_track_pid(pid);
	H_ASSERT(harness_proc_wait(perch, 8) == 0, "perch did not exit after its program");
	H_CHECK_RECORD(perch, 0, out, &f);
	ready = harness_proc_wait_line(perch, "result ", 0);
	H_ASSERT(ready != NULL, "the program's stdout (\"result N\") did not pass through");
	assert_chain_share(&f, pid, 90, 100);
	harness_folded_release(&f);
}
END_TEST

/* -o - writes the folded stacks to stdout; --top N prints the hottest functions to stderr. */
START_TEST(chain_stdout_top)
{
	struct harness_proc *t, *perch;
	struct harness_folded f;
	long samples;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "3"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-d", "1",
					   "--top", "5", "-o", "-", "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 8) == 0, "perch did not stop after -d 1");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited with %d",
		 harness_proc_exit_code(perch));
	harness_folded_parse(&f, perch->out.buf);
	H_ASSERT_FOLDED_VALID(&f);
	samples = harness_summary_samples(perch->err.buf);
	H_ASSERT(samples >= 0 && (unsigned long)samples == f.total,
		 "stdout counts add up to %lu, summary says %ld", f.total, samples);
	assert_chain_share(&f, pid, 95, 50);
	H_ASSERT(strstr(perch->err.buf, "spin") != NULL, "--top 5 does not name spin on stderr");
	harness_folded_release(&f);
}
END_TEST

/* -q: no summary on stderr, the profile is still written. */
START_TEST(chain_quiet)
{
	const char *out = harness_tmpfile("chain.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "2"));
	pid = harness_proc_wait_ready(t, 5);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-q", "-F", "100", "-d",
						"0.5", "-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not stop after -d 0.5");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited with %d",
		 harness_proc_exit_code(perch));
	H_ASSERT(harness_summary_samples(perch->err.buf) < 0, "-q still prints the summary");
	H_ASSERT(harness_folded_load(&f, out) == 0, "no output file %s", out);
	H_ASSERT_FOLDED_VALID(&f);
	assert_chain_share(&f, pid, 95, 20);
	harness_folded_release(&f);
}
END_TEST

static int chain_lines_ok(const struct harness_folded_line *l, const void *unused)
{
	int i = harness_line_find(l, "f3");

	(void)unused;
	return i >= 0 && (size_t)i + 1 < l->nr_frames &&
	       harness_frame_in_file(l->frames[i], "f3", "chain_f3.c") &&
	       harness_frame_in_file(l->frames[i + 1], "spin", "chain_spin.c");
}

START_TEST(chain_lines)
{
	const char *out = harness_tmpfile("chain.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long all, good;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "3"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "--lines", "-F", "200", "-d",
					   "1", "-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 8) == 0, "perch did not stop after -d 1");
	H_CHECK_RECORD(perch, 0, out, &f);
	all = count_tid(&f, pid, NULL);
	good = count_tid(&f, pid, chain_lines_ok);
	if (good * 100 < all * 90)
		harness_folded_context(&f, NULL, 30);
	H_ASSERT(
	    all >= 50 && good * 100 >= all * 90,
	    "%lu of %lu samples have \"f3 (...chain_f3.c:N)\" above \"spin (...chain_spin.c:N)\"",
	    good, all);
	harness_folded_release(&f);
}
END_TEST

Suite *chain_suite(void)
{
	Suite *s = suite_create("e2e-chain");
	TCase *tc = tcase_create("record");

	harness_tcase_init(tc, 20);
	tcase_add_test(tc, chain_fp_pid);
	tcase_add_test(tc, chain_o2_pid);
	tcase_add_test(tc, chain_command);
	tcase_add_test(tc, chain_stdout_top);
	tcase_add_test(tc, chain_lines);
	tcase_add_test(tc, chain_quiet);
	suite_add_tcase(s, tc);
	return s;
}
