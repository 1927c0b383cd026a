/* Helpers for the end-to-end suites (see harness.h): child processes with pipes, /proc probes,
 * parsers for folded stacks and backtraces, failure context. No shell: fork/exec only. */
#include "harness.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "perch/base/xalloc.h"

#define HARNESS_MAX_PROCS    16
#define HARNESS_MAX_PIDS     16
#define HARNESS_MAX_TMPFILES 32
#define HARNESS_CONTEXT_TAIL 6000
#define HARNESS_BAD_KEEP     20

static struct harness_proc *procs[HARNESS_MAX_PROCS];
static size_t nr_procs;
static pid_t extra_pids[HARNESS_MAX_PIDS];
static size_t nr_extra_pids;
static char *tmpdir;
static char *tmpfiles[HARNESS_MAX_TMPFILES];
static size_t nr_tmpfiles;
static char **strings; /* freed at teardown */
static size_t nr_strings, alloc_strings;
static struct strbuf context = STRBUF_INIT;

static const char *keep_string(char *s)
{
	ALLOC_GROW(strings, nr_strings + 1, alloc_strings);
	strings[nr_strings++] = s;
	return s;
}

double harness_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void harness_sleep(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- failure context ---- */

void harness_context_add(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&context, fmt, ap);
	va_end(ap);
	if (context.len && context.buf[context.len - 1] != '\n')
		strbuf_addch(&context, '\n');
}

void harness_context_reset(void)
{
	strbuf_reset(&context);
}

static void print_tail(const char *what, const struct strbuf *sb)
{
	const char *s = sb->buf;

	if (!sb->len) {
		fprintf(stderr, "  %s: (empty)\n", what);
		return;
	}
	if (sb->len > HARNESS_CONTEXT_TAIL) {
		s += sb->len - HARNESS_CONTEXT_TAIL;
		fprintf(stderr, "  %s (last %d bytes):\n", what, HARNESS_CONTEXT_TAIL);
	} else {
		fprintf(stderr, "  %s:\n", what);
	}
	fprintf(stderr, "%s%s", s, sb->buf[sb->len - 1] == '\n' ? "" : "\n");
}

static void print_context(void)
{
	size_t i;

	for (i = 0; i < nr_procs; i++) {
		struct harness_proc *p = procs[i];

		harness_proc_pump(p, 0);
		fprintf(stderr, "---- %s (pid %d): %s\n", p->label, (int)p->pid, p->cmdline);
		if (p->reaped)
			fprintf(stderr, "  exit code %d\n", harness_proc_exit_code(p));
		else
			fprintf(stderr, "  still running\n");
		print_tail("stdout", &p->out);
		print_tail("stderr", &p->err);
	}
	if (context.len)
		fprintf(stderr, "---- context:\n%s", context.buf);
	fprintf(stderr, "---- end of context\n");
}

void harness_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n==== e2e failure at %s:%d: %s\n     (%s)\n", file, line, msg.buf, expr);
	print_context();
	harness_teardown();
	if (msg.len > 600)
		strbuf_setlen(&msg, 600);
	_ck_assert_failed(file, line, "Failed", "%s (%s)", msg.buf, expr);
}

/* ---- setup / teardown ---- */

static int is_executable(const char *path)
{
	return path && access(path, X_OK) == 0;
}

void harness_setup(void)
{
	char tmpl[] = "/tmp/perch-e2e-XXXXXX";
	const char *perch = getenv("PERCH"), *targets = getenv("TARGETS");

	nr_procs = nr_extra_pids = nr_tmpfiles = nr_strings = 0;
	harness_context_reset();
	/* the suites read perch record's whole summary (its default is the first lines) */
	setenv("PERCH_SUMMARY", "full", 0);
	/* a loaded machine keeps perch from some of its ticks: the suites judge the figures
	 * (e2e-overload tests the exit without this) */
	setenv("PERCH_ALLOW_PARTIAL", "1", 0);
	/* Line-buffered stderr keeps our context and Check's messages in order. */
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (!is_executable(perch))
		harness_fail(__FILE__, __LINE__, "PERCH",
			     "PERCH=%s is not an executable "
			     "(run through `make check-e2e`)",
			     perch ? perch : "(unset)");
	if (!targets || access(targets, R_OK | X_OK))
		harness_fail(__FILE__, __LINE__, "TARGETS",
			     "TARGETS=%s is not a directory "
			     "(run through `make check-e2e`)",
			     targets ? targets : "(unset)");
	if (!mkdtemp(tmpl))
		harness_fail(__FILE__, __LINE__, "mkdtemp", "mkdtemp: %s", strerror(errno));
	tmpdir = xstrdup(tmpl);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int harness_can_exec(const char *path, const char *suite)
{
	int fds[2], err = 0, status;
	pid_t pid;

	if (!path || pipe2(fds, O_CLOEXEC))
		return 1;
	pid = fork();
	if (pid == 0) {
		int e, null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execl(path, path, (char *)NULL);
		e = errno;
		if (write(fds[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
		err = 0; /* exec succeeded (the pipe closed on exec) */
	close(fds[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (err != ENOEXEC)
		return 1;
	fprintf(stderr,
		"framework skip: %s: this kernel cannot run %s (%s: ia32 emulation is disabled "
		"or not built in; boot with ia32_emulation=on)\n",
		suite, path, strerror(err));
	return 0;
}

int harness_can_exec_target(const char *name, const char *suite)
{
	const char *targets = getenv("TARGETS");
	char path[4096];

	if (!targets)
		return 1; /* harness_setup() fails each test with the reason */
	snprintf(path, sizeof(path), "%s/%s", targets, name);
	return harness_can_exec(path, suite);
}

static void reap_all_children(void)
{
	/* Orphans reparented to us (subreaper) and anything else left. */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

void harness_teardown(void)
{
	size_t i;

	/* Kill everything before waiting for anything: the real parent of a traced child does not
	 * see it die until its tracer (maybe one of ours) has reaped it or died. */
	for (i = 0; i < nr_extra_pids; i++)
		kill(extra_pids[i], SIGKILL);
	for (i = 0; i < nr_procs; i++)
		if (!procs[i]->reaped && procs[i]->pid > 0)
			kill(procs[i]->pid, SIGKILL);
	for (i = 0; i < nr_procs; i++) {
		struct harness_proc *p = procs[i];

		if (!p->reaped && p->pid > 0 && waitpid(p->pid, &p->status, 0) == p->pid)
			p->reaped = 1;
		if (p->in_fd >= 0)
			close(p->in_fd);
		if (p->out_fd >= 0)
			close(p->out_fd);
		if (p->err_fd >= 0)
			close(p->err_fd);
		p->in_fd = p->out_fd = p->err_fd = -1;
		strbuf_release(&p->out);
		strbuf_release(&p->err);
		free(p->label);
		free(p->cmdline);
		free(p);
	}
	nr_procs = 0;
	for (i = 0; i < nr_extra_pids; i++)
		waitpid(extra_pids[i], NULL,
			0); /* ours only if a child or reparented; else ECHILD */
	nr_extra_pids = 0;
	reap_all_children();
	for (i = 0; i < nr_tmpfiles; i++) {
		unlink(tmpfiles[i]);
		free(tmpfiles[i]);
	}
	nr_tmpfiles = 0;
	if (tmpdir) {
		rmdir(tmpdir);
		free(tmpdir);
		tmpdir = NULL;
	}
	for (i = 0; i < nr_strings; i++)
		free(strings[i]);
	free(strings);
	strings = NULL;
	nr_strings = alloc_strings = 0;
	strbuf_release(&context);
}

void harness_tcase_init(TCase *tc, double timeout)
{
	tcase_set_tags(tc, "e2e ptrace");
	tcase_set_timeout(tc, timeout);
	tcase_add_checked_fixture(tc, harness_setup, harness_teardown);
}

const char *harness_fmt(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return keep_string(strbuf_detach(&sb, NULL));
}

const char *harness_sh(const char *cmd, int *code, double timeout)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	FILE *f;
	int st;

	/* through the environment: @cmd keeps its own quoting */
	setenv("PERCH_HARNESS_CMD", cmd, 1);
	f = popen(harness_fmt("timeout %.0f sh -c \"$PERCH_HARNESS_CMD\" 2>&1", timeout), "r");
	H_ASSERT(f, "cannot run %s", cmd);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	st = pclose(f);
	*code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	H_ASSERT(*code != 124, "'%s' did not finish in %.0f s", cmd, timeout);
	harness_context_add("$ %s\n%.4000s\n", cmd, sb.buf);
	return keep_string(strbuf_detach(&sb, NULL));
}

int harness_have(const char *tool)
{
	int code;

	harness_sh(harness_fmt("command -v %s >/dev/null 2>&1", tool), &code, 10);
	if (code)
		fprintf(stderr, "SKIP: %s not installed, the check that needs it did not run\n",
			tool);
	return !code;
}

const char *harness_perch(void)
{
	return getenv("PERCH");
}

const char *harness_target(const char *name)
{
	return keep_string(xasprintf("%s/%s", getenv("TARGETS"), name));
}

const char *harness_tmpdir(void)
{
	return tmpdir ? tmpdir : "/tmp";
}

const char *harness_tmpfile(const char *name)
{
	char *path = xasprintf("%s/%s", tmpdir ? tmpdir : "/tmp", name);

	if (nr_tmpfiles < HARNESS_MAX_TMPFILES)
		tmpfiles[nr_tmpfiles++] = path;
	else
		keep_string(path);
	return path;
}

/* ---- child processes ---- */

struct harness_proc *harness_spawn(const char *label, const char *const argv[])
{
	int in[2], out[2], err[2], exec_err[2];
	struct harness_proc *p;
	struct strbuf cmd = STRBUF_INIT;
	ssize_t n;
	int child_errno;
	size_t i;

	if (nr_procs >= HARNESS_MAX_PROCS)
		harness_fail(__FILE__, __LINE__, "nr_procs", "too many children");
	for (i = 0; argv[i]; i++)
		strbuf_addf(&cmd, "%s%s", i ? " " : "", argv[i]);
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ||
	    pipe2(exec_err, O_CLOEXEC))
		harness_fail(__FILE__, __LINE__, "pipe2", "pipe2: %s", strerror(errno));
	fflush(NULL);
	p = xcalloc(1, sizeof(*p));
	p->label = xstrdup(label);
	p->cmdline = strbuf_detach(&cmd, NULL);
	strbuf_init(&p->out, 0);
	strbuf_init(&p->err, 0);
	p->pid = fork();
	if (p->pid < 0)
		harness_fail(__FILE__, __LINE__, "fork", "fork: %s", strerror(errno));
	if (p->pid == 0) {
		/* The child: only async-signal-safe calls until exec. */
		signal(SIGPIPE, SIG_DFL);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		child_errno = errno;
		if (write(exec_err[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(126);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	close(exec_err[1]);
	p->in_fd = in[1];
	p->out_fd = out[0];
	p->err_fd = err[0];
	fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
	procs[nr_procs++] = p;
	do
		n = read(exec_err[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(exec_err[0]);
	if (n == (ssize_t)sizeof(child_errno))
		harness_fail(__FILE__, __LINE__, "execv", "cannot execute %s: %s", argv[0],
			     strerror(child_errno));
	return p;
}

/* Read everything available on @fd into @sb; closes @fd at EOF. Returns bytes read. */
static size_t drain_fd(int *fd, struct strbuf *sb)
{
	char buf[8192];
	size_t total = 0;
	ssize_t n;

	while (*fd >= 0) {
		n = read(*fd, buf, sizeof(buf));
		if (n > 0) {
			strbuf_add(sb, buf, (size_t)n);
			total += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(*fd);
			*fd = -1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	return total;
}

void harness_proc_pump(struct harness_proc *p, double timeout)
{
	struct pollfd pfd[2];
	int nfds = 0, ms = timeout > 0 ? (int)(timeout * 1000 + 0.5) : 0;

	if (p->out_fd >= 0)
		pfd[nfds++] = (struct pollfd){.fd = p->out_fd, .events = POLLIN};
	if (p->err_fd >= 0)
		pfd[nfds++] = (struct pollfd){.fd = p->err_fd, .events = POLLIN};
	if (nfds && ms > 0)
		poll(pfd, (nfds_t)nfds, ms);
	else if (ms > 0)
		harness_sleep(timeout);
	drain_fd(&p->out_fd, &p->out);
	drain_fd(&p->err_fd, &p->err);
}

static const char *find_line(const struct strbuf *sb, const char *prefix)
{
	size_t plen = strlen(prefix);
	const char *s = sb->buf, *nl;

	while ((nl = strchr(s, '\n'))) {
		if ((size_t)(nl - s) >= plen && !strncmp(s, prefix, plen))
			return s + plen;
		s = nl + 1;
	}
	return NULL;
}

static void try_reap(struct harness_proc *p)
{
	if (!p->reaped && waitpid(p->pid, &p->status, WNOHANG) == p->pid)
		p->reaped = 1;
}

const char *harness_proc_wait_line(struct harness_proc *p, const char *prefix, double timeout)
{
	double end = harness_now() + timeout;
	const char *line;

	for (;;) {
		harness_proc_pump(p, 0);
		line = find_line(&p->out, prefix);
		if (line)
			return line;
		if (p->out_fd < 0 || harness_now() >= end)
			return NULL;
		harness_proc_pump(p, 0.02);
	}
}

pid_t harness_proc_wait_ready_at(struct harness_proc *p, double timeout, const char *file,
				 int lineno)
{
	const char *text = harness_proc_wait_line(p, "ready ", timeout);
	long pid;

	if (!text) {
		try_reap(p);
		harness_fail(file, lineno, "ready",
			     "%s printed no \"ready <pid>\" line within %.1f s", p->label, timeout);
	}
	pid = strtol(text, NULL, 10);
	if (pid <= 0)
		harness_fail(file, lineno, "ready", "%s: bad ready line", p->label);
	return (pid_t)pid;
}

int harness_proc_wait(struct harness_proc *p, double timeout)
{
	double end = harness_now() + timeout;

	while (!p->reaped) {
		harness_proc_pump(p, 0.01);
		try_reap(p);
		if (!p->reaped && harness_now() >= end)
			return -ETIMEDOUT;
	}
	/* Collect what is still in the pipes; a grandchild may keep them open, so bound it. */
	while ((p->out_fd >= 0 || p->err_fd >= 0) && harness_now() < end + 1.0)
		harness_proc_pump(p, 0.01);
	return 0;
}

int harness_proc_exit_code(const struct harness_proc *p)
{
	if (!p->reaped)
		return -1;
	if (WIFEXITED(p->status))
		return WEXITSTATUS(p->status);
	if (WIFSIGNALED(p->status))
		return 128 + WTERMSIG(p->status);
	return -1;
}

void harness_proc_write(struct harness_proc *p, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;

	while (len && p->in_fd >= 0) {
		n = write(p->in_fd, s, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			harness_fail(__FILE__, __LINE__, "write", "cannot write to %s: %s",
				     p->label, strerror(errno));
		s += n;
		len -= (size_t)n;
	}
}

void harness_wait_sampling(struct harness_proc *perch)
{
	double end = harness_now() + 20;

	while (!strstr(perch->err.buf ? perch->err.buf : "", "perch: sampling ")) {
		H_ASSERT(harness_now() < end && perch->err_fd >= 0,
			 "perch -v did not say it started sampling");
		harness_proc_pump(perch, 0.01);
	}
}

void harness_proc_kill(struct harness_proc *p, int sig)
{
	try_reap(p);
	if (!p->reaped)
		kill(p->pid, sig);
}

void harness_track_pid(pid_t pid)
{
	if (pid > 0 && nr_extra_pids < HARNESS_MAX_PIDS)
		extra_pids[nr_extra_pids++] = pid;
}

/* ---- /proc ---- */

static int read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return (int)n;
}

int harness_tracer_pid(pid_t pid)
{
	char path[64], buf[4096];
	const char *s;
	int tracer;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) < 0)
		return -1;
	s = strstr(buf, "\nTracerPid:");
	if (!s)
		return -1;
	tracer = atoi(s + strlen("\nTracerPid:"));
	/* TracerPid is the tracing thread's id (perch traces from a thread of its own): the
	 * process it belongs to */
	snprintf(path, sizeof(path), "/proc/%d/status", tracer);
	if (tracer > 0 && read_small_file(path, buf, sizeof(buf)) >= 0 &&
	    (s = strstr(buf, "\nTgid:")))
		return atoi(s + strlen("\nTgid:"));
	return tracer;
}

/* State letter from a /proc/.../stat line: the field after the last ')'. */
static char stat_state(const char *stat)
{
	const char *s = strrchr(stat, ')');

	return s && s[1] == ' ' ? s[2] : '?';
}

int harness_task_states(pid_t pid, char *states, size_t size)
{
	char path[64], buf[1024];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char tpath[320];

		if (de->d_name[0] == '.')
			continue;
		snprintf(tpath, sizeof(tpath), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		if (read_small_file(tpath, buf, sizeof(buf)) < 0)
			continue;
		if (n + 1 < size)
			states[n++] = stat_state(buf);
	}
	closedir(d);
	if (size)
		states[n < size ? n : size - 1] = '\0';
	return (int)n;
}

long long harness_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	long long utime, stime;
	const char *s;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) < 0)
		return -1;
	s = strrchr(buf, ')');
	/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime */
	if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &utime,
			 &stime) != 2)
		return -1;
	return utime + stime;
}

int harness_wait_traced(pid_t pid, int traced, double timeout)
{
	double end = harness_now() + timeout;
	int t;

	for (;;) {
		t = harness_tracer_pid(pid);
		if (t >= 0 && (traced ? t > 0 : t == 0))
			return 0;
		if (harness_now() >= end)
			return -ETIMEDOUT;
		harness_sleep(0.005);
	}
}

/* ---- folded stacks ---- */

static void add_bad(struct strbuf *bad, size_t *nr_bad, const char *line, size_t len,
		    const char *why)
{
	if (*nr_bad < HARNESS_BAD_KEEP)
		strbuf_addf(bad, "  %s: \"%.*s\"\n", why, (int)(len > 300 ? 300 : len), line);
	(*nr_bad)++;
}

static int folded_parse_line(struct harness_folded *f, const regex_t *re, const char *s, size_t len)
{
	struct harness_folded_line l = {0};
	char *copy, *sp, *dash, *tok, *save = NULL;
	size_t alloc = 0;
	char *end;

	copy = xstrndup(s, len);
	if (regexec(re, copy, 0, NULL, 0)) {
		add_bad(&f->bad, &f->nr_bad, s, len, "malformed");
		free(copy);
		return -EINVAL;
	}
	sp = strrchr(copy, ' ');
	l.count = strtoul(sp + 1, &end, 10);
	*sp = '\0';
	tok = strtok_r(copy, ";", &save);
	dash = strrchr(tok, '-');
	if (!dash || !dash[1] || strspn(dash + 1, "0123456789") != strlen(dash + 1)) {
		add_bad(&f->bad, &f->nr_bad, s, len, "no <name>-<tid> first field");
		free(copy);
		return -EINVAL;
	}
	l.tid = (pid_t)atoi(dash + 1);
	l.thread = xstrndup(tok, (size_t)(dash - tok));
	while ((tok = strtok_r(NULL, ";", &save))) {
		ALLOC_GROW(l.frames, l.nr_frames + 1, alloc);
		l.frames[l.nr_frames++] = xstrdup(tok);
	}
	free(copy);
	ALLOC_GROW(f->lines, f->nr + 1, f->alloc);
	f->lines[f->nr++] = l;
	f->total += l.count;
	return 0;
}

int harness_folded_parse(struct harness_folded *f, const char *text)
{
	regex_t re;
	const char *s, *nl;

	memset(f, 0, sizeof(*f));
	strbuf_init(&f->bad, 0);
	if (!text)
		return -EINVAL;
	if (regcomp(&re, "^[^;]+(;[^;]+)+ [1-9][0-9]*$", REG_EXTENDED | REG_NOSUB))
		return -EINVAL;
	for (s = text; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl) {
			add_bad(&f->bad, &f->nr_bad, s, strlen(s), "no final newline");
			folded_parse_line(f, &re, s, strlen(s));
			break;
		}
		folded_parse_line(f, &re, s, (size_t)(nl - s));
	}
	regfree(&re);
	return 0;
}

int harness_folded_load(struct harness_folded *f, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	ssize_t n;
	int fd, ret;

	memset(f, 0, sizeof(*f));
	strbuf_init(&f->bad, 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	close(fd);
	if (memchr(sb.buf, '\0', sb.len))
		add_bad(&f->bad, &f->nr_bad, "", 0, "NUL byte in the file");
	ret = harness_folded_parse(f, sb.buf);
	strbuf_release(&sb);
	return ret;
}

void harness_folded_release(struct harness_folded *f)
{
	size_t i, j;

	for (i = 0; i < f->nr; i++) {
		for (j = 0; j < f->lines[i].nr_frames; j++)
			free(f->lines[i].frames[j]);
		free(f->lines[i].frames);
		free(f->lines[i].thread);
	}
	free(f->lines);
	strbuf_release(&f->bad);
	memset(f, 0, sizeof(*f));
}

/* The stack key of a line (everything but the count), rebuilt for the order check. */
static char *line_key(const struct harness_folded_line *l)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addf(&sb, "%s-%d", l->thread, (int)l->tid);
	for (i = 0; i < l->nr_frames; i++)
		strbuf_addf(&sb, ";%s", l->frames[i]);
	return strbuf_detach(&sb, NULL);
}

void harness_folded_assert_valid(const struct harness_folded *f, const char *file, int line)
{
	char *prev = NULL, *cur;
	size_t i;

	if (f->nr_bad) {
		harness_context_add("malformed folded lines (%zu):\n%s", f->nr_bad, f->bad.buf);
		harness_fail(file, line, "nr_bad == 0",
			     "%zu folded lines do not match "
			     "^[^;]+(;[^;]+)+ [1-9][0-9]*$",
			     f->nr_bad);
	}
	if (!f->nr)
		harness_fail(file, line, "nr > 0", "the folded output is empty");
	for (i = 0; i < f->nr; i++) {
		cur = line_key(&f->lines[i]);
		if (prev && strcmp(prev, cur) >= 0) {
			harness_context_add("line %zu: %s\nline %zu: %s", i, prev, i + 1, cur);
			free(prev);
			free(cur);
			harness_fail(file, line, "sorted",
				     "folded lines are not sorted and unique");
		}
		free(prev);
		prev = cur;
	}
	free(prev);
}

unsigned long harness_folded_count(const struct harness_folded *f, const char *name,
				   int (*pred)(const struct harness_folded_line *, const void *),
				   const void *arg)
{
	unsigned long n = 0;
	size_t i;

	for (i = 0; i < f->nr; i++) {
		const struct harness_folded_line *l = &f->lines[i];

		if (name && strcmp(l->thread, name))
			continue;
		if (!pred || pred(l, arg))
			n += l->count;
	}
	return n;
}

void harness_folded_context(const struct harness_folded *f, const char *name, size_t max)
{
	size_t i, shown = 0;

	harness_context_add("folded lines%s%s (%zu in all):", name ? " of thread " : "",
			    name ? name : "", f->nr);
	for (i = 0; i < f->nr && shown < max; i++) {
		char *key;

		if (name && strcmp(f->lines[i].thread, name))
			continue;
		key = line_key(&f->lines[i]);
		harness_context_add("  %s %lu", key, f->lines[i].count);
		free(key);
		shown++;
	}
}

int harness_frame_is(const char *frame, const char *fn)
{
	size_t n = strlen(fn);

	if (strncmp(frame, fn, n))
		return 0;
	return frame[n] == '\0' || frame[n] == '(' || frame[n] == ' ';
}

int harness_line_find(const struct harness_folded_line *l, const char *fn)
{
	size_t i;

	for (i = 0; i < l->nr_frames; i++)
		if (harness_frame_is(l->frames[i], fn))
			return (int)i;
	return -1;
}

int harness_line_has_seq(const struct harness_folded_line *l, const char *const *seq, size_t n)
{
	size_t i, j;

	if (n > l->nr_frames)
		return 0;
	for (i = 0; i + n <= l->nr_frames; i++) {
		for (j = 0; j < n; j++)
			if (!harness_frame_is(l->frames[i + j], seq[j]))
				break;
		if (j == n)
			return 1;
	}
	return 0;
}

int harness_pred_has(const struct harness_folded_line *l, const void *fn)
{
	return harness_line_find(l, fn) >= 0;
}

int harness_pred_any(const struct harness_folded_line *l, const void *unused)
{
	(void)l;
	(void)unused;
	return 1;
}

long harness_summary_samples(const char *err)
{
	const char *s = err;

	while ((s = strstr(s, "samples: "))) {
		const char *num = s + strlen("samples: ");

		if ((s == err || s[-1] == '\n' || s[-1] == ' ') && *num >= '0' && *num <= '9')
			return strtol(num, NULL, 10);
		s++;
	}
	return -1;
}

double harness_summary_unwound(const char *err)
{
	const char *s = strstr(err, "unwound to root: ");

	return s ? strtod(s + strlen("unwound to root: "), NULL) : -1;
}

void harness_check_record(struct harness_proc *perch, int want_exit, const char *path,
			  struct harness_folded *f, const char *file, int line)
{
	long samples;
	int ret, code = harness_proc_exit_code(perch);

	if (code != want_exit)
		harness_fail(file, line, "exit code", "perch exited with %d, expected %d", code,
			     want_exit);
	ret = harness_folded_load(f, path);
	if (ret)
		harness_fail(file, line, "output file", "cannot read perch's output %s: %s", path,
			     strerror(-ret));
	harness_folded_assert_valid(f, file, line);
	samples = harness_summary_samples(perch->err.buf);
	if (samples < 0)
		harness_fail(file, line, "summary", "no \"samples: N\" line in perch's stderr");
	if ((unsigned long)samples != f->total)
		harness_fail(file, line, "total == samples",
			     "folded counts add up to %lu but the "
			     "summary says samples: %ld",
			     f->total, samples);
}

/* ---- backtraces ---- */

static struct harness_bt_thread *bt_add_thread(struct harness_bt *bt, pid_t tid, const char *name,
					       size_t name_len)
{
	struct harness_bt_thread *t;

	ALLOC_GROW(bt->threads, bt->nr + 1, bt->alloc);
	t = &bt->threads[bt->nr++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->name = xstrndup(name, name_len);
	return t;
}

static struct harness_bt_frame *bt_add_frame(struct harness_bt_thread *t)
{
	struct harness_bt_frame *fr;

	ALLOC_GROW(t->frames, t->nr + 1, t->alloc);
	fr = &t->frames[t->nr++];
	memset(fr, 0, sizeof(*fr));
	return fr;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* " at FILE:LINE" starting at @s (after the function part). */
static void parse_at(struct harness_bt_frame *fr, const char *s)
{
	const char *at = strstr(s, " at "), *colon, *end;

	if (!at)
		return;
	at += 4;
	end = at + strcspn(at, " \n");
	colon = memrchr(at, ':', (size_t)(end - at));
	if (!colon)
		return;
	fr->file = xstrndup(at, (size_t)(colon - at));
	fr->line = atoi(colon + 1);
}

/* "#1  0x000055d0c3a01234 f3 (chain) at chain_f3.c:12 [inlined]" */
static int perch_frame(struct harness_bt_thread *t, const char *s)
{
	struct harness_bt_frame *fr;
	const char *p = s + 1, *func, *mod, *mod_end;
	uint64_t pc;
	char *end;

	strtoul(p, &end, 10);
	if (end == p || *end != ' ')
		return -EINVAL;
	/* The exact "#N  0x..." spacing is checked by the dump format test, not here. */
	for (p = end; *p == ' '; p++)
		;
	if (strncmp(p, "0x", 2))
		return -EINVAL;
	pc = strtoull(p, &end, 16);
	if (end - p != 18 || *end != ' ')
		return -EINVAL;
	func = end + 1;
	/* The module is the last " (...)" before " at " / " [inlined]" / " (tail call)" / end of
	 * line. */
	mod_end = strstr(func, ") at ");
	if (!mod_end)
		mod_end = strstr(func, ") [inlined]");
	if (!mod_end)
		mod_end = strstr(func, ") (tail call)");
	if (!mod_end) {
		mod_end = func + strlen(func);
		while (mod_end > func && isspace((unsigned char)mod_end[-1]))
			mod_end--;
		if (mod_end == func || mod_end[-1] != ')')
			return -EINVAL;
		mod_end--;
	}
	for (mod = mod_end; mod > func && !(mod[0] == '(' && mod[-1] == ' '); mod--)
		;
	if (mod == func)
		return -EINVAL;
	fr = bt_add_frame(t);
	fr->pc = pc;
	fr->func = xstrndup(func, (size_t)(mod - 1 - func));
	fr->module = xstrndup(mod + 1, (size_t)(mod_end - mod - 1));
	parse_at(fr, mod_end);
	fr->inlined = strstr(mod_end, "[inlined]") != NULL;
	fr->tailcall = strstr(mod_end, " (tail call)") != NULL;
	return 0;
}

int harness_bt_parse_perch(struct harness_bt *bt, const char *text)
{
	struct harness_bt_thread *t = NULL;
	const char *s, *nl;
	char *line;

	memset(bt, 0, sizeof(*bt));
	strbuf_init(&bt->bad, 0);
	if (!text)
		return -EINVAL;
	for (s = text; *s; s = nl + 1) {
		size_t len;
		int ok = 0;

		nl = strchr(s, '\n');
		len = nl ? (size_t)(nl - s) : strlen(s);
		line = xstrndup(s, len);
		if (!len) {
			ok = 1;
		} else if (!strncmp(line, "PID ", 4)) {
			char *open = strchr(line, '('), *close = strrchr(line, ')');

			bt->pid = (pid_t)atoi(line + 4);
			if (open && close > open) {
				free(bt->comm);
				bt->comm = xstrndup(open + 1, (size_t)(close - open - 1));
				ok = bt->pid > 0;
			}
		} else if (!strncmp(line, "TID ", 4)) {
			/* TID 1234 "name" (S) */
			char *q1 = strchr(line, '"'), *q2 = q1 ? strrchr(q1 + 1, '"') : NULL;

			if (q1 && q2 && atoi(line + 4) > 0) {
				t = bt_add_thread(bt, (pid_t)atoi(line + 4), q1 + 1,
						  (size_t)(q2 - q1 - 1));
				if (q2[1] == ' ' && q2[2] == '(' && q2[3] && q2[4] == ')')
					t->state = q2[3];
				ok = 1;
			}
		} else if (line[0] == '#' && t) {
			ok = perch_frame(t, line) == 0;
		} else if (!strncmp(line, "    java: ", 10) && t) {
			ok = 1; /* ART's view of the thread (check_realart_states.c reads it) */
		} else if (t && !strncmp(line, "    ", 4) && (line[4] == '[' || line[4] == '(')) {
			/* the wait reason above the frames, an end marker or a note below */
			t->notes = xrealloc(t->notes, (t->nr_notes + 1) * sizeof(*t->notes));
			t->notes[t->nr_notes++] = xstrdup(line + 4);
			ok = 1;
		}
		if (!ok)
			add_bad(&bt->bad, &bt->nr_bad, line, len, "perch dump");
		free(line);
		if (!nl)
			break;
	}
	return 0;
}

/* "#2  0x0000555e6ca6c527 in dump_reader_wait (fd=3) at tests/targets/dump_wait.c:32"
 * "#0  __futex_abstimed_wait_common64 (private=128, ...) at ./nptl/futex-internal.c:57"
 * "#5  0x00007fbb6ce7a8ec in clone3 () from /lib/x86_64-linux-gnu/libc.so.6" */
static int gdb_frame(struct harness_bt_thread *t, const char *s)
{
	struct harness_bt_frame *fr;
	const char *p = s + 1, *func, *func_end, *from;
	uint64_t pc = 0;
	char *end;

	strtoul(p, &end, 10);
	if (end == p || *end != ' ')
		return -EINVAL;
	p = end;
	while (*p == ' ')
		p++;
	if (!strncmp(p, "0x", 2)) {
		pc = strtoull(p, &end, 16);
		if (strncmp(end, " in ", 4))
			return -EINVAL;
		p = end + 4;
	}
	func = p;
	func_end = strstr(func, " (");
	if (!func_end || func_end == func)
		return -EINVAL;
	fr = bt_add_frame(t);
	fr->pc = pc;
	fr->func = xstrndup(func, (size_t)(func_end - func));
	from = strstr(func_end, ") from ");
	if (from)
		fr->module = xstrdup(basename_of(from + strlen(") from ")));
	parse_at(fr, func_end);
	return 0;
}

int harness_bt_parse_gdb(struct harness_bt *bt, const char *text)
{
	struct harness_bt_thread *t = NULL;
	const char *s, *nl;
	char *line;

	memset(bt, 0, sizeof(*bt));
	strbuf_init(&bt->bad, 0);
	if (!text)
		return -EINVAL;
	for (s = text; *s; s = nl + 1) {
		size_t len;

		nl = strchr(s, '\n');
		len = nl ? (size_t)(nl - s) : strlen(s);
		line = xstrndup(s, len);
		/* Thread 3 (Thread 0x7fbb6c56c6c0 (LWP 8712) "reader"): */
		if (!strncmp(line, "Thread ", 7)) {
			char *lwp = strstr(line, "(LWP "), *q1 = strchr(line, '"'), *q2;

			q2 = q1 ? strrchr(q1 + 1, '"') : NULL;
			if (lwp && atoi(lwp + 5) > 0)
				t = bt_add_thread(bt, (pid_t)atoi(lwp + 5), q1 && q2 ? q1 + 1 : "",
						  q1 && q2 ? (size_t)(q2 - q1 - 1) : 0);
			else
				add_bad(&bt->bad, &bt->nr_bad, line, len, "gdb thread");
		} else if (line[0] == '#' && t) {
			if (gdb_frame(t, line))
				add_bad(&bt->bad, &bt->nr_bad, line, len, "gdb frame");
		}
		free(line);
		if (!nl)
			break;
	}
	return 0;
}

void harness_bt_release(struct harness_bt *bt)
{
	size_t i, j;

	for (i = 0; i < bt->nr; i++) {
		struct harness_bt_thread *t = &bt->threads[i];

		for (j = 0; j < t->nr; j++) {
			free(t->frames[j].func);
			free(t->frames[j].module);
			free(t->frames[j].file);
		}
		for (j = 0; j < t->nr_notes; j++)
			free(t->notes[j]);
		free(t->notes);
		free(t->frames);
		free(t->name);
	}
	free(bt->threads);
	free(bt->comm);
	strbuf_release(&bt->bad);
	memset(bt, 0, sizeof(*bt));
}

struct harness_bt_thread *harness_bt_find(const struct harness_bt *bt, pid_t tid)
{
	size_t i;

	for (i = 0; i < bt->nr; i++)
		if (bt->threads[i].tid == tid)
			return &bt->threads[i];
	return NULL;
}

const char *harness_func_normalize(const char *func, char *buf, size_t size)
{
	size_t len = strcspn(func, "@(");
	char *s;

	if (!size)
		return "";
	if (len >= size)
		len = size - 1;
	memcpy(buf, func, len);
	buf[len] = '\0';
	while (len && buf[len - 1] == ' ')
		buf[--len] = '\0';
	s = buf;
	for (;;) {
		if (!strncmp(s, "__GI_", 5))
			s += 5;
		else if (!strncmp(s, "__libc_", 7))
			s += 7;
		else if (*s == '_' && s[1])
			s++;
		else
			break;
	}
	memmove(buf, s, strlen(s) + 1);
	return buf;
}

int harness_frame_in_file(const char *frame, const char *fn, const char *file)
{
	const char *open, *colon;
	size_t flen = strlen(file);

	if (!harness_frame_is(frame, fn))
		return 0;
	open = strstr(frame, " (");
	if (!open)
		return 0;
	colon = strrchr(open, ':');
	if (!colon || colon - (open + 2) < (long)flen || strncmp(colon - flen, file, flen))
		return 0;
	return colon[1] >= '1' && colon[1] <= '9' && strchr(colon, ')') != NULL;
}

double harness_missed_ticks_pct(const char *err)
{
	const char *v = strstr(err, "  ticks: "), *m = v ? strstr(v, "missed ticks: ") : NULL;
	double ticks = v ? strtod(v + 9, NULL) : 0;

	return ticks > 0 && m ? 100.0 * strtod(m + 14, NULL) / ticks : 0;
}
