/* e2e (issue 38): perch never breaks off a blocked call. The eintr target's threads sit in
 * epoll_wait(), semtimedop() and sigtimedwait(), calls that a ptrace stop makes fail with EINTR
 * (signal(7)), and count their own EINTRs (tests/targets/eintr_main.c); the truth is that count,
 * read from the target after perch is gone. perch records it for 10 s at 1000 Hz (attach,
 * sampling, detach), then `perch threads` attaches and detaches through the prompt's session:
 * not one EINTR, every blocked thread sampled with its whole stack (read from /proc, without a
 * stop: from clone3 down to the call), and the summary says no call was broken off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The target's own counts: "eintr epoll E sem S sigwait W". */
static void eintr_counts(struct harness_proc *t, long *epoll, long *sem, long *sigwait)
{
	const char *line;

	harness_proc_write(t, "count\n");
	line = harness_proc_wait_line(t, "eintr ", 10);
	H_ASSERT(line, "the eintr target did not answer");
	H_ASSERT(sscanf(line, "epoll %ld sem %ld sigwait %ld", epoll, sem, sigwait) == 3,
		 "cannot read the target's counts from \"%s\"", line);
}

/* Samples of threads whose stack runs from clone3 through @fn down to the call. */
static unsigned long whole_in(const struct harness_folded *f, const char *fn)
{
	unsigned long n = 0;

	for (size_t i = 0; i < f->nr; i++) {
		const struct harness_folded_line *l = &f->lines[i];

		if (harness_line_find(l, fn) >= 0 && harness_line_find(l, "clone3") >= 0)
			n += l->count;
	}
	return n;
}

START_TEST(eintr_record_and_session)
{
	const char *out = harness_tmpfile("eintr.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	long epoll, sem, sigwait;
	const char *threads;
	int code;
	pid_t pid;

	t = harness_spawn("eintr", HARNESS_ARGV(harness_target("eintr"), "4"));
	pid = harness_proc_wait_ready(t, 10);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "1000", "-d",
						    "10", "-p", harness_fmt("%d", pid), "-o", out));
	H_ASSERT(harness_proc_wait(perch, 60) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	H_ASSERT(strstr(perch->err.buf, "0 blocking calls broken off"),
		 "the summary does not say that no blocking call was broken off");
	H_ASSERT(harness_wait_traced(pid, 0, 5) == 0, "the target is still traced");
	eintr_counts(t, &epoll, &sem, &sigwait);
	H_ASSERT(!epoll && !sem && !sigwait,
		 "perch record broke off blocked calls: %ld epoll_wait, %ld semtimedop, %ld "
		 "sigtimedwait failed with EINTR",
		 epoll, sem, sigwait);
	/* 12 blocked threads at 1000 Hz for 10 s: about 120000 samples, each whole */
	H_ASSERT(whole_in(&f, "in_epoll") > 30000 && whole_in(&f, "in_sem") > 30000 &&
		     whole_in(&f, "in_sigwait") > 30000,
		 "blocked threads without whole stacks: epoll %lu, sem %lu, sigwait %lu samples "
		 "from clone3 down",
		 whole_in(&f, "in_epoll"), whole_in(&f, "in_sem"), whole_in(&f, "in_sigwait"));
	harness_folded_release(&f);

	threads = harness_sh(harness_fmt("%s threads -p %d 2>&1", harness_perch(), pid), &code, 60);
	H_ASSERT(code == 0, "perch threads failed: %s", threads);
	H_ASSERT(harness_wait_traced(pid, 0, 5) == 0, "the target is still traced after threads");
	eintr_counts(t, &epoll, &sem, &sigwait);
	H_ASSERT(
	    !epoll && !sem && !sigwait,
	    "the prompt's session broke off blocked calls: %ld epoll_wait, %ld semtimedop, %ld "
	    "sigtimedwait failed with EINTR",
	    epoll, sem, sigwait);
}
END_TEST

Suite *eintr_suite(void)
{
	Suite *s = suite_create("e2e-eintr");
	TCase *tc = tcase_create("eintr");

	harness_tcase_init(tc, 120);
	tcase_add_test(tc, eintr_record_and_session);
	suite_add_tcase(s, tc);
	return s;
}
