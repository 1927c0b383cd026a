/* e2e: a recording of several processes (issue 15, item 3). `record -- PROG` follows the
 * processes PROG forks and execs (--no-follow: not), `-p PID --follow-children` those PID
 * forks, vforks and execs; `-p A,B` and `--app NAME` several running processes at once; each
 * process is labelled with its pid and name; perch detaches from
 * every child on every way out; a recording without samples fails saying why.
 *
 * The truth each case is held to comes from the programs themselves: the pids they print
 * ("sh $$", "ready PID", "child PID"), how long they ran by their own clock (chain-fp spins for
 * as long as it is told; the shell prints `date` around xz), and the known functions they spin
 * in; go tool pprof reads the pprof labels and python3's json module the Chrome trace. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* ---- helpers ---- */

/* The process of a folded line of a multi-process recording ("name-PID/thread-TID;..." is
 * parsed by the harness as thread "name-PID/thread", tid TID): its pid, its name in @name. */
static pid_t line_process(const struct harness_folded_line *l, char *name, size_t size)
{
	const char *slash = strchr(l->thread, '/'), *dash;

	if (!slash)
		return 0;
	for (dash = slash; dash > l->thread && dash[-1] != '-'; dash--)
		;
	if (dash == l->thread)
		return 0;
	snprintf(name, size, "%.*s", (int)(dash - 1 - l->thread), l->thread);
	return (pid_t)atoi(dash);
}

/* Samples of process @pid (0: any) that have a frame @fn (NULL: any); names of the process
 * must all be @want_name (NULL: not checked). */
static unsigned long proc_count(const struct harness_folded *f, pid_t pid, const char *fn,
				const char *want_name)
{
	unsigned long n = 0;
	char name[256];

	for (size_t i = 0; i < f->nr; i++) {
		const struct harness_folded_line *l = &f->lines[i];
		pid_t p = line_process(l, name, sizeof(name));

		H_ASSERT(p > 0, "folded line of thread \"%s\" has no process before it", l->thread);
		if (pid && p != pid)
			continue;
		if (want_name)
			H_ASSERT(!strcmp(name, want_name),
				 "process %d is labelled \"%s\", want \"%s\"", (int)p, name,
				 want_name);
		if (fn && harness_line_find(l, fn) < 0)
			continue;
		n += l->count;
	}
	return n;
}

/* Samples in [lo, hi] of @seconds at 100 Hz (wall mode counts a spinning thread at every tick,
 * even while it waits for a CPU): @lo and @hi as fractions. Up to 200 %: on a loaded machine
 * ticks at which a thread's stop was still pending (or perch fell behind) are credited to its
 * next sample, which may fall in the timed part of a program although they were spent before
 * it (its exec and loader are not timed); the bound still catches samples counted twice or
 * given to the wrong process. */
static void assert_about(unsigned long n, double seconds, double lo, double hi, const char *what)
{
	/* a sanitizer build is slower to follow a new process and misses more ticks */
	if (getenv("PERCH_TEST_SANITIZED"))
		lo *= 0.6;
	H_ASSERT(n >= (unsigned long)(seconds * 100 * lo) &&
		     n <= (unsigned long)(seconds * 100 * hi) + 3,
		 "%lu samples of %s, which ran %.2f s (want %.0f%%-%.0f%% of %.0f)", n, what,
		 seconds, lo * 100, hi * 100, seconds * 100);
}

/* The number after @prefix in the @n-th line (from 1) of @p's output that starts with it. */
static pid_t nth_pid(struct harness_proc *p, const char *prefix, int n, double timeout)
{
	double end = harness_now() + timeout;

	for (;;) {
		const char *s = p->out.buf;
		int k = 0;

		harness_proc_pump(p, 0);
		for (s = p->out.len ? p->out.buf : ""; *s;
		     s = strchr(s, '\n') ? strchr(s, '\n') + 1 : "") {
			if (!strncmp(s, prefix, strlen(prefix)) && strchr(s, '\n') && ++k == n)
				return (pid_t)atoi(s + strlen(prefix));
		}
		H_ASSERT(harness_now() < end && p->out_fd >= 0, "%s printed no %d. \"%s\" line",
			 p->label, n, prefix);
		harness_proc_pump(p, 0.02);
	}
}

static pid_t line_pid(struct harness_proc *p, const char *prefix, double timeout)
{
	return nth_pid(p, prefix, 1, timeout);
}

static void assert_exit(struct harness_proc *p, int want)
{
	H_ASSERT(harness_proc_exit_code(p) == want, "%s exited with %d, want %d", p->cmdline,
		 harness_proc_exit_code(p), want);
}

/* The state letter of process @pid ('?' when gone). */
static char proc_state(pid_t pid)
{
	char states[64];

	return harness_task_states(pid, states, sizeof(states)) > 0 ? states[0] : '?';
}

/* ---- record -- PROG ---- */

START_TEST(follow_program)
{
	const char *out = harness_tmpfile("follow.folded");
	const char *script = harness_fmt("echo sh $$; %s 1.2; %s 0.8; echo done",
					 harness_target("chain-fp"), harness_target("chain-fp"));
	struct harness_proc *perch;
	struct harness_folded f;
	pid_t sh, c1, c2;

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-o", out, "--",
						    "/bin/sh", "-c", script));
	sh = line_pid(perch, "sh ", 10);
	c1 = line_pid(perch, "ready ", 10);
	harness_track_pid(c1);
	H_ASSERT(harness_tracer_pid(c1) == perch->pid, "the forked child is not traced by perch");
	H_ASSERT(harness_proc_wait_line(perch, "done", 20), "the script did not finish");
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	c2 = nth_pid(perch, "ready ", 2, 1);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_context(&f, NULL, 20);
	assert_about(proc_count(&f, c1, "f3", "chain-fp"), 1.2, 0.7, 2.0, "the first chain-fp");
	assert_about(proc_count(&f, c2, "f3", "chain-fp"), 0.8, 0.7, 2.0, "the second chain-fp");
	H_ASSERT(proc_count(&f, sh, NULL, "sh") > 0, "no sample of the shell %d", (int)sh);
	H_ASSERT(proc_count(&f, 0, NULL, NULL) == proc_count(&f, sh, NULL, NULL) +
						      proc_count(&f, c1, NULL, NULL) +
						      proc_count(&f, c2, NULL, NULL),
		 "samples of processes other than the shell and its two children");
	H_ASSERT(strstr(perch->err.buf, "processes: 3 sampled (2 forked children followed)"),
		 "the summary does not count the processes");
	harness_folded_release(&f);
}
END_TEST

START_TEST(no_follow)
{
	const char *out = harness_tmpfile("nofollow.folded");
	const char *script =
	    harness_fmt("echo sh $$; %s 0.8; echo done", harness_target("chain-fp"));
	struct harness_proc *perch;
	struct harness_folded f;
	pid_t sh, c1;

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "--no-follow", "-o",
						    out, "--", "/bin/sh", "-c", script));
	sh = line_pid(perch, "sh ", 10);
	c1 = line_pid(perch, "ready ", 10);
	harness_track_pid(c1);
	H_ASSERT(harness_tracer_pid(c1) == 0, "--no-follow: the child is traced");
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	/* one process: the folded lines keep their single-process form */
	for (size_t i = 0; i < f.nr; i++)
		H_ASSERT(!strcmp(f.lines[i].thread, "sh") && f.lines[i].tid == sh &&
			     harness_line_find(&f.lines[i], "f3") < 0,
			 "--no-follow: a line of thread %s-%d", f.lines[i].thread,
			 (int)f.lines[i].tid);
	harness_folded_release(&f);
}
END_TEST

/* The case: `perch record -- sh -c 'xz ...'` recorded only the shell. */
START_TEST(xz_child)
{
	const char *in = harness_tmpfile("in.txt"), *out = harness_tmpfile("xz.folded");
	struct harness_proc *perch;
	struct harness_folded f;
	unsigned long n = 0, lzma = 0;
	double t0, t1;
	const char *s;
	char name[256];
	pid_t xz = 0;

	H_ASSERT(system(harness_fmt("seq 1 2000000 > %s", in)) == 0, "cannot write %s", in);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-o", out, "--",
						    "/bin/sh", "-c",
						    harness_fmt("date +t%%s.%%N; xz -1 -T1 -c %s "
								">/dev/null; date +t%%s.%%N",
								in)));
	H_ASSERT(harness_proc_wait(perch, 60) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	s = strchr(perch->out.buf, 't');
	H_ASSERT(s && strchr(s + 1, 't'), "no times from the shell");
	t0 = atof(s + 1);
	t1 = atof(strchr(s + 1, 't') + 1);
	for (size_t i = 0; i < f.nr; i++) {
		pid_t p = line_process(&f.lines[i], name, sizeof(name));

		if (strcmp(name, "xz"))
			continue;
		H_ASSERT(!xz || p == xz, "two xz processes: %d and %d", (int)xz, (int)p);
		xz = p;
		n += f.lines[i].count;
		for (size_t k = 0; k < f.lines[i].nr_frames; k++)
			if (strstr(f.lines[i].frames[k], "lzma")) {
				lzma += f.lines[i].count;
				break;
			}
	}
	harness_folded_context(&f, NULL, 10);
	assert_about(n, t1 - t0, 0.6, 1.3, "xz");
	H_ASSERT(lzma * 100 >= n * 70, "%lu of %lu samples of xz are in liblzma", lzma, n);
	harness_folded_release(&f);
}
END_TEST

/* ---- -p PID --follow-children ---- */

START_TEST(follow_pid)
{
	const char *out = harness_tmpfile("pid.folded"), *chain = harness_target("chain-fp");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	pid_t pid, forked, execd, vforked;
	double t0;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "forker"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
					   "--follow-children", "-d", "3", "-o", out));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach");
	t0 = harness_now();
	harness_proc_write(t, "fork 0.8\n");
	forked = line_pid(t, "child ", 5);
	harness_track_pid(forked);
	H_ASSERT(harness_tracer_pid(forked) == perch->pid, "the forked child is not followed");
	harness_proc_write(t, harness_fmt("exec %s 0.6\n", chain));
	execd = nth_pid(t, "child ", 2, 5);
	harness_proc_write(t, harness_fmt("vfork-exec %s 0.5\n", chain));
	vforked = line_pid(t, "vchild ", 5);
	harness_track_pid(execd);
	harness_track_pid(vforked);
	H_ASSERT(harness_now() - t0 < 1.5, "the commands took too long for a 3 s recording");
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_context(&f, NULL, 20);
	assert_about(proc_count(&f, forked, "states_child_spin", "states"), 0.8, 0.6, 2.0,
		     "the forked child");
	assert_about(proc_count(&f, execd, "f3", "chain-fp"), 0.6, 0.6, 2.0,
		     "the forked child that exec'd chain-fp");
	assert_about(proc_count(&f, vforked, "f3", "chain-fp"), 0.5, 0.6, 2.0,
		     "the vfork()ed child that exec'd chain-fp");
	H_ASSERT(proc_count(&f, pid, "forker_main", "states") >= 100,
		 "too few samples of the forker itself");
	harness_folded_release(&f);
	H_ASSERT(harness_wait_traced(pid, 0, 2) == 0 && proc_state(pid) == 'S',
		 "the forker is traced or not sleeping after perch");

	/* without --follow-children, the children are left alone */
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						harness_fmt("%d", pid), "-d", "1.5", "-o", out));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach");
	harness_proc_write(t, "fork 0.5\n");
	forked = nth_pid(t, "child ", 3, 5);
	harness_track_pid(forked);
	H_ASSERT(harness_tracer_pid(forked) == 0, "without --follow-children the child is traced");
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	for (size_t i = 0; i < f.nr; i++)
		H_ASSERT(f.lines[i].tid == pid &&
			     harness_line_find(&f.lines[i], "states_child_spin") < 0,
			 "without --follow-children: a line of thread %s-%d", f.lines[i].thread,
			 (int)f.lines[i].tid);
	harness_folded_release(&f);
	harness_proc_write(t, "quit\n");
	H_ASSERT(harness_proc_wait(t, 10) == 0 && harness_proc_exit_code(t) == 0,
		 "the forker did not end cleanly");
}
END_TEST

/* ---- several processes at once: -p LIST, --app NAME ---- */

/* `-p A,B` and `--app chain-fp` against processes this test started: two chain-fp, one more
 * whose argv[0] is "chain-fp:remote" (an Android app's service process is named so), and a
 * dump target that --app must leave alone. Each process of the list is in the recording under
 * its own pid with its own spin, every one is left running and untraced; a list with a pid
 * that does not exist fails and leaves the others untraced. */
START_TEST(pid_list_and_app)
{
	const char *out = harness_tmpfile("many.folded"), *chain = harness_target("chain-fp");
	struct harness_proc *a, *b, *remote, *other, *perch;
	struct harness_folded f;
	pid_t pa, pb, pr, po;
	char states[64];

	a = harness_spawn("chain a", HARNESS_ARGV(chain, "30"));
	b = harness_spawn("chain b", HARNESS_ARGV(chain, "30"));
	remote = harness_spawn(
	    "chain remote",
	    HARNESS_ARGV("/bin/bash", "-c", harness_fmt("exec -a chain-fp:remote %s 30", chain)));
	other = harness_spawn("dump", HARNESS_ARGV(harness_target("dump"), "30"));
	pa = harness_proc_wait_ready(a, 5);
	pb = harness_proc_wait_ready(b, 5);
	pr = harness_proc_wait_ready(remote, 5);
	po = harness_proc_wait_ready(other, 5);

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						    harness_fmt("%d,%d", (int)pa, (int)pb), "-d",
						    "1.5", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch -p A,B did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_context(&f, NULL, 20);
	assert_about(proc_count(&f, pa, "f3", "chain-fp"), 1.5, 0.6, 1.2, "chain a (-p A,B)");
	assert_about(proc_count(&f, pb, "f3", "chain-fp"), 1.5, 0.6, 1.2, "chain b (-p A,B)");
	H_ASSERT(proc_count(&f, 0, NULL, NULL) ==
		     proc_count(&f, pa, NULL, NULL) + proc_count(&f, pb, NULL, NULL),
		 "-p A,B recorded a process it was not given");
	H_ASSERT(strstr(perch->err.buf, "recorded 2 processes"),
		 "the summary does not say it recorded 2 processes");
	harness_folded_release(&f);

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "--app", "chain-fp",
						    "-d", "1.5", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch --app did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_context(&f, NULL, 20);
	assert_about(proc_count(&f, pa, "f3", "chain-fp"), 1.5, 0.6, 1.2, "chain a (--app)");
	assert_about(proc_count(&f, pb, "f3", "chain-fp"), 1.5, 0.6, 1.2, "chain b (--app)");
	assert_about(proc_count(&f, pr, "f3", NULL), 1.5, 0.6, 1.2, "chain-fp:remote (--app)");
	H_ASSERT(proc_count(&f, po, NULL, NULL) == 0, "--app chain-fp recorded the dump target");
	harness_folded_release(&f);

	/* a list with a pid that does not exist: nothing recorded, nothing left traced */
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						    harness_fmt("%d,%d", (int)pa, 999999999), "-d",
						    "1", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch -p A,NONE did not finish");
	assert_exit(perch, 2);
	H_ASSERT(strstr(perch->err.buf, "999999999: no such process"),
		 "perch -p A,NONE does not say which pid is missing:\n%s", perch->err.buf);

	H_ASSERT(harness_wait_traced(pa, 0, 2) == 0 && harness_wait_traced(pb, 0, 2) == 0 &&
		     harness_wait_traced(pr, 0, 2) == 0 && harness_wait_traced(po, 0, 2) == 0,
		 "a process is still traced after perch");
	H_ASSERT(harness_task_states(pa, states, sizeof(states)) > 0 && states[0] == 'R',
		 "chain a is not running after perch (%s)", states);
	harness_proc_kill(a, SIGKILL);
	harness_proc_kill(b, SIGKILL);
	harness_proc_kill(remote, SIGKILL);
	harness_proc_kill(other, SIGKILL);
}
END_TEST

/* Wait until @p's stderr holds @text. */
static int wait_err(struct harness_proc *p, const char *text, double timeout)
{
	double end = harness_now() + timeout;

	while (!strstr(p->err.len ? p->err.buf : "", text)) {
		if (p->reaped || harness_now() > end)
			return -1;
		harness_proc_pump(p, 0.05);
	}
	return 0;
}

/* chain-fp spinning for 30 s under the process name (argv[0]) @name */
static struct harness_proc *spawn_named(const char *label, const char *name)
{
	return harness_spawn(
	    label, HARNESS_ARGV("/bin/bash", "-c",
				harness_fmt("exec -a %s %s 30", name, harness_target("chain-fp"))));
}

/* `--app NAME` also takes the app's processes that start while it records (issue 19, item
 * 2): with one process of the app running, perch starts; then a second one named NAME, one
 * exec'd as "NAME:remote" (an Android app's service process), one that renames itself
 * "NAME:svc" after it started as zygote names an app's process (waitstart -n: argv[0]'s
 * memory and comm) and one named "NAMEx" (not the app's) start. The three of the app are in
 * the recording under their own pids with their own spin for about as long as they ran by the
 * test's clock, the other is not, the summary says they joined, and every process runs on
 * untraced after perch. Once with the kernel's process
 * events (when perch may listen to them) and once polling /proc (PERCH_WAIT_POLL=proc). The
 * name is made unique: other tests on the machine run chain-fp too. */
START_TEST(app_join)
{
	const char *out = harness_tmpfile("join.folded");
	const char *name = harness_fmt("perchjoin%d", (int)getpid());
	const double duration = 4;
	struct harness_proc *a, *b, *remote, *renamed, *other, *perch;
	struct harness_folded f;
	pid_t pa, pb, pr, pn, po;
	char states[64];

	a = spawn_named("app a", name);
	pa = harness_proc_wait_ready(a, 5);
	for (int way = 0; way < 2; way++) {
		double started, ready;

		if (way)
			setenv("PERCH_WAIT_POLL", "proc", 1);
		perch = harness_spawn("perch",
				      HARNESS_ARGV(harness_perch(), "record", "-v", "--app", name,
						   "-d", harness_fmt("%g", duration), "-o", out));
		unsetenv("PERCH_WAIT_POLL");
		H_ASSERT(wait_err(perch, "perch: sampling ", 20) == 0,
			 "perch did not start sampling");
		started = harness_now();
		if (way)
			H_ASSERT(strstr(perch->err.buf, "(polling /proc)"),
				 "PERCH_WAIT_POLL=proc does not poll /proc");
		b = spawn_named("app b", name);
		remote = spawn_named("app remote", harness_fmt("%s:remote", name));
		renamed =
		    harness_spawn("app renamed", HARNESS_ARGV(harness_target("waitstart"), "-n",
							      harness_fmt("%s:svc", name), "-s",
							      "0", "-r", "30000"));
		other = spawn_named("not the app", harness_fmt("%sx", name));
		pb = harness_proc_wait_ready(b, 5);
		pr = harness_proc_wait_ready(remote, 5);
		pn = harness_proc_wait_ready(renamed, 5);
		po = harness_proc_wait_ready(other, 5);
		ready = harness_now();
		H_ASSERT(ready < started + duration - 1, "the late processes took %.1f s to start",
			 ready - started);
		H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch --app did not finish");
		H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
		harness_folded_context(&f, NULL, 20);
		harness_context_add("way %d (%s), late processes ready %.2f s into %g s", way,
				    way ? "polling /proc" : "default", ready - started, duration);
		/* (the first one's count is held to its bounds in pid_list_and_app) */
		H_ASSERT(proc_count(&f, pa, "f3", "chain-fp") > 0, "the first process is missing");
		assert_about(proc_count(&f, pb, "f3", "chain-fp"), started + duration - ready, 0.4,
			     1.2, "the app's process that started during the recording");
		assert_about(proc_count(&f, pr, "f3", "chain-fp"), started + duration - ready, 0.4,
			     1.2, "NAME:remote, started during the recording");
		assert_about(proc_count(&f, pn, "steady_work", NULL), started + duration - ready,
			     0.4, 1.2, "NAME:svc, renamed during the recording");
		H_ASSERT(proc_count(&f, po, NULL, NULL) == 0, "--app %s recorded %sx", name, name);
		H_ASSERT(proc_count(&f, 0, NULL, NULL) ==
			     proc_count(&f, pa, NULL, NULL) + proc_count(&f, pb, NULL, NULL) +
				 proc_count(&f, pr, NULL, NULL) + proc_count(&f, pn, NULL, NULL),
			 "--app recorded a process not of the app");
		H_ASSERT(strstr(perch->err.buf, "3 processes joined during the recording"),
			 "the summary does not say 3 processes joined");
		harness_folded_release(&f);
		H_ASSERT(harness_wait_traced(pa, 0, 2) == 0 && harness_wait_traced(pb, 0, 2) == 0 &&
			     harness_wait_traced(pr, 0, 2) == 0 &&
			     harness_wait_traced(pn, 0, 2) == 0,
			 "a process is still traced after perch");
		H_ASSERT(harness_task_states(pb, states, sizeof(states)) > 0 && states[0] == 'R',
			 "the joined process is not running after perch (%s)", states);
		H_ASSERT(harness_task_states(pr, states, sizeof(states)) > 0 && states[0] == 'R',
			 "the joined NAME:remote is not running after perch (%s)", states);
		harness_proc_kill(b, SIGKILL);
		harness_proc_kill(remote, SIGKILL);
		harness_proc_kill(renamed, SIGKILL);
		harness_proc_kill(other, SIGKILL);
		harness_context_reset();
	}
	harness_proc_kill(a, SIGKILL);
}
END_TEST

/* ---- every way out leaves every child running, untraced ---- */

START_TEST(detach_children)
{
	const char *out = harness_tmpfile("detach.folded");
	struct harness_proc *t, *perch;
	pid_t pid, child, chain;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "forker"));
	pid = harness_proc_wait_ready(t, 5);
	for (int way = 0; way < 2; way++) {
		/* 0: the duration ends; 1: SIGINT */
		perch = harness_spawn(
		    "perch",
		    way ? HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
				       "--follow-children", "-o", out)
			: HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
				       "--follow-children", "-d", "1", "-o", out));
		H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach");
		harness_proc_write(t, "fork 30\n");
		child = nth_pid(t, "child ", way + 1, 5);
		harness_track_pid(child);
		H_ASSERT(harness_wait_traced(child, 1, 2) == 0, "the child is not followed");
		if (way) {
			harness_sleep(0.5);
			harness_proc_kill(perch, SIGINT);
		}
		H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
		assert_exit(perch, HARNESS_EXIT_OK);
		H_ASSERT(harness_wait_traced(child, 0, 2) == 0 &&
			     harness_wait_traced(pid, 0, 2) == 0,
			 "a process is still traced after perch (way %d)", way);
		harness_sleep(0.1);
		H_ASSERT(proc_state(child) == 'R' && proc_state(pid) == 'S',
			 "after perch the child is '%c' and its parent '%c'", proc_state(child),
			 proc_state(pid));
		kill(child, SIGKILL);
	}

	/* a launched program whose child outlives the duration: perch waits for the program,
	 * the child runs untraced meanwhile */
	perch = harness_spawn(
	    "perch",
	    HARNESS_ARGV(harness_perch(), "record", "-d", "0.5", "-o", out, "--", "/bin/sh", "-c",
			 harness_fmt("%s 6; echo done", harness_target("chain-fp"))));
	chain = line_pid(perch, "ready ", 10);
	harness_track_pid(chain);
	H_ASSERT(harness_wait_traced(chain, 0, 5) == 0 && proc_state(chain) == 'R' &&
		     !strstr(perch->out.buf, "done"),
		 "after the duration the child is traced or not running (state '%c')",
		 proc_state(chain));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	assert_exit(perch, HARNESS_EXIT_OK);
	H_ASSERT(strstr(perch->out.buf, "done"), "the program did not finish");
}
END_TEST

/* ---- a child that execs a 32-bit program ---- */

static int can_exec32;

START_TEST(exec_32bit)
{
	const char *out = harness_tmpfile("exec32.folded");
	struct harness_proc *perch;
	struct harness_folded f;
	pid_t sh, c;

	if (!can_exec32)
		return; /* said when the suite was made */
	perch = harness_spawn(
	    "perch", HARNESS_ARGV(harness_perch(), "record", "-o", out, "--", "/bin/sh", "-c",
				  harness_fmt("echo sh $$; %s 0.8", harness_target("chain32-fp"))));
	sh = line_pid(perch, "sh ", 10);
	c = line_pid(perch, "ready ", 10);
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_context(&f, NULL, 20);
	/* the i386 unwinder for the child, the x86_64 one for the shell */
	assert_about(proc_count(&f, c, "f3", "chain32-fp"), 0.8, 0.6, 1.3, "the 32-bit child");
	H_ASSERT(proc_count(&f, sh, "main", "sh") + proc_count(&f, sh, NULL, "sh") > 0,
		 "no sample of the shell");
	harness_folded_release(&f);
}
END_TEST

/* ---- the outputs keep the processes apart ---- */

static const char *sh_out(const char *cmd, int *code)
{
	struct harness_proc *p = harness_spawn("sh", HARNESS_ARGV("/bin/sh", "-c", cmd));

	H_ASSERT(harness_proc_wait(p, 120) == 0, "'%s' did not finish", cmd);
	*code = harness_proc_exit_code(p);
	harness_context_add("$ %s\n%.3000s%.2000s", cmd, p->out.buf, p->err.buf);
	return p->out.buf;
}

START_TEST(outputs)
{
	const char *rec = harness_tmpfile("multi.perch"), *folded = harness_tmpfile("multi.folded");
	const char *chrome = harness_tmpfile("multi.trace.json"),
		   *pprof = harness_tmpfile("m.pb.gz");
	const char *back = harness_tmpfile("back.folded"), *o;
	struct harness_proc *perch;
	struct harness_folded f, g;
	pid_t sh, c1, c2;
	int code;

	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-o", rec, "-o", folded,
						"-o", chrome, "-o", pprof, "--", "/bin/sh", "-c",
						harness_fmt("echo sh $$; %s 0.5; %s 0.5",
							    harness_target("chain-fp"),
							    harness_target("chain-fp"))));
	sh = line_pid(perch, "sh ", 10);
	c1 = line_pid(perch, "ready ", 10);
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch did not finish");
	assert_exit(perch, HARNESS_EXIT_OK);
	c2 = nth_pid(perch, "ready ", 2, 1);

	/* the recording (format version 2) renders to the same folded stacks */
	o = sh_out(harness_fmt("%s report %s -o %s", harness_perch(), rec, back), &code);
	H_ASSERT(code == 0, "perch report failed");
	H_ASSERT(harness_folded_load(&f, folded) == 0 && harness_folded_load(&g, back) == 0,
		 "cannot read the folded outputs");
	H_ASSERT(proc_count(&g, c1, "f3", "chain-fp") == proc_count(&f, c1, "f3", "chain-fp") &&
		     proc_count(&g, c2, "f3", "chain-fp") > 0 && proc_count(&g, sh, NULL, "sh") > 0,
		 "the recording read back lost the processes");
	harness_folded_release(&f);
	harness_folded_release(&g);

	/* Chrome trace: a process track each (python3's json module reads it) */
	o = sh_out(
	    harness_fmt("python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); "
			"names={e[\"pid\"]: e[\"args\"][\"name\"] for e in t[\"traceEvents\"] "
			"if e.get(\"ph\")==\"M\" and e[\"name\"]==\"process_name\"}; "
			"used={e[\"pid\"] for e in t[\"traceEvents\"] if e.get(\"ph\")==\"X\"}; "
			"print(\" \".join(\"%%d=%%s\" %% (p, names.get(p, \"?\")) "
			"for p in sorted(used)))' %s",
			chrome),
	    &code);
	H_ASSERT(code == 0, "python3 cannot read the Chrome trace");
	H_ASSERT(strstr(o, harness_fmt("%d=sh", (int)sh)) &&
		     strstr(o, harness_fmt("%d=chain-fp", (int)c1)) &&
		     strstr(o, harness_fmt("%d=chain-fp", (int)c2)),
		 "the Chrome trace has no named track of each process: %s", o);

	/* pprof: a pid and a process_name label on every sample (go tool pprof reads them) */
	o = sh_out(
	    harness_fmt("HOME=%s go tool pprof -symbolize=none -tags %s", harness_tmpdir(), pprof),
	    &code);
	H_ASSERT(code == 0, "go tool pprof failed");
	H_ASSERT(strstr(o, harness_fmt(": %d\n", (int)c1)) &&
		     strstr(o, harness_fmt(": %d\n", (int)c2)) && strstr(o, ": chain-fp\n") &&
		     strstr(o, ": sh\n"),
		 "pprof's pid and process_name labels do not name the processes");
}
END_TEST

/* ---- nothing recorded ---- */

/* A recording too short for a sample (a microsecond) fails and says why. (Another case, a
 * stopped process in cpu mode, is in e2e-states.) */
START_TEST(zero_samples)
{
	struct harness_proc *t, *perch;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "forker"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
					   "-d", "0.000001", "-o", harness_tmpfile("none.folded")));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not finish");
	assert_exit(perch, HARNESS_EXIT_FATAL);
	H_ASSERT(
	    strstr(perch->err.buf, "perch: error: no samples: the recording ended after") ||
		strstr(perch->err.buf, "perch: error: no samples: no thread stopped for perch"),
	    "perch does not say why it recorded nothing:\n%s", perch->err.buf);
	H_ASSERT(access(harness_tmpfile("none.folded"), F_OK) == 0, "no output file");
	H_ASSERT(harness_wait_traced(pid, 0, 2) == 0, "the target is still traced");
	harness_proc_write(t, "quit\n");
	H_ASSERT(harness_proc_wait(t, 5) == 0 && harness_proc_exit_code(t) == 0,
		 "the target did not end cleanly");
}
END_TEST

Suite *children_suite(void)
{
	Suite *s = suite_create("e2e-children");
	TCase *tc = tcase_create("children");

	can_exec32 = harness_can_exec_target("chain32-fp", "e2e-children exec_32bit");
	harness_tcase_init(tc, 120);
	tcase_add_test(tc, follow_program);
	tcase_add_test(tc, no_follow);
	tcase_add_test(tc, xz_child);
	tcase_add_test(tc, follow_pid);
	tcase_add_test(tc, pid_list_and_app);
	tcase_add_test(tc, app_join);
	tcase_add_test(tc, detach_children);
	tcase_add_test(tc, exec_32bit);
	tcase_add_test(tc, outputs);
	tcase_add_test(tc, zero_samples);
	suite_add_tcase(s, tc);
	return s;
}
