/* `perch record`: attach to a process (or launch one), sample it, write the profile. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "perch/base/fdlimit.h"
#include "perch/base/log.h"
#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/cli/repl.h"
#include "perch/out/output.h"
#include "perch/profile/profile.h"
#include "perch/record/procwait.h"
#include "perch/record/record-core.h"
#include "perch/sample/sampler.h"
#include "perch/sample/tracee.h"

static const char record_synopsis[] =
    "usage: perch record [options] -p PID[,PID...]|NAME\n"
    "       perch record [options] --app NAME\n"
    "       perch record [options] --wait NAME\n"
    "       perch record [options] -- PROGRAM [ARGS...]\n"
    "\n"
    "Sample the stacks of every thread of a running process (-p), of a process as it\n"
    "starts (--wait) or of a program perch starts, and write them as folded stacks.\n"
    "\n";

static const char record_notes[] =
    "\n"
    "Exit status: 0 ok, 1 finished with per-sample errors, 2 fatal error or no sample at\n"
    "all, 64 usage; with PROGRAM, its own exit status (128+N if killed by signal N), or 2\n"
    "when it exited 0 and nothing was sampled.\n";

static void record_help(struct strbuf *sb)
{
	strbuf_addstr(sb, record_synopsis);
	record_opts_help(sb, RECORD_PARSE_CLI);
	strbuf_addstr(sb, record_notes);
}

static int second_interrupt_pending(void)
{
	sigset_t pending;

	sigpending(&pending);
	return sigismember(&pending, SIGINT);
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 0;
}

/* The recording holds no sample: say why, from what the sampler counted. The exit code. */
static int no_samples(const struct record_core *rc, int *empty)
{
	char why[512];

	*empty = 1;
	record_core_why_empty(rc, why, sizeof(why));
	log_err(0, "no samples: %s", why);
	return PERCH_EXIT_FATAL;
}

/* Something the recording goes to: an -o, or what --top and --verify print (the summary is
 * printed anyway: not a product of its own). */
static int has_sink(const struct record_opts *o)
{
	return o->nr_outputs || o->top || o->verify;
}

/* perch stopped sampling (a signal, -d) while the program it launched runs on: it waits
 * for the program's exit, whose status it returns. Say so unless the program ends at once. */
static void say_waiting(const struct record_core *rc, pid_t pid)
{
	siginfo_t si;

	for (int i = 0; i < 20; i++) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid)
			return;
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	fprintf(stderr,
		"perch: recording done; waiting for %s (pid %d) to exit, as it runs on without "
		"perch ('kill %d' ends it)\n",
		path_base(rc->o.argv[0]), (int)pid, (int)pid);
}

/* -p NAME (--pid NAME, --pid=NAME, -pNAME) before the options are read: the pid of the one
 * process NAME names, found as top, threads and maps find theirs (cmd_find_pid()); a
 * PID[,PID...] list stays as it is. Words of @argv replaced (the new ones in @keep[], for the
 * caller to free). 0, or the exit code with the message printed. */
static int resolve_pid_names(int argc, char **argv, char **keep)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *prefix = "", *val = NULL;
		int slot = i, code;
		pid_t pid;

		if ((!strcmp(argv[i], "-p") || !strcmp(argv[i], "--pid")) && i + 1 < argc)
			val = argv[slot = ++i];
		else if (!strncmp(argv[i], "--pid=", 6))
			val = argv[i] + strlen(prefix = "--pid=");
		else if (!strncmp(argv[i], "-p", 2) && argv[i][2])
			val = argv[i] + strlen(prefix = "-p");
		if (!val || !val[0] || strspn(val, "0123456789,") == strlen(val))
			continue;
		code = cmd_find_pid(val, &pid);
		if (code)
			return code;
		keep[slot] = xasprintf("%s%d", prefix, (int)pid);
		argv[slot] = keep[slot];
	}
	return 0;
}

/* ---- --wait NAME ---- */

static void wait_ready(void *arg, const struct procwait_result *res)
{
	const struct record_opts *o = arg;

	if (o->quiet)
		return;
	fprintf(stderr, "perch: waiting for a process named '%s' (%s)", o->wait_name,
		res->how == PROCWAIT_NETLINK ? "kernel process events" : "polling /proc");
	if (res->ignored)
		fprintf(stderr, "; %zu already running left alone (pid %d)", res->ignored,
			(int)res->ignored_pid);
	fputs("\n", stderr);
}

/* PERCH_WAIT_POLL=proc[:US]: poll /proc (every US microseconds) even when process events are
 * available (the benchmark and the tests compare both): sets @no_netlink and @poll_us. */
static void wait_poll_env(int *no_netlink, unsigned int *poll_us)
{
	const char *poll = getenv("PERCH_WAIT_POLL");

	if (poll && !strncmp(poll, "proc", 4)) {
		*no_netlink = 1;
		if (poll[4] == ':')
			*poll_us = (unsigned int)strtoul(poll + 5, NULL, 10);
	}
}

/* Wait for the process of --wait, then attach to it. 0, or the exit code. */
static int wait_and_attach(struct record_core *rc, struct tracee *t, struct procwait_result *res)
{
	sigset_t stop;
	struct procwait_opts po = {.name = rc->o.wait_name,
				   .timeout_s = rc->o.wait_timeout,
				   .stop = &stop,
				   .ready = wait_ready,
				   .arg = &rc->o};
	int ret;

	wait_poll_env(&po.no_netlink, &po.poll_us);
	/* from the process event to the first tick, perch should not wait for a CPU behind a
	 * busy host: real-time priority when allowed (threads started meanwhile do not inherit
	 * it; sampler_run() takes its own and ends in SCHED_OTHER) */
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK,
			       &(struct sched_param){.sched_priority = 1}) < 0)
		log_debug("waiting without real-time priority: %s", strerror(errno));
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	ret = procwait_run(&po, res);
	if (ret == -EINTR) {
		log_err(0, "interrupted while waiting for '%s': nothing recorded", po.name);
		return 128 + res->signal;
	}
	if (ret == -ETIMEDOUT)
		return log_err(0, "no new process named '%s' started within %g s", po.name,
			       po.timeout_s),
		       PERCH_EXIT_FATAL;
	if (ret == -EPERM)
		log_err(0, "process %d is named '%s' but perch could not attach to it within %g s",
			(int)res->pid, po.name, po.timeout_s);
	else if (ret < 0)
		return log_errno(ret, "cannot wait for '%s'", po.name), PERCH_EXIT_FATAL;
	/* (on -EPERM the attach says why) */
	ret = tracee_add_pid(t, res->pid);
	return ret < 0 ? PERCH_EXIT_FATAL : 0;
}

static double ms_between(uint64_t from, uint64_t to)
{
	return to >= from ? (double)(to - from) / 1e6 : -(double)(from - to) / 1e6;
}

/* The summary lines of --wait: how long it waited, and when the first sample came. */
static void print_wait_summary(const struct record_core *rc, const struct procwait_result *res,
			       uint64_t attached_ns)
{
	fprintf(stderr, "perch: waited %.3f s for '%s': pid %d, found by %s\n",
		ms_between(res->start_ns, res->found_ns) / 1e3, rc->o.wait_name, (int)res->pid,
		res->how == PROCWAIT_NETLINK ? "a kernel process event (times are the kernel's)"
					     : "polling /proc (times from the last poll before "
					       "it was seen: upper bounds)");
	if (res->denied)
		fprintf(stderr,
			"perch:   not attachable for %.1f ms (%u checks): not yet the "
			"app's or not dumpable\n",
			ms_between(res->found_ns, res->ready_ns), res->denied);
	/* (-v: the benchmark compares it with the target's own clock) */
	log_info("first sample at CLOCK_MONOTONIC %llu ns, process appeared at %llu ns",
		 (unsigned long long)rc->first_sample_ns, (unsigned long long)res->appeared_ns);
	if (rc->first_sample_ns)
		fprintf(stderr,
			"perch:   first sample %.1f ms after the process appeared "
			"(attached after %.1f ms)\n",
			ms_between(res->appeared_ns, rc->first_sample_ns),
			ms_between(res->appeared_ns, attached_ns));
	else
		fprintf(stderr,
			"perch:   no sample (attached %.1f ms after the process "
			"appeared)\n",
			ms_between(res->appeared_ns, attached_ns));
}

/* --app NAME: watch for the app's processes that start from now on (before listing those
 * running: none is missed in between); sampler_opts.join attaches to them. */
static struct procwatch *app_watch(const char *name)
{
	struct procwatch_opts wo = {.name = name, .app = 1};
	struct procwatch *w;

	wait_poll_env(&wo.no_netlink, &wo.poll_us);
	w = procwatch_open(&wo);
	log_info("watching for new processes of %s (%s)", name,
		 procwatch_result(w)->how == PROCWAIT_NETLINK ? "kernel process events"
							      : "polling /proc");
	return w;
}

static int app_join(void *arg, uint64_t now, pid_t *pid)
{
	return procwatch_next(arg, now, pid);
}

/* -p PID[,PID...] or --app NAME: every process into one recording. A process of the app
 * that exits before perch reaches it is left out; any other failure fails the whole. */
static int attach_pids(const struct record_opts *o, struct tracee *t)
{
	pid_t *found = NULL;
	const pid_t *pids = o->pids;
	int nr = (int)o->nr_pids, ret = 0, attached = 0;

	if (o->app) {
		nr = procwait_list_app(o->app, &found);
		if (nr < 0)
			return log_errno(nr, "cannot list the processes in /proc");
		if (!nr)
			return log_err(-ESRCH,
				       "no process named '%s' (or '%s:...') is running; --wait %s "
				       "waits for one to start",
				       o->app, o->app, o->app);
		pids = found;
	}
	for (int i = 0; i < nr && ret >= 0; i++) {
		ret = tracee_add_pid(t, pids[i]);
		if (ret == -ESRCH && o->app) {
			log_info("process %d of %s exited before perch attached", pids[i], o->app);
			ret = 0;
			continue;
		}
		attached += ret >= 0;
	}
	if (ret >= 0 && !attached)
		ret = log_err(-ESRCH, "every process of %s exited before perch attached", o->app);
	/* (on failure those attached already are let go as the tracer thread exits) */
	if (ret >= 0 && nr > 1)
		log_info("attached to %d processes", attached);
	free(found);
	return ret;
}

/* What the tracer thread (tracee_run_tracer()) does and hands back: attach, sample, and let
 * the target go by exiting. */
struct record_job {
	struct record_core *rc;
	struct tracee *t;
	struct procwait_result wres;
	uint64_t attached_ns;
	int sampled;   /* sampler_run() ran (its result in @ret) */
	int ret, code; /* attach failed: @code is the exit code */
};

/* Attach (or launch, or wait for the process), then sample until the end; on the tracer
 * thread, whose exit detaches everything. */
static int record_trace(void *arg)
{
	struct record_job *job = arg;
	struct record_core *rc = job->rc;
	struct tracee *t = job->t;
	struct procwatch *watch = NULL;
	struct sampler_opts so;
	int ret;

	if (rc->o.wait_name) {
		struct timespec ts;

		job->code = wait_and_attach(rc, t, &job->wres);
		ret = job->code ? -1 : 0;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		job->attached_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	} else {
		if (rc->o.app)
			watch = app_watch(rc->o.app);
		ret = rc->o.argv ? tracee_add_program(t, rc->o.argv) : attach_pids(&rc->o, t);
		job->code = PERCH_EXIT_FATAL;
	}
	if (ret < 0)
		goto out;
	job->code = PERCH_EXIT_OK;
	log_info("attached to %d (%zu threads)", t->pid, t->nr_threads);
	if (record_core_setup(rc, t) < 0) {
		/* a launched program runs on, as if perch had not been there */
		record_core_discard(rc);
		job->code = PERCH_EXIT_FATAL;
		goto out;
	}
	record_core_sampler_opts(rc, &so);
	so.join = watch ? app_join : NULL;
	so.join_arg = watch;
	record_core_start(rc);
	job->ret = sampler_run(t, rc->arch, &so, &record_core_ops, rc, rc->st);
	job->sampled = 1;
	record_core_stop(rc);
out:
	procwatch_close(watch);
	tracee_let_go(t);
	return 0;
}

static int record_main(int argc, char **argv)
{
	struct record_core rc;
	struct tracee t = {0};
	struct record_job job = {.rc = &rc, .t = &t};
	int ret, code = PERCH_EXIT_OK, empty = 0;
	sigset_t old;

	record_core_init(&rc);
	ret = record_opts_parse(&rc.o, argc, argv, RECORD_PARSE_CLI);
	if (ret == RECORD_PARSE_HELP || ret < 0) {
		cmd_print_help(&cmd_record, ret < 0 ? stderr : stdout);
		record_core_release(&rc);
		return ret < 0 ? PERCH_EXIT_USAGE : PERCH_EXIT_OK;
	}
	if (!has_sink(&rc.o)) {
		log_err(0, "nothing to write: give -o FILE (.svg, .html, .folded, .perch, ...) or "
			   "--top N");
		cmd_print_help(&cmd_record, stderr);
		record_core_release(&rc);
		return PERCH_EXIT_USAGE;
	}
	ret = record_core_open(&rc);
	if (ret < 0) {
		record_core_release(&rc);
		return ret == -EINVAL ? PERCH_EXIT_USAGE : PERCH_EXIT_FATAL;
	}
	/* (blocked in every thread perch starts: the sampler waits for them itself) */
	sampler_block_signals(&old);
	/* a program's children are followed unless --no-follow; a running process's only with
	 * --follow-children. Short-lived children are often gone before their samples are named:
	 * their maps are taken as they exit */
	tracee_init(&t, rc.o.follow > 0 || (rc.o.follow < 0 && rc.o.argv)
			    ? TRACEE_FOLLOW | TRACEE_EXIT_STOPS
			    : 0);
	ret = tracee_run_tracer(record_trace, &job);
	if (ret < 0) {
		log_errno(ret, "cannot start the tracer thread");
		code = PERCH_EXIT_FATAL;
		goto out;
	}
	if (!job.sampled) {
		code = job.code;
		record_core_discard(&rc);
		goto out;
	}
	ret = job.ret;
	if (ret < 0)
		log_errno(ret, "sampling stopped");
	/* (a first one while perch finishes after the target exited or the duration ran out is
	 * one, not two: the recording is written) */
	if (rc.st->stop_reason == SAMPLER_STOP_SIGNAL && second_interrupt_pending()) {
		log_err(0, "interrupted twice: detached, no output written");
		code = 128 + SIGINT;
		goto out;
	}
	if (!rc.o.quiet && (rc.o.summary || log_level >= LOG_LEVEL_INFO))
		record_core_print_summary(&rc, &t.stats, "perch: ", 1, stderr);
	else if (!rc.o.quiet)
		record_core_print_brief(&rc, "perch: ", stderr);
	if (!rc.o.quiet && rc.o.wait_name)
		print_wait_summary(&rc, &job.wres, job.attached_ns);
	record_core_print_warnings(&rc, stderr);
	if (fdlimit_failures())
		log_warn(0,
			 "%lu times a file perch needed to name frames (a program's or library's) "
			 "could not be opened: out of file descriptors (see 'ulimit -Hn')",
			 fdlimit_failures());
	record_core_finish(&rc);
	if (record_core_write_outputs(&rc, rc.o.quiet ? NULL : stderr) < 0)
		code = PERCH_EXIT_FATAL;
	if (rc.o.top) {
		struct output_opts oo = {.lines = rc.o.lines, .top = rc.o.top};

		fflush(stdout);
		out_top_write(rc.p, &oo, stderr);
	} else if (!rc.o.quiet && !rc.o.summary && profile_total_samples(rc.p)) {
		struct strbuf top = STRBUF_INIT;

		out_top_brief(rc.p, 5, &top);
		fprintf(stderr, "perch: hottest (self): %s\n", top.buf);
		strbuf_release(&top);
	}
	if (ret < 0)
		code = PERCH_EXIT_FATAL;
	else if (record_core_served_pct(&rc) < RECORD_SERVED_WARN_PCT && !rc.o.allow_partial &&
		 profile_total_samples(record_core_profile(&rc)))
		code =
		    log_err(PERCH_EXIT_PARTIAL,
			    "a partial recording: perch served %.1f%% of its ticks (under %g%%); "
			    "its outputs are written, --allow-partial accepts them with exit 0",
			    record_core_served_pct(&rc), RECORD_SERVED_WARN_PCT);
	else if (fdlimit_failures() && !rc.o.allow_partial &&
		 profile_total_samples(record_core_profile(&rc)))
		code = log_err(PERCH_EXIT_PARTIAL,
			       "a partial recording: frames left unnamed for lack of file "
			       "descriptors; its outputs are written, --allow-partial accepts them "
			       "with exit 0");
	else if (!profile_total_samples(record_core_profile(&rc)))
		code = no_samples(&rc, &empty);
	else if (code == PERCH_EXIT_OK && (rc.st->err_regs || rc.st->err_stack))
		code = PERCH_EXIT_SAMPLE_ERRORS;
	if (rc.o.argv && (code != PERCH_EXIT_FATAL || empty)) {
		int status;

		/* launched: the program's own status, once it is done */
		/* a signal sent to perch alone (not the terminal's, which the program got too)
		 * is passed on, so the program ends as it would have */
		if (t.alive && rc.st->stop_reason == SAMPLER_STOP_SIGNAL &&
		    (rc.st->signal_code == SI_USER || rc.st->signal_code == SI_QUEUE))
			kill(t.pid, rc.st->signal);
		if (t.alive && !rc.o.quiet)
			say_waiting(&rc, t.pid);
		status = exit_code_of(tracee_wait_exit(&t));
		/* a recording without a sample fails even when the program did not, a partial one
		 * when the program did not fail itself */
		code = empty && !status			       ? PERCH_EXIT_FATAL
		       : !status && code == PERCH_EXIT_PARTIAL ? PERCH_EXIT_PARTIAL
							       : status;
	}
out:
	record_core_release(&rc);
	tracee_release(&t);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return code;
}

static int record_run(int argc, char **argv)
{
	char **keep = xcalloc((size_t)argc + 1, sizeof(*keep));
	int code = resolve_pid_names(argc, argv, keep);

	if (!code)
		code = record_main(argc, argv);
	for (int i = 0; i < argc; i++)
		free(keep[i]);
	free(keep);
	return code;
}

const struct cmd cmd_record = {
    .name = "record",
    .summary = "sample a process's stacks and write a profile",
    .help = record_help,
    .run = record_run,
    .prompt = &repl_record,
};
