/* e2e: 32-bit x86 targets on an x86_64 host (tests/targets/i386.mk): `perch record` of the
 * chain target built -m32 with frame pointers at -O0 and without them at -O2 (perch's own CFI:
 * libunwind is built for the host only), by pid and by command, with source lines; `perch dump`
 * of it and of the waits target (blocked threads sit in the vDSO's __kernel_vsyscall and must
 * unwind out of it); the wait-reason leaf frames from i386 syscall numbers; --verify refused. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "harness.h"

static const char *const chain_seq[] = {"main", "f0", "f1", "f2", "f3", "spin"};

static int has_chain(const struct harness_folded_line *l, const void *unused)
{
	(void)unused;
	return harness_line_has_seq(l, chain_seq, sizeof(chain_seq) / sizeof(chain_seq[0]));
}

static int chain_lines_ok(const struct harness_folded_line *l, const void *unused)
{
	int i = harness_line_find(l, "f3");

	(void)unused;
	return has_chain(l, NULL) && i >= 0 && (size_t)i + 1 < l->nr_frames &&
	       harness_frame_in_file(l->frames[i], "f3", "chain_f3.c") &&
	       harness_frame_in_file(l->frames[i + 1], "spin", "chain_spin.c");
}

static unsigned long count_tid(const struct harness_folded *f, pid_t tid,
			       int (*pred)(const struct harness_folded_line *, const void *))
{
	unsigned long n = 0;

	for (size_t i = 0; i < f->nr; i++)
		if (f->lines[i].tid == tid && (!pred || pred(&f->lines[i], NULL)))
			n += f->lines[i].count;
	return n;
}

static void assert_share(const struct harness_folded *f, pid_t tid,
			 int (*pred)(const struct harness_folded_line *, const void *),
			 const char *what, double min_pct, unsigned long min_samples)
{
	unsigned long all = count_tid(f, tid, NULL), good = count_tid(f, tid, pred);

	if (all < min_samples || good * 100.0 < min_pct * (double)all)
		harness_folded_context(f, NULL, 40);
	H_ASSERT(all >= min_samples, "only %lu samples of the chain thread %d (want >= %lu)", all,
		 (int)tid, min_samples);
	H_ASSERT(good * 100.0 >= min_pct * (double)all,
		 "%lu of %lu samples (%.1f%%) %s, want >= %.0f%%", good, all,
		 100.0 * (double)good / (double)all, what, min_pct);
}

/* The same checks as e2e-chain's record by pid, plus --lines. */
static void record_chain32_by_pid(const char *target)
{
	const char *out = harness_tmpfile("chain32.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	double unwound;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target(target), "4"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "--lines", "-F", "200", "-d",
					   "1.5", "-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 8) == 0, "perch did not stop after -d 1.5");
	H_CHECK_RECORD(perch, 0, out, &f);
	assert_share(&f, pid, has_chain, "hold main;f0;f1;f2;f3;spin", 95, 100);
	assert_share(&f, pid, chain_lines_ok, "have f3 (chain_f3.c:N) above spin (chain_spin.c:N)",
		     90, 100);
	unwound = harness_summary_unwound(perch->err.buf);
	H_ASSERT(unwound >= 90, "summary says unwound to root: %.1f%%, want >= 90%%", unwound);
	H_ASSERT(harness_wait_traced(pid, 0, 1) == 0, "target still traced after perch exited");
	H_ASSERT(harness_proc_wait(t, 6) == 0, "target did not finish");
	H_ASSERT(harness_proc_exit_code(t) == 0, "target exited with %d",
		 harness_proc_exit_code(t));
	H_ASSERT(harness_proc_wait_line(t, "result ", 0) != NULL, "target printed no result");
	harness_folded_release(&f);
}

START_TEST(chain32_fp_pid)
{
	record_chain32_by_pid("chain32-fp");
}
END_TEST

START_TEST(chain32_o2_pid)
{
	record_chain32_by_pid("chain32-o2");
}
END_TEST

/* `perch record -- PROG`: the architecture is the exec'ed program's, and libc (mapped after
 * the first maps read) is found by the unwinder. */
START_TEST(chain32_command)
{
	const char *out = harness_tmpfile("chain32.folded");
	struct harness_proc *perch;
	struct harness_folded f;
	pid_t pid;

	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o", out,
						"--", harness_target("chain32-fp"), "1.5"));
	pid = harness_proc_wait_ready(perch, 5);
	harness_track_pid(pid);
	H_ASSERT(harness_proc_wait(perch, 8) == 0, "perch did not exit after its program");
	H_CHECK_RECORD(perch, 0, out, &f);
	H_ASSERT(harness_proc_wait_line(perch, "result ", 0) != NULL,
		 "the program's stdout (\"result N\") did not pass through");
	assert_share(&f, pid, has_chain, "hold main;f0;f1;f2;f3;spin", 90, 100);
	/* below main: libc's CFI (the frame pointer chain ends at main's caller) */
	H_ASSERT(harness_folded_count(&f, NULL, harness_pred_has, "_start") * 100 >= f.total * 90,
		 "%lu of %lu samples reach _start",
		 harness_folded_count(&f, NULL, harness_pred_has, "_start"), f.total);
	harness_folded_release(&f);
}
END_TEST

/* Index of the first frame of @t named @fn at or after @from, or -1. */
static int bt_find(const struct harness_bt_thread *t, const char *fn, int from)
{
	for (size_t i = from < 0 ? 0 : (size_t)from; i < t->nr; i++)
		if (!strcmp(t->frames[i].func, fn))
			return (int)i;
	return -1;
}

static void bt_context(const char *text)
{
	harness_context_add("perch dump printed:\n%s", text);
}

/* Frames @seq appear in @t innermost first, in that order (others may sit between). */
static int bt_has_seq(const struct harness_bt_thread *t, const char *const *seq, size_t n)
{
	int at = 0;

	for (size_t i = 0; i < n; i++) {
		at = bt_find(t, seq[i], at);
		if (at < 0)
			return 0;
		at++;
	}
	return 1;
}

static void dump_pid(pid_t pid, struct harness_bt *bt, struct harness_proc **out)
{
	struct harness_proc *perch = harness_spawn(
	    "perch", HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)));

	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch dump did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch dump exited with %d: %s",
		 harness_proc_exit_code(perch), perch->err.buf);
	H_ASSERT(harness_bt_parse_perch(bt, perch->out.buf) == 0 && bt->nr_bad == 0,
		 "perch dump output not understood: %s", bt->bad.buf);
	*out = perch;
}

START_TEST(chain32_dump)
{
	static const char *const want[] = {"spin", "f3", "f2", "f1", "f0", "main", "_start"};
	struct harness_proc *t, *perch;
	struct harness_bt_thread *th;
	struct harness_bt bt;
	int i;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain32-o2"), "3"));
	pid = harness_proc_wait_ready(t, 5);
	dump_pid(pid, &bt, &perch);
	th = harness_bt_find(&bt, pid);
	if (!th || !bt_has_seq(th, want, sizeof(want) / sizeof(want[0])))
		bt_context(perch->out.buf);
	H_ASSERT(th != NULL, "no thread %d in the dump", (int)pid);
	H_ASSERT(bt_has_seq(th, want, sizeof(want) / sizeof(want[0])),
		 "thread %d: spin f3 f2 f1 f0 main _start not in order", (int)pid);
	i = bt_find(th, "f3", 0);
	H_ASSERT(th->frames[i].file && strstr(th->frames[i].file, "chain_f3.c") &&
		     th->frames[i].line > 0,
		 "f3 has no line in chain_f3.c");
	harness_bt_release(&bt);
	H_ASSERT(harness_wait_traced(pid, 0, 1) == 0, "target still traced after perch dump");
	H_ASSERT(harness_proc_wait(t, 6) == 0 && harness_proc_exit_code(t) == 0,
		 "target did not finish normally");
}
END_TEST

/* Blocked threads: in __kernel_vsyscall (int 0x80 / sysenter), unwound through the vDSO's CFI
 * to the thread's own function. */
START_TEST(waits32_dump)
{
	static const char *const reader[] = {"__kernel_vsyscall", "reader"};
	static const char *const main_seq[] = {"__kernel_vsyscall", "main", "_start"};
	const char *fifo = harness_tmpfile("waits32-dump.fifo");
	struct harness_proc *t, *perch;
	struct harness_bt bt;
	const struct harness_bt_thread *rd = NULL;
	int main_ok;
	pid_t pid;

	H_ASSERT(mkfifo(fifo, 0600) == 0, "cannot make a FIFO at %s", fifo);
	t = harness_spawn("target", HARNESS_ARGV(harness_target("waits32"), "1.5", fifo));
	pid = harness_proc_wait_ready(t, 5);
	usleep(200 * 1000); /* the threads reach their waits */
	dump_pid(pid, &bt, &perch);
	for (size_t i = 0; i < bt.nr; i++)
		if (bt.threads[i].name && !strcmp(bt.threads[i].name, "reader"))
			rd = &bt.threads[i];
	main_ok = harness_bt_find(&bt, pid) && bt_has_seq(harness_bt_find(&bt, pid), main_seq, 3);
	if (!rd || !bt_has_seq(rd, reader, 2) || !main_ok)
		bt_context(perch->out.buf);
	H_ASSERT(rd && rd->nr && !strcmp(rd->frames[0].func, "__kernel_vsyscall"),
		 "the reader thread does not sit in __kernel_vsyscall");
	H_ASSERT(bt_has_seq(rd, reader, 2), "no reader frame below __kernel_vsyscall");
	H_ASSERT(main_ok, "the main thread does not unwind from __kernel_vsyscall to _start");
	harness_bt_release(&bt);
	H_ASSERT(harness_proc_wait(t, 10) == 0 && harness_proc_exit_code(t) == 0,
		 "waits32 did not finish normally after the dump");
}
END_TEST

static int leaf_starts(const struct harness_folded_line *l, const void *arg)
{
	const char *prefix = arg;

	return l->nr_frames && !strncmp(l->frames[l->nr_frames - 1], prefix, strlen(prefix));
}

/* Wall mode: the leaf frames name why each thread waits, from i386 syscall numbers (read 3,
 * futex 240, clock_nanosleep 267 or its time64 twin); the program finishes normally. */
START_TEST(waits32_reasons)
{
	const char *out = harness_tmpfile("waits32.folded");
	const char *fifo = harness_tmpfile("waits32.fifo");
	struct harness_proc *perch;
	struct harness_folded f;
	char io[600];
	struct {
		const char *thread, *leaf;
	} want[] = {
	    {"reader", io},
	    {"locker", "[lock futex"}, /* futex, or futex_time64 */
	    {"sleeper", "[sleep clock_nanosleep"},
	};

	H_ASSERT(mkfifo(fifo, 0600) == 0, "cannot make a FIFO at %s", fifo);
	snprintf(io, sizeof(io), "[io read %s]", fifo);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o", out,
						"--", harness_target("waits32"), "1.5", fifo));
	H_ASSERT(harness_proc_wait(perch, 15) == 0, "perch did not finish with waits32");
	/* exit code 0: the launched program's own status */
	H_CHECK_RECORD(perch, 0, out, &f);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		unsigned long all =
		    harness_folded_count(&f, want[i].thread, harness_pred_any, NULL);
		unsigned long hit =
		    harness_folded_count(&f, want[i].thread, leaf_starts, want[i].leaf);
		unsigned long own =
		    harness_folded_count(&f, want[i].thread, harness_pred_has, want[i].thread);

		if (hit * 100 < all * 90 || own * 100 < all * 90)
			harness_folded_context(&f, want[i].thread, 10);
		H_ASSERT(all >= 100 && hit * 100 >= all * 90,
			 "%s: %lu of %lu samples end in \"%s\" (want >= 90%%)", want[i].thread, hit,
			 all, want[i].leaf);
		/* unwound out of the vDSO into the thread's own function */
		H_ASSERT(own * 100 >= all * 90, "%s: %lu of %lu samples hold the function %s",
			 want[i].thread, own, all, want[i].thread);
	}
	H_ASSERT(harness_folded_count(&f, "spinner", leaf_starts, "[") * 10 <
		     harness_folded_count(&f, "spinner", harness_pred_any, NULL),
		 "the spinning thread's samples end in wait frames");
	harness_folded_release(&f);
}
END_TEST

/* --verify compares with libunwind-ptrace, which is built for the host: a clear error, and the
 * target is left running untouched. */
START_TEST(verify32_refused)
{
	struct harness_proc *t, *perch;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain32-fp"), "2"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "--verify", "-d",
						    "0.5", "-o", harness_tmpfile("v.folded"), "-p",
						    harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 8) == 0, "perch --verify did not exit");
	H_ASSERT(harness_proc_exit_code(perch) != 0, "perch --verify on an i386 target exited 0");
	H_ASSERT(strstr(perch->err.buf, "--verify") && strstr(perch->err.buf, "i386"),
		 "no clear message about --verify and i386: %s", perch->err.buf);
	H_ASSERT(harness_wait_traced(pid, 0, 1) == 0, "target still traced after perch exited");
	H_ASSERT(harness_proc_wait(t, 6) == 0 && harness_proc_exit_code(t) == 0,
		 "target did not finish normally");
}
END_TEST

Suite *i386_suite(void)
{
	Suite *s = suite_create("e2e-i386");
	struct utsname u;
	TCase *tc;

	/* 32-bit x86 processes exist on x86_64 hosts only (the targets are built there only) */
	if (uname(&u) == 0 && strcmp(u.machine, "x86_64"))
		return s;
	if (!harness_can_exec_target("chain32-fp", "e2e-i386"))
		return s;
	tc = tcase_create("compat");
	harness_tcase_init(tc, 25);
	tcase_add_test(tc, chain32_fp_pid);
	tcase_add_test(tc, chain32_o2_pid);
	tcase_add_test(tc, chain32_command);
	tcase_add_test(tc, chain32_dump);
	tcase_add_test(tc, waits32_dump);
	tcase_add_test(tc, waits32_reasons);
	tcase_add_test(tc, verify32_refused);
	suite_add_tcase(s, tc);
	return s;
}
