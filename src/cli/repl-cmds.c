/* The session commands of the REPL and scripted mode (attach, detach, threads, maps, dump,
 * record, top, report, save, set, help, quit). Everything that uses ptrace runs as a job on
 * the session thread; /proc readers run on the caller's thread. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/art/art-thread.h"
#include "perch/art/art.h"
#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/cli/repl.h"
#include "perch/out/output.h"
#include "perch/proc/cpustat.h"
#include "perch/proc/proc-maps.h"
#include "perch/proc/proc-task.h"
#include "perch/proc/waitreason.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"
#include "perch/record/dump.h"
#include "perch/record/record-core.h"
#include "perch/record/record-opts.h"
#include "perch/record/session.h"
#include "perch/sample/sampler.h"
#include "perch/sample/tracee.h"
#include "perch/symbols/symbolize.h"
#include "perch/unwind/resolve.h"
#include "perch/unwind/unwind.h"

#define THREADS_WINDOW_MS 250 /* CPU % of `threads` is measured over this long */
#define TOP_ROWS	  20
#define FIND_MAX	  16

/* A recording (record, top): the recording core of `perch record` (record-core.h), so both
 * sample, name threads, add wait frames, watch stalls and write outputs the same way. */
struct repl_rec {
	struct repl *r;
	struct record_core rc;
	pid_t pid;
	char comm[64];
	int background;
	char *summary; /* the summary lines once it ended (record-core), or NULL */
	uint64_t start_ns;
	volatile int running;
	int ret;
};

/* ---- recordings ---- */

static void rec_free(struct repl_rec *rec)
{
	if (!rec)
		return;
	record_core_release(&rec->rc);
	free(rec->summary);
	free(rec);
}

/* When the prompt ends: stop and forget the recording. */
static void record_release(struct repl *r)
{
	if (r->s && session_busy(r->s)) {
		r->s->stop_bg = 1;
		session_wait(r->s, NULL);
	}
	rec_free(r->rec);
	r->rec = NULL;
}

/* A recording with the `set` defaults (its options are parsed over them). */
static struct repl_rec *rec_new(struct repl *r)
{
	struct repl_rec *rec = xcalloc(1, sizeof(*rec));

	rec->r = r;
	record_core_init(&rec->rc);
	record_opts_release(&rec->rc.o);
	record_opts_copy(&rec->rc.o, &r->defaults);
	/* every format can be saved later, including the ones that need samples in order */
	rec->rc.keep_samples = 1;
	rec->start_ns = monotime_ns();
	rec->pid = r->s->pid;
	snprintf(rec->comm, sizeof(rec->comm), "%s", r->s->comm);
	return rec;
}

/* Session thread: the profile and its helpers for the attached target. 0, or -ENOEXEC for a
 * target perch cannot profile (message printed). */
static int rec_setup(struct session *s, struct repl_rec *rec)
{
	rec->pid = s->pid;
	snprintf(rec->comm, sizeof(rec->comm), "%s", s->comm);
	if (record_core_setup(&rec->rc, &s->t) < 0)
		return -ENOEXEC;
	if (!profile_meta(rec->rc.p, "comm"))
		profile_set_meta(rec->rc.p, "comm", rec->comm);
	rec->start_ns = monotime_ns();
	return 0;
}

static const char *stop_reason(const struct sampler_stats *st)
{
	switch (st->stop_reason) {
	case SAMPLER_STOP_DURATION:
		return "duration";
	case SAMPLER_STOP_EXIT:
		return "exit";
	case SAMPLER_STOP_SIGNAL:
	case SAMPLER_STOP_REQUEST:
		return "request";
	case SAMPLER_STOP_ERROR:
		return "error";
	}
	return "running";
}

static int record_job(struct session *s, void *arg)
{
	struct repl_rec *rec = arg;
	struct record_core *rc = &rec->rc;
	struct sampler_opts so;
	int ret, code = PERCH_EXIT_OK;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!s->attached) {
		record_core_discard(rc);
		rec->running = 0;
		return log_err(PERCH_EXIT_FATAL, "the target is gone");
	}
	if (rec_setup(s, rec) < 0) {
		record_core_discard(rc);
		rec->running = 0;
		return PERCH_EXIT_FATAL;
	}
	record_core_sampler_opts(rc, &so);
	so.stop = rec->background ? &s->stop_bg : &s->stop_fg;
	so.no_signals = 1;
	record_core_start(rc);
	ret = sampler_run(&s->t, rc->arch, &so, &record_core_ops, rc, rc->st);
	record_core_stop(rc);
	if (ret < 0) {
		log_errno(ret, "sampling stopped");
		code = PERCH_EXIT_FATAL;
	}
	/* the summary needs the tracee's statistics: before a gone target is forgotten */
	f = open_memstream(&buf, &len);
	if (f) {
		record_core_print_summary(rc, &s->t.stats, "", 0, f);
		fclose(f);
		rec->summary = buf;
	}
	session_target_gone(s);
	record_core_finish(rc);
	if (record_core_write_outputs(rc, NULL) < 0)
		code = PERCH_EXIT_FATAL;
	if (!code && (rc->st->err_regs || rc->st->err_stack))
		code = PERCH_EXIT_SAMPLE_ERRORS;
	rec->ret = code;
	rec->running = 0;
	if (rec->background && rc->st->stop_reason != SAMPLER_STOP_REQUEST)
		session_notice(s, "recording of %d ended (%s): %llu samples in %.2f s", rec->pid,
			       stop_reason(rc->st),
			       (unsigned long long)profile_total_samples(rc->p), rc->st->elapsed_s);
	return code;
}

/* The fields and lines that describe a recording. */
static void rec_report(struct repl *r, const struct repl_rec *rec, int with_summary)
{
	const struct record_core *rc = &rec->rc;
	int running = rec->running;
	double elapsed =
	    running ? (double)(monotime_ns() - rec->start_ns) / 1e9 : rc->st->elapsed_s;
	/* while it runs, the ptrace thread's count (read without the worker's profile) */
	unsigned long long samples = running || !rc->p
					 ? __atomic_load_n(&rc->st->samples, __ATOMIC_RELAXED)
					 : profile_total_samples(rc->p);

	repl_field_bool(r, "running", running);
	repl_field_int(r, "pid", rec->pid);
	repl_field_double(r, "elapsed_s", elapsed);
	repl_field_int(r, "samples", (long long)samples);
	repl_field_str(r, "mode", rc->o.cpu_mode ? "cpu" : "wall");
	repl_field_double(r, "hz", rc->o.hz);
	if (!running) {
		repl_field_int(r, "threads", rc->p ? (long long)profile_nr_threads(rc->p) : 0);
		repl_field_str(r, "stop", stop_reason(rc->st));
	}
	if (rc->o.nr_outputs) {
		repl_array_begin(r, "outputs");
		for (int i = 0; i < rc->o.nr_outputs; i++)
			repl_field_str(r, NULL, rc->o.outputs[i].path);
		repl_array_end(r);
	}
	if (running) {
		repl_printf(r, "recording %d (%s): %.1f s, %llu samples so far\n", rec->pid,
			    rec->comm, elapsed, samples);
		return;
	}
	repl_printf(r,
		    "recorded %d (%s) for %.2f s at %g Hz (%s mode): %llu samples, %zu threads, "
		    "ended by %s\n",
		    rec->pid, rec->comm, elapsed, rc->o.hz, rc->o.cpu_mode ? "cpu" : "wall",
		    samples, rc->p ? profile_nr_threads(rc->p) : 0, stop_reason(rc->st));
	if (with_summary && rec->summary && !rc->o.quiet)
		repl_printf(r, "%s", rec->summary);
	for (int i = 0; i < rc->o.nr_outputs; i++)
		repl_printf(r, "wrote %s (%s)\n", rc->o.outputs[i].path,
			    rc->o.outputs[i].fmt->name);
}

/* ---- commands ---- */

static int c_attach(struct repl *r, int argc, char **argv)
{
	pid_t pids[FIND_MAX];
	int n, ret;

	if (argc != 2)
		return log_err(PERCH_EXIT_USAGE, "usage: attach PID|NAME");
	if (session_busy(r->s))
		return log_err(PERCH_EXIT_FATAL, "a recording is running: 'record stop' first");
	n = repl_find_process(argv[1], pids, FIND_MAX);
	if (n <= 0)
		return log_err(PERCH_EXIT_FATAL, "no process matches '%s'", argv[1]);
	if (n > 1) {
		/* an Android package has one process per user it runs under, and secondary
		 * pkg:name processes: show which is which */
		repl_array_begin(r, "candidates");
		repl_printf(r, "%8s  %-16s %8s %5s  %s\n", "PID", "NAME", "UID", "USER", "CMDLINE");
		for (int i = 0; i < n && i < FIND_MAX; i++) {
			struct repl_process pi;

			if (repl_process_info(pids[i], &pi) < 0) {
				snprintf(pi.comm, sizeof(pi.comm), "?");
				pi.cmdline[0] = 0;
				pi.uid = (uid_t)-1;
			}
			repl_object_begin(r);
			repl_field_int(r, "pid", pids[i]);
			repl_field_str(r, "comm", pi.comm);
			repl_field_str(r, "cmdline", pi.cmdline);
			repl_field_int(r, "uid", pi.uid == (uid_t)-1 ? -1 : (long long)pi.uid);
			repl_field_int(
			    r, "user",
			    pi.uid == (uid_t)-1 ? -1 : (long long)(pi.uid / REPL_ANDROID_PER_USER));
			repl_object_end(r);
			repl_printf(r, "%8d  %-16s %8lld %5lld  %s\n", pids[i], pi.comm,
				    pi.uid == (uid_t)-1 ? -1LL : (long long)pi.uid,
				    pi.uid == (uid_t)-1
					? -1LL
					: (long long)(pi.uid / REPL_ANDROID_PER_USER),
				    pi.cmdline);
		}
		repl_array_end(r);
		if (n > FIND_MAX)
			repl_printf(r, "(and %d more)\n", n - FIND_MAX);
		return log_err(PERCH_EXIT_USAGE, "%d processes match '%s': attach one by pid", n,
			       argv[1]);
	}
	/* attaching detaches from the current target first: a process that is not there (or
	 * not perch's to signal, so not to trace either) leaves the current target as it is */
	if (kill(pids[0], 0) < 0)
		return log_err(PERCH_EXIT_FATAL, "cannot attach to %d: %s%s", (int)pids[0],
			       errno == ESRCH ? "no such process" : strerror(errno),
			       r->s->attached ? " (the current target is kept)" : "");
	ret = session_attach(r->s, pids[0]);
	if (ret < 0)
		return PERCH_EXIT_FATAL;
	repl_field_int(r, "pid", r->s->pid);
	repl_field_str(r, "comm", r->s->comm);
	repl_field_int(r, "threads", (long long)r->s->t.nr_threads);
	/* perch threads/maps/top -p: a note on stderr, stdout holds the command's own output */
	if (r->mode == REPL_CLI)
		fprintf(stderr, "perch: attached to %d (%s), %zu threads\n", r->s->pid, r->s->comm,
			r->s->t.nr_threads);
	else
		repl_printf(r, "attached to %d (%s), %zu threads\n", r->s->pid, r->s->comm,
			    r->s->t.nr_threads);
	return PERCH_EXIT_OK;
}

static int c_detach(struct repl *r, int argc, char **argv)
{
	pid_t pid = r->s->pid;

	if (session_busy(r->s))
		return log_err(PERCH_EXIT_FATAL, "a recording is running: 'record stop' first");
	if (session_detach(r->s) < 0)
		return log_err(PERCH_EXIT_FATAL, "not attached");
	repl_field_int(r, "pid", pid);
	repl_printf(r, "detached from %d\n", pid);
	return PERCH_EXIT_OK;
}

static int c_threads(struct repl *r, int argc, char **argv)
{
	pid_t pid = r->s->pid, *tids = NULL;
	struct proc_stat *a, b;
	struct timespec ts = {0, THREADS_WINDOW_MS * 1000000L};
	int n = proc_task_list(pid, &tids);
	long tck = cpustat_clk_tck();
	unsigned int ncpu = cpustat_ncpus();

	if (n < 0) {
		log_errno(n, "cannot list the threads of %d", pid);
		return PERCH_EXIT_FATAL;
	}
	a = xcalloc((size_t)n + 1, sizeof(*a));
	for (int i = 0; i < n; i++)
		if (proc_stat_read(pid, tids[i], &a[i]) < 0)
			a[i].pid = 0;
	nanosleep(&ts, NULL);
	repl_field_int(r, "pid", pid);
	repl_array_begin(r, "threads");
	repl_printf(r, "%8s  %-16s %5s %6s\n", "TID", "NAME", "STATE", "CPU%");
	for (int i = 0; i < n; i++) {
		struct cpustat_task_usage u = {0};
		int ok = a[i].pid && proc_stat_read(pid, tids[i], &b) == 0;

		if (!ok)
			continue;
		cpustat_task_usage(&a[i], &b, THREADS_WINDOW_MS * 1000000ULL, tck, ncpu, &u);
		repl_object_begin(r);
		repl_field_int(r, "tid", tids[i]);
		repl_field_str(r, "name", b.comm);
		repl_field_str(r, "state", (char[]){b.state, 0});
		repl_field_double(r, "cpu", u.one_core);
		repl_object_end(r);
		repl_printf(r, "%8d  %-16s %5c %6.1f\n", tids[i], b.comm, b.state, u.one_core);
	}
	repl_array_end(r);
	free(a);
	free(tids);
	return PERCH_EXIT_OK;
}

static int c_maps(struct repl *r, int argc, char **argv)
{
	const char *filter = NULL;
	int exec_only = 0;
	struct proc_maps *m;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--exec") || !strcmp(argv[i], "-x"))
			exec_only = 1;
		else if (argv[i][0] == '-')
			return log_err(PERCH_EXIT_USAGE, "usage: maps [--exec] [SUBSTRING]");
		else
			filter = argv[i];
	}
	m = proc_maps_load(r->s->pid);
	if (!m) {
		log_errno(-errno, "cannot read the maps of %d", r->s->pid);
		return PERCH_EXIT_FATAL;
	}
	repl_array_begin(r, "maps");
	for (size_t i = 0; i < m->nr; i++) {
		const struct proc_map *pm = &m->maps[i];
		char prot[5] = {pm->prot & PROC_MAPS_PROT_READ ? 'r' : '-',
				pm->prot & PROC_MAPS_PROT_WRITE ? 'w' : '-',
				pm->prot & PROC_MAPS_PROT_EXEC ? 'x' : '-',
				pm->prot & PROC_MAPS_PROT_SHARED ? 's' : 'p', 0};

		if (exec_only && !(pm->prot & PROC_MAPS_PROT_EXEC))
			continue;
		if (filter && !strstr(pm->path, filter))
			continue;
		repl_object_begin(r);
		repl_field_hex(r, "start", pm->start);
		repl_field_hex(r, "end", pm->end);
		repl_field_str(r, "prot", prot);
		repl_field_int(r, "offset", (long long)pm->offset);
		repl_field_str(r, "path", pm->path);
		repl_object_end(r);
		repl_printf(r, "%012llx-%012llx %s %08llx %s%s\n", (unsigned long long)pm->start,
			    (unsigned long long)pm->end, prot, (unsigned long long)pm->offset,
			    pm->path, pm->deleted ? " (deleted)" : "");
	}
	repl_array_end(r);
	proc_maps_free(m);
	return PERCH_EXIT_OK;
}

/* dump: every thread (or one) held stopped together while snapshots are taken (dump.c), all
 * resumed, then unwound and named. */
struct dump_req {
	struct repl *r;
	pid_t only;
};

static void dump_frame(void *arg, const struct dump_frame *f)
{
	struct repl *r = arg;
	struct strbuf line = STRBUF_INIT;

	repl_object_begin(r);
	repl_field_str(r, "func", f->func);
	if (*f->detail)
		repl_field_str(r, "detail", f->detail);
	repl_field_str(r, "module", f->module);
	repl_field_hex(r, "pc", f->pc);
	if (f->file) {
		repl_field_str(r, "file", f->file);
		repl_field_int(r, "line", f->line);
	}
	if (f->inlined)
		repl_field_int(r, "inlined", 1);
	if (f->tailcall)
		repl_field_int(r, "tailcall", 1);
	repl_object_end(r);
	dump_frame_text(f, &line);
	repl_printf(r, "%s\n", line.buf);
	strbuf_release(&line);
}

static int dump_job(struct session *s, void *arg)
{
	struct dump_req *q = arg;
	struct repl *r = q->r;
	const struct perch_arch *arch = perch_arch_of_pid(s->pid);
	struct strbuf note = STRBUF_INIT;
	struct dump_thread *d;
	struct profile *p;
	struct symbolizer *sym;
	struct resolver *res;
	struct art_threads jts;
	size_t nr;
	int java;

	if (!arch)
		return PERCH_EXIT_FATAL;
	d = dump_threads(&s->t, q->only, NULL, 0, &nr);
	if (!d)
		return log_err(PERCH_EXIT_USAGE, "%d is not a thread of %d", q->only, s->pid);
	dump_collect(&s->t, arch, &d, &nr, q->only ? 0 : DUMP_NEW_THREADS);
	p = profile_new();
	sym = symbolizer_new(NULL, NULL);
	res = resolver_new(s->pid, arch, p, sym);
	/* ART's threads while they are held stopped (art-thread.h) */
	java = art_proc_threads(resolver_art(res), &jts);
	dump_resume(&s->t);
	session_target_gone(s);
	resolver_set_max_frames(res, UNWIND_DUMP_DEFAULT_FRAMES);
	repl_field_int(r, "pid", s->pid);
	repl_array_begin(r, "threads");
	for (size_t i = 0; i < nr; i++) {
		const char *text;
		int cut;

		repl_object_begin(r);
		repl_field_int(r, "tid", d[i].tid);
		repl_field_str(r, "name", d[i].name);
		repl_field_str(r, "state", (char[]){d[i].state, 0});
		repl_printf(r, "TID %d \"%s\" (%c)\n", d[i].tid, d[i].name, d[i].state);
		if (java == 0 && art_threads_find(&jts, d[i].tid)) {
			dump_java_text(art_threads_find(&jts, d[i].tid), &note);
			repl_field_str(r, "java", note.buf + strlen("java: "));
			repl_printf(r, "    %s\n", note.buf);
		}
		if (d[i].wait[0])
			repl_printf(r, "    %s\n", d[i].wait);
		repl_array_begin(r, "frames");
		cut = d[i].taken && dump_frames(p, res, &d[i], dump_frame, r);
		repl_array_end(r);
		if (d[i].wait[0])
			repl_field_str(r, "wait", d[i].wait);
		if (cut)
			repl_field_int(r, "truncated", 1);
		text = dump_note(&d[i], &note);
		if (text) {
			repl_field_str(r, "note", text);
			repl_printf(r, "    %s\n", text);
		}
		repl_object_end(r);
	}
	repl_array_end(r);
	strbuf_release(&note);
	art_threads_release(&jts);
	resolver_free(res);
	symbolizer_free(sym);
	profile_free(p);
	dump_release(d, nr);
	return PERCH_EXIT_OK;
}

static int c_dump(struct repl *r, int argc, char **argv)
{
	struct dump_req q = {r, 0};
	int ret;

	if (argc > 2)
		return log_err(PERCH_EXIT_USAGE, "usage: dump [TID]");
	if (argc == 2 && opt_parse_pid(argv[1], &q.only) < 0)
		return PERCH_EXIT_USAGE;
	ret = session_call(r->s, dump_job, &q);
	if (ret == -EBUSY)
		return log_err(PERCH_EXIT_FATAL, "a recording is running: 'record stop' first");
	return ret;
}

/* Wait for the foreground job; on a terminal a key press ends it like Ctrl-C. */
int repl_run_foreground(struct repl *r, int (*fn)(struct session *, void *), void *arg,
			int watch_keys)
{
	struct termios saved, raw;
	int keys = watch_keys && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	int ret;

	ret = session_start(r->s, fn, arg);
	if (ret < 0)
		return ret;
	if (keys) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	while (session_busy(r->s)) {
		struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};

		if (poll(&pfd, keys ? 1 : 0, 100) > 0 && (pfd.revents & POLLIN)) {
			char c;

			if (read(STDIN_FILENO, &c, 1) <= 0 || keys)
				r->s->stop_fg = 1;
		}
	}
	if (keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	/* after the terminal's "^C" */
	if (repl_interrupted() && r->mode == REPL_TTY)
		putchar('\n');
	return session_wait(r->s, NULL);
}

static int c_record(struct repl *r, int argc, char **argv)
{
	const char *sub = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
	struct repl_rec *rec;
	int ret;

	if (sub && !strcmp(sub, "status")) {
		if (!r->rec)
			return log_err(PERCH_EXIT_FATAL, "nothing recorded yet");
		rec_report(r, r->rec, 0);
		return PERCH_EXIT_OK;
	}
	if (sub && (!strcmp(sub, "stop") || !strcmp(sub, "wait"))) {
		if (!r->rec || (!r->rec->running && !session_busy(r->s)))
			return log_err(PERCH_EXIT_FATAL, "no recording is running");
		if (!strcmp(sub, "stop"))
			r->s->stop_bg = 1;
		ret = session_wait(r->s, !strcmp(sub, "wait") ? &r->s->stop_fg : NULL);
		if (ret == -EINTR) {
			/* Ctrl-C during `record wait` stops the recording */
			r->s->stop_bg = 1;
			ret = session_wait(r->s, NULL);
		}
		rec_report(r, r->rec, 1);
		return ret;
	}
	if (sub && strcmp(sub, "start"))
		return log_err(PERCH_EXIT_USAGE, "record start|stop|status|wait [options], or "
						 "record [options] (in the foreground)");
	if (!r->s->attached)
		return log_err(PERCH_EXIT_USAGE, "record: no target: 'attach PID|NAME' first");
	if (session_busy(r->s))
		return log_err(PERCH_EXIT_FATAL, "a recording is already running");
	rec = rec_new(r);
	rec->background = sub != NULL;
	if (record_opts_parse(&rec->rc.o, sub ? argc - 1 : argc, sub ? argv + 1 : argv,
			      RECORD_PARSE_PROMPT) < 0) {
		rec_free(rec);
		return PERCH_EXIT_USAGE;
	}
	/* a -o FILE.perch is created now and written while sampling, as in perch record */
	ret = record_core_open(&rec->rc);
	if (ret < 0) {
		rec_free(rec);
		return ret == -EINVAL ? PERCH_EXIT_USAGE : PERCH_EXIT_FATAL;
	}
	rec_free(r->rec);
	r->rec = rec;
	rec->running = 1;
	r->s->stop_bg = 0;
	if (rec->background) {
		ret = session_start(r->s, record_job, rec);
		if (ret < 0) {
			rec->running = 0;
			record_core_discard(&rec->rc);
			return log_err(PERCH_EXIT_FATAL, "the session is busy");
		}
		/* the job sets its start time: report it once it runs */
		repl_field_bool(r, "running", 1);
		repl_field_int(r, "pid", r->s->pid);
		repl_printf(r, "recording %d in the background ('record stop' ends it)\n",
			    r->s->pid);
		return PERCH_EXIT_OK;
	}
	ret = repl_run_foreground(r, record_job, rec, 0);
	rec_report(r, rec, 1);
	return ret < 0 ? PERCH_EXIT_FATAL : ret;
}

struct top_req {
	struct repl_rec *rec;
	struct repl_top *top;
	double last_s; /* length of the last interval */
};

static size_t top_rows(const struct repl_rec *rec)
{
	return rec->rc.o.top > 0 ? (size_t)rec->rc.o.top : TOP_ROWS;
}

/* top: sample in 1 s slices; after each, the table of the last slice and of the totals. */
static int top_job(struct session *s, void *arg)
{
	struct top_req *q = arg;
	struct repl_rec *rec = q->rec;
	struct record_core *rc = &rec->rc;
	struct repl *r = rec->r;
	uint64_t end = rc->o.duration > 0 ? monotime_ns() + (uint64_t)(rc->o.duration * 1e9) : 0;
	int code = PERCH_EXIT_OK;

	if (rec_setup(s, rec) < 0) {
		rec->running = 0;
		return PERCH_EXIT_FATAL;
	}
	while (s->attached && !s->stop_fg) {
		struct sampler_opts so;
		struct sampler_stats *st;
		int ret;

		record_core_sampler_opts(rc, &so);
		so.duration = 1.0;
		so.stop = &s->stop_fg;
		so.no_signals = 1;
		if (end) {
			uint64_t now = monotime_ns();

			if (now >= end)
				break;
			if ((double)(end - now) / 1e9 < so.duration)
				so.duration = (double)(end - now) / 1e9;
		}
		st = xcalloc(1, sizeof(*st));
		ret = sampler_run(&s->t, rc->arch, &so, &record_core_ops, rc, st);
		rc->st->samples += st->samples;
		rc->st->reused += st->reused;
		rc->st->ticks += st->ticks;
		rc->st->err_regs += st->err_regs;
		rc->st->err_stack += st->err_stack;
		rc->st->elapsed_s = (double)(monotime_ns() - rec->start_ns) / 1e9;
		rc->st->stop_reason = st->stop_reason;
		q->last_s = st->elapsed_s;
		free(st);
		session_target_gone(s);
		if (ret < 0) {
			code = PERCH_EXIT_FATAL;
			break;
		}
		repl_top_update(q->top, rc->p);
		if (r->mode == REPL_SCRIPT)
			continue; /* one table at the end */
		if (r->color)
			fputs("\033[H\033[2J", stdout);
		else
			putchar('\n');
		printf(
		    "perch top: %d (%s)  %.0f s  %llu samples, %llu in the last %.1f s  %g Hz %s  "
		    "(%s to stop)\n\n",
		    rec->pid, rec->comm, rc->st->elapsed_s,
		    (unsigned long long)profile_total_samples(rc->p),
		    (unsigned long long)repl_top_interval_samples(q->top), q->last_s, rc->o.hz,
		    rc->o.cpu_mode ? "cpu" : "wall",
		    r->mode == REPL_CLI && !isatty(STDIN_FILENO) ? "Ctrl-C" : "any key or Ctrl-C");
		repl_top_print(q->top, rc->p, rc->o.hz, top_rows(rec), stdout);
		fflush(stdout);
	}
	rec->running = 0;
	return code;
}

static int c_top(struct repl *r, int argc, char **argv)
{
	struct repl_rec *rec;
	struct top_req q = {0};
	int ret;

	if (session_busy(r->s))
		return log_err(PERCH_EXIT_FATAL, "a recording is running: 'record stop' first");
	rec = rec_new(r);
	if (record_opts_parse(&rec->rc.o, argc, argv, RECORD_PARSE_TOP) < 0) {
		rec_free(rec);
		return PERCH_EXIT_USAGE;
	}
	if (r->mode == REPL_SCRIPT && !(rec->rc.o.duration > 0)) {
		rec_free(rec);
		return log_err(PERCH_EXIT_USAGE, "top in a script needs -d SECONDS");
	}
	/* a live view: no samples kept, no timeline or stall watch (record has those) */
	rec->rc.keep_samples = 0;
	q.rec = rec;
	q.top = repl_top_new();
	rec->running = 1;
	ret = repl_run_foreground(r, top_job, &q, 1);
	repl_field_int(r, "pid", rec->pid);
	repl_field_double(r, "elapsed_s", rec->rc.st->elapsed_s);
	repl_field_int(r, "samples", rec->rc.p ? (long long)profile_total_samples(rec->rc.p) : 0);
	if (r->mode == REPL_SCRIPT && rec->rc.p) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (f) {
			repl_top_print(q.top, rec->rc.p, rec->rc.o.hz, top_rows(rec), f);
			fclose(f);
			repl_printf(r, "%s", buf);
			if (r->json_mode)
				repl_field_str(r, "table", buf);
			free(buf);
		}
	}
	repl_top_free(q.top);
	rec_free(rec);
	return ret < 0 ? PERCH_EXIT_FATAL : ret;
}

const struct profile *repl_last_profile(struct repl *r)
{
	if (!r->rec || !r->rec->rc.p)
		return log_err(0, "nothing recorded yet: 'record' first, or give NEW.perch"), NULL;
	if (r->rec->running)
		return log_err(0, "the recording still runs: 'record stop' first"), NULL;
	return record_core_profile(&r->rec->rc);
}

/* report [FORMAT] [FILE] and save FILE: the last recording through a writer. */
static int render(struct repl *r, const struct output_format *fmt, const char *path)
{
	struct repl_rec *rec = r->rec;

	if (!rec || !rec->rc.p)
		return log_err(PERCH_EXIT_FATAL, "nothing recorded yet: 'record' first");
	if (rec->running)
		return log_err(PERCH_EXIT_FATAL, "the recording still runs: 'record stop' first");
	if (path && strcmp(path, "-")) {
		if (record_core_write(&rec->rc, path, fmt) < 0)
			return PERCH_EXIT_FATAL;
		repl_field_str(r, "file", path);
		repl_field_str(r, "format", fmt->name);
		repl_printf(r, "wrote %s (%s)\n", path, fmt->name);
		return PERCH_EXIT_OK;
	}
	{
		struct output_opts oo = {.lines = rec->rc.o.lines,
					 .top = rec->rc.o.top > 0 ? rec->rc.o.top : TOP_ROWS};
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int ret;

		if (!f) {
			log_errno(-errno, "cannot render");
			return PERCH_EXIT_FATAL;
		}
		ret = fmt->write(record_core_profile(&rec->rc), &oo, f);
		fclose(f);
		if (ret >= 0) {
			repl_field_str(r, "format", fmt->name);
			if (r->json_mode)
				repl_field_str(r, "output", buf);
			else
				repl_printf(r, "%.*s", (int)len, buf);
		}
		free(buf);
		if (ret < 0) {
			log_errno(ret, "cannot render %s", fmt->name);
			return PERCH_EXIT_FATAL;
		}
		return PERCH_EXIT_OK;
	}
}

/* `report` reads a recording file (the CLI's perch report) when it is given options or a
 * FILE.perch; otherwise it renders the last recording in memory. */
static int report_reads_file(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if ((argv[i][0] == '-' && argv[i][1]) || recording_is_path(argv[i]))
			return 1;
	return 0;
}

static int c_report(struct repl *r, int argc, char **argv)
{
	const struct output_format *fmt = NULL;
	const char *path = NULL;
	int i = 1;

	if (report_reads_file(argc, argv)) {
		/* a leading FORMAT word is perch report's --format */
		char **av = xcalloc((size_t)argc + 2, sizeof(*av));
		int n = 0, ret;

		av[n++] = argv[0];
		if (argc > 1 && argv[1][0] != '-' && output_format_by_name(argv[1])) {
			av[n++] = "--format";
			av[n++] = argv[i++];
		}
		while (i < argc)
			av[n++] = argv[i++];
		ret = repl_run_table_cmd(r, "report", n, av);
		free(av);
		return ret;
	}
	if (argc > 1 && (fmt = output_format_by_name(argv[1])))
		i++;
	if (i < argc)
		path = argv[i++];
	if (i < argc)
		return log_err(PERCH_EXIT_USAGE, "usage: report [FORMAT] [FILE], or report "
						 "[options] FILE.perch");
	if (!fmt && path)
		fmt = output_format_for_path(path);
	if (!fmt)
		fmt = output_format_by_name(path ? "folded" : "top");
	return render(r, fmt, path);
}

static int c_save(struct repl *r, int argc, char **argv)
{
	const struct output_format *fmt;

	if (argc != 2)
		return log_err(PERCH_EXIT_USAGE, "usage: save FILE (the ending picks the format)");
	fmt = output_format_for_path(argv[1]);
	return render(r, fmt ? fmt : &output_formats[0], argv[1]);
}

static int c_set(struct repl *r, int argc, char **argv)
{
	struct record_opts *o = &r->defaults;
	int ret = 0;

	if (argc == 2 || argc == 3) {
		const char *name = argv[1], *value = argc == 3 ? argv[2] : NULL;

		if (!strcmp(name, "output") || !strcmp(name, "freq"))
			ret = -ENOENT;
		else if (!strcmp(name, "duration") && value && !strcmp(value, "0"))
			o->duration = 0; /* until stopped */
		else
			ret = record_opts_set(o, name, value, name);
		if (ret == -ENOENT)
			ret =
			    log_err(-EINVAL, "set NAME VALUE: NAME is rate, duration, stack-size, "
					     "mode or another record option ('help set')");
	} else if (argc != 1) {
		ret = log_err(-EINVAL, "set rate|duration|stack-size|mode VALUE");
	}
	if (ret < 0)
		return PERCH_EXIT_USAGE;
	repl_field_double(r, "rate", o->hz);
	repl_field_double(r, "duration", o->duration);
	repl_field_int(r, "stack_size", (long long)o->stack_size);
	repl_field_str(r, "mode", o->cpu_mode ? "cpu" : "wall");
	repl_field_int(r, "cpu_interval", o->cpu_ms);
	repl_field_int(r, "mem_interval", o->mem_ms);
	repl_field_double(r, "stall", o->stall_ms);
	repl_printf(r, "rate %g Hz, duration %g s%s, stack-size %zu bytes, mode %s\n", o->hz,
		    o->duration, o->duration > 0 ? "" : " (until stopped)", o->stack_size,
		    o->cpu_mode ? "cpu" : "wall");
	repl_printf(r, "cpu-interval %u ms, mem-interval %u ms, stall %g ms", o->cpu_ms, o->mem_ms,
		    o->stall_ms);
	for (size_t i = 0; record_opts_name(i); i++) {
		const char *name = record_opts_name(i);
		static const char *const shown[] = {"freq",  "duration",     "stack-size",
						    "mode",  "cpu-interval", "mem-interval",
						    "stall", "output"};
		char buf[256];
		size_t k;

		for (k = 0; k < ARRAY_SIZE(shown); k++)
			if (!strcmp(shown[k], name))
				break;
		if (k < ARRAY_SIZE(shown) || record_opts_get(o, name, buf, sizeof(buf)) < 0 ||
		    !buf[0] || !strcmp(buf, "off"))
			continue;
		repl_printf(r, ", %s %s", name, buf);
	}
	repl_printf(r, "\n");
	return PERCH_EXIT_OK;
}

/* help COMMAND: its prompt face's help, or the command line's for one run in a child. */
static int help_one(struct repl *r, const struct cmd *c)
{
	const struct repl_cmd *rc = c->prompt;
	struct strbuf sb = STRBUF_INIT;

	if (rc) {
		strbuf_addf(&sb, "%s %s\n    %s\n%s", c->name, rc->args, rc->summary,
			    rc->usage ? rc->usage : "");
		if (rc->help_options)
			rc->help_options(&sb);
	} else {
		c->help(&sb);
		if (c->flags & CMD_PID)
			strbuf_addstr(&sb, "(in a session, -p is the attached process)\n");
	}
	repl_printf(r, "%s", sb.buf);
	strbuf_release(&sb);
	return PERCH_EXIT_OK;
}

static int c_help(struct repl *r, int argc, char **argv)
{
	if (argc > 1) {
		const struct cmd *c = repl_find_cmd(r, argv[1]);

		if (!c)
			return log_err(PERCH_EXIT_USAGE, "no command '%s'", argv[1]);
		return help_one(r, c);
	}
	repl_printf(r, "commands:\n");
	/* the prompt's own first, then those that run in a child */
	for (int own = 1; own >= 0; own--)
		for (size_t i = 0; i < r->nr_table; i++) {
			const struct cmd *c = r->table[i];
			char head[48];

			if (!c->prompt != !own)
				continue;
			snprintf(head, sizeof(head), "%s%s%s", c->name, own ? " " : "",
				 own ? c->prompt->args : "");
			repl_printf(r, "  %-34s %s\n", head, own ? c->prompt->summary : c->summary);
		}
	repl_printf(r, "Tab completes commands, options, pids, thread ids and files. Ctrl-C stops "
		       "the running command;\nCtrl-D or quit detaches and leaves.\n");
	return PERCH_EXIT_OK;
}

static int c_quit(struct repl *r, int argc, char **argv)
{
	r->quit = 1;
	return PERCH_EXIT_OK;
}

static const char *const record_words[] = {"start", "stop", "status", "wait", NULL};
/* set NAME: the record options' names; set mode: its values */
static int set_complete_args(int argc, char **argv, void (*add)(void *arg, const char *word),
			     void *arg)
{
	if (argc == 1) {
		add(arg, "rate");
		for (size_t i = 0; record_opts_name(i); i++)
			add(arg, record_opts_name(i));
		return 1;
	}
	if (argc == 2 && !strcmp(argv[1], "mode")) {
		add(arg, "wall");
		add(arg, "cpu");
		return 1;
	}
	return 0;
}

static void record_help_options(struct strbuf *sb)
{
	strbuf_addstr(sb, "    options (as perch record's, but -p and PROGRAM):\n");
	record_opts_help(sb, RECORD_PARSE_PROMPT);
}

static void record_complete_options(void (*add)(void *arg, const char *word), void *arg)
{
	record_opts_complete(RECORD_PARSE_PROMPT, add, arg);
}

static void top_help_options(struct strbuf *sb)
{
	strbuf_addstr(sb, "    options (as perch record's):\n");
	record_opts_help(sb, RECORD_PARSE_TOP);
}

static void top_complete_options(void (*add)(void *arg, const char *word), void *arg)
{
	record_opts_complete(RECORD_PARSE_TOP, add, arg);
}

static const char *const maps_opts[] = {"--exec", NULL};

/* The prompt faces of the commands the command line has too (cmd-*.c hold the commands). */

const struct repl_cmd repl_record = {
    .args = "[start|stop|status|wait] [options]",
    .summary = "record a profile",
    .usage = "    record [options]        in the foreground, until -d SEC, Ctrl-C or the target "
	     "exits\n"
	     "    record start [options]  in the background; the prompt stays usable\n"
	     "    record stop | wait      stop it / wait for its -d; record status\n"
	     "    the defaults are those of 'set'\n",
    .words = record_words,
    .fn = c_record,
    .help_options = record_help_options,
    .complete_options = record_complete_options,
    .release = record_release,
};

const struct repl_cmd repl_dump = {
    .args = "[TID]",
    .summary = "the stack of every thread (or one) now",
    .complete = REPL_COMPLETE_TID,
    .needs_target = 1,
    .fn = c_dump,
};

const struct repl_cmd repl_top = {
    .args = "[options]",
    .summary = "live view of the hottest functions (a key or Ctrl-C stops)",
    .usage = "    %Own and %Total: share of the samples of the last second with the function\n"
	     "    innermost / anywhere in the stack; OwnTime and TotalTime: seconds since top\n"
	     "    started (samples / rate, all threads together)\n",
    .needs_target = 1,
    .fn = c_top,
    .help_options = top_help_options,
    .complete_options = top_complete_options,
};

const struct repl_cmd repl_threads = {
    .args = "",
    .summary = "the target's threads: tid, name, state, CPU % (over 0.25 s)",
    .needs_target = 1,
    .fn = c_threads,
};

const struct repl_cmd repl_maps = {
    .args = "[--exec] [SUBSTRING]",
    .summary = "the target's memory mappings",
    .options = maps_opts,
    .needs_target = 1,
    .fn = c_maps,
};

const struct repl_cmd repl_report = {
    .args = "[FORMAT] [FILE] | [options] FILE.perch",
    .summary = "render the last recording, or a recording file",
    .usage = "    report [FORMAT] [FILE]        the last recording in FORMAT (default: the top\n"
	     "                                  functions) on the terminal, or written to FILE\n"
	     "    report [options] FILE.perch   a recording file, rendered by perch report (any\n"
	     "                                  option or an argument ending in .perch picks "
	     "this:\n"
	     "                                  use 'save FILE.perch' to write the last "
	     "recording)\n",
    .complete = REPL_COMPLETE_FORMAT,
    .fn = c_report,
};

/* The prompt's own commands. */

const struct cmd cmd_attach = {
    .name = "attach",
    .prompt = &(const struct repl_cmd){
	.args = "PID|NAME",
	.summary = "attach to a process (pid, name or Android package)",
	.usage = "    NAME is a command name (comm or argv[0]'s basename) or an Android package; "
		 "its\n"
		 "    pkg:name secondary processes and its processes under other users match too. "
		 "When\n"
		 "    several match, they are listed with their uid and user: attach one by pid.\n",
	.complete = REPL_COMPLETE_PROCESS,
	.fn = c_attach,
    }};

const struct cmd cmd_detach = {.name = "detach",
			       .prompt = &(const struct repl_cmd){
				   .args = "",
				   .summary = "detach from the target (it runs on as before)",
				   .needs_target = 1,
				   .fn = c_detach,
			       }};

const struct cmd cmd_save = {
    .name = "save",
    .prompt = &(const struct repl_cmd){
	.args = "FILE",
	.summary = "write the last recording (the ending picks the format)",
	.complete = REPL_COMPLETE_FILE,
	.fn = c_save,
    }};

const struct cmd cmd_set = {
    .name = "set",
    .prompt = &(const struct repl_cmd){
	.args = "[NAME [VALUE]]",
	.summary = "recording defaults (no name: show them)",
	.usage = "    NAME: rate (Hz), duration (s, 0: until stopped), stack-size (bytes), mode\n"
		 "    (wall|cpu), or any other record option by its long name (cpu-interval 0,\n"
		 "    stall 100, symfs DIR, verify on|off, ...)\n",
	.fn = c_set,
	.complete_args = set_complete_args,
    }};

const struct cmd cmd_help = {.name = "help",
			     .prompt = &(const struct repl_cmd){
				 .args = "[COMMAND]",
				 .summary = "this list, or one command's help",
				 .complete = REPL_COMPLETE_COMMAND,
				 .fn = c_help,
			     }};

const struct cmd cmd_quit = {.name = "quit",
			     .prompt = &(const struct repl_cmd){
				 .args = "",
				 .summary = "detach and leave (also Ctrl-D)",
				 .fn = c_quit,
			     }};
