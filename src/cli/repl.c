/* The prompt and scripted mode: read command lines, dispatch them (the REPL's own session
 * commands in repl-cmds.c first, then the CLI table), print one result per command; see
 * include/perch/cli/repl.h. readline's callback interface lets one select() loop watch the
 * keyboard, Ctrl-C (a self-pipe) and the session's notices (a recording that ended, a target
 * that exited) at once. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "perch/base/fdlimit.h"
#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/cli/repl.h"
#include "perch/out/json.h"
#include "perch/out/output.h"
#include "perch/proc/proc-task.h"
#include "perch/record/procwait.h"
#include "perch/record/record-opts.h"
#include "perch/record/session.h"

#define REPL_HISTORY_MAX 1000
#define REPL_MAX_MATCHES 64

static volatile sig_atomic_t got_sigint, got_quit;
static struct session *sig_session; /* for the signal handler */
static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGINT) {
		got_sigint = 1;
	} else {
		got_quit = 1;
		if (sig_session)
			sig_session->stop_bg = 1;
	}
	if (sig_session)
		sig_session->stop_fg = 1;
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], "s", 1) < 0) {
		/* full: a wakeup is pending anyway */
	}
	errno = saved;
}

int repl_interrupted(void)
{
	return got_sigint || got_quit;
}

/* SIGINT, SIGTERM and SIGHUP come to this thread (the session thread blocks them);
 * SIGCHLD stays blocked here: the session waits for it. */
static void signals_setup(struct session *s)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t set;

	sig_session = s;
	if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		sig_pipe[0] = sig_pipe[1] = -1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void drain_sig_pipe(void)
{
	char buf[64];

	while (sig_pipe[0] >= 0 && read(sig_pipe[0], buf, sizeof(buf)) > 0)
		;
}

/* ---- results ---- */

static void result_reset(struct repl *r)
{
	strbuf_reset(&r->json);
	strbuf_reset(&r->kv);
	strbuf_reset(&r->text);
	r->depth = 0;
}

void repl_printf(struct repl *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (r->mode != REPL_SCRIPT) {
		vprintf(fmt, ap);
	} else if (!r->json_mode) {
		strbuf_vaddf(&r->text, fmt, ap);
	}
	va_end(ap);
}

static void field_key(struct repl *r, const char *key)
{
	if (r->depth == 0 || !r->first[r->depth])
		strbuf_addch(&r->json, ',');
	r->first[r->depth] = 0;
	if (key) {
		json_add_str(&r->json, key);
		strbuf_addch(&r->json, ':');
	}
}

static void kv_add(struct repl *r, const char *key, const char *raw, int quote)
{
	if (r->depth || !key)
		return;
	strbuf_addf(&r->kv, " %s=", key);
	if (quote && (!raw[0] || strpbrk(raw, " \t\"'=\\\n")))
		json_add_str(&r->kv, raw);
	else
		strbuf_addstr(&r->kv, raw);
}

void repl_field_int(struct repl *r, const char *key, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	field_key(r, key);
	strbuf_addstr(&r->json, buf);
	kv_add(r, key, buf, 0);
}

void repl_field_double(struct repl *r, const char *key, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", v);
	field_key(r, key);
	strbuf_addstr(&r->json, buf);
	kv_add(r, key, buf, 0);
}

void repl_field_str(struct repl *r, const char *key, const char *v)
{
	field_key(r, key);
	json_add_str(&r->json, v);
	kv_add(r, key, v ? v : "", 1);
}

void repl_field_hex(struct repl *r, const char *key, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%llx", v);
	repl_field_str(r, key, buf);
}

void repl_field_bool(struct repl *r, const char *key, int v)
{
	field_key(r, key);
	strbuf_addstr(&r->json, v ? "true" : "false");
	kv_add(r, key, v ? "true" : "false", 0);
}

static void open_nested(struct repl *r, const char *key, char c)
{
	field_key(r, key);
	strbuf_addch(&r->json, c);
	if (r->depth + 1 < REPL_JSON_DEPTH)
		r->depth++;
	r->first[r->depth] = 1;
}

void repl_array_begin(struct repl *r, const char *key)
{
	open_nested(r, key, '[');
}

void repl_array_end(struct repl *r)
{
	strbuf_addch(&r->json, ']');
	if (r->depth)
		r->depth--;
}

void repl_object_begin(struct repl *r)
{
	open_nested(r, NULL, '{');
}

void repl_object_end(struct repl *r)
{
	strbuf_addch(&r->json, '}');
	if (r->depth)
		r->depth--;
}

/* ---- parsing ---- */

int repl_split(const char *line, char ***argv_out)
{
	size_t len = strlen(line), n = 0;
	/* words are never longer than the line: one buffer for the pointers and the text */
	char **argv = xmalloc((len / 2 + 2) * sizeof(char *) + len + 1);
	char *out = (char *)(argv + len / 2 + 2);
	const char *p = line;

	for (;;) {
		char quote = 0;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			break;
		argv[n++] = out;
		for (; *p; p++) {
			if (quote) {
				if (*p == quote) {
					quote = 0;
				} else if (*p == '\\' && quote == '"' && p[1]) {
					*out++ = *++p;
				} else {
					*out++ = *p;
				}
			} else if (*p == '\'' || *p == '"') {
				quote = *p;
			} else if (*p == '\\' && p[1]) {
				*out++ = *++p;
			} else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
				break;
			} else {
				*out++ = *p;
			}
		}
		*out++ = 0;
		if (quote) {
			free(argv);
			return -EINVAL;
		}
	}
	argv[n] = NULL;
	*argv_out = argv;
	return (int)n;
}

/* argv[0] of /proc/@pid/cmdline into @buf ("" when unreadable: kernel threads, gone). */
static void proc_argv0(pid_t pid, char *buf, size_t size)
{
	char path[64];
	size_t len = 0;
	char *text;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	text = proc_read_file(path, &len);
	if (text && len)
		snprintf(buf, size, "%s", text);
	free(text);
}

int repl_name_matches(const char *what, const char *comm, const char *argv0)
{
	/* procwait's rule for --app: one rule for naming processes */
	return procwait_app_matches(what, comm, argv0, argv0 ? strlen(argv0) + 1 : 0);
}

int repl_process_info(pid_t pid, struct repl_process *out)
{
	struct proc_status st;
	int ret;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	ret = proc_status_read(pid, 0, &st);
	if (ret < 0)
		return ret;
	snprintf(out->comm, sizeof(out->comm), "%s", st.name);
	out->uid = st.uid_real;
	proc_argv0(pid, out->cmdline, sizeof(out->cmdline));
	return 0;
}

int repl_find_process(const char *what, pid_t *pids, size_t max)
{
	pid_t *list = NULL;
	int pid, found;

	if (!what || !what[0])
		return -EINVAL;
	if (isdigit((unsigned char)what[0]) && opt_parse_pid(what, &pid) == 0) {
		if (max)
			pids[0] = pid;
		return 1;
	}
	found = procwait_list_app(what, &list);
	for (int i = 0; i < found && (size_t)i < max; i++)
		pids[i] = list[i];
	free(list);
	return found;
}

/* ---- dispatch ---- */

const struct cmd *repl_find_cmd(const struct repl *r, const char *name)
{
	for (size_t i = 0; i < r->nr_table; i++)
		if (!strcmp(r->table[i]->name, name))
			return r->table[i];
	if (!strcmp(name, "exit"))
		return repl_find_cmd(r, "quit");
	return NULL;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return PERCH_EXIT_FATAL;
}

/* In the child of run_foreign(): only async-signal-safe calls until exec. Ignored signals
 * and the mask survive exec, so both are reset, and the descriptor limit perch began with. The
 * output goes to @capture when set. Should exec fail, the code goes through @status_fd (see
 * child_code()). */
static void exec_self(char **av, int capture, int status_fd, const sigset_t *none)
{
	static const char failed[] = "perch: cannot run perch again from /proc/self/exe\n";
	int code = PERCH_EXIT_FATAL;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigprocmask(SIG_SETMASK, none, NULL);
	fdlimit_restore(); /* (the child raises it again, and knows the original) */
	if (capture >= 0)
		dup2(capture, STDOUT_FILENO);
	execv("/proc/self/exe", av);
	if (write(STDERR_FILENO, failed, sizeof(failed) - 1) < 0 ||
	    write(status_fd, &code, sizeof(code)) < 0) {
		/* nobody to tell */
	}
	_exit(code);
}

/* Wait for @child and return its exit code: from its exit status, or from @status_fd when
 * it could not exec (the pipe closes at a successful exec). */
static int child_code(pid_t child, int status_fd)
{
	int code = -1, status = 0;
	ssize_t got;

	do
		got = read(status_fd, &code, sizeof(code));
	while (got < 0 && errno == EINTR);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)sizeof(code))
		return code;
	/* it ended without saying: killed or crashed */
	if (WIFSIGNALED(status) || WIFEXITED(status))
		return exit_code_of(status);
	return log_err(PERCH_EXIT_FATAL, "the command ended abnormally");
}

/* A CLI command the REPL has no implementation of: run it as `perch NAME ARGS -p PID` in a
 * child (its exit() and signal handling stay its own). The child execs perch afresh rather than
 * calling the command after fork(): the session thread may hold a lock (malloc's, stdio's) at
 * the fork, and only async-signal-safe calls are safe in the child until exec. One that uses
 * ptrace runs with the target detached meanwhile so that it can attach; one that only reads
 * /proc or files (CMD_NO_PTRACE: stat, mem, report, annotate) runs while the target stays
 * attached, even during a background recording. */
static int run_foreign(struct repl *r, const struct cmd *c, int argc, char **argv)
{
	int no_ptrace = (c->flags & CMD_NO_PTRACE) != 0;
	pid_t target = 0, child;
	char pidbuf[16];
	char **av = xcalloc((size_t)argc + 5, sizeof(*av));
	int n = 0, code, capture = -1, detached = 0, st[2];
	sigset_t none;

	av[n++] = "perch";
	av[n++] = argv[0];
	if (r->s->attached) {
		int has_pid = 0;

		if (!no_ptrace && session_busy(r->s)) {
			free(av);
			return log_err(PERCH_EXIT_FATAL,
				       "a recording is running: 'record stop' first");
		}
		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], "-p") || !strncmp(argv[i], "--pid", 5))
				has_pid = 1;
		target = r->s->pid;
		if ((c->flags & CMD_PID) && !has_pid) {
			snprintf(pidbuf, sizeof(pidbuf), "%d", target);
			av[n++] = "-p";
			av[n++] = pidbuf;
		}
		if (!no_ptrace) {
			session_detach(r->s);
			detached = 1;
		}
	}
	for (int i = 1; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	sigemptyset(&none);
	if (pipe2(st, O_CLOEXEC) < 0) {
		log_errno(-errno, "cannot run %s", c->name);
		code = PERCH_EXIT_FATAL;
		goto reattach;
	}
	if (r->mode == REPL_SCRIPT)
		capture = memfd_create("perch-output", MFD_CLOEXEC);
	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child == 0)
		exec_self(av, capture, st[1], &none);
	close(st[1]);
	if (child < 0) {
		log_errno(-errno, "cannot run %s", c->name);
		code = PERCH_EXIT_FATAL;
	} else {
		code = child_code(child, st[0]);
	}
	close(st[0]);
	if (capture >= 0) {
		struct stat stt;

		if (fstat(capture, &stt) == 0 && stt.st_size > 0) {
			char *buf = xmalloc((size_t)stt.st_size + 1);
			ssize_t got = pread(capture, buf, (size_t)stt.st_size, 0);

			buf[got > 0 ? got : 0] = 0;
			repl_printf(r, "%s", buf);
			if (r->json_mode)
				repl_field_str(r, "output", buf);
			free(buf);
		}
		close(capture);
	}
reattach:
	if (detached) {
		int ret = session_attach(r->s, target);

		repl_field_bool(r, "attached", ret == 0);
		if (ret < 0)
			log_err(0, "could not attach to %d again after %s", target, c->name);
	}
	free(av);
	return code;
}

int repl_run_table_cmd(struct repl *r, const char *name, int argc, char **argv)
{
	const struct cmd *c = repl_find_cmd(r, name);

	if (!c || !c->run)
		return log_err(PERCH_EXIT_USAGE, "no command '%s' here", name);
	return run_foreign(r, c, argc, argv);
}

static int dispatch(struct repl *r, int argc, char **argv)
{
	const struct cmd *c = repl_find_cmd(r, argv[0]);

	if (!c)
		return log_err(PERCH_EXIT_USAGE, "unknown command '%s' (try 'help')", argv[0]);
	if (!c->prompt)
		return run_foreign(r, c, argc, argv);
	if (c->prompt->needs_target && !r->s->attached)
		return log_err(PERCH_EXIT_USAGE, "%s: no target: 'attach PID|NAME' first", c->name);
	return c->prompt->fn(r, argc, argv);
}

/* The last "perch: error: " (or fatal) line of @text, without the prefix, into @out. */
static void last_error(const char *text, struct strbuf *out)
{
	static const char *const prefixes[] = {"perch: error: ", "perch: fatal: "};
	const char *line = text;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
			size_t pl = strlen(prefixes[i]);

			if (len >= pl && !strncmp(line, prefixes[i], pl)) {
				strbuf_reset(out);
				strbuf_add(out, line + pl, len - pl);
			}
		}
		line = eol ? eol + 1 : NULL;
	}
}

/* Print the result of a scripted command: status line or JSON object. */
static void emit(struct repl *r, int lineno, const char *name, int code, const char *err)
{
	if (r->json_mode) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "{\"line\":%d,\"cmd\":", lineno);
		json_add_str(&sb, name);
		strbuf_addf(&sb, ",\"ok\":%s,\"status\":%d", code ? "false" : "true", code);
		strbuf_add(&sb, r->json.buf, r->json.len);
		if (code) {
			strbuf_addstr(&sb, ",\"error\":");
			json_add_str(&sb, err && *err ? err : "failed");
		}
		strbuf_addstr(&sb, "}\n");
		fputs(sb.buf, stdout);
		strbuf_release(&sb);
	} else {
		const char *line = r->text.buf;

		while (*line) {
			const char *eol = strchr(line, '\n');
			size_t len = eol ? (size_t)(eol - line) : strlen(line);

			printf("  %.*s\n", (int)len, line);
			line += len + (eol != NULL);
		}
		if (code) {
			printf("error %s status=%d", name, code);
			if (err && *err) {
				struct strbuf q = STRBUF_INIT;

				json_add_str(&q, err);
				printf(" error=%s", q.buf);
				strbuf_release(&q);
			}
		} else {
			printf("ok %s", name);
		}
		printf("%s\n", r->kv.buf);
	}
	fflush(stdout);
}

/* Run one command line; -1 for an empty line, else the command's exit code. In scripted
 * mode stderr is captured around the command, passed on, and its last error line goes into
 * the result. */
static int run_line(struct repl *r, const char *line, int lineno)
{
	struct strbuf err = STRBUF_INIT;
	int capture = -1, saved = -1, code, argc;
	char **argv;

	argc = repl_split(line, &argv);
	if (argc == 0) {
		free(argv);
		return -1;
	}
	result_reset(r);
	got_sigint = 0;
	r->s->stop_fg = 0;
	drain_sig_pipe();
	if (r->mode == REPL_SCRIPT) {
		fflush(stderr);
		capture = memfd_create("perch-stderr", MFD_CLOEXEC);
		saved = capture >= 0 ? dup(STDERR_FILENO) : -1;
		if (saved >= 0)
			dup2(capture, STDERR_FILENO);
	}
	if (argc < 0)
		code = log_err(PERCH_EXIT_USAGE, "unterminated quote in '%s'", line);
	else
		code = dispatch(r, argc, argv);
	if (saved >= 0) {
		struct stat st;

		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		close(saved);
		if (fstat(capture, &st) == 0 && st.st_size > 0) {
			char *buf = xmalloc((size_t)st.st_size + 1);
			ssize_t got = pread(capture, buf, (size_t)st.st_size, 0);

			buf[got > 0 ? got : 0] = 0;
			fputs(buf, stderr);
			last_error(buf, &err);
			free(buf);
		}
	}
	if (capture >= 0)
		close(capture);
	if (r->mode == REPL_SCRIPT) {
		struct strbuf notes = STRBUF_INIT;

		emit(r, lineno, argc > 0 ? argv[0] : "?", code, err.buf);
		/* a target that exited, a background recording that ended */
		if (session_take_notices(r->s, &notes))
			fprintf(stderr, "perch: %s", notes.buf);
		strbuf_release(&notes);
	}
	strbuf_release(&err);
	free(argv);
	return code;
}

/* ---- completion ---- */

static char **cands;
static size_t nr_cands, alloc_cands, cand_next;

static void cand_add(const char *s)
{
	for (size_t i = 0; i < nr_cands; i++)
		if (!strcmp(cands[i], s))
			return;
	ALLOC_GROW(cands, nr_cands + 1, alloc_cands);
	cands[nr_cands++] = xstrdup(s);
}

static void cand_add_word(void *arg, const char *word)
{
	(void)arg;
	cand_add(word);
}

static void cand_reset(void)
{
	for (size_t i = 0; i < nr_cands; i++)
		free(cands[i]);
	nr_cands = cand_next = 0;
}

static char *cand_generator(const char *text, int state)
{
	size_t len = strlen(text);

	if (!state)
		cand_next = 0;
	while (cand_next < nr_cands) {
		const char *c = cands[cand_next++];

		if (!strncmp(c, text, len))
			return xstrdup(c);
	}
	return NULL;
}

static struct repl *comp_repl;
static int comp_pids; /* the candidates are pids: show their names */

static void cand_processes(const char *text)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int digits = isdigit((unsigned char)text[0]);

	comp_pids = digits;
	while (d && (de = readdir(d)) && nr_cands < 4096) {
		char comm[64], *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0 || v == getpid())
			continue;
		if (digits) {
			cand_add(de->d_name);
		} else if (proc_task_comm((pid_t)v, (pid_t)v, comm, sizeof(comm)) == 0) {
			char argv0[256];

			cand_add(comm);
			proc_argv0((pid_t)v, argv0, sizeof(argv0));
			/* Android apps: the package name is argv[0] */
			if (argv0[0] && !strchr(argv0, '/') && strchr(argv0, '.'))
				cand_add(argv0);
		}
	}
	if (d)
		closedir(d);
}

static void cand_tids(struct repl *r)
{
	pid_t *tids = NULL;
	int n = r->s->attached ? proc_task_list(r->s->pid, &tids) : 0;
	char buf[16];

	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%d", tids[i]);
		cand_add(buf);
	}
	free(tids);
	comp_pids = 0;
}

static void display_pids(char **matches, int num, int max_length)
{
	rl_crlf();
	for (int i = 1; i <= num; i++) {
		char comm[64] = "";
		int pid = atoi(matches[i]);

		if (proc_task_comm(pid, pid, comm, sizeof(comm)) < 0)
			strcpy(comm, "?");
		fprintf(rl_outstream, "%-*s %s\n", max_length, matches[i], comm);
	}
	rl_forced_update_display();
}

static char **complete(const char *text, int start, int end)
{
	struct repl *r = comp_repl;
	char *head = strndup(rl_line_buffer, (size_t)start);
	const struct repl_cmd *rc;
	const struct cmd *c;
	char **argv = NULL;
	char **matches = NULL;
	int argc = repl_split(head ? head : "", &argv);

	free(head);
	cand_reset();
	comp_pids = 0;
	rl_attempted_completion_over = 1;
	rl_completion_display_matches_hook = NULL;
	if (argc < 0)
		goto out;
	if (argc == 0) {
		for (size_t i = 0; i < r->nr_table; i++)
			cand_add(r->table[i]->name);
		goto match;
	}
	c = repl_find_cmd(r, argv[0]);
	rc = c ? c->prompt : NULL;
	if (text[0] == '-' && rc && (rc->options || rc->complete_options)) {
		for (size_t i = 0; rc->options && rc->options[i]; i++)
			cand_add(rc->options[i]);
		if (rc->complete_options)
			rc->complete_options(cand_add_word, NULL);
		goto match;
	}
	/* its command line's, for a command run in a child or a face without options */
	if (text[0] == '-' && c && c->complete_options) {
		c->complete_options(cand_add_word, NULL);
		goto match;
	}
	if (!rc)
		goto files;
	if (rc->complete_args && rc->complete_args(argc, argv, cand_add_word, NULL))
		goto match;
	if (argc == 1 && rc->words) {
		for (size_t i = 0; rc->words[i]; i++)
			cand_add(rc->words[i]);
		goto match;
	}
	switch (rc->complete) {
	case REPL_COMPLETE_PROCESS:
		if (argc == 1)
			cand_processes(text);
		goto match;
	case REPL_COMPLETE_TID:
		if (argc == 1)
			cand_tids(r);
		goto match;
	case REPL_COMPLETE_COMMAND:
		for (size_t i = 0; i < r->nr_table; i++)
			cand_add(r->table[i]->name);
		goto match;
	case REPL_COMPLETE_FORMAT:
		if (argc == 1) {
			for (size_t i = 0; i < output_nr_formats; i++)
				cand_add(output_formats[i].name);
			matches = rl_completion_matches(text, cand_generator);
			if (matches)
				goto out;
		}
		goto files;
	case REPL_COMPLETE_FILE:
		goto files;
	default:
		goto out;
	}
match:
	if (comp_pids)
		rl_completion_display_matches_hook = display_pids;
	matches = rl_completion_matches(text, cand_generator);
	goto out;
files:
	matches = rl_completion_matches(text, rl_filename_completion_function);
out:
	free(argv);
	(void)end;
	return matches;
}

/* ---- history ---- */

/* $XDG_STATE_HOME/perch/history or ~/.local/state/perch/history (directories made); NULL
 * when there is no home. Malloc'ed. */
static char *history_path(void)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct strbuf sb = STRBUF_INIT;

	if (state && state[0] == '/') {
		strbuf_addstr(&sb, state);
	} else if (home && home[0]) {
		strbuf_addf(&sb, "%s/.local", home);
		mkdir(sb.buf, 0700);
		strbuf_addstr(&sb, "/state");
	} else {
		return NULL;
	}
	mkdir(sb.buf, 0700);
	strbuf_addstr(&sb, "/perch");
	mkdir(sb.buf, 0700);
	strbuf_addstr(&sb, "/history");
	return strbuf_detach(&sb, NULL);
}

/* ---- the prompt ---- */

static char *pending_line;
static int pending_eof, have_pending;

static void on_line(char *line)
{
	have_pending = 1;
	pending_eof = line == NULL;
	pending_line = line;
	/* the next line is read only after this one ran: readline re-installs then */
	rl_callback_handler_remove();
}

static void make_prompt(struct repl *r, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (r->color)
		strbuf_addstr(sb, "\001\033[1;32m\002perch\001\033[0m\002");
	else
		strbuf_addstr(sb, "perch");
	if (r->s->attached)
		strbuf_addf(sb, " %d (%s)", r->s->pid, r->s->comm);
	if (session_busy(r->s))
		strbuf_addstr(sb, " [recording]");
	strbuf_addstr(sb, "> ");
}

static void print_notices(struct repl *r, int prompt_shown)
{
	struct strbuf sb = STRBUF_INIT;

	if (!session_take_notices(r->s, &sb)) {
		strbuf_release(&sb);
		return;
	}
	if (prompt_shown)
		rl_clear_visible_line();
	fputs(sb.buf, stdout);
	fflush(stdout);
	if (prompt_shown)
		rl_forced_update_display();
	strbuf_release(&sb);
}

static void add_to_history(const char *line, const char *path)
{
	HIST_ENTRY *last = history_length ? history_get(history_base + history_length - 1) : NULL;

	if (last && !strcmp(last->line, line))
		return;
	add_history(line);
	if (path)
		append_history(1, path);
}

static int interactive_loop(struct repl *r)
{
	char *hist = history_path();
	struct strbuf prompt = STRBUF_INIT;
	int code = PERCH_EXIT_OK;

	rl_readline_name = "perch";
	rl_catch_signals = 0;
	comp_repl = r;
	rl_attempted_completion_function = complete;
	rl_completer_quote_characters = "\"'";
	if (hist) {
		struct stat st;

		using_history();
		if (stat(hist, &st) == 0)
			read_history(hist);
		else
			write_history(hist);
	}
	while (!r->quit && !got_quit) {
		fd_set fds;
		int nfds;

		make_prompt(r, &prompt);
		have_pending = 0;
		rl_callback_handler_install(prompt.buf, on_line);
		while (!have_pending && !got_quit) {
			FD_ZERO(&fds);
			FD_SET(STDIN_FILENO, &fds);
			FD_SET(r->s->notify[0], &fds);
			nfds = r->s->notify[0];
			if (sig_pipe[0] >= 0) {
				FD_SET(sig_pipe[0], &fds);
				if (sig_pipe[0] > nfds)
					nfds = sig_pipe[0];
			}
			if (select(nfds + 1, &fds, NULL, NULL, NULL) < 0) {
				if (errno != EINTR)
					break;
				FD_ZERO(&fds);
			}
			if (got_sigint) {
				/* Ctrl-C at the prompt: drop the line, a fresh prompt */
				got_sigint = 0;
				r->s->stop_fg = 0;
				drain_sig_pipe();
				rl_free_line_state();
				rl_callback_sigcleanup();
				rl_replace_line("", 0);
				fputs("^C\n", stdout);
				rl_on_new_line();
				rl_redisplay();
				continue;
			}
			if (FD_ISSET(r->s->notify[0], &fds)) {
				print_notices(r, 1);
				/* the prompt shows whether a recording runs */
				make_prompt(r, &prompt);
				rl_set_prompt(prompt.buf);
				rl_forced_update_display();
			}
			if (FD_ISSET(STDIN_FILENO, &fds))
				rl_callback_read_char();
		}
		if (!have_pending) {
			rl_callback_handler_remove();
			break;
		}
		if (pending_eof) {
			/* Ctrl-D: leave like quit */
			putchar('\n');
			break;
		}
		if (pending_line[strspn(pending_line, " \t")])
			add_to_history(pending_line, hist);
		run_line(r, pending_line, 0);
		/* a Ctrl-C that ended the command is spent */
		got_sigint = 0;
		r->s->stop_fg = 0;
		drain_sig_pipe();
		free(pending_line);
		pending_line = NULL;
		fflush(stdout);
		print_notices(r, 0);
	}
	if (hist)
		history_truncate_file(hist, REPL_HISTORY_MAX);
	free(hist);
	strbuf_release(&prompt);
	return code;
}

/* Scripted mode: one result per line; the first failure ends the script (its code is the
 * exit status) unless --keep-going (then the first failure's code is still returned). */
static int script_loop(struct repl *r, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, first_fail = 0;

	while (!r->quit && !got_quit && getline(&line, &cap, in) >= 0) {
		int code;

		lineno++;
		code = run_line(r, line, lineno);
		if (code > 0 && !first_fail) {
			first_fail = code;
			if (!r->keep_going)
				break;
		}
	}
	free(line);
	return first_fail;
}

/* ---- entry points ---- */

static void repl_init(struct repl *r, enum repl_mode mode, const struct cmd *const *table,
		      size_t nr_table)
{
	const char *term = getenv("TERM");

	memset(r, 0, sizeof(*r));
	r->mode = mode;
	r->table = table;
	r->nr_table = nr_table;
	record_opts_init(&r->defaults);
	strbuf_init(&r->json, 0);
	strbuf_init(&r->kv, 0);
	strbuf_init(&r->text, 0);
	/* escape codes only for a terminal that understands them (adb shell -t may be dumb) */
	r->color = mode != REPL_SCRIPT && isatty(STDOUT_FILENO) && term && term[0] &&
		   strcmp(term, "dumb") && !getenv("NO_COLOR");
}

static void repl_release(struct repl *r)
{
	for (size_t i = 0; i < r->nr_table; i++)
		if (r->table[i]->prompt && r->table[i]->prompt->release)
			r->table[i]->prompt->release(r);
	session_free(r->s);
	sig_session = NULL;
	strbuf_release(&r->json);
	strbuf_release(&r->kv);
	strbuf_release(&r->text);
	record_opts_release(&r->defaults);
}

static const char repl_usage[] =
    "usage: perch [-p PID|NAME] [-x FILE] [--json] [--keep-going]\n"
    "\n"
    "Without a command, perch opens a prompt (on a terminal) or reads commands from stdin.\n"
    "\n"
    "  -p, --pid PID|NAME  attach to this process first (a pid, a process name or an\n"
    "                      Android package name)\n"
    "  -x, --script FILE   run the commands in FILE ('-' for stdin): no prompt, one result\n"
    "                      line per command\n"
    "      --json          scripted mode: one JSON object per command\n"
    "      --keep-going    scripted mode: run every command even after a failure (the exit\n"
    "                      status is still the first failure's)\n"
    "  -v, --verbose       more messages\n"
    "\n"
    "Type 'help' at the prompt for the commands.\n";

int repl_main(int argc, char **argv, const struct cmd *const *table, size_t nr_table)
{
	const char *script = NULL, *target = NULL;
	int json = 0, keep_going = 0, code = PERCH_EXIT_OK;
	enum repl_mode mode;
	struct repl r;
	FILE *in = stdin;
	sigset_t old;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((!strcmp(a, "-p") || !strcmp(a, "--pid")) && i + 1 < argc) {
			target = argv[++i];
		} else if ((!strcmp(a, "-x") || !strcmp(a, "--script")) && i + 1 < argc) {
			script = argv[++i];
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--keep-going")) {
			keep_going = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			log_level++;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(repl_usage, stdout);
			return PERCH_EXIT_OK;
		} else {
			log_err(0, "unknown or incomplete option '%s'", a);
			fprintf(stderr, "\n%s", repl_usage);
			return PERCH_EXIT_USAGE;
		}
	}
	if (script && strcmp(script, "-")) {
		in = fopen(script, "r");
		if (!in)
			return log_errno(PERCH_EXIT_USAGE, "cannot open script %s", script);
	}
	mode = script || json || !isatty(STDIN_FILENO) ? REPL_SCRIPT : REPL_TTY;
	repl_init(&r, mode, table, nr_table);
	r.json_mode = json;
	r.keep_going = keep_going;

	session_block_signals(&old);
	r.s = session_new();
	if (!r.s) {
		log_errno(-errno, "cannot start the session thread");
		code = PERCH_EXIT_FATAL;
		goto out;
	}
	signals_setup(r.s);
	if (target) {
		struct strbuf line = STRBUF_INIT;

		strbuf_addstr(&line, "attach ");
		json_add_str(&line, target);
		code = run_line(&r, line.buf, 0);
		strbuf_release(&line);
		if (code && (mode == REPL_TTY || !keep_going))
			goto out;
	}
	if (mode == REPL_TTY)
		code = interactive_loop(&r);
	else {
		int ret = script_loop(&r, in);

		code = code ? code : ret;
	}
out:
	if (r.s) {
		if (r.s->attached && mode == REPL_TTY)
			printf("detached from %d (%s)\n", r.s->pid, r.s->comm);
		repl_release(&r);
	}
	if (in != stdin)
		fclose(in);
	if (got_quit && !code)
		code = 128 + SIGTERM;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return code;
}

int repl_cli_run(const struct cmd *const *table, size_t nr_table, const struct cmd *c, int argc,
		 char **argv)
{
	const char *name = c->name;
	const struct repl_cmd *rc = c->prompt;
	const char *target = NULL;
	char **av = xcalloc((size_t)argc + 1, sizeof(*av));
	struct repl r;
	int n = 0, code;
	sigset_t old;

	for (int i = 0; i < argc; i++) {
		if ((!strcmp(argv[i], "-p") || !strcmp(argv[i], "--pid")) && i + 1 < argc)
			target = argv[++i];
		else if (!strncmp(argv[i], "--pid=", 6))
			target = argv[i] + 6;
		else
			av[n++] = argv[i];
	}
	for (int i = 1; i < n; i++) {
		if (!strcmp(av[i], "-h") || !strcmp(av[i], "--help")) {
			cmd_print_help(c, stdout);
			free(av);
			return PERCH_EXIT_OK;
		}
	}
	if (!target && rc->needs_target) {
		free(av);
		return log_err(PERCH_EXIT_USAGE,
			       "give the process with -p PID|NAME (see perch %s "
			       "--help)",
			       name);
	}
	repl_init(&r, REPL_CLI, table, nr_table);
	session_block_signals(&old);
	r.s = session_new();
	if (!r.s) {
		free(av);
		log_errno(-errno, "cannot start the session thread");
		return PERCH_EXIT_FATAL;
	}
	signals_setup(r.s);
	code = PERCH_EXIT_OK;
	if (target) {
		char *aargv[] = {"attach", (char *)target, NULL};

		code = dispatch(&r, 2, aargv);
	}
	if (!code)
		code = dispatch(&r, n, av);
	repl_release(&r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(av);
	return code;
}
