/* e2e: perch on processes in every state (issue 15, item 2). Each case asserts what perch
 * printed and that the target is afterwards exactly as before: every thread's state, and
 * TracerPid 0 on every thread.
 *
 *   stopped_dump      a process group-stopped by SIGSTOP / SIGTSTP before perch attaches:
 *                     `perch dump` prints every stack (the target's own frames equal gdb's,
 *                     gdb being run on the same stopped process afterwards), states 'T', and
 *                     the process is still stopped afterwards
 *   stopped_record    the same, spinning when stopped: wall mode counts a sample per tick in
 *                     state 'T' (leaf "[stopped]") at the stack gdb would show; cpu mode has
 *                     nothing to count and exits 2 saying why
 *   stop_cont         SIGSTOP then SIGCONT in the middle of `record -p`: the target's parent
 *                     (this test) is told of both (waitpid WUNTRACED / WCONTINUED), samples
 *                     are '[stopped]' for about the time it was stopped (our own clock)
 *   job_control       Ctrl-Z on `perch record -- PROG` (SIGTSTP to the process group, as a
 *                     terminal sends it): perch and PROG stop, the "shell" (this test) sees
 *                     perch stopped by SIGTSTP; SIGCONT to the group resumes both; then
 *                     SIGTSTP and SIGCONT sent to perch alone: perch passes both on
 *   other_tracer      a process traced by this test, then by strace: exit 2 and a message
 *                     naming the tracer; the target untouched
 *   zombie_main       main called pthread_exit(): the main thread is a zombie, two threads
 *                     run on; dump shows them (and says why main has no stack), record
 *                     samples them
 *   vfork_d           a vfork() parent sleeps in uninterruptible sleep ('D') until its child
 *                     execs (chosen because it is a real D state any kernel gives on demand):
 *                     dump shows it from /proc without waiting for a stop that cannot come
 *                     (its leaf vfork and its caller), record samples it; the vfork()ed
 *                     child, waiting to exec, dumps like any process; then it execs
 *   pid_namespace     `unshare -p --fork`: perch in the root namespace on the host pid
 *   many_threads      2000 idle threads: dump completes, every stack shown; a 1000 Hz
 *                     recording ends on time with every thread sampled (times in the log) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define GDB_PATH    "/usr/bin/gdb"
#define STRACE_PATH "/usr/bin/strace"

/* ---- helpers ---- */

/* Wait until process @pid has @nr tasks whose states are all in @allowed. */
static void wait_states(pid_t pid, const char *allowed, int nr, double timeout)
{
	double end = harness_now() + timeout;
	char states[4096];
	int n;

	for (;;) {
		n = harness_task_states(pid, states, sizeof(states));
		if (n == nr && strspn(states, allowed) == (size_t)n)
			return;
		H_ASSERT(harness_now() < end,
			 "process %d: task states \"%.64s\" (%d), want %d in "
			 "\"%s\"",
			 (int)pid, states, n, nr, allowed);
		harness_sleep(0.005);
	}
}

/* The state letter of thread @tid of @pid, '?' when it cannot be read. */
static char task_state(pid_t pid, pid_t tid)
{
	char path[96], buf[512];
	const char *s;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	s = strrchr(buf, ')');
	return s && s[1] == ' ' ? s[2] : '?';
}

/* Every task of @pid has TracerPid 0 (waits a little: a detach is asynchronous). */
static void assert_untraced(pid_t pid)
{
	double end = harness_now() + 2;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (;;) {
		DIR *d = opendir(path);
		struct dirent *de;
		int traced = 0, tid = 0;

		H_ASSERT(d, "process %d is gone", (int)pid);
		while ((de = readdir(d)) && !traced) {
			char sp[384], buf[4096];
			const char *s;
			FILE *f;
			size_t n;

			if (de->d_name[0] == '.')
				continue;
			snprintf(sp, sizeof(sp), "%s/%s/status", path, de->d_name);
			f = fopen(sp, "r");
			if (!f)
				continue;
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[n] = 0;
			s = strstr(buf, "\nTracerPid:");
			if (s && atoi(s + 11)) {
				traced = atoi(s + 11);
				tid = atoi(de->d_name);
			}
		}
		closedir(d);
		if (!traced)
			return;
		H_ASSERT(harness_now() < end, "thread %d of %d is still traced by %d", tid,
			 (int)pid, traced);
		harness_sleep(0.01);
	}
}

/* Run perch with @argv and wait for it (at most @timeout s). */
static struct harness_proc *perch_run(const char *const argv[], double timeout)
{
	struct harness_proc *p = harness_spawn("perch", argv);

	H_ASSERT(harness_proc_wait(p, timeout) == 0, "%s did not finish within %.0f s", p->cmdline,
		 timeout);
	return p;
}

static void assert_exit(struct harness_proc *p, int want)
{
	H_ASSERT(harness_proc_exit_code(p) == want, "%s exited with %d, want %d", p->cmdline,
		 harness_proc_exit_code(p), want);
}

static struct harness_proc *dump(pid_t pid, double timeout)
{
	struct harness_proc *p =
	    perch_run(HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)), timeout);

	harness_context_add("perch dump:\n%.6000s", p->out.buf);
	assert_exit(p, HARNESS_EXIT_OK);
	return p;
}

/* Parse a dump; lines "    (...)" are perch's notes on a thread: counted, not frames. */
static void parse_dump(const char *text, struct harness_bt *bt, int *notes)
{
	struct strbuf frames = STRBUF_INIT;
	const char *s, *nl;

	*notes = 0;
	for (s = text; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl)
			nl = s + strlen(s);
		if (!strncmp(s, "    (", 5))
			(*notes)++;
		else
			strbuf_add(&frames, s, (size_t)(nl - s + (*nl ? 1 : 0)));
		if (!*nl)
			break;
	}
	harness_bt_parse_perch(bt, frames.buf);
	strbuf_release(&frames);
	if (bt->nr_bad)
		harness_context_add("lines of perch dump not understood:\n%s", bt->bad.buf);
	H_ASSERT(bt->nr_bad == 0, "%zu lines of perch dump break its format", bt->nr_bad);
}

/* Does a frame of @t name @fn (after normalisation: "__GI___libc_read" is "read")? */
static int bt_has(const struct harness_bt_thread *t, const char *fn)
{
	char buf[256];

	for (size_t i = 0; i < t->nr; i++)
		if (strstr(harness_func_normalize(t->frames[i].func, buf, sizeof(buf)), fn))
			return 1;
	return 0;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The target's own frames (module @module with a source line for perch, a file under
 * tests/targets/ for gdb: gdb stops at main, perch goes on to _start) of perch's and gdb's
 * backtraces of the same thread: same functions, files and lines. */
static void compare_own(const struct harness_bt_thread *pt, const struct harness_bt_thread *gt,
			const char *module)
{
	size_t i = 0, j = 0, n = 0;
	char a[256], b[256];

	for (;; i++, j++, n++) {
		while (i < pt->nr && !(pt->frames[i].module && pt->frames[i].file &&
				       !strcmp(pt->frames[i].module, module)))
			i++;
		while (j < gt->nr &&
		       !(gt->frames[j].file && strstr(gt->frames[j].file, "tests/targets/")))
			j++;
		if (i == pt->nr || j == gt->nr)
			break;
		harness_func_normalize(pt->frames[i].func, a, sizeof(a));
		harness_func_normalize(gt->frames[j].func, b, sizeof(b));
		H_ASSERT(!strcmp(a, b) && pt->frames[i].line == gt->frames[j].line &&
			     pt->frames[i].file &&
			     !strcmp(base(pt->frames[i].file), base(gt->frames[j].file)),
			 "thread %d: own frame %zu is %s at %s:%d in perch, %s at %s:%d in gdb",
			 (int)pt->tid, n, a, pt->frames[i].file ? pt->frames[i].file : "?",
			 pt->frames[i].line, b, gt->frames[j].file, gt->frames[j].line);
	}
	H_ASSERT(i == pt->nr && j == gt->nr && n > 0,
		 "thread %d: perch and gdb show %s own frames of the target", (int)pt->tid,
		 n ? "a different number of" : "no");
}

/* gdb's `thread apply all bt` of @pid (which may be stopped: gdb leaves it so). */
static void gdb_bt(pid_t pid, struct harness_bt *gbt)
{
	struct harness_proc *gdb;

	H_ASSERT(access(GDB_PATH, X_OK) == 0, "%s is missing (scripts/install-deps.sh installs it)",
		 GDB_PATH);
	gdb = harness_spawn("gdb",
			    HARNESS_ARGV(GDB_PATH, "-nx", "-batch", "-p", harness_fmt("%d", pid),
					 "-ex", "thread apply all bt"));
	H_ASSERT(harness_proc_wait(gdb, 60) == 0, "gdb did not finish within 60 s");
	harness_bt_parse_gdb(gbt, gdb->out.buf);
	H_ASSERT(harness_wait_traced(pid, 0, 2) == 0, "target still traced after gdb");
}

/* Folded lines: how many samples have a frame @fn (NULL: any), and of those, how many end in
 * the frame @leaf (NULL: any). */
static unsigned long folded_count(const struct harness_folded *f, const char *fn, const char *leaf)
{
	unsigned long n = 0;

	for (size_t i = 0; i < f->nr; i++) {
		const struct harness_folded_line *l = &f->lines[i];

		if (fn && harness_line_find(l, fn) < 0)
			continue;
		if (leaf && (!l->nr_frames || strcmp(l->frames[l->nr_frames - 1], leaf)))
			continue;
		n += l->count;
	}
	return n;
}

/* After its ready line a chain target still has to reach its spin: wait until it has used
 * some CPU time. */
static void wait_spinning(pid_t pid)
{
	double end = harness_now() + 5;

	while (harness_cpu_ticks(pid) < 3) {
		H_ASSERT(harness_now() < end, "the target does not spin");
		harness_sleep(0.01);
	}
}

/* Poll waitpid(@pid, @flags | WNOHANG) for @timeout s; the status, or -1 on timeout. */
static int wait_status(pid_t pid, int flags, double timeout)
{
	double end = harness_now() + timeout;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, flags | WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 || harness_now() >= end)
			return -1;
		harness_sleep(0.002);
	}
}

/* Start @argv as a job of its own process group, as a shell does (a process group with a
 * parent outside it in the same session is not orphaned: the kernel lets SIGTSTP stop it),
 * output to the file @out. */
static pid_t spawn_job(const char *const argv[], const char *out)
{
	pid_t pid = fork();

	H_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		sigset_t none;

		/* a job starts with the default signal state, as a shell gives it */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGTSTP, SIG_DFL);
		signal(SIGTTIN, SIG_DFL);
		signal(SIGTTOU, SIG_DFL);
		setpgid(0, 0);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	setpgid(pid, pid);
	harness_track_pid(pid);
	return pid;
}

/* The pid in the "ready PID" line of the file @path (waits up to @timeout s). */
static pid_t file_ready(const char *path, double timeout)
{
	double end = harness_now() + timeout;

	for (;;) {
		char buf[8192], *s;
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		s = strstr(buf, "ready ");
		if (s && strchr(s, '\n'))
			return (pid_t)atoi(s + 6);
		H_ASSERT(harness_now() < end, "no ready line in %s:\n%s", path, buf);
		harness_sleep(0.01);
	}
}

/* ---- group-stopped before attach ---- */

START_TEST(stopped_dump)
{
	int sig = _i ? SIGTSTP : SIGSTOP;
	struct harness_proc *perch;
	struct harness_bt pbt, gbt;
	int notes;
	pid_t pid;

	pid = spawn_job(HARNESS_ARGV(harness_target("dump"), "30"), harness_tmpfile("dump.log"));
	H_ASSERT(file_ready(harness_tmpfile("dump.log"), 5) == pid, "wrong ready line");
	wait_states(pid, "S", 3, 3);
	kill(pid, sig);
	wait_states(pid, "T", 3, 3);

	perch = dump(pid, 10);
	parse_dump(perch->out.buf, &pbt, &notes);
	H_ASSERT(notes == 0, "perch dump of a stopped process has %d notes (stacks missing)",
		 notes);
	H_ASSERT(pbt.nr == 3, "perch dump shows %zu threads, want 3", pbt.nr);
	for (size_t i = 0; i < pbt.nr; i++)
		H_ASSERT(pbt.threads[i].state == 'T' && pbt.threads[i].nr >= 3,
			 "thread %d: state '%c' with %zu frames, want 'T' and a stack",
			 (int)pbt.threads[i].tid, pbt.threads[i].state, pbt.threads[i].nr);
	/* still stopped, and not traced */
	assert_untraced(pid);
	wait_states(pid, "T", 3, 0.01);
	harness_sleep(0.2);
	wait_states(pid, "T", 3, 0.01);

	/* the oracle, on the same stopped process (gdb itself continues a process stopped by
	 * SIGTSTP when it detaches: the state is not checked after it) */
	gdb_bt(pid, &gbt);
	H_ASSERT(gbt.nr == 3, "gdb shows %zu threads, want 3", gbt.nr);
	for (size_t i = 0; i < pbt.nr; i++) {
		const struct harness_bt_thread *gt = harness_bt_find(&gbt, pbt.threads[i].tid);

		H_ASSERT(gt, "gdb does not show thread %d", (int)pbt.threads[i].tid);
		compare_own(&pbt.threads[i], gt, "dump");
	}
	kill(pid, SIGCONT);
	wait_states(pid, "S", 3, 3);
	harness_bt_release(&pbt);
	harness_bt_release(&gbt);
}
END_TEST

START_TEST(stopped_record)
{
	const char *out = harness_tmpfile("stopped.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long total, stopped;
	long long ticks;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "60"));
	pid = harness_proc_wait_ready(t, 5);
	wait_spinning(pid);
	kill(pid, SIGSTOP);
	wait_states(pid, "T", 1, 3);

	perch = perch_run(HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
				       "-d", "1", "-o", out),
			  20);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	total = f.total;
	stopped = folded_count(&f, "f3", "[stopped]");
	harness_folded_context(&f, NULL, 10);
	/* one sample per tick for 1 s at 100 Hz, all of the stopped stack */
	H_ASSERT(total >= 70 && total <= 130, "%lu samples of a stopped thread in 1 s at 100 Hz",
		 total);
	H_ASSERT(stopped * 100 >= total * 95, "%lu of %lu samples are main;f0..f3;spin;[stopped]",
		 stopped, total);
	harness_folded_release(&f);
	assert_untraced(pid);
	wait_states(pid, "T", 1, 0.01);

	/* cpu mode: nothing runs, nothing to count: a failure that says why */
	perch = perch_run(HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
				       "--mode", "cpu", "-d", "0.5", "-o", out),
			  20);
	assert_exit(perch, HARNESS_EXIT_FATAL);
	H_ASSERT(strstr(perch->err.buf, "no samples: no thread was running"),
		 "perch does not say why it recorded nothing:\n%s", perch->err.buf);
	assert_untraced(pid);
	wait_states(pid, "T", 1, 0.01);

	ticks = harness_cpu_ticks(pid);
	kill(pid, SIGCONT);
	harness_sleep(0.3);
	H_ASSERT(harness_cpu_ticks(pid) > ticks, "the target does not run after SIGCONT");
}
END_TEST

/* ---- stopped and continued while recording ---- */

START_TEST(stop_cont)
{
	const char *out = harness_tmpfile("stopcont.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	double stop_at, cont_at;
	unsigned long stopped, running;
	int st;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "60"));
	pid = harness_proc_wait_ready(t, 5);
	wait_spinning(pid);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						    harness_fmt("%d", pid), "-d", "3", "-o", out));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "perch did not attach");
	harness_sleep(0.7);
	stop_at = harness_now();
	kill(pid, SIGSTOP);
	/* the parent (this test) is told, as without perch */
	st = wait_status(pid, WUNTRACED, 3);
	H_ASSERT(st != -1 && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
		 "the target's parent was not told of the stop (status %#x)", st);
	wait_states(pid, "tT", 1, 2);
	harness_sleep(1.0);
	cont_at = harness_now();
	kill(pid, SIGCONT);
	st = wait_status(pid, WCONTINUED, 3);
	H_ASSERT(st != -1 && WIFCONTINUED(st),
		 "the target's parent was not told of the continue "
		 "(status %#x)",
		 st);
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_context(&f, NULL, 10);
	stopped = folded_count(&f, "f3", "[stopped]");
	running = folded_count(&f, "f3", "spin");
	/* about 100 ticks in the stop; the rest of 3 s running (in wall mode even a thread
	 * waiting for a CPU is counted) */
	H_ASSERT(stopped >= (unsigned long)((cont_at - stop_at) * 100 * 0.6) &&
		     stopped <= (unsigned long)((cont_at - stop_at) * 100 * 1.4) + 5,
		 "%lu samples in '[stopped]' for a stop of %.2f s at 100 Hz", stopped,
		 cont_at - stop_at);
	H_ASSERT(running >= 100, "%lu samples of the running spin in 2 s at 100 Hz", running);
	harness_folded_release(&f);
	assert_untraced(pid);
	wait_states(pid, "R", 1, 2);
}
END_TEST

/* ---- Ctrl-Z on perch record -- PROG ---- */

START_TEST(job_control)
{
	const char *out = harness_tmpfile("job.folded"), *log = harness_tmpfile("job.log");
	struct harness_folded f;
	long long ticks;
	pid_t perch, pid;
	int st;

	perch = spawn_job(HARNESS_ARGV(harness_perch(), "record", "-o", out, "--",
				       harness_target("chain-fp"), "3"),
			  log);
	pid = file_ready(log, 10);
	harness_track_pid(pid);
	harness_sleep(0.5);
	killpg(perch, SIGTSTP); /* what the terminal does on Ctrl-Z */
	st = wait_status(perch, WUNTRACED, 3);
	H_ASSERT(st != -1 && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTSTP,
		 "the shell does not see perch stopped by SIGTSTP (status %#x)", st);
	/* the program is stopped too (listened by perch, so 't') */
	wait_states(pid, "tT", 1, 1);
	ticks = harness_cpu_ticks(pid);
	harness_sleep(0.5);
	H_ASSERT(harness_cpu_ticks(pid) == ticks, "the program ran while its job was stopped");
	killpg(perch, SIGCONT); /* `fg` */
	st = wait_status(perch, WCONTINUED, 3);
	H_ASSERT(st != -1 && WIFCONTINUED(st), "perch did not continue (status %#x)", st);
	harness_sleep(0.3);
	H_ASSERT(harness_cpu_ticks(pid) > ticks, "the program does not run after SIGCONT");

	/* the same sent to perch alone: perch passes the stop on, and the continue */
	kill(perch, SIGTSTP);
	st = wait_status(perch, WUNTRACED, 3);
	H_ASSERT(st != -1 && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTSTP,
		 "perch did not stop on its own SIGTSTP (status %#x)", st);
	wait_states(pid, "tT", 1, 1);
	ticks = harness_cpu_ticks(pid);
	harness_sleep(0.3);
	H_ASSERT(harness_cpu_ticks(pid) == ticks, "the program ran while perch was stopped");
	kill(perch, SIGCONT);
	st = wait_status(perch, WCONTINUED, 3);
	H_ASSERT(st != -1 && WIFCONTINUED(st), "perch did not continue (status %#x)", st);
	harness_sleep(0.6);
	H_ASSERT(harness_cpu_ticks(pid) > ticks, "the program stays stopped after perch's SIGCONT");
	st = wait_status(perch, 0, 20);
	H_ASSERT(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "perch did not end with the program's status 0 (status %#x)", st);
	H_ASSERT(harness_folded_load(&f, out) == 0, "no folded output");
	H_ASSERT(folded_count(&f, "f3", NULL) >= 100, "%lu samples of f3 in 2 s at 100 Hz",
		 folded_count(&f, "f3", NULL));
	harness_folded_release(&f);
}
END_TEST

/* ---- traced by another tracer ---- */

/* perch dump and perch record on @pid fail with exit 2, naming the tracer. */
static void assert_refused(pid_t pid, pid_t tracer, const char *name)
{
	const char *want = harness_fmt("already traced by %d (%s)", (int)tracer, name);
	struct harness_proc *p[2];

	p[0] = perch_run(HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)), 10);
	p[1] = perch_run(HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid), "-o",
				      harness_tmpfile("refused.folded")),
			 10);
	for (int i = 0; i < 2; i++) {
		assert_exit(p[i], HARNESS_EXIT_FATAL);
		H_ASSERT(strstr(p[i]->err.buf, want), "%s does not say \"%s\":\n%s", p[i]->cmdline,
			 want, p[i]->err.buf);
	}
}

START_TEST(other_tracer)
{
	struct harness_proc *t, *strace;
	char comm[64] = "", path[64];
	FILE *f;
	int st;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("dump"), "30"));
	pid = harness_proc_wait_ready(t, 5);
	wait_states(pid, "S", 3, 3);

	/* this test as the tracer */
	H_ASSERT(ptrace(PTRACE_SEIZE, pid, 0, 0) == 0, "PTRACE_SEIZE: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)getpid());
	f = fopen(path, "r");
	if (f && fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = 0;
	if (f)
		fclose(f);
	assert_refused(pid, getpid(), comm);
	H_ASSERT(ptrace(PTRACE_INTERRUPT, pid, 0, 0) == 0, "PTRACE_INTERRUPT: %s", strerror(errno));
	H_ASSERT(waitpid(pid, &st, __WALL) == pid && WIFSTOPPED(st), "no stop to detach from");
	H_ASSERT(ptrace(PTRACE_DETACH, pid, 0, 0) == 0, "PTRACE_DETACH: %s", strerror(errno));
	assert_untraced(pid);
	wait_states(pid, "S", 3, 3);

	/* a real tracer */
	H_ASSERT(access(STRACE_PATH, X_OK) == 0,
		 "%s is missing (scripts/install-deps.sh "
		 "installs it)",
		 STRACE_PATH);
	strace = harness_spawn("strace", HARNESS_ARGV(STRACE_PATH, "-f", "-o", "/dev/null", "-p",
						      harness_fmt("%d", pid)));
	H_ASSERT(harness_wait_traced(pid, 1, 5) == 0, "strace did not attach");
	harness_sleep(0.2); /* strace -f attaches the other threads after the first */
	assert_refused(pid, strace->pid, "strace");
	harness_proc_kill(strace, SIGTERM);
	H_ASSERT(harness_proc_wait(strace, 10) == 0, "strace did not end");
	assert_untraced(pid);
	wait_states(pid, "S", 3, 3);
}
END_TEST

/* ---- a zombie main thread with live threads ---- */

START_TEST(zombie_main)
{
	const char *out = harness_tmpfile("zombie.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	struct harness_bt bt;
	int notes;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "zombie-main"));
	pid = harness_proc_wait_ready(t, 5);
	for (double end = harness_now() + 3; task_state(pid, pid) != 'Z';) {
		H_ASSERT(harness_now() < end, "the main thread did not exit");
		harness_sleep(0.01);
	}
	wait_states(pid, "ZRS", 3, 3);

	perch = dump(pid, 10);
	parse_dump(perch->out.buf, &bt, &notes);
	H_ASSERT(bt.nr == 3, "perch dump shows %zu threads, want 3", bt.nr);
	H_ASSERT(bt.threads[0].tid == pid && bt.threads[0].state == 'Z' && !bt.threads[0].nr,
		 "main thread: state '%c', %zu frames; want 'Z' and none", bt.threads[0].state,
		 bt.threads[0].nr);
	H_ASSERT(notes == 1 && strstr(perch->out.buf, "the main thread has exited"),
		 "perch dump does not say why the main thread has no stack");
	H_ASSERT(bt_has(&bt.threads[1], "states_spin") && bt_has(&bt.threads[1], "spinner_main"),
		 "the spinner's stack is not states_spin <- spinner_main");
	H_ASSERT(bt_has(&bt.threads[2], "states_reader_wait") && bt_has(&bt.threads[2], "read"),
		 "the reader's stack is not read <- states_reader_wait");
	harness_bt_release(&bt);
	assert_untraced(pid);

	perch = perch_run(HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
				       "-d", "1", "-o", out),
			  20);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_context(&f, NULL, 10);
	H_ASSERT(harness_folded_count(&f, "spinner", harness_pred_has, "states_spin") >= 50,
		 "%lu samples of the spinner in states_spin",
		 harness_folded_count(&f, "spinner", harness_pred_has, "states_spin"));
	H_ASSERT(harness_folded_count(&f, "reader", harness_pred_has, "states_reader_wait") >= 50,
		 "too few samples of the reader");
	harness_folded_release(&f);
	assert_untraced(pid);
	H_ASSERT(task_state(pid, pid) == 'Z', "the main thread is no longer a zombie");
	harness_proc_write(t, "q");
	H_ASSERT(harness_proc_wait(t, 5) == 0 && harness_proc_exit_code(t) == 0,
		 "the target did not exit cleanly after perch");
}
END_TEST

/* ---- uninterruptible sleep (a vfork parent) and a vfork child waiting to exec ---- */

START_TEST(vfork_d)
{
	const char *out = harness_tmpfile("vfork.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	struct harness_bt bt;
	const char *line;
	double start, took_d, took_child;
	int notes;
	pid_t pid, child;
	size_t k;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "vfork"));
	pid = harness_proc_wait_ready(t, 5);
	line = harness_proc_wait_line(t, "child ", 5);
	H_ASSERT(line, "the vfork child did not start");
	child = (pid_t)atoi(line);
	harness_track_pid(child);
	for (double end = harness_now() + 3; task_state(pid, pid) != 'D';) {
		H_ASSERT(harness_now() < end, "the vfork parent is in '%c', not 'D'",
			 task_state(pid, pid));
		harness_sleep(0.01);
	}

	start = harness_now();
	perch = dump(pid, 10);
	took_d = harness_now() - start;
	parse_dump(perch->out.buf, &bt, &notes);
	H_ASSERT(bt.nr == 2 && bt.threads[0].tid == pid, "perch dump shows %zu threads", bt.nr);
	H_ASSERT(bt.threads[0].state == 'D' && notes == 1 &&
		     strstr(perch->out.buf, "in uninterruptible sleep"),
		 "the vfork parent is not shown in 'D' with a note");
	/* its leaf is vfork, and vfork's return address (kept in a register, which /proc shows
	 * as a system-call argument) leads to its caller */
	for (k = 0; k < bt.threads[0].nr && !strstr(bt.threads[0].frames[k].func, "vfork"); k++)
		;
	H_ASSERT(k < bt.threads[0].nr && k + 1 < bt.threads[0].nr &&
		     !strcmp(bt.threads[0].frames[k + 1].func, "states_vfork_parent"),
		 "the vfork parent's stack is not vfork <- states_vfork_parent");
	H_ASSERT(bt.threads[1].state == 'S' && bt_has(&bt.threads[1], "states_helper_wait"),
		 "the helper thread's stack is not in states_helper_wait");
	harness_bt_release(&bt);
	assert_untraced(pid);
	H_ASSERT(task_state(pid, pid) == 'D', "the parent left 'D'");

	start = harness_now();
	perch = perch_run(HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
				       "-d", "1", "-o", out),
			  20);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_context(&f, NULL, 10);
	H_ASSERT(harness_now() - start < 3, "record -d 1 took %.2f s", harness_now() - start);
	H_ASSERT(harness_folded_count(&f, "states", harness_pred_has, "states_vfork_parent") >= 60,
		 "%lu samples of the vfork parent in 1 s at 100 Hz",
		 harness_folded_count(&f, "states", harness_pred_has, "states_vfork_parent"));
	harness_folded_release(&f);
	assert_untraced(pid);
	H_ASSERT(task_state(pid, pid) == 'D', "the parent left 'D'");

	/* the child, waiting to exec: sharing the parent's memory, in read() */
	start = harness_now();
	perch = dump(child, 10);
	took_child = harness_now() - start;
	/* dump did not wait (2 s) for the stop of the thread in D, which cannot come: it took
	 * about as long as the dump of a process without one */
	H_ASSERT(took_d < took_child + 1.0,
		 "perch dump took %.2f s with a thread in D, %.2f s "
		 "without",
		 took_d, took_child);
	parse_dump(perch->out.buf, &bt, &notes);
	H_ASSERT(bt.nr == 1 && bt.threads[0].state == 'S' && notes == 0,
		 "the vfork child: %zu threads, state '%c'", bt.nr,
		 bt.nr ? bt.threads[0].state : '?');
	H_ASSERT(bt_has(&bt.threads[0], "states_reader_wait") &&
		     bt_has(&bt.threads[0], "states_vfork_parent") &&
		     bt_has(&bt.threads[0], "main"),
		 "the vfork child's stack is not read <- states_reader_wait <- states_vfork_parent "
		 "<- main");
	harness_bt_release(&bt);
	assert_untraced(child);
	wait_states(child, "S", 1, 1);

	/* and both carry on: the child execs, the parent wakes up */
	harness_proc_write(t, "x");
	H_ASSERT(harness_proc_wait_line(t, "exec'd ", 5), "the vfork child did not exec");
	H_ASSERT(harness_proc_wait_line(t, "parent resumed, child status 0", 5),
		 "the vfork parent did not resume");
}
END_TEST

/* ---- another PID namespace ---- */

START_TEST(pid_namespace)
{
	const char *out = harness_tmpfile("ns.folded");
	struct harness_proc *u, *perch;
	struct harness_folded f;
	struct harness_bt bt;
	char path[64], buf[64];
	const char *line;
	int notes;
	pid_t pid = 0;
	FILE *fp;

	u = harness_spawn("unshare", HARNESS_ARGV("/usr/bin/unshare", "-p", "--fork",
						  "--kill-child", harness_target("dump"), "30"));
	line = harness_proc_wait_line(u, "ready ", 5);
	if (!line) {
		harness_proc_wait(u, 2);
		fprintf(stderr,
			"framework skip: e2e-states pid_namespace: unshare -p failed (%s)\n",
			u->err.buf);
		return;
	}
	H_ASSERT(atoi(line) == 1, "the target is pid %d in its namespace, not 1", atoi(line));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)u->pid, (int)u->pid);
	fp = fopen(path, "r");
	if (fp && fgets(buf, sizeof(buf), fp))
		pid = (pid_t)atoi(buf);
	if (fp)
		fclose(fp);
	H_ASSERT(pid > 1, "cannot find the target's host pid");
	harness_track_pid(pid);
	wait_states(pid, "S", 3, 3);

	perch = dump(pid, 10);
	H_ASSERT(strstr(perch->out.buf,
			harness_fmt("PID %d (dump), pid 1 in its PID namespace\n", (int)pid)),
		 "the dump does not say which pid the target has in its namespace");
	parse_dump(perch->out.buf, &bt, &notes);
	H_ASSERT(bt.nr == 3 && notes == 0, "perch dump shows %zu threads, %d notes", bt.nr, notes);
	H_ASSERT(bt_has(&bt.threads[0], "main") && bt_has(&bt.threads[1], "dump_sleeper_wait") &&
		     bt_has(&bt.threads[2], "dump_reader_wait"),
		 "the stacks are not main, dump_sleeper_wait and dump_reader_wait");
	harness_bt_release(&bt);
	assert_untraced(pid);

	perch = perch_run(HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
				       "-d", "0.5", "-o", out),
			  20);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	H_ASSERT(harness_folded_count(&f, "sleeper", harness_pred_has, "dump_sleeper_wait") >= 30,
		 "too few samples of the sleeper");
	harness_folded_release(&f);
	assert_untraced(pid);
	wait_states(pid, "S", 3, 3);
}
END_TEST

/* ---- 2000 threads ---- */

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* How many threads have samples in states_idle_wait. */
static size_t idle_tids(const struct harness_folded *f)
{
	pid_t *tids = calloc(f->nr + 1, sizeof(*tids));
	size_t n = 0, distinct = 0;

	H_ASSERT(tids, "out of memory");
	for (size_t i = 0; i < f->nr; i++)
		if (harness_line_find(&f->lines[i], "states_idle_wait") >= 0)
			tids[n++] = f->lines[i].tid;
	qsort(tids, n, sizeof(*tids), cmp_tid);
	for (size_t i = 0; i < n; i++)
		distinct += !i || tids[i] != tids[i - 1];
	free(tids);
	return distinct;
}

START_TEST(many_threads)
{
	const char *out = harness_tmpfile("many.folded");
	struct harness_proc *t, *perch;
	struct harness_folded f;
	struct harness_bt bt;
	size_t idle = 0, sampled = 0;
	double start, took;
	int notes;
	pid_t pid;

	t = harness_spawn("target", HARNESS_ARGV(harness_target("states"), "threads", "2000"));
	pid = harness_proc_wait_ready(t, 60);
	wait_states(pid, "S", 2001, 10);
	start = harness_now();
	perch = dump(pid, 60);
	took = harness_now() - start;
	fprintf(stderr, "e2e-states many_threads: perch dump of 2001 threads took %.2f s\n", took);
	parse_dump(perch->out.buf, &bt, &notes);
	H_ASSERT(bt.nr == 2001, "perch dump shows %zu threads, want 2001", bt.nr);
	for (size_t i = 0; i < bt.nr; i++)
		idle += bt_has(&bt.threads[i], "states_idle_wait");
	H_ASSERT(idle == 2000 && notes == 0, "%zu of 2000 threads in states_idle_wait, %d notes",
		 idle, notes);
	harness_bt_release(&bt);
	assert_untraced(pid);
	wait_states(pid, "S", 2001, 5);

	/* a recording: more blocked threads than the sampler's queue holds, at every tick,
	 * and more than a login shell's usual descriptor limit lets perch keep files open for
	 * (three per thread: perch raises its soft limit; before, with 1024, not one of the
	 * 2000 threads got a named stack) */
	start = harness_now();
	perch = perch_run(HARNESS_ARGV("/usr/bin/prlimit", "--nofile=1024:", harness_perch(),
				       "record", "-p", harness_fmt("%d", pid), "-F", "1000", "-d",
				       "2", "-o", out),
			  60);
	fprintf(stderr,
		"e2e-states many_threads: perch record -F 1000 -d 2 of 2001 threads "
		"took %.2f s\n",
		harness_now() - start);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	sampled = idle_tids(&f);
	H_ASSERT(sampled == 2000, "%zu of the 2000 idle threads sampled in states_idle_wait",
		 sampled);
	harness_folded_release(&f);
	assert_untraced(pid);
	wait_states(pid, "S", 2001, 5);

	/* the same beside two busy processes (as many as this machine's CPUs in CI): perch
	 * cannot keep up with 2000 threads at 1000 Hz then, and must degrade by sampling each
	 * less often, not by leaving some threads out (dropped snapshots and re-interrupted
	 * threads once kept the worker off the CPU: 1 to 1500 threads without a sample) */
	for (int i = 0; i < 2; i++)
		harness_spawn("busy", HARNESS_ARGV(harness_target("states"), "spin", "30"));
	start = harness_now();
	perch = perch_run(HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", pid),
				       "-F", "1000", "-d", "2", "-o", out),
			  60);
	fprintf(stderr, "e2e-states many_threads: the same beside two busy processes took %.2f s\n",
		harness_now() - start);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	sampled = idle_tids(&f);
	H_ASSERT(sampled == 2000,
		 "beside two busy processes, %zu of the 2000 idle threads sampled in "
		 "states_idle_wait",
		 sampled);
	harness_folded_release(&f);
	assert_untraced(pid);
}
END_TEST

/* A program perch launches runs with the descriptor limit perch was started with, not the
 * one perch raised for itself (a program that select()s on descriptors could break). */
START_TEST(launched_fd_limit)
{
	const char *out = harness_tmpfile("limit.folded"), *seen = harness_tmpfile("limit.txt");
	struct harness_proc *perch;
	struct harness_folded f;
	const char *text;
	int code;

	perch = perch_run(HARNESS_ARGV("/usr/bin/prlimit", "--nofile=1024:", harness_perch(),
				       "record", "-o", out, "--", "sh", "-c",
				       harness_fmt("ulimit -Sn > %s; exec sleep 0.5", seen)),
			  30);
	H_CHECK_RECORD(perch, HARNESS_EXIT_OK, out, &f);
	harness_folded_release(&f);
	text = harness_sh(harness_fmt("cat %s", seen), &code, 10);
	H_ASSERT(code == 0 && !strcmp(text, "1024\n"), "the launched program's soft limit: %s",
		 text);
}
END_TEST

Suite *states_suite(void)
{
	Suite *s = suite_create("e2e-states");
	TCase *tc = tcase_create("states");

	harness_tcase_init(tc, 90);
	tcase_add_loop_test(tc, stopped_dump, 0, 2);
	tcase_add_test(tc, stopped_record);
	tcase_add_test(tc, launched_fd_limit);
	tcase_add_test(tc, stop_cont);
	tcase_add_test(tc, job_control);
	tcase_add_test(tc, other_tracer);
	tcase_add_test(tc, zombie_main);
	tcase_add_test(tc, vfork_d);
	tcase_add_test(tc, pid_namespace);
	tcase_add_test(tc, many_threads);
	suite_add_tcase(s, tc);
	return s;
}
