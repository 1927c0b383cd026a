/* e2e: safe and honest defaults (issue 37). A zombie main thread's maps and memory are read
 * through a live thread and compared with the kernel's own /proc/PID/task/TID files; the
 * commands' "attached to" note goes to stderr; outputs through links, /dev/stdout and FIFOs
 * land where they point; usage errors are short; nothing to write is a usage error. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* Run perch with @argv to its end (@timeout s). */
static struct harness_proc *run(const char *const argv[], double timeout)
{
	struct harness_proc *p = harness_spawn("perch", argv);

	H_ASSERT(harness_proc_wait(p, timeout) == 0, "perch did not exit within %g s", timeout);
	return p;
}

static int lines_of(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static char task_state(pid_t pid, pid_t tid)
{
	int code;
	const char *st = harness_sh(harness_fmt("cat /proc/%d/task/%d/stat", pid, tid), &code, 5);
	const char *p = strrchr(st, ')');

	return p && p[1] ? p[2] : '?';
}

/* ---- a zombie main thread (main called pthread_exit) ---- */

START_TEST(zombie_leader_maps_and_memory)
{
	struct harness_proc *t, *perch;
	const char *truth, *line;
	double rss = 0;
	pid_t pid;
	int want, code;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "zombie-main"));
	pid = harness_proc_wait_ready(t, 5);
	for (double end = harness_now() + 3; task_state(pid, pid) != 'Z';) {
		H_ASSERT(harness_now() < end, "the main thread did not exit");
		harness_sleep(0.01);
	}
	/* the kernel's truth: a live thread's maps (the leader's own file is empty) */
	truth = harness_sh(harness_fmt("wc -l < /proc/%d/maps; ls /proc/%d/task | grep -vx %d | "
				       "head -1 | xargs -I T wc -l /proc/%d/task/T/maps",
				       pid, pid, pid, pid),
			   &code, 5);
	H_ASSERT(sscanf(truth, "0 %d", &want) == 1 && want > 5,
		 "the leader's maps is not empty, or the live thread's is: %s", truth);

	perch = run(HARNESS_ARGV(harness_perch(), "maps", "-p", harness_fmt("%d", pid)), 20);
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch maps exit %d",
		 harness_proc_exit_code(perch));
	H_ASSERT(lines_of(perch->out.buf) == want,
		 "perch maps printed %d lines, the kernel %d:\n%s", lines_of(perch->out.buf), want,
		 perch->out.buf);
	H_ASSERT(strstr(perch->out.buf, "targets/states"), "no mapping of the program");
	/* the note goes to stderr: stdout is the command's own output */
	H_ASSERT(!strstr(perch->out.buf, "attached to"), "\"attached to\" on stdout");
	H_ASSERT(strstr(perch->err.buf, harness_fmt("attached to %d", pid)),
		 "no \"attached to\" note on stderr:\n%s", perch->err.buf);

	perch = run(HARNESS_ARGV(harness_perch(), "mem", "-p", harness_fmt("%d", pid)), 20);
	H_ASSERT(harness_proc_exit_code(perch) == 0 && strstr(perch->out.buf, "MEMINFO"),
		 "perch mem of a zombie leader: exit %d\n%s%s", harness_proc_exit_code(perch),
		 perch->out.buf, perch->err.buf);

	perch =
	    run(HARNESS_ARGV(harness_perch(), "stat", "-p", harness_fmt("%d", pid), "-d", "1"), 20);
	line = strstr(perch->out.buf, "memory: RSS ");
	H_ASSERT(line && sscanf(line, "memory: RSS %lf MiB", &rss) == 1 && rss > 0.1,
		 "perch stat reads no memory for a zombie leader:\n%s", perch->out.buf);

	perch = run(HARNESS_ARGV(harness_perch(), "threads", "-p", harness_fmt("%d", pid)), 20);
	H_ASSERT(harness_proc_exit_code(perch) == 0 && strstr(perch->out.buf, "spinner") &&
		     !strstr(perch->out.buf, "attached to"),
		 "perch threads:\n%s", perch->out.buf);
	harness_proc_write(t, "q");
	H_ASSERT(harness_proc_wait(t, 5) == 0, "the target did not exit");
}
END_TEST

/* ---- outputs ---- */

#define RECORDING  "fixtures/recording/demo-v2.perch"
#define EXIT_EMPTY 5 /* PERCH_EXIT_EMPTY */

/* /dev/stdout is the system's link to /proc/self/fd/1; a perch that renamed a file over it
 * (issue 37) broke it for every program: put it back, then fail. */
static void assert_dev_stdout_link(void)
{
	struct stat st;
	int broken = lstat("/dev/stdout", &st) < 0 || !S_ISLNK(st.st_mode);

	if (broken && !access("/proc/self/fd/1", F_OK) && unlink("/dev/stdout") == 0)
		H_ASSERT(symlink("/proc/self/fd/1", "/dev/stdout") == 0,
			 "cannot restore /dev/stdout");
	H_ASSERT(!broken, "perch replaced the system's /dev/stdout link (restored now)");
}

/* -o through a link writes the file it names and keeps the link; /dev/stdout redirected to a
 * file gets the profile (and stays the system's link); a FIFO with a reader gets it; a
 * directory is refused. Each compared with the same profile written to stdout ("-"). */
START_TEST(outputs_link_stdout_fifo_dir)
{
	const char *dir = harness_tmpdir(), *want, *got;
	struct harness_proc *perch;
	struct stat st;
	int code;

	perch =
	    run(HARNESS_ARGV(harness_perch(), "report", RECORDING, "--format", "folded", "-o", "-"),
		20);
	H_ASSERT(harness_proc_exit_code(perch) == 0 && perch->out.len > 20,
		 "perch report -o - failed:\n%s", perch->err.buf);
	want = harness_fmt("%s", perch->out.buf);

	/* a link: its target replaced, the link kept */
	harness_sh(harness_fmt("mkdir %s/runs && echo old > %s/runs/a.folded && "
			       "ln -s runs/a.folded %s/latest.folded",
			       dir, dir, dir),
		   &code, 5);
	H_ASSERT(code == 0, "cannot make the link");
	perch = run(HARNESS_ARGV(harness_perch(), "report", RECORDING, "-o",
				 harness_fmt("%s/latest.folded", dir)),
		    20);
	H_ASSERT(harness_proc_exit_code(perch) == 0, "exit %d through a link:\n%s",
		 harness_proc_exit_code(perch), perch->err.buf);
	H_ASSERT(lstat(harness_fmt("%s/latest.folded", dir), &st) == 0 && S_ISLNK(st.st_mode),
		 "the link was replaced by a file");
	got = harness_sh(harness_fmt("cat %s/runs/a.folded", dir), &code, 5);
	H_ASSERT(!strcmp(got, want), "the link's target holds:\n%s\nwant:\n%s", got, want);
	got = harness_sh(harness_fmt("ls -A %s/runs", dir), &code, 5);
	H_ASSERT(!strcmp(got, "a.folded\n"), "left beside the target: %s", got);

	/* /dev/stdout redirected to a file */
	assert_dev_stdout_link();
	harness_sh(harness_fmt("%s report %s --format folded -o /dev/stdout > %s/redirected",
			       harness_perch(), RECORDING, dir),
		   &code, 20);
	assert_dev_stdout_link();
	H_ASSERT(code == 0, "perch report -o /dev/stdout exit %d", code);
	got = harness_sh(harness_fmt("cat %s/redirected", dir), &code, 5);
	H_ASSERT(!strcmp(got, want), "the redirected stdout holds:\n%s\nwant:\n%s", got, want);

	/* a FIFO with a reader */
	got = harness_sh(
	    harness_fmt("mkfifo %s/pipe && { cat %s/pipe > %s/from-pipe & c=$!; "
			"%s report %s --format folded -o %s/pipe 2>/dev/null && wait $c && "
			"test -p %s/pipe && cat %s/from-pipe; }",
			dir, dir, dir, harness_perch(), RECORDING, dir, dir, dir),
	    &code, 20);
	H_ASSERT(code == 0 && !strcmp(got, want), "through a FIFO (exit %d):\n%s", code, got);

	/* a directory */
	perch = run(HARNESS_ARGV(harness_perch(), "report", RECORDING, "-o", dir), 20);
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL &&
		     strstr(perch->err.buf, "Is a directory"),
		 "a directory as -o: exit %d\n%s", harness_proc_exit_code(perch), perch->err.buf);
}
END_TEST

/* Filters that match nothing: a clear message, exit 5 (PERCH_EXIT_EMPTY), no empty output;
 * one that matches still writes (the fixture's threads: sh-700, sh-worker-702, xz-...). */
START_TEST(filters_match_nothing)
{
	static const char *const filters[][2] = {
	    {"--thread", "^no-such-thread$"}, {"--tid", "999999"}, {"--start", "1000"}};
	const char *out = harness_tmpfile("filtered.folded");
	struct harness_proc *perch;

	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
		perch = run(HARNESS_ARGV(harness_perch(), "report", RECORDING, filters[i][0],
					 filters[i][1], "-o", out),
			    20);
		H_ASSERT(harness_proc_exit_code(perch) == EXIT_EMPTY &&
			     strstr(perch->err.buf, "the filters match none of the 50 samples") &&
			     strstr(perch->err.buf, "nothing written"),
			 "%s %s: exit %d\n%s", filters[i][0], filters[i][1],
			 harness_proc_exit_code(perch), perch->err.buf);
		H_ASSERT(access(out, F_OK) < 0, "%s %s: an output was written", filters[i][0],
			 filters[i][1]);
	}
	perch = run(
	    HARNESS_ARGV(harness_perch(), "report", RECORDING, "--thread", "^sh", "-o", out), 20);
	H_ASSERT(harness_proc_exit_code(perch) == 0 && access(out, F_OK) == 0,
		 "a filter that matches: exit %d\n%s", harness_proc_exit_code(perch),
		 perch->err.buf);
}
END_TEST

/* ---- usage ---- */

/* A usage error prints a few lines and where the help is, not the whole help; record with
 * nothing to write is one, before attaching. */
START_TEST(usage_short_nothing_to_write)
{
	struct harness_proc *t, *perch;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("lifecycle"), "20"));
	pid = harness_proc_wait_ready(t, 10);
	perch = run(
	    HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid), "-d", "1"), 10);
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_USAGE, "exit %d, want 64",
		 harness_proc_exit_code(perch));
	H_ASSERT(strstr(perch->err.buf, "nothing to write: give -o FILE"),
		 "no word about the missing -o:\n%s", perch->err.buf);
	H_ASSERT(lines_of(perch->err.buf) <= 8 &&
		     strstr(perch->err.buf, "see 'perch record --help' for the options"),
		 "not a short usage (%d lines):\n%s", lines_of(perch->err.buf), perch->err.buf);
	H_ASSERT(harness_tracer_pid(pid) == 0, "perch attached before the usage error");
	perch =
	    run(HARNESS_ARGV(harness_perch(), "record", "--no-such-option", "-o", "x.folded"), 10);
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_USAGE &&
		     lines_of(perch->err.buf) <= 8,
		 "exit %d, %d lines:\n%s", harness_proc_exit_code(perch), lines_of(perch->err.buf),
		 perch->err.buf);
	perch = run(HARNESS_ARGV(harness_perch(), "report", "--no-such-option"), 10);
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_USAGE &&
		     lines_of(perch->err.buf) <= 6 &&
		     strstr(perch->err.buf, "see 'perch report --help'"),
		 "exit %d, %d lines:\n%s", harness_proc_exit_code(perch), lines_of(perch->err.buf),
		 perch->err.buf);
	/* --help itself is the whole help, on stdout */
	perch = run(HARNESS_ARGV(harness_perch(), "record", "--help"), 10);
	H_ASSERT(harness_proc_exit_code(perch) == 0 && lines_of(perch->out.buf) > 30,
		 "record --help: exit %d, %d lines", harness_proc_exit_code(perch),
		 lines_of(perch->out.buf));
}
END_TEST

/* SIGTERM to perch alone while the program it launched ignores it: perch passes the signal
 * on, says it waits for the program and how to end it, and exits with the program's status. */
START_TEST(sigterm_says_it_waits)
{
	const char *out = harness_tmpfile("term.folded");
	struct harness_proc *perch;
	const char *line;
	double t0;

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "--allow-partial",
						    "-o", out, "--", "/bin/sh", "-c",
						    "trap '' TERM; echo ready; sleep 3; exit 7"));
	/* (the program's stdout passes through perch: its trap is set) */
	H_ASSERT(harness_proc_wait_line(perch, "ready", 20), "the program did not start");
	t0 = harness_now();
	harness_proc_kill(perch, SIGTERM);
	while (!(line = strstr(perch->err.buf ? perch->err.buf : "",
			       "perch: recording done; waiting for sh (pid "))) {
		H_ASSERT(harness_now() < t0 + 10 && perch->err_fd >= 0,
			 "perch did not say it waits for the program:\n%s", perch->err.buf);
		harness_proc_pump(perch, 0.01);
	}
	H_ASSERT(strstr(line, "to exit") && strstr(line, "'kill "), "the line: %s", line);
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not exit after the program");
	H_ASSERT(harness_proc_exit_code(perch) == 7, "exit %d, want the program's 7",
		 harness_proc_exit_code(perch));
	H_ASSERT(harness_now() - t0 > 0.5, "perch did not wait for the program");
}
END_TEST

/* -p NAME works for record and dump as for top, threads and maps: a copy of a target under a
 * name of its own; a name that matches nothing is a fatal error. */
START_TEST(pid_by_name)
{
	const char *name = harness_fmt("pn%d", (int)getpid()), *copy, *out;
	struct harness_proc *t, *perch;
	struct harness_folded f;
	int code;
	pid_t pid;

	copy = harness_fmt("%s/%s", harness_tmpdir(), name);
	harness_sh(harness_fmt("cp %s %s", harness_target("lifecycle"), copy), &code, 10);
	H_ASSERT(code == 0, "cannot copy the target");
	t = harness_spawn("target", HARNESS_ARGV(copy, "20"));
	pid = harness_proc_wait_ready(t, 10);
	out = harness_tmpfile("byname.folded");
	perch = run(HARNESS_ARGV(harness_perch(), "record", "-p", name, "-d", "0.5",
				 "--allow-partial", "-o", out),
		    30);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	code = 0;
	for (size_t i = 0; i < f.nr; i++)
		code |= f.lines[i].tid == pid;
	H_ASSERT(code, "no sample of the main thread %d in the recording", pid);
	harness_folded_release(&f);
	perch = run(HARNESS_ARGV(harness_perch(), "dump", "-p", name), 30);
	H_ASSERT(harness_proc_exit_code(perch) == 0 &&
		     strstr(perch->out.buf, harness_fmt("PID %d (%s)", pid, name)),
		 "perch dump -p %s: exit %d\n%s", name, harness_proc_exit_code(perch),
		 perch->out.buf);
	perch = run(HARNESS_ARGV(harness_perch(), "record", "-p", "no-such-name-x", "-o", out), 10);
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL &&
		     strstr(perch->err.buf, "no process matches 'no-such-name-x'"),
		 "exit %d\n%s", harness_proc_exit_code(perch), perch->err.buf);
	H_ASSERT(harness_tracer_pid(pid) == 0, "the target is still traced");
}
END_TEST

/* A launched program's memory starts at its first reading after it ran, not at the few pages
 * of arguments it holds while stopped at its exec (a chart that rose from a false 0). */
START_TEST(launched_memory_no_false_zero)
{
	const char *out = harness_tmpfile("launched.folded"), *line;
	struct harness_proc *perch;
	double start = -1, end = -1;

	perch = run(HARNESS_ARGV(harness_perch(), "record", "--summary", "--allow-partial", "-o",
				 out, "--", harness_target("lifecycle"), "2.5"),
		    60);
	H_ASSERT(harness_proc_exit_code(perch) == 0, "exit %d\n%s", harness_proc_exit_code(perch),
		 perch->err.buf);
	line = strstr(perch->err.buf, "perch:   RSS ");
	H_ASSERT(line && sscanf(line, "perch:   RSS %lf %lf", &start, &end) == 2,
		 "no RSS line in the summary:\n%s", perch->err.buf);
	/* the program's libraries are mapped and touched: over half a MiB from its first read */
	H_ASSERT(start > 0.5 && end > 0.5, "RSS from %.1f to %.1f MiB:\n%s", start, end,
		 perch->err.buf);
}
END_TEST

/* ---- honest results ---- */

/* perch killed with SIGKILL mid-recording: report's warning gives the samples it loads (what
 * the folded output adds up to) and where reading stopped (within the file, its end when it was
 * cut between two chunks). */
START_TEST(recovered_recording_counts)
{
	const char *rec = harness_tmpfile("killed.perch"),
		   *folded = harness_tmpfile("killed.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long long said = 0, at = 0, chunks = 0;
	const char *w;
	struct stat st;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-o",
						    rec, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach");
	harness_sleep(2.6);
	harness_proc_kill(perch, SIGKILL);
	H_ASSERT(harness_proc_wait(perch, 5) == 0, "perch did not die");
	H_ASSERT(harness_wait_traced(pid, 0, 5) == 0, "target still traced after perch died");
	H_ASSERT(stat(rec, &st) == 0 && st.st_size > 0, "no recording");
	perch = run(HARNESS_ARGV(harness_perch(), "report", rec, "-o", folded), 30);
	H_ASSERT(harness_proc_exit_code(perch) == 0, "report exit %d",
		 harness_proc_exit_code(perch));
	w = strstr(perch->err.buf, " at byte ");
	H_ASSERT(w && sscanf(w, " at byte %llu): using the %llu samples of its %llu", &at, &said,
			     &chunks) == 3,
		 "no cut-short warning with its figures:\n%s", perch->err.buf);
	H_ASSERT(harness_folded_load(&f, folded) == 0, "no %s", folded);
	H_ASSERT(said == f.total && said > 100, "the warning says %llu samples, report wrote %lu",
		 said, f.total);
	H_ASSERT(at > 0 && at <= (unsigned long long)st.st_size,
		 "stopped at byte %llu of a %lld-byte file", at, (long long)st.st_size);
	if (strstr(perch->err.buf, "no end record"))
		H_ASSERT(at == (unsigned long long)st.st_size,
			 "cut between chunks, but stopped at byte %llu of %lld", at,
			 (long long)st.st_size);
	harness_folded_release(&f);
}
END_TEST

/* ---- descriptors ---- */

/* 600 threads under `ulimit -n 1024` (soft and hard): perch keeps what /proc files its budget
 * allows and opens the rest on demand, so the program's own files still open and every
 * thread's frames are named (states_idle_wait, idle_main), unwound to the root. */
START_TEST(many_threads_few_descriptors)
{
	const char *out = harness_tmpfile("fds.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long named;
	double unwound;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "threads", "600"));
	pid = harness_proc_wait_ready(t, 30);
	perch = harness_spawn(
	    "perch",
	    HARNESS_ARGV("/bin/sh", "-c",
			 harness_fmt("ulimit -Sn 1024 && ulimit -Hn 1024 && exec '%s' record -p %d "
				     "-F 20 -d 1.5 --allow-partial -o '%s'",
				     harness_perch(), pid, out)));
	H_ASSERT(harness_proc_wait(perch, 120) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	H_ASSERT(!strstr(perch->err.buf, "file descriptors"), "perch ran out of descriptors:\n%s",
		 perch->err.buf);
	named = harness_folded_count(&f, NULL, harness_pred_has, "states_idle_wait");
	H_ASSERT(f.nr >= 300 && named * 100 >= f.total * 90,
		 "%zu threads recorded, %lu of %lu samples in states_idle_wait", f.nr, named,
		 f.total);
	unwound = harness_summary_unwound(perch->err.buf);
	H_ASSERT(unwound >= 90, "unwound to root %.1f%%", unwound);
	harness_folded_release(&f);
	H_ASSERT(harness_tracer_pid(pid) == 0, "the target is still traced");
}
END_TEST

Suite *defaults_suite(void)
{
	Suite *s = suite_create("e2e-defaults");
	TCase *tc = tcase_create("defaults");

	harness_tcase_init(tc, 90);
	tcase_add_test(tc, zombie_leader_maps_and_memory);
	tcase_add_test(tc, outputs_link_stdout_fifo_dir);
	tcase_add_test(tc, usage_short_nothing_to_write);
	tcase_add_test(tc, sigterm_says_it_waits);
	tcase_add_test(tc, pid_by_name);
	tcase_add_test(tc, launched_memory_no_false_zero);
	tcase_add_test(tc, recovered_recording_counts);
	tcase_add_test(tc, filters_match_nothing);
	tcase_add_test(tc, many_threads_few_descriptors);
	suite_add_tcase(s, tc);
	return s;
}
