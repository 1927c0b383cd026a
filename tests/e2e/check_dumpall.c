/* e2e: `perch dump` sees every thread and says what it could not see.
 *
 * - Under a signal storm (a thread's own timer every 200 us), while a thread creates threads
 *   without pause, and in a Go program (the runtime preempts busy goroutines with SIGURG): 40 of
 *   40 dumps hold a stack for every thread that lives through the dump. Before the persistent
 *   interrupt a signal-delivery or clone event stop cancelled perch's PTRACE_INTERRUPT and the
 *   thread came out as "(no stack: the thread did not stop in time ...)" in 3-14 dumps of 40.
 *   After the dumps the target runs on untraced, its threads as before.
 * - musl: its libc.so carries no unwind table for its system-call path, so a blocked thread's
 *   walk ends in libc; the dump must say so ("[stopped early: no CFI for libc.so]") and still
 *   print the wait reason. The truth is that the walk cannot reach main without CFI: the test
 *   asserts the marker whenever the thread's stack does not reach the program's own frames.
 * - `-n 0`: a 20,000-frame recursion shown whole (the target's own structure says how many
 *   `rec` frames there are), with no cut marker.
 * - A sleep that an earlier perch run broke off goes on as restart_syscall (/proc says 219 on
 *   x86_64, 128 on aarch64: checked first, or the test would prove nothing); the next dump and
 *   the next recording still read it as [sleep clock_nanosleep]. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define TRIES 40

static const char *dump_out(pid_t pid, const char *extra)
{
	struct harness_proc *p =
	    extra ? harness_spawn("perch", HARNESS_ARGV(harness_perch(), "dump", extra, "0", "-p",
							harness_fmt("%d", pid)))
		  : harness_spawn("perch", HARNESS_ARGV(harness_perch(), "dump", "-p",
							harness_fmt("%d", pid)));

	H_ASSERT(harness_proc_wait(p, 60) == 0, "perch dump did not finish");
	H_ASSERT(harness_proc_exit_code(p) == 0, "perch dump exited with %d: %s",
		 harness_proc_exit_code(p), p->err.buf ? p->err.buf : "");
	return p->out.buf ? p->out.buf : "";
}

static int has_note(const struct harness_bt_thread *t, const char *prefix)
{
	for (size_t i = 0; i < t->nr_notes; i++)
		if (!strncmp(t->notes[i], prefix, strlen(prefix)))
			return 1;
	return 0;
}

static int has_func(const struct harness_bt_thread *t, const char *fn)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->frames[i].func, fn))
			return 1;
	return 0;
}

/* One dump @out of @pid: 1 when every thread in it has a stack, a thread missing only because
 * it exited during the dump excepted when @exits_ok (a short-lived child). @keep: threads that
 * must be in it (their tids), @nr_keep of them. */
static int dump_complete(const char *out, pid_t pid, const pid_t *keep, size_t nr_keep,
			 int exits_ok)
{
	struct harness_bt bt;
	int ok = 1;

	harness_bt_parse_perch(&bt, out);
	H_ASSERT(bt.nr_bad == 0, "%zu lines of perch dump not understood: %s", bt.nr_bad,
		 bt.bad.buf);
	for (size_t k = 0; k < nr_keep; k++)
		H_ASSERT(harness_bt_find(&bt, keep[k]), "thread %d missing from the dump",
			 (int)keep[k]);
	for (size_t i = 0; i < bt.nr; i++) {
		const struct harness_bt_thread *t = &bt.threads[i];
		int exited = has_note(t, "(no stack: the thread exited");

		if (t->nr && !has_note(t, "(no stack"))
			continue;
		if (exited && exits_ok && t->tid != pid)
			continue;
		harness_context_add("thread %d without a stack:\n%s", (int)t->tid, out);
		ok = 0;
	}
	harness_bt_release(&bt);
	return ok;
}

/* The tids of @pid now. */
static size_t tids_of(pid_t pid, pid_t *tids, size_t max)
{
	int code;
	const char *ls = harness_sh(harness_fmt("ls /proc/%d/task", (int)pid), &code, 5);
	size_t n = 0;

	for (const char *s = ls; s && *s && n < max;) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		tids[n++] = (pid_t)v;
		s = end + strspn(end, " \n");
	}
	return n;
}

/* Send @n queued real-time signals to @pid, one a millisecond, from a child: it runs while
 * the dumps do. Its pid. */
static pid_t send_rt(pid_t pid, int n)
{
	pid_t sender = fork();

	H_ASSERT(sender >= 0, "fork failed");
	if (sender == 0) {
		union sigval v = {0};

		for (int i = 0; i < n; i++) {
			while (sigqueue(pid, SIGRTMIN + 1, v) < 0)
				usleep(100); /* EAGAIN: the queue is full, the target stopped */
			usleep(1000);
		}
		_exit(0);
	}
	harness_track_pid(sender);
	return sender;
}

/* TRIES dumps of target @name MODE: how many were complete. The threads of the target as it
 * started must be in every dump; after them it runs on untraced. With @rt_signals, that many
 * queued signals are sent during the dumps and the target must count them all. */
static void dump_many(const char *name, const char *mode, int exits_ok, int rt_signals)
{
	struct harness_proc *t =
	    harness_spawn("target", mode ? HARNESS_ARGV(harness_target(name), mode)
					 : HARNESS_ARGV(harness_target(name)));
	pid_t pid = harness_proc_wait_ready(t, 10), keep[64];
	size_t nr_keep;
	int complete = 0;

	const char *all;
	char *text, *at;
	pid_t sender = 0;
	int code;

	harness_sleep(0.2);
	nr_keep = tids_of(pid, keep, 64);
	if (rt_signals)
		sender = send_rt(pid, rt_signals);
	/* the dumps one after the other, in one shell (a test may run only so many children) */
	all = harness_sh(harness_fmt("for i in $(seq %d); do echo '=== dump'; '%s' dump -p %d "
				     "2>>'%s' || echo \"=== failed $?\"; done",
				     TRIES, harness_perch(), (int)pid, harness_tmpfile("dump.err")),
			 &code, 600);
	H_ASSERT(code == 0 && !strstr(all, "=== failed"), "a perch dump failed");
	if (rt_signals) {
		const char *line;
		int status;

		H_ASSERT(waitpid(sender, &status, 0) == sender, "the sender did not finish");
		kill(pid, SIGUSR2);
		line = harness_proc_wait_line(t, "rt ", 10);
		H_ASSERT(line && atoi(line) == rt_signals, "the target counted %s of %d signals",
			 line ? line : "(no answer)", rt_signals);
	}
	/* the threads there at the start and still there after the dumps lived through each
	 * (the spawner's children come and go in microseconds) */
	for (size_t k = nr_keep; k-- > 0;)
		if (access(harness_fmt("/proc/%d/task/%d", (int)pid, (int)keep[k]), F_OK) != 0)
			keep[k] = keep[--nr_keep];
	H_ASSERT(nr_keep >= 3, "only %zu threads lived through the dumps", nr_keep);
	text = strdup(all);
	at = strstr(text, "=== dump\n");
	while (at) {
		char *next = strstr(at + 9, "=== dump\n");

		if (next)
			*next = 0;
		complete += dump_complete(at + 9, pid, keep, nr_keep, exits_ok);
		at = next;
	}
	free(text);
	H_ASSERT(complete == TRIES, "%s %s: %d of %d dumps had every thread", name,
		 mode ? mode : "", complete, TRIES);
	H_ASSERT(harness_wait_traced(pid, 0, 2) == 0, "target still traced after the dumps");
	H_ASSERT(kill(pid, 0) == 0, "the target died under the dumps");
	harness_proc_kill(t, SIGKILL);
}

/* Under the timer storm, with 5000 queued real-time signals sent to the process meanwhile:
 * every dump holds every thread, and the target counts exactly the signals sent (none lost
 * or delivered twice by the stops and the interrupts asked again after them). */
START_TEST(signal_storm)
{
	dump_many("dumpall", "signals", 0, 5000);
}
END_TEST

START_TEST(thread_creation)
{
	dump_many("dumpall", "spawn", 1, 0);
}
END_TEST

START_TEST(go_preemption)
{
	dump_many("dumpall-go", NULL, 0, 0);
}
END_TEST

START_TEST(musl_stopped_early)
{
	struct harness_proc *t;
	struct harness_bt bt;
	const struct harness_bt_thread *main_t;
	const char *out;
	pid_t pid;

	if (access(harness_target("dumpall-musl"), X_OK) != 0) {
		H_ASSERT(
		    0, "dumpall-musl was not built: install musl-tools (scripts/install-deps.sh)");
		return;
	}
	t = harness_spawn("target", HARNESS_ARGV(harness_target("dumpall-musl"), "signals"));
	pid = harness_proc_wait_ready(t, 10);
	harness_sleep(0.2);
	out = dump_out(pid, NULL);
	harness_bt_parse_perch(&bt, out);
	harness_context_add("perch dump:\n%s", out);
	H_ASSERT(bt.nr_bad == 0 && bt.nr == 3, "musl dump: %zu threads, %zu bad lines", bt.nr,
		 bt.nr_bad);
	main_t = harness_bt_find(&bt, pid);
	H_ASSERT(main_t && main_t->nr >= 1, "no stack for the main thread");
	H_ASSERT(has_note(main_t, "[lock futex]") || has_note(main_t, "[wait other: "),
		 "no wait reason for the main thread (in pthread_join)");
	for (size_t i = 0; i < bt.nr; i++) {
		const struct harness_bt_thread *th = &bt.threads[i];

		if (!has_func(th, "main") && !has_func(th, "sleeper_main") &&
		    !has_func(th, "storm_main"))
			H_ASSERT(has_note(th, "[stopped early: "),
				 "thread %d ends short of the program's frames with no marker",
				 (int)th->tid);
	}
	H_ASSERT(strstr(out, "[stopped early: no CFI for libc.so]"),
		 "no thread says its walk stopped in musl's libc.so");
	harness_bt_release(&bt);
	harness_proc_kill(t, SIGKILL);
}
END_TEST

START_TEST(deep_20000_frames)
{
	struct harness_proc *t =
	    harness_spawn("target", HARNESS_ARGV(harness_target("deeprec"), "19999"));
	pid_t pid = harness_proc_wait_ready(t, 10);
	struct harness_bt bt;
	const struct harness_bt_thread *th;
	size_t recs = 0;

	harness_sleep(0.2);
	harness_bt_parse_perch(&bt, dump_out(pid, "-n"));
	th = harness_bt_find(&bt, pid);
	H_ASSERT(th, "no thread %d in the dump", (int)pid);
	for (size_t i = 0; i < th->nr; i++)
		recs += !strcmp(th->frames[i].func, "rec");
	H_ASSERT(recs == 20000, "-n 0 shows %zu rec frames of 20000 (%zu frames in all)", recs,
		 th->nr);
	H_ASSERT(!strcmp(th->frames[th->nr - 1].func, "_start"), "the last frame is %s",
		 th->frames[th->nr - 1].func);
	H_ASSERT(!has_note(th, "[truncated") && !has_note(th, "[stopped early"),
		 "the whole stack is marked cut");
	harness_bt_release(&bt);
	harness_proc_kill(t, SIGKILL);
}
END_TEST

/* The functions of @t from frame @from on, as harness_func_normalize() reads them, joined by
 * spaces; gdb's "??" (a frame it cannot name: Go's runtime.systemstack_switch) as "?". */
static char *func_list(const struct harness_bt_thread *t, size_t from, size_t to)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[256];

	for (size_t i = from; i < to && i < t->nr; i++) {
		const char *f = t->frames[i].func;

		strbuf_addf(&sb, "%s%s", sb.len ? " " : "",
			    !strcmp(f, "??") ? "?" : harness_func_normalize(f, buf, sizeof(buf)));
	}
	return strbuf_detach(&sb, NULL);
}

static size_t find_func(const struct harness_bt_thread *t, const char *fn)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->frames[i].func, fn))
			return i;
	return SIZE_MAX;
}

/* The functions Go's own traceback (SIGQUIT, GOTRACEBACK=all) gives for the goroutine whose
 * trace holds @fn, joined by spaces ("created by" ends it). */
static char *go_goroutine(const char *trace, const char *fn)
{
	const char *at = strstr(trace, harness_fmt("\n%s(", fn)), *g, *s;
	struct strbuf sb = STRBUF_INIT;

	H_ASSERT(at, "Go's traceback has no %s:\n%s", fn, trace);
	for (g = at; g > trace && strncmp(g, "\ngoroutine ", 11); g--)
		;
	for (s = strchr(g + 1, '\n'); s && s[1] && s[1] != '\n'; s = strchr(s + 1, '\n')) {
		const char *line = s + 1, *paren = strchr(line, '(');

		if (*line == '\t' || !strncmp(line, "created by ", 11) || !paren)
			continue;
		strbuf_addf(&sb, "%s%.*s", sb.len ? " " : "", (int)(paren - line), line);
	}
	return strbuf_detach(&sb, NULL);
}

/* Go+cgo: a Go callback called from C keeps its Go callers (frame for frame as gdb shows
 * them, gdb's "??" for runtime.systemstack_switch), and C code called from Go keeps the Go
 * code that called it: gdb's frames down to runtime.asmcgocall, then (gdb reads garbage past
 * that switch) the goroutine's functions as Go's own traceback lists them. */
START_TEST(go_cgo_vs_gdb)
{
	struct harness_proc *t =
	    harness_spawn("target", HARNESS_ARGV("/usr/bin/env", "GOTRACEBACK=all",
						 harness_target("dumpall-cgo")));
	pid_t pid = harness_proc_wait_ready(t, 10);
	struct harness_bt pbt, gbt;
	const struct harness_bt_thread *pcb = NULL, *gcb = NULL, *pc = NULL, *gc = NULL;
	const char *gout;
	char *a, *b;
	size_t ia, ig;
	int code;

	harness_sleep(0.3);
	harness_bt_parse_perch(&pbt, dump_out(pid, NULL));
	gout = harness_sh(harness_fmt("gdb -nx -batch -p %d -ex 'set backtrace past-main on' -ex "
				      "'thread apply all bt' 2>/dev/null",
				      (int)pid),
			  &code, 120);
	harness_bt_parse_gdb(&gbt, gout);
	for (size_t i = 0; i < pbt.nr; i++) {
		if (find_func(&pbt.threads[i], "main.goBlocked") != SIZE_MAX)
			pcb = &pbt.threads[i];
		if (find_func(&pbt.threads[i], "c_sleep") != SIZE_MAX)
			pc = &pbt.threads[i];
	}
	H_ASSERT(pcb && pc, "perch dump lacks the callback or the C sleeper");
	gcb = harness_bt_find(&gbt, pcb->tid);
	gc = harness_bt_find(&gbt, pc->tid);
	H_ASSERT(gcb && gc, "gdb lacks threads %d and %d", (int)pcb->tid, (int)pc->tid);

	/* the callback: every frame gdb names down to runtime.goexit */
	ig = find_func(gcb, "runtime.goexit");
	H_ASSERT(ig != SIZE_MAX, "gdb's callback stack does not reach runtime.goexit");
	a = func_list(pcb, 0, pcb->nr);
	b = func_list(gcb, 0, ig + 1);
	for (char *q; (q = strstr(b, "?"));) /* gdb's ?? is perch's systemstack_switch */
		*q = '#';
	{
		struct strbuf want = STRBUF_INIT;

		for (char *w = b; *w; w++)
			if (*w == '#')
				strbuf_addstr(&want, "runtime.systemstack_switch");
			else
				strbuf_addch(&want, *w);
		H_ASSERT(!strcmp(a, want.buf), "callback stack:\n  perch: %s\n  gdb:   %s", a,
			 want.buf);
		strbuf_release(&want);
	}
	free(a);
	free(b);

	/* C under Go: gdb's frames down to asmcgocall, Go's traceback after it */
	ia = find_func(pc, "runtime.asmcgocall");
	ig = find_func(gc, "runtime.asmcgocall");
	H_ASSERT(ia != SIZE_MAX && ig != SIZE_MAX, "no runtime.asmcgocall frame");
	a = func_list(pc, 0, ia + 1);
	b = func_list(gc, 0, ig + 1);
	H_ASSERT(!strcmp(a, b), "C frames under Go:\n  perch: %s\n  gdb:   %s", a, b);
	free(a);
	free(b);
	harness_bt_release(&gbt);
	kill(pid, SIGQUIT);
	harness_proc_wait(t, 20);
	b = go_goroutine(t->err.buf ? t->err.buf : "", "main._Cfunc_c_sleep");
	a = func_list(pc, ia + 1, pc->nr);
	H_ASSERT(!strncmp(a, b, strlen(b)),
		 "Go callers of the C code:\n  perch: %s\n  Go:    %s (then created by)", a, b);
	free(a);
	free(b);
	harness_bt_release(&pbt);
}
END_TEST

#if defined(__x86_64__)
#define RESTART_NR "219"
#elif defined(__aarch64__)
#define RESTART_NR "128"
#else
#define RESTART_NR "0"
#endif

static int sleeps(const struct harness_folded_line *l, const void *unused)
{
	(void)unused;
	return l->nr_frames && !strcmp(l->frames[l->nr_frames - 1], "[sleep clock_nanosleep]");
}

START_TEST(resumed_sleep)
{
	struct harness_proc *t =
	    harness_spawn("target", HARNESS_ARGV(harness_target("dumpall"), "sleep"));
	pid_t pid = harness_proc_wait_ready(t, 10);
	const char *out = harness_tmpfile("sleep.folded");
	struct harness_proc *perch;
	struct harness_folded f;
	struct harness_bt bt;
	const char *sc;
	int code;

	harness_sleep(0.2);
	dump_out(pid, NULL); /* this one breaks the sleep off: it goes on in restart_syscall */
	sc = harness_sh(harness_fmt("cat /proc/%d/syscall", (int)pid), &code, 5);
	H_ASSERT(sc && !strncmp(sc, RESTART_NR " ", strlen(RESTART_NR) + 1),
		 "after a dump the sleep is not restart_syscall: %s", sc ? sc : "?");
	harness_bt_parse_perch(&bt, dump_out(pid, NULL));
	H_ASSERT(bt.nr == 1 && bt.threads[0].nr_notes >= 1 &&
		     !strcmp(bt.threads[0].notes[0], "[sleep clock_nanosleep]"),
		 "the second dump's wait reason is %s",
		 bt.nr && bt.threads[0].nr_notes ? bt.threads[0].notes[0] : "(none)");
	harness_bt_release(&bt);

	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "100", "-d", "0.5",
						"-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch record did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	H_ASSERT(harness_folded_count(&f, NULL, sleeps, NULL) == f.total,
		 "%lu of %lu samples read as [sleep clock_nanosleep]",
		 harness_folded_count(&f, NULL, sleeps, NULL), f.total);
	harness_folded_release(&f);
	harness_proc_kill(t, SIGKILL);
}
END_TEST

Suite *dumpall_suite(void)
{
	Suite *s = suite_create("e2e-dumpall");
	TCase *tc = tcase_create("dumpall");

	harness_tcase_init(tc, 240);
	tcase_add_test(tc, signal_storm);
	tcase_add_test(tc, thread_creation);
	tcase_add_test(tc, go_preemption);
	tcase_add_test(tc, go_cgo_vs_gdb);
	tcase_add_test(tc, musl_stopped_early);
	tcase_add_test(tc, deep_20000_frames);
	tcase_add_test(tc, resumed_sleep);
	suite_add_tcase(s, tc);
	return s;
}
