/* e2e: `perch dump` against gdb on the toolchain targets (toolchains.mk): the same program
 * linked by GNU ld, gold and lld (4, 16 and 64 KiB maximum page sizes, PIE and not), unwound
 * only through a compressed .debug_frame (zstd, .zdebug), only through MiniDebugInfo, only by
 * frame pointers (no CFI at all); a Go program; a 3000-frame recursion.
 *
 * Comparison, per thread (gdb runs with `set backtrace past-main on`, so it goes on past main
 * to _start as perch does): function names normalised by harness_func_normalize(), equal
 * consecutive names merged (an inlined frame and its caller), gdb's "??" frames dropped (it
 * prints one for the 0 return address that ends Go's threads and a frame-pointer chain). Then
 * gdb's names must be a prefix of perch's (perch names every function gdb names, in gdb's
 * order), and for the C targets perch's outermost frame is a thread root (_start, clone3).
 * gdb's "<signal handler called>" is the signal trampoline, __restore_rt, by perch's name.
 * gdb reads MiniDebugInfo and compressed sections itself. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define GDB_PATH      "/usr/bin/gdb"
#define TC_MAX_FRAMES 4096

static const char *const variants[] = {
    "tc-bfd",	   "tc-gold", "tc-lld",	   "tc-lld16k", "tc-lld64k",
    "tc-lld-exec", "tc-zstd", "tc-zdebug", "tc-mdi",	"tc-nocfi",
};

struct names {
	char **v;
	size_t nr;
};

static void names_from(const struct harness_bt_thread *t, struct names *n)
{
	char buf[512];

	n->v = calloc(t->nr + 1, sizeof(*n->v));
	n->nr = 0;
	for (size_t i = 0; i < t->nr; i++) {
		const char *f = harness_func_normalize(t->frames[i].func, buf, sizeof(buf));

		if (!strcmp(f, "??") || f[0] == '[') /* gdb's unknown, perch's pseudo-frames */
			continue;
		if (n->nr && !strcmp(n->v[n->nr - 1], f))
			continue;
		n->v[n->nr++] = strdup(f);
	}
}

static void names_free(struct names *n)
{
	for (size_t i = 0; i < n->nr; i++)
		free(n->v[i]);
	free(n->v);
}

static void names_context(const char *who, const struct names *n)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n->nr; i++)
		strbuf_addf(&sb, " %s", n->v[i]);
	harness_context_add("  %s:%s", who, sb.buf);
	strbuf_release(&sb);
}

/* Wait until the target has @min_tasks or more tasks, all sleeping (S). The task count. */
static int wait_all_sleeping(pid_t pid, int min_tasks)
{
	double end = harness_now() + 5;
	char states[256];
	int n;

	for (;;) {
		n = harness_task_states(pid, states, sizeof(states));
		if (n >= min_tasks && strspn(states, "S") == (size_t)n)
			return n;
		H_ASSERT(harness_now() < end, "target task states \"%s\", want %d+ x 'S'", states,
			 min_tasks);
		harness_sleep(0.02);
	}
}

static char *run_out(const char *label, const char *const argv[], double timeout)
{
	struct harness_proc *p = harness_spawn(label, argv);

	H_ASSERT(harness_proc_wait(p, timeout) == 0, "%s did not finish within %.0f s", label,
		 timeout);
	H_ASSERT(harness_proc_exit_code(p) == 0, "%s exited with %d", label,
		 harness_proc_exit_code(p));
	return strdup(p->out.buf ? p->out.buf : "");
}

static void dump_both(pid_t pid, struct harness_bt *pbt, struct harness_bt *gbt)
{
	char *pout, *gout;

	pout = run_out("perch", HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)),
		       30);
	H_ASSERT(harness_wait_traced(pid, 0, 2) == 0, "target still traced after perch dump");
	gout = run_out("gdb",
		       HARNESS_ARGV(GDB_PATH, "-nx", "-batch", "-p", harness_fmt("%d", pid), "-ex",
				    "set backtrace past-main on", "-ex", "thread apply all bt"),
		       60);
	H_ASSERT(harness_wait_traced(pid, 0, 2) == 0, "target still traced after gdb");
	harness_bt_parse_perch(pbt, pout);
	for (char *s; (s = strstr(gout, "<signal handler called>"));)
		memcpy(s, "__restore_rt ()        ", 23);
	harness_bt_parse_gdb(gbt, gout);
	if (pbt->nr_bad)
		harness_context_add("perch dump lines not understood:\n%s", pbt->bad.buf);
	H_ASSERT(pbt->nr_bad == 0, "%zu lines of perch dump do not follow the format", pbt->nr_bad);
	H_ASSERT(gbt->nr > 0, "gdb printed no thread");
	free(pout);
	free(gout);
}

/* Every thread: gdb's names a prefix of perch's; @roots: perch ends at a thread root. */
static void compare(const struct harness_bt *pbt, const struct harness_bt *gbt, int roots)
{
	for (size_t i = 0; i < gbt->nr; i++) {
		const struct harness_bt_thread *gt = &gbt->threads[i];
		const struct harness_bt_thread *pt = harness_bt_find(pbt, gt->tid);
		struct names pn, gn;
		size_t k;

		H_ASSERT(pt != NULL, "perch dump does not show thread %d", (int)gt->tid);
		names_from(pt, &pn);
		names_from(gt, &gn);
		harness_context_reset();
		harness_context_add("thread %d:", (int)gt->tid);
		names_context("perch", &pn);
		names_context("gdb  ", &gn);
		H_ASSERT(gn.nr >= 3, "thread %d: gdb shows %zu functions", (int)gt->tid, gn.nr);
		for (k = 0; k < gn.nr; k++)
			H_ASSERT(k < pn.nr && !strcmp(pn.v[k], gn.v[k]),
				 "thread %d: frame %zu is %s in gdb, %s in perch", (int)gt->tid, k,
				 gn.v[k], k < pn.nr ? pn.v[k] : "(none)");
		if (roots)
			H_ASSERT(!strcmp(pn.v[pn.nr - 1], "start") ||
				     !strcmp(pn.v[pn.nr - 1], "clone3"),
				 "thread %d: perch's outermost frame is %s, not a thread root",
				 (int)gt->tid, pn.v[pn.nr - 1]);
		names_free(&pn);
		names_free(&gn);
	}
}

START_TEST(toolchain_vs_gdb)
{
	struct harness_bt pbt, gbt;
	struct harness_proc *t;
	pid_t pid;

	H_ASSERT(access(GDB_PATH, X_OK) == 0, "%s is missing (scripts/install-deps.sh installs it)",
		 GDB_PATH);
	t = harness_spawn("target", HARNESS_ARGV(harness_target(variants[_i]), "2"));
	pid = harness_proc_wait_ready(t, 5);
	H_ASSERT(wait_all_sleeping(pid, 4) == 4, "%s: not 4 tasks", variants[_i]);
	dump_both(pid, &pbt, &gbt);
	H_ASSERT(gbt.nr == 4 && pbt.nr == 4, "%s: perch shows %zu threads, gdb %zu", variants[_i],
		 pbt.nr, gbt.nr);
	compare(&pbt, &gbt, 1);
	harness_bt_release(&pbt);
	harness_bt_release(&gbt);
}
END_TEST

/* Go: the caller of each frameless assembly leaf (runtime.futex, Syscall6, epollwait) comes
 * from the compressed .debug_frame; gdb shows it. */
START_TEST(go_vs_gdb)
{
	struct harness_bt pbt, gbt;
	struct harness_proc *t;
	int leaves = 0;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("tc-go")));
	pid = harness_proc_wait_ready(t, 10);
	wait_all_sleeping(pid, 3);
	harness_sleep(0.2); /* the runtime's threads settle in their waits */
	dump_both(pid, &pbt, &gbt);
	compare(&pbt, &gbt, 0);
	for (size_t i = 0; i < pbt.nr; i++) {
		const struct harness_bt_thread *pt = &pbt.threads[i];

		if (pt->nr >= 2 && (strstr(pt->frames[0].func, "runtime.futex") ||
				    strstr(pt->frames[0].func, "Syscall6") ||
				    strstr(pt->frames[0].func, "runtime.epollwait")))
			leaves++;
	}
	H_ASSERT(leaves >= 2, "only %d threads wait in a frameless Go leaf", leaves);
	harness_bt_release(&pbt);
	harness_bt_release(&gbt);
}
END_TEST

/* Frame pointers and no CFI: every sample of every thread reaches _start or clone3 (where
 * the walk goes from the frame-pointer chain back to libc's CFI), none stops early, and the
 * summary counts the frames the frame pointers gave. */
START_TEST(nocfi_record)
{
	const char *out = harness_tmpfile("nocfi.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	const char *fb;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("tc-nocfi"), "2"));
	pid = harness_proc_wait_ready(t, 5);
	wait_all_sleeping(pid, 4);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "100", "-d",
						    "1", "-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch record did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	for (size_t i = 0; i < f.nr; i++) {
		const struct harness_folded_line *l = &f.lines[i];

		if (strcmp(l->frames[0], "_start") && strcmp(l->frames[0], "clone3"))
			harness_folded_context(&f, NULL, 10);
		H_ASSERT(!strcmp(l->frames[0], "_start") || !strcmp(l->frames[0], "clone3"),
			 "a stack starts at %s, not at a thread root", l->frames[0]);
		for (size_t k = 0; k < l->nr_frames; k++)
			H_ASSERT(strncmp(l->frames[k], "0x", 2) && !strstr(l->frames[k], "[stack]"),
				 "a raw address in a stack: %s", l->frames[k]);
	}
	H_ASSERT(harness_summary_unwound(perch->err.buf) >= 99.9, "unwound to root %.1f%%",
		 harness_summary_unwound(perch->err.buf));
	H_ASSERT(strstr(perch->err.buf, "stopped early 0.0%"), "stopped early is not 0.0%%");
	fb = strstr(perch->err.buf, "frame-pointer fallback ");
	H_ASSERT(fb && atof(fb + strlen("frame-pointer fallback ")) >= 20.0,
		 "the frame-pointer fallback figure does not count the frames without CFI");
	harness_folded_release(&f);
}
END_TEST

/* A 3004-frame stack: dump shows all of it when asked (as gdb does), cuts it at its default
 * limit with a [truncated] frame and a warning, and record marks every cut stack. */
START_TEST(deep_stack)
{
	const char *out = harness_tmpfile("deep.folded");
	struct harness_proc *t, *perch;
	struct harness_bt pbt, gbt;
	struct harness_folded f;
	char *gout;
	pid_t pid;
	size_t n;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("deeprec"), "2999"));
	pid = harness_proc_wait_ready(t, 5);
	wait_all_sleeping(pid, 1);

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "dump", "--max-frames", "0",
						    "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch dump did not finish");
	harness_bt_parse_perch(&pbt, perch->out.buf);
	gout = run_out("gdb",
		       HARNESS_ARGV(GDB_PATH, "-nx", "-batch", "-p", harness_fmt("%d", pid), "-ex",
				    "set backtrace past-main on", "-ex", "bt"),
		       60);
	/* gdb prints no "Thread" header for a single-threaded bt: give it one */
	{
		char *with = malloc(strlen(gout) + 64);

		sprintf(with, "Thread 1 (LWP %d \"deeprec\"):\n%s", (int)pid, gout);
		harness_bt_parse_gdb(&gbt, with);
		free(with);
	}
	H_ASSERT(pbt.nr == 1 && gbt.nr == 1, "threads: perch %zu, gdb %zu", pbt.nr, gbt.nr);
	H_ASSERT(gbt.threads[0].nr >= 3004, "gdb shows %zu frames", gbt.threads[0].nr);
	H_ASSERT(pbt.threads[0].nr == gbt.threads[0].nr, "perch shows %zu frames, gdb %zu",
		 pbt.threads[0].nr, gbt.threads[0].nr);
	compare(&pbt, &gbt, 1);
	harness_bt_release(&pbt);
	harness_bt_release(&gbt);
	free(gout);

	/* the default limit: 1024 frames, then the marker, and a warning */
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch dump did not finish");
	harness_bt_parse_perch(&pbt, perch->out.buf);
	n = pbt.threads[0].nr;
	H_ASSERT(n == 1025 && !strcmp(pbt.threads[0].frames[n - 1].func, "[truncated]"),
		 "default dump: %zu frames, the last %s", n, pbt.threads[0].frames[n - 1].func);
	H_ASSERT(strstr(perch->err.buf, "stack cut at 1024 frames"), "no warning on stderr");
	harness_bt_release(&pbt);

	/* record: every stack cut, marked at its root end, counted in the summary */
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "--max-frames",
						    "100", "-F", "100", "-d", "0.5", "-o", out,
						    "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch record did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	/* 100 frames, the marker, and (most samples) the wait reason's pseudo-frame below the
	 * leaf */
	for (size_t i = 0; i < f.nr; i++)
		H_ASSERT((f.lines[i].nr_frames == 101 || f.lines[i].nr_frames == 102) &&
			     !strcmp(f.lines[i].frames[0], "[truncated]"),
			 "a recorded stack of %zu frames starts with %s", f.lines[i].nr_frames,
			 f.lines[i].frames[0]);
	H_ASSERT(strstr(perch->err.buf, "cut at 100 frames 100.0%"),
		 "the summary does not count the cut stacks");
	harness_folded_release(&f);
}
END_TEST

Suite *toolchains_suite(void)
{
	Suite *s = suite_create("e2e-toolchains");
	TCase *tc = tcase_create("toolchains");

	harness_tcase_init(tc, 120);
	tcase_add_loop_test(tc, toolchain_vs_gdb, 0, (int)(sizeof(variants) / sizeof(variants[0])));
	tcase_add_test(tc, go_vs_gdb);
	tcase_add_test(tc, nocfi_record);
	tcase_add_test(tc, deep_stack);
	suite_add_tcase(s, tc);
	return s;
}
