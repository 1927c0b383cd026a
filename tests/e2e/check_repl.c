/* e2e: the interactive prompt driven through a pseudo-terminal (forkpty): completion of
 * commands, words, thread ids and files; history across restarts; Ctrl-C during record and
 * top returns to the prompt with the target attached and running; Ctrl-D detaches; a dumb
 * terminal gets no escape codes. */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "perch/base/strbuf.h"

struct pty_proc {
	pid_t pid;
	int fd;
	struct strbuf out;
	size_t mark; /* pty_expect() searches from here */
	int status, reaped;
};

#define PTY_MAX 4
static struct pty_proc ptys[PTY_MAX];
static int nr_ptys;

/* Free what the terminals read (the processes are the harness's to kill). */
static void pty_release_all(void)
{
	for (int i = 0; i < nr_ptys; i++) {
		strbuf_release(&ptys[i].out);
		close(ptys[i].fd);
	}
	nr_ptys = 0;
}

static struct pty_proc *pty_spawn(const char *const argv[], const char *term)
{
	struct pty_proc *p = &ptys[nr_ptys++];
	struct winsize ws = {.ws_row = 40, .ws_col = 120};

	H_ASSERT(nr_ptys <= PTY_MAX, "too many terminals");
	memset(p, 0, sizeof(*p));
	strbuf_init(&p->out, 0);
	p->pid = forkpty(&p->fd, NULL, NULL, &ws);
	H_ASSERT(p->pid >= 0, "forkpty: %s", strerror(errno));
	if (p->pid == 0) {
		setenv("XDG_STATE_HOME", harness_tmpdir(), 1);
		setenv("TERM", term, 1);
		unsetenv("NO_COLOR");
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	harness_track_pid(p->pid);
	return p;
}

static void pty_pump(struct pty_proc *p, double timeout)
{
	struct pollfd pfd = {p->fd, POLLIN, 0};
	char buf[4096];
	ssize_t n;

	if (poll(&pfd, 1, (int)(timeout * 1000)) <= 0)
		return;
	n = read(p->fd, buf, sizeof(buf));
	if (n > 0)
		strbuf_add(&p->out, buf, (size_t)n);
}

/* Wait until @needle shows up after the mark; the mark moves past it. */
static int pty_expect_at(struct pty_proc *p, const char *needle, double timeout, const char *file,
			 int line)
{
	double end = harness_now() + timeout;

	for (;;) {
		const char *hit = strstr(p->out.buf + p->mark, needle);

		if (hit) {
			p->mark = (size_t)(hit - p->out.buf) + strlen(needle);
			return 1;
		}
		if (harness_now() >= end)
			break;
		pty_pump(p, 0.05);
	}
	harness_context_add("terminal output (%zu bytes, mark at %zu):\n%s", p->out.len, p->mark,
			    p->out.buf);
	harness_fail(file, line, "pty_expect", "no \"%s\" on the terminal within %.0f s", needle,
		     timeout);
}
#define pty_expect(p, needle, timeout) pty_expect_at((p), (needle), (timeout), __FILE__, __LINE__)

static void pty_send(struct pty_proc *p, const char *s)
{
	size_t len = strlen(s);

	H_ASSERT(write(p->fd, s, len) == (ssize_t)len, "cannot write to the terminal");
}

/* Exit code of the program, or -1 when it did not end within @timeout. */
static int pty_wait(struct pty_proc *p, double timeout)
{
	double end = harness_now() + timeout;

	while (!p->reaped) {
		pid_t r = waitpid(p->pid, &p->status, WNOHANG);

		if (r == p->pid) {
			p->reaped = 1;
			break;
		}
		if (harness_now() >= end)
			return -1;
		pty_pump(p, 0.05);
	}
	return WIFEXITED(p->status) ? WEXITSTATUS(p->status) : 128 + WTERMSIG(p->status);
}

/* The target runs on: no thread stopped by us ('t') or in a group-stop ('T'). */
static void assert_running(pid_t pid, const char *when)
{
	char states[256];

	H_ASSERT(harness_task_states(pid, states, sizeof(states)) > 0, "target %d is gone %s", pid,
		 when);
	H_ASSERT(!strchr(states, 't') && !strchr(states, 'T'), "target left stopped %s: %s", when,
		 states);
}

START_TEST(completion_ctrl_c_ctrl_d)
{
	struct harness_proc *target;
	struct pty_proc *p;
	char pidtxt[16], line[512];
	pid_t pid;
	FILE *f;

	target = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "60"));
	pid = harness_proc_wait_ready(target, 10);
	snprintf(pidtxt, sizeof(pidtxt), "%d", pid);
	p = pty_spawn(HARNESS_ARGV(harness_perch(), "-p", pidtxt), "xterm");
	pty_expect(p, "(chain-fp)> ", 10);
	H_ASSERT(harness_tracer_pid(pid) > 0, "perch did not attach to %d", pid);

	/* a command name */
	pty_send(p, "thr\t");
	pty_expect(p, "threads ", 5);
	pty_send(p, "\r");
	pty_expect(p, "CPU%", 5);
	pty_expect(p, "(chain-fp)> ", 5);
	/* a thread id (the only thread: its id is the pid) */
	pidtxt[strlen(pidtxt) - 1] = 0;
	pty_send(p, harness_fmt("dump %s\t", pidtxt));
	pty_expect(p, harness_fmt("dump %d ", pid), 5);
	pty_send(p, "\r");
	pty_expect(p, harness_fmt("TID %d \"chain-fp\"", pid), 10);
	pty_expect(p, "f3 (chain-fp)", 5);
	pty_expect(p, "(chain-fp)> ", 5);
	/* a sub-command word, then its value */
	pty_send(p, "set mo\t");
	pty_expect(p, "set mode ", 5);
	pty_send(p, "c\t\r");
	pty_expect(p, "mode cpu", 5);
	pty_expect(p, "(chain-fp)> ", 5);
	/* any record option is a `set` name */
	pty_send(p, "set cpu-i\t");
	pty_expect(p, "set cpu-interval ", 5);
	pty_send(p, "50\r");
	pty_expect(p, "cpu-interval 50 ms", 5);
	pty_expect(p, "(chain-fp)> ", 5);
	/* options, from the command's option table: the prompt's record, and stat's
	 * command line (run in a child) */
	pty_send(p, "record --no-cpu\t");
	pty_expect(p, "record --no-cpu-hold ", 5);
	pty_send(p, "\x15stat --inter\t");
	pty_expect(p, "stat --interval ", 5);
	pty_send(p, "\x15\r");
	pty_expect(p, "(chain-fp)> ", 5);
	/* a file */
	f = fopen(harness_tmpfile("unique-completion.folded"), "w");
	H_ASSERT(f && fclose(f) == 0, "cannot create a file to complete");
	pty_send(p, harness_fmt("report folded %s/unique-c\t", harness_tmpdir()));
	pty_expect(p, "unique-completion.folded", 5);
	pty_send(p, "\x15\r"); /* kill the line */
	pty_expect(p, "(chain-fp)> ", 5);

	/* Ctrl-C ends a foreground recording: back at the prompt, still attached */
	pty_send(p, "set mode wall\r");
	pty_expect(p, "(chain-fp)> ", 5);
	pty_send(p, "record\r");
	harness_sleep(1.0);
	pty_send(p, "\x03");
	pty_expect(p, "ended by request", 10);
	pty_expect(p, "(chain-fp)> ", 5);
	H_ASSERT(harness_tracer_pid(pid) > 0, "not attached after Ctrl-C during record");
	assert_running(pid, "after Ctrl-C during record");
	pty_send(p, "save -\r");
	pty_expect(p, "chain-fp-", 5);
	snprintf(line, sizeof(line), ";f2;f3;spin ");
	pty_expect(p, line, 5);

	/* record to a .perch, then report reads that file (perch report), and stat runs
	 * with the target still attached */
	pty_send(p, harness_fmt("record -d 0.5 -o %s/t.perch\r", harness_tmpdir()));
	pty_expect(p, "t.perch (perch)", 10);
	pty_expect(p, "(chain-fp)> ", 5);
	pty_send(p, harness_fmt("report --format folded %s/t.perch\r", harness_tmpdir()));
	pty_expect(p, ";f2;f3;spin ", 10);
	pty_expect(p, "(chain-fp)> ", 5);
	pty_send(p, "stat -i 100 -d 0.5\r");
	pty_expect(p, "perch stat:", 10);
	pty_expect(p, "(chain-fp)> ", 10);
	H_ASSERT(harness_tracer_pid(pid) > 0, "detached by stat");

	/* Ctrl-C ends top; its table has the last second's shares and the totals */
	pty_send(p, "top\r");
	pty_expect(p, "perch top:", 10);
	pty_expect(p, " in the last ", 5);
	pty_expect(p, "%Own  %Total    OwnTime  TotalTime  Function (module)", 5);
	pty_expect(p, "  spin (chain-fp)", 5);
	pty_send(p, "\x03");
	pty_expect(p, "(chain-fp)> ", 5);
	H_ASSERT(harness_tracer_pid(pid) > 0, "not attached after Ctrl-C during top");
	assert_running(pid, "after Ctrl-C during top");
	/* so does a key */
	pty_send(p, "top\r");
	pty_expect(p, "perch top:", 10);
	pty_send(p, "q");
	pty_expect(p, "(chain-fp)> ", 5);
	assert_running(pid, "after a key during top");

	/* Ctrl-C at the prompt only drops the line; a background recording goes on */
	pty_send(p, "record start\r");
	pty_expect(p, "[recording]> ", 5);
	pty_send(p, "some text\x03");
	pty_expect(p, "[recording]> ", 5);
	pty_send(p, "record stop\r");
	pty_expect(p, "ended by request", 5);
	/* (a Ctrl-D typed before readline has the terminal again is the terminal's own EOF,
	 * which the program never sees: wait for the prompt, as a person does) */
	pty_expect(p, "(chain-fp)> ", 5);

	/* Ctrl-D detaches and leaves; the target runs on */
	pty_send(p, "\x04");
	if (pty_wait(p, 20) != 0)
		harness_context_add("terminal output, the end:\n%s",
				    p->out.buf + (p->out.len > 3000 ? p->out.len - 3000 : 0));
	H_ASSERT(pty_wait(p, 1) == 0, "perch did not exit 0 after Ctrl-D (status %d)", p->status);
	H_ASSERT(harness_tracer_pid(pid) == 0, "target still traced after Ctrl-D");
	assert_running(pid, "after Ctrl-D");
	/* colours on a terminal that has them */
	H_ASSERT(strstr(p->out.buf, "\033[1;32mperch"), "no coloured prompt on xterm");
	pty_release_all();
}
END_TEST

START_TEST(history_across_restarts)
{
	struct pty_proc *p;
	char *hist = (char *)harness_fmt("%s/perch/history", harness_tmpdir());
	FILE *f;
	char buf[256] = "";

	p = pty_spawn(HARNESS_ARGV(harness_perch()), "xterm");
	pty_expect(p, "perch", 10);
	pty_expect(p, "> ", 5);
	pty_send(p, "set rate 123\r");
	pty_expect(p, "rate 123 Hz", 5);
	pty_send(p, "quit\r");
	H_ASSERT(pty_wait(p, 10) == 0, "perch did not exit 0 after quit");
	f = fopen(hist, "r");
	H_ASSERT(f, "no history file at %s", hist);
	H_ASSERT(fread(buf, 1, sizeof(buf) - 1, f) > 0 && strstr(buf, "set rate 123\n"),
		 "history file holds: %s", buf);
	fclose(f);

	/* a new session: two times Up reaches the command of the last one */
	p = pty_spawn(HARNESS_ARGV(harness_perch()), "xterm");
	pty_expect(p, "> ", 10);
	pty_send(p, "\033[A\033[A\r");
	pty_expect(p, "rate 123 Hz", 5);
	pty_expect(p, "> ", 5);
	pty_send(p, "\x04");
	H_ASSERT(pty_wait(p, 10) == 0, "perch did not exit 0 after Ctrl-D");
	pty_release_all();
}
END_TEST

START_TEST(dumb_terminal)
{
	struct harness_proc *target;
	struct pty_proc *p;
	pid_t pid;

	target = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "30"));
	pid = harness_proc_wait_ready(target, 10);
	/* like `adb shell -t` with TERM=dumb: a plain prompt, no escape codes, top without
	 * clearing the screen */
	p = pty_spawn(HARNESS_ARGV(harness_perch(), "-p", harness_fmt("%d", pid)), "dumb");
	pty_expect(p, "(chain-fp)> ", 10);
	pty_send(p, "threads\r");
	pty_expect(p, "CPU%", 5);
	pty_send(p, "top -d 1.5\r");
	pty_expect(p, "perch top:", 10);
	pty_expect(p, "(chain-fp)> ", 10);
	pty_send(p, "quit\r");
	H_ASSERT(pty_wait(p, 10) == 0, "perch did not exit 0 after quit");
	H_ASSERT(!strchr(p->out.buf, '\033'), "escape codes on a dumb terminal:\n%s", p->out.buf);
	H_ASSERT(harness_tracer_pid(pid) == 0, "target still traced after quit");
	assert_running(pid, "after quit");
	pty_release_all();
}
END_TEST

Suite *repl_suite(void)
{
	Suite *s = suite_create("e2e-repl");
	TCase *tc = tcase_create("pty");

	harness_tcase_init(tc, 60);
	tcase_add_test(tc, completion_ctrl_c_ctrl_d);
	tcase_add_test(tc, history_across_restarts);
	tcase_add_test(tc, dumb_terminal);
	suite_add_tcase(s, tc);
	return s;
}
