/* The session commands of the REPL and scripted mode (attach, detach, threads, maps, dump,
 * record, top, report, save, set, help, quit). Everything that uses ptrace runs as a job on
 * the session thread; /proc readers run on the caller's thread. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/cmd.h"
#include "perch/cpustat.h"
#include "perch/log.h"
#include "perch/output.h"
#include "perch/proc-maps.h"
#include "perch/proc-task.h"
#include "perch/profile.h"
#include "perch/repl.h"
#include "perch/resolve.h"
#include "perch/sampler.h"
#include "perch/session.h"
#include "perch/symbolize.h"
#include "perch/tracee.h"
#include "perch/unwind.h"
#include "perch/waitreason.h"
#include "perch/xalloc.h"

#define REC_MAX_OUTPUTS 8
#define REC_MAX_STACK (1024 * 1024)
#define THREADS_WINDOW_MS 250 /* CPU % of `threads` is measured over this long */
#define DUMP_STACK_SIZE (256 * 1024)
#define DUMP_STOP_TIMEOUT_MS 2000
#define TOP_ROWS 20
#define FIND_MAX 16

/* A recording (record, top): what the sampler callbacks need. */
struct repl_rec {
	struct repl *r;
	pid_t pid;
	char comm[64];
	double hz, duration;
	size_t stack_size;
	int cpu_mode, lines, background, top_rows;
	char *outs[REC_MAX_OUTPUTS];
	const struct output_format *fmts[REC_MAX_OUTPUTS];
	int nr_outs;

	const struct perch_arch *arch;
	struct profile *p;
	struct symbolizer *sym;
	struct resolver *res;
	/* recent sample sites per profile thread (user SP, PC -> stack id + 1), so the sampler
	 * can count a blocked thread again without stopping it (sampler_ops.reuse) */
	struct rec_sites {
		struct {
			uint64_t sp, pc;
			uint32_t stack;
		} s[2 * SAMPLER_SITES];
		unsigned int next;
	} *sites;
	size_t nr_sites;
	struct sampler_stats *st;
	uint64_t start_ns, start_real_ns;
	volatile int running;
	int ret;
};

/* ---- sampler callbacks (worker thread) ---- */

static struct rec_sites *sites_of(struct repl_rec *rec, uint32_t thread)
{
	if (thread >= rec->nr_sites) {
		size_t n = rec->nr_sites;

		ALLOC_GROW(rec->sites, thread + 1, rec->nr_sites);
		memset(rec->sites + n, 0, (rec->nr_sites - n) * sizeof(*rec->sites));
	}
	return &rec->sites[thread];
}

/* @stack ending in why the thread waits ("[lock futex]") when it was not running. */
static uint32_t with_wait(struct repl_rec *rec, const struct sampler_info *info, uint32_t stack)
{
	pid_t pid = rec->pid;
	struct waitreason wr;

	if (!info->state || info->state == 'R')
		return stack;
	waitreason_classify(rec->arch->e_machine, info->state, info->syscall, NULL,
			    waitreason_fd_path_proc, &pid, &wr);
	if (wr.kind == WAITREASON_RUNNING || !wr.frame[0])
		return stack;
	return resolver_add_leaf(rec->res, stack, wr.frame);
}

static void on_sample(void *arg, const struct sampler_info *info,
		      const struct unwind_snapshot *snap)
{
	struct repl_rec *rec = arg;
	uint32_t thread = profile_thread(rec->p, info->tid, info->comm[0] ? info->comm : NULL);
	uint32_t stack = resolver_stack(rec->res, snap);
	struct rec_sites *rs = sites_of(rec, thread);
	uint64_t sp = perch_regs_sp(rec->arch, &snap->regs);
	uint64_t pc = perch_regs_pc(rec->arch, &snap->regs);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rs->s); i++)
		if (rs->s[i].stack && rs->s[i].sp == sp && rs->s[i].pc == pc)
			break;
	if (i == ARRAY_SIZE(rs->s))
		i = rs->next++ % ARRAY_SIZE(rs->s);
	rs->s[i].sp = sp;
	rs->s[i].pc = pc;
	rs->s[i].stack = stack + 1;
	profile_add_weighted(rec->p, thread, with_wait(rec, info, stack), info->time_ns,
			     info->state, info->weight);
}

static void on_reuse(void *arg, const struct sampler_info *info, uint64_t sp, uint64_t pc)
{
	struct repl_rec *rec = arg;
	uint32_t thread = profile_thread(rec->p, info->tid, info->comm[0] ? info->comm : NULL);
	struct rec_sites *rs = sites_of(rec, thread);

	for (unsigned int i = 0; i < ARRAY_SIZE(rs->s); i++)
		if (rs->s[i].stack && rs->s[i].sp == sp && rs->s[i].pc == pc) {
			profile_add_weighted(rec->p, thread,
					     with_wait(rec, info, rs->s[i].stack - 1),
					     info->time_ns, info->state, info->weight);
			return;
		}
}

static void name_thread(struct repl_rec *rec, pid_t tid)
{
	char comm[64];

	profile_thread(rec->p, tid,
		       proc_task_comm(rec->pid, tid, comm, sizeof(comm)) == 0 ? comm : NULL);
}

static void on_event(void *arg, int kind, pid_t tid)
{
	struct repl_rec *rec = arg;

	if (kind == TRACEE_EV_THREAD_NEW)
		name_thread(rec, tid);
	else if (kind == TRACEE_EV_EXEC)
		resolver_reload(rec->res);
}

/* ---- recordings ---- */

static void rec_free(struct repl_rec *rec)
{
	if (!rec)
		return;
	resolver_free(rec->res);
	symbolizer_free(rec->sym);
	profile_free(rec->p);
	for (int i = 0; i < rec->nr_outs; i++)
		free(rec->outs[i]);
	free(rec->sites);
	free(rec->st);
	free(rec);
}

void repl_rec_free(struct repl *r)
{
	if (r->s && session_busy(r->s)) {
		r->s->stop_bg = 1;
		session_wait(r->s, NULL);
	}
	rec_free(r->rec);
	r->rec = NULL;
}

static struct repl_rec *rec_new(struct repl *r)
{
	struct repl_rec *rec = xcalloc(1, sizeof(*rec));

	rec->r = r;
	rec->hz = r->hz;
	rec->duration = r->duration;
	rec->stack_size = r->stack_size;
	rec->cpu_mode = r->cpu_mode;
	rec->top_rows = TOP_ROWS;
	rec->st = xcalloc(1, sizeof(*rec->st));
	rec->start_ns = tracee_now_ns();
	rec->pid = r->s->pid;
	snprintf(rec->comm, sizeof(rec->comm), "%s", r->s->comm);
	return rec;
}

/* Session thread: the profile and its helpers for the attached target. */
static void rec_setup(struct session *s, struct repl_rec *rec)
{
	struct timespec now;

	rec->arch = perch_arch_host();
	rec->pid = s->pid;
	snprintf(rec->comm, sizeof(rec->comm), "%s", s->comm);
	rec->p = profile_new();
	/* every format can be saved later, including the ones that need samples in order */
	profile_keep_samples(rec->p, 1);
	rec->sym = symbolizer_new(NULL, NULL);
	rec->res = resolver_new(rec->pid, rec->arch, rec->p, rec->sym);
	for (size_t i = 0; i < s->t.nr_threads; i++)
		name_thread(rec, s->t.threads[i]->tid);
	profile_set_meta(rec->p, "comm", rec->comm);
	clock_gettime(CLOCK_REALTIME, &now);
	rec->start_real_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	rec->start_ns = tracee_now_ns();
}

static void rec_set_meta(struct repl_rec *rec)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%d", rec->pid);
	profile_set_meta(rec->p, "pid", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(1e9 / rec->hz));
	profile_set_meta(rec->p, "period_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rec->start_real_ns);
	profile_set_meta(rec->p, "start_time_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(rec->st->elapsed_s * 1e9));
	profile_set_meta(rec->p, "duration_ns", buf);
	profile_set_meta(rec->p, "mode", rec->cpu_mode ? "cpu" : "wall");
}

static int write_profile(struct repl_rec *rec, const char *path, const struct output_format *fmt)
{
	struct output_opts oo = { .lines = rec->lines, .top = TOP_ROWS };
	struct output_file of;
	int ret = output_open(&of, path);

	if (ret < 0)
		return log_errno(ret, "cannot create %s", path);
	ret = fmt->write(rec->p, &oo, of.f);
	if (ret < 0) {
		output_abort(&of);
		return log_errno(ret, "cannot write %s", path);
	}
	ret = output_commit(&of);
	return ret < 0 ? log_errno(ret, "cannot write %s", path) : 0;
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
	struct sampler_opts so = { .hz = rec->hz, .duration = rec->duration,
				   .stack_size = rec->stack_size, .cpu_mode = rec->cpu_mode,
				   .stop = rec->background ? &s->stop_bg : &s->stop_fg,
				   .no_signals = 1 };
	struct sampler_ops ops = { on_sample, on_reuse, on_event };
	int ret, code = PERCH_EXIT_OK;

	if (!s->attached) {
		rec->running = 0;
		return log_err(PERCH_EXIT_FATAL, "the target is gone");
	}
	rec_setup(s, rec);
	ret = sampler_run(&s->t, rec->arch, &so, &ops, rec, rec->st);
	if (ret < 0) {
		log_errno(ret, "sampling stopped");
		code = PERCH_EXIT_FATAL;
	}
	session_target_gone(s);
	rec_set_meta(rec);
	for (int i = 0; i < rec->nr_outs; i++)
		if (write_profile(rec, rec->outs[i], rec->fmts[i]) < 0)
			code = PERCH_EXIT_FATAL;
	if (!code && (rec->st->err_regs || rec->st->err_stack))
		code = PERCH_EXIT_SAMPLE_ERRORS;
	rec->ret = code;
	rec->running = 0;
	if (rec->background && rec->st->stop_reason != SAMPLER_STOP_REQUEST)
		session_notice(s, "recording of %d ended (%s): %llu samples in %.2f s", rec->pid,
			       stop_reason(rec->st),
			       (unsigned long long)profile_total_samples(rec->p),
			       rec->st->elapsed_s);
	return code;
}

/* The fields and line that describe a recording. */
static void rec_report(struct repl *r, const struct repl_rec *rec)
{
	int running = rec->running;
	double elapsed = running ? (double)(tracee_now_ns() - rec->start_ns) / 1e9
				 : rec->st ? rec->st->elapsed_s : 0;
	/* while it runs, the ptrace thread's count (read without the worker's profile) */
	unsigned long long samples = running ? __atomic_load_n(&rec->st->samples, __ATOMIC_RELAXED)
				     : profile_total_samples(rec->p);

	repl_field_bool(r, "running", running);
	repl_field_int(r, "pid", rec->pid);
	repl_field_double(r, "elapsed_s", elapsed);
	repl_field_int(r, "samples", (long long)samples);
	repl_field_str(r, "mode", rec->cpu_mode ? "cpu" : "wall");
	repl_field_double(r, "hz", rec->hz);
	if (!running) {
		repl_field_int(r, "threads", (long long)profile_nr_threads(rec->p));
		repl_field_str(r, "stop", stop_reason(rec->st));
	}
	if (rec->nr_outs) {
		repl_array_begin(r, "outputs");
		for (int i = 0; i < rec->nr_outs; i++)
			repl_field_str(r, NULL, rec->outs[i]);
		repl_array_end(r);
	}
	if (running)
		repl_printf(r, "recording %d (%s): %.1f s, %llu samples so far\n", rec->pid,
			    rec->comm, elapsed, samples);
	else
		repl_printf(r, "recorded %d (%s) for %.2f s at %g Hz (%s mode): %llu samples, %zu "
			    "threads, ended by %s\n",
			    rec->pid, rec->comm, elapsed, rec->hz, rec->cpu_mode ? "cpu" : "wall",
			    samples, profile_nr_threads(rec->p), stop_reason(rec->st));
	for (int i = 0; !running && i < rec->nr_outs; i++)
		repl_printf(r, "wrote %s (%s)\n", rec->outs[i], rec->fmts[i]->name);
}

/* ---- option parsing shared by record and top ---- */

static int parse_double(const char *opt, const char *s, double min_excl, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (*end || end == s || !(v > min_excl && v <= max))
		return log_err(-EINVAL, "%s wants a number above %g and up to %g, not '%s'", opt,
			       min_excl, max, s);
	*out = v;
	return 0;
}

static int parse_stack(const char *s, size_t *out)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*end || end == s || v < 0 || v > REC_MAX_STACK)
		return log_err(-EINVAL, "stack size wants 0 to %d bytes, not '%s'", REC_MAX_STACK,
			       s);
	*out = (size_t)v;
	return 0;
}

static int parse_mode(const char *s, int *cpu)
{
	if (strcmp(s, "wall") && strcmp(s, "cpu"))
		return log_err(-EINVAL, "mode is wall or cpu, not '%s'", s);
	*cpu = !strcmp(s, "cpu");
	return 0;
}

static const char *const record_opts[] = { "-F", "--freq", "-d", "--duration", "-o", "--output",
					    "--format", "--mode", "--stack-size", "--lines", "-n",
					    NULL };

/* record/top options after the subcommand: argv[0] is the word before them. */
static int parse_rec_opts(struct repl_rec *rec, int argc, char **argv, int top)
{
	enum { OPT_STACK = 256, OPT_MODE, OPT_FORMAT, OPT_LINES };
	static const struct option opts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "rows", required_argument, NULL, 'n' },
		{ "stack-size", required_argument, NULL, OPT_STACK },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ 0 },
	};
	const struct output_format *deflt = NULL;
	int c;

	optind = 0; /* full re-initialisation of getopt between commands */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+F:d:o:n:", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (parse_double("-F", optarg, 0, 100000, &rec->hz) < 0)
				return -EINVAL;
			break;
		case 'd':
			if (parse_double("-d", optarg, 0, 1e9, &rec->duration) < 0)
				return -EINVAL;
			break;
		case 'n':
			rec->top_rows = atoi(optarg);
			if (rec->top_rows <= 0)
				return log_err(-EINVAL, "-n wants a positive number of rows");
			break;
		case 'o':
			if (top)
				return log_err(-EINVAL, "top writes no files: record -o does");
			if (rec->nr_outs == REC_MAX_OUTPUTS)
				return log_err(-EINVAL, "at most %d -o options", REC_MAX_OUTPUTS);
			rec->outs[rec->nr_outs++] = xstrdup(optarg);
			break;
		case OPT_STACK:
			if (parse_stack(optarg, &rec->stack_size) < 0)
				return -EINVAL;
			break;
		case OPT_MODE:
			if (parse_mode(optarg, &rec->cpu_mode) < 0)
				return -EINVAL;
			break;
		case OPT_FORMAT:
			deflt = output_format_by_name(optarg);
			if (!deflt)
				return log_err(-EINVAL, "unknown format '%s'", optarg);
			break;
		case OPT_LINES:
			rec->lines = 1;
			break;
		default:
			return log_err(-EINVAL, "unknown or incomplete option '%s'",
				       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return log_err(-EINVAL, "unexpected argument '%s'", argv[optind]);
	for (int i = 0; i < rec->nr_outs; i++) {
		rec->fmts[i] = output_format_for_path(rec->outs[i]);
		if (!rec->fmts[i])
			rec->fmts[i] = deflt ? deflt : &output_formats[0];
	}
	return 0;
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
		repl_array_begin(r, "candidates");
		for (int i = 0; i < n && i < FIND_MAX; i++) {
			struct proc_stat ps;
			const char *comm = proc_stat_read(pids[i], 0, &ps) == 0 ? ps.comm : "?";

			repl_object_begin(r);
			repl_field_int(r, "pid", pids[i]);
			repl_field_str(r, "comm", comm);
			repl_object_end(r);
			repl_printf(r, "%8d  %s\n", pids[i], comm);
		}
		repl_array_end(r);
		return log_err(PERCH_EXIT_USAGE, "%d processes match '%s': attach one by pid", n,
			       argv[1]);
	}
	ret = session_attach(r->s, pids[0]);
	if (ret < 0)
		return PERCH_EXIT_FATAL;
	repl_field_int(r, "pid", r->s->pid);
	repl_field_str(r, "comm", r->s->comm);
	repl_field_int(r, "threads", (long long)r->s->t.nr_threads);
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
	struct timespec ts = { 0, THREADS_WINDOW_MS * 1000000L };
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
		struct cpustat_task_usage u = { 0 };
		int ok = a[i].pid && proc_stat_read(pid, tids[i], &b) == 0;

		if (!ok)
			continue;
		cpustat_task_usage(&a[i], &b, THREADS_WINDOW_MS * 1000000ULL, tck, ncpu, &u);
		repl_object_begin(r);
		repl_field_int(r, "tid", tids[i]);
		repl_field_str(r, "name", b.comm);
		repl_field_str(r, "state", (char[]){ b.state, 0 });
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
		char prot[5] = { pm->prot & PROC_MAPS_PROT_READ ? 'r' : '-',
				 pm->prot & PROC_MAPS_PROT_WRITE ? 'w' : '-',
				 pm->prot & PROC_MAPS_PROT_EXEC ? 'x' : '-',
				 pm->prot & PROC_MAPS_PROT_SHARED ? 's' : 'p', 0 };

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

/* dump: every thread (or one) stopped together, snapshots taken, all resumed; unwound after. */
struct dump_req {
	struct repl *r;
	pid_t only;
};

struct dump_one {
	pid_t tid;
	char name[64];
	char state;
	int taken;
	struct unwind_snapshot snap;
};

static void dump_collect(struct session *s, const struct perch_arch *arch, struct dump_one *d,
			 size_t nr)
{
	uint64_t deadline = tracee_now_ns() + DUMP_STOP_TIMEOUT_MS * 1000000ULL;
	struct tracee_event ev;
	size_t waiting = 0;

	for (size_t i = 0; i < nr; i++) {
		struct tracee_thread *th = tracee_find(&s->t, d[i].tid);

		if (th && tracee_interrupt(&s->t, th, tracee_now_ns()) == 0)
			waiting++;
	}
	while (waiting && tracee_now_ns() < deadline) {
		int ret = tracee_poll(&s->t, &ev);

		if (ret < 0 || (ret > 0 && ev.kind == TRACEE_EV_EXIT))
			break;
		if (ret == 0) {
			struct timespec ts = { 0, 100000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (ev.kind == TRACEE_EV_THREAD_GONE)
			waiting--;
		if (ev.kind != TRACEE_EV_STOPPED)
			continue;
		for (size_t i = 0; i < nr; i++)
			if (d[i].tid == ev.thread->tid) {
				d[i].taken = sampler_snapshot(&s->t, arch, ev.thread,
							      &d[i].snap) == 0;
				waiting--;
				break;
			}
		/* a thread that was not asked for, or is done: it runs again now */
		tracee_resume(&s->t, ev.thread);
	}
}

static void dump_print(struct repl *r, struct profile *p, struct resolver *res, struct dump_one *d)
{
	uint32_t stack = resolver_stack(res, &d->snap);
	size_t nlocs, n = 0;
	const uint32_t *locs = profile_stack(p, stack, &nlocs);
	int npcs;
	const uint64_t *pcs = resolver_last_pcs(res, &npcs);

	repl_array_begin(r, "frames");
	for (size_t i = 0; i < nlocs; i++) {
		const struct profile_location *loc = profile_location(p, locs[i]);
		size_t nf;
		const uint32_t *frames = profile_location_frames(p, locs[i], &nf);
		const char *module = loc->module ? profile_str(p, loc->module) : "?";
		const char *slash = strrchr(module, '/');
		uint64_t pc = i < (size_t)npcs ? pcs[i] : 0;

		if (slash && slash[1])
			module = slash + 1;
		for (size_t k = 0; k < nf; k++) {
			const struct profile_frame *f = profile_frame(p, frames[k]);

			repl_object_begin(r);
			repl_field_str(r, "func", profile_str(p, f->name));
			repl_field_str(r, "module", module);
			if (f->file && f->line) {
				repl_field_str(r, "file", profile_str(p, f->file));
				repl_field_int(r, "line", f->line);
			}
			repl_object_end(r);
			repl_printf(r, "#%zu  0x%016llx %s (%s)", n++, (unsigned long long)pc,
				    profile_str(p, f->name), module);
			if (f->file && f->line)
				repl_printf(r, " at %s:%u", profile_str(p, f->file), f->line);
			repl_printf(r, "%s\n", f->inlined ? " [inlined]" : "");
		}
	}
	repl_array_end(r);
}

static int dump_job(struct session *s, void *arg)
{
	struct dump_req *q = arg;
	struct repl *r = q->r;
	const struct perch_arch *arch = perch_arch_host();
	struct dump_one *d = xcalloc(s->t.nr_threads + 1, sizeof(*d));
	size_t nr = 0;
	struct profile *p;
	struct symbolizer *sym;
	struct resolver *res;

	for (size_t i = 0; i < s->t.nr_threads; i++) {
		struct proc_stat ps;
		pid_t tid = s->t.threads[i]->tid;

		if (q->only && tid != q->only)
			continue;
		d[nr].tid = tid;
		/* states first: a thread we stop reads as 't' */
		d[nr].state = proc_stat_read(s->pid, tid, &ps) == 0 ? ps.state : '?';
		if (proc_task_comm(s->pid, tid, d[nr].name, sizeof(d[nr].name)) < 0)
			strcpy(d[nr].name, "?");
		d[nr].snap.stack_cap = DUMP_STACK_SIZE;
		d[nr].snap.stack = xmalloc(DUMP_STACK_SIZE);
		nr++;
	}
	if (!nr) {
		free(d);
		return log_err(PERCH_EXIT_USAGE, "%d is not a thread of %d", q->only, s->pid);
	}
	dump_collect(s, arch, d, nr);
	session_target_gone(s);
	p = profile_new();
	sym = symbolizer_new(NULL, NULL);
	res = resolver_new(s->pid, arch, p, sym);
	repl_field_int(r, "pid", s->pid);
	repl_array_begin(r, "threads");
	for (size_t i = 0; i < nr; i++) {
		repl_object_begin(r);
		repl_field_int(r, "tid", d[i].tid);
		repl_field_str(r, "name", d[i].name);
		repl_field_str(r, "state", (char[]){ d[i].state, 0 });
		repl_printf(r, "TID %d \"%s\" (%c)\n", d[i].tid, d[i].name, d[i].state);
		if (d[i].taken)
			dump_print(r, p, res, &d[i]);
		else
			repl_printf(r, "    (no stack: the thread did not stop in time or exited)\n");
		repl_object_end(r);
		free(d[i].snap.stack);
	}
	repl_array_end(r);
	resolver_free(res);
	symbolizer_free(sym);
	profile_free(p);
	free(d);
	return PERCH_EXIT_OK;
}

static int c_dump(struct repl *r, int argc, char **argv)
{
	struct dump_req q = { r, 0 };
	int ret;

	if (argc > 2)
		return log_err(PERCH_EXIT_USAGE, "usage: dump [TID]");
	if (argc == 2 && cmd_parse_pid(argv[1], &q.only) < 0)
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
		struct pollfd pfd = { STDIN_FILENO, POLLIN, 0 };

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
		rec_report(r, r->rec);
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
		rec_report(r, r->rec);
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
	if (parse_rec_opts(rec, sub ? argc - 1 : argc, sub ? argv + 1 : argv, 0) < 0) {
		rec_free(rec);
		return PERCH_EXIT_USAGE;
	}
	rec_free(r->rec);
	r->rec = rec;
	rec->running = 1;
	r->s->stop_bg = 0;
	if (rec->background) {
		ret = session_start(r->s, record_job, rec);
		if (ret < 0) {
			rec->running = 0;
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
	rec_report(r, rec);
	return ret < 0 ? PERCH_EXIT_FATAL : ret;
}

/* top: sample in 1 s slices and print the hottest functions after each. */
static int top_job(struct session *s, void *arg)
{
	struct repl_rec *rec = arg;
	struct repl *r = rec->r;
	struct sampler_ops ops = { on_sample, on_reuse, on_event };
	struct output_opts oo = { .top = rec->top_rows };
	uint64_t end = rec->duration > 0 ? tracee_now_ns() + (uint64_t)(rec->duration * 1e9) : 0;
	int code = PERCH_EXIT_OK;

	rec_setup(s, rec);
	while (s->attached && !s->stop_fg) {
		struct sampler_opts so = { .hz = rec->hz, .duration = 1.0,
					   .stack_size = rec->stack_size, .cpu_mode = rec->cpu_mode,
					   .stop = &s->stop_fg, .no_signals = 1 };
		struct sampler_stats *st;
		double total;
		int ret;

		if (end) {
			uint64_t now = tracee_now_ns();

			if (now >= end)
				break;
			if ((double)(end - now) / 1e9 < so.duration)
				so.duration = (double)(end - now) / 1e9;
		}
		st = xcalloc(1, sizeof(*st));
		ret = sampler_run(&s->t, rec->arch, &so, &ops, rec, st);
		rec->st->samples += st->samples;
		rec->st->elapsed_s = (double)(tracee_now_ns() - rec->start_ns) / 1e9;
		rec->st->stop_reason = st->stop_reason;
		free(st);
		session_target_gone(s);
		if (ret < 0) {
			code = PERCH_EXIT_FATAL;
			break;
		}
		if (r->mode == REPL_SCRIPT)
			continue; /* one table at the end */
		if (r->color)
			fputs("\033[H\033[2J", stdout);
		else
			putchar('\n');
		total = rec->st->elapsed_s;
		printf("perch top: %d (%s)  %.0f s  %llu samples  %g Hz %s  (%s to stop)\n\n",
		       rec->pid, rec->comm, total,
		       (unsigned long long)profile_total_samples(rec->p), rec->hz,
		       rec->cpu_mode ? "cpu" : "wall",
		       r->mode == REPL_CLI && !isatty(STDIN_FILENO) ? "Ctrl-C" : "any key or Ctrl-C");
		out_top_write(rec->p, &oo, stdout);
		fflush(stdout);
	}
	rec->running = 0;
	return code;
}

static int c_top(struct repl *r, int argc, char **argv)
{
	struct repl_rec *rec = rec_new(r);
	int ret;

	if (session_busy(r->s)) {
		rec_free(rec);
		return log_err(PERCH_EXIT_FATAL, "a recording is running: 'record stop' first");
	}
	if (parse_rec_opts(rec, argc, argv, 1) < 0) {
		rec_free(rec);
		return PERCH_EXIT_USAGE;
	}
	if (r->mode == REPL_SCRIPT && !(rec->duration > 0)) {
		rec_free(rec);
		return log_err(PERCH_EXIT_USAGE, "top in a script needs -d SECONDS");
	}
	rec->running = 1;
	ret = repl_run_foreground(r, top_job, rec, 1);
	repl_field_int(r, "pid", rec->pid);
	repl_field_double(r, "elapsed_s", rec->st ? rec->st->elapsed_s : 0);
	repl_field_int(r, "samples", rec->p ? (long long)profile_total_samples(rec->p) : 0);
	if (r->mode == REPL_SCRIPT && rec->p) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct output_opts oo = { .top = rec->top_rows };

		if (f) {
			out_top_write(rec->p, &oo, f);
			fclose(f);
			repl_printf(r, "%s", buf);
			if (r->json_mode)
				repl_field_str(r, "table", buf);
			free(buf);
		}
	}
	rec_free(rec);
	return ret < 0 ? PERCH_EXIT_FATAL : ret;
}

/* report [FORMAT] [FILE] and save FILE: the last recording through a writer. */
static int render(struct repl *r, const struct output_format *fmt, const char *path)
{
	struct repl_rec *rec = r->rec;

	if (!rec || !rec->p)
		return log_err(PERCH_EXIT_FATAL, "nothing recorded yet: 'record' first");
	if (rec->running)
		return log_err(PERCH_EXIT_FATAL, "the recording still runs: 'record stop' first");
	if (path && strcmp(path, "-")) {
		if (write_profile(rec, path, fmt) < 0)
			return PERCH_EXIT_FATAL;
		repl_field_str(r, "file", path);
		repl_field_str(r, "format", fmt->name);
		repl_printf(r, "wrote %s (%s)\n", path, fmt->name);
		return PERCH_EXIT_OK;
	}
	{
		struct output_opts oo = { .lines = rec->lines, .top = TOP_ROWS };
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int ret;

		if (!f) {
			log_errno(-errno, "cannot render");
			return PERCH_EXIT_FATAL;
		}
		ret = fmt->write(rec->p, &oo, f);
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

static int c_report(struct repl *r, int argc, char **argv)
{
	const struct output_format *fmt = NULL;
	const char *path = NULL;
	int i = 1;

	if (argc > 1 && (fmt = output_format_by_name(argv[1])))
		i++;
	if (i < argc)
		path = argv[i++];
	if (i < argc)
		return log_err(PERCH_EXIT_USAGE, "usage: report [FORMAT] [FILE]");
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
	int ret = 0;

	if (argc == 3) {
		if (!strcmp(argv[1], "rate"))
			ret = parse_double("rate", argv[2], 0, 100000, &r->hz);
		else if (!strcmp(argv[1], "duration"))
			ret = !strcmp(argv[2], "0") ? (r->duration = 0, 0)
						    : parse_double("duration", argv[2], 0, 1e9,
								   &r->duration);
		else if (!strcmp(argv[1], "stack-size"))
			ret = parse_stack(argv[2], &r->stack_size);
		else if (!strcmp(argv[1], "mode"))
			ret = parse_mode(argv[2], &r->cpu_mode);
		else
			ret = log_err(-EINVAL, "set rate|duration|stack-size|mode VALUE");
	} else if (argc != 1) {
		ret = log_err(-EINVAL, "set rate|duration|stack-size|mode VALUE");
	}
	if (ret < 0)
		return PERCH_EXIT_USAGE;
	repl_field_double(r, "rate", r->hz);
	repl_field_double(r, "duration", r->duration);
	repl_field_int(r, "stack_size", (long long)r->stack_size);
	repl_field_str(r, "mode", r->cpu_mode ? "cpu" : "wall");
	repl_printf(r, "rate %g Hz, duration %g s%s, stack-size %zu bytes, mode %s\n", r->hz,
		    r->duration, r->duration > 0 ? "" : " (until stopped)", r->stack_size,
		    r->cpu_mode ? "cpu" : "wall");
	return PERCH_EXIT_OK;
}

static int c_help(struct repl *r, int argc, char **argv)
{
	if (argc > 1) {
		const struct repl_cmd *rc = repl_cmd_find(argv[1]);

		if (rc) {
			repl_printf(r, "%s %s\n    %s\n%s", rc->name, rc->args, rc->summary,
				    rc->usage ? rc->usage : "");
			return PERCH_EXIT_OK;
		}
		for (size_t i = 0; i < r->nr_table; i++)
			if (!strcmp(r->table[i]->name, argv[1])) {
				repl_printf(r, "%s", r->table[i]->usage);
				if (r->table[i]->flags & CMD_PID)
					repl_printf(r, "(in a session, -p is the attached process)\n");
				return PERCH_EXIT_OK;
			}
		return log_err(PERCH_EXIT_USAGE, "no command '%s'", argv[1]);
	}
	repl_printf(r, "commands:\n");
	for (size_t i = 0; i < repl_nr_cmds; i++) {
		char head[48];

		snprintf(head, sizeof(head), "%s %s", repl_cmds[i].name, repl_cmds[i].args);
		repl_printf(r, "  %-34s %s\n", head, repl_cmds[i].summary);
	}
	for (size_t i = 0; i < r->nr_table; i++)
		if (!repl_cmd_find(r->table[i]->name))
			repl_printf(r, "  %-34s %s\n", r->table[i]->name, r->table[i]->summary);
	repl_printf(r, "Tab completes commands, options, pids, thread ids and files. Ctrl-C stops "
		       "the running command;\nCtrl-D or quit detaches and leaves.\n");
	return PERCH_EXIT_OK;
}

static int c_quit(struct repl *r, int argc, char **argv)
{
	r->quit = 1;
	return PERCH_EXIT_OK;
}

static const char *const record_words[] = { "start", "stop", "status", "wait", NULL };
static const char *const set_words[] = { "rate", "duration", "stack-size", "mode", NULL };
static const char *const top_opts[] = { "-F", "--freq", "-d", "--duration", "-n", "--rows",
					 "--mode", "--stack-size", NULL };
static const char *const maps_opts[] = { "--exec", NULL };

const struct repl_cmd repl_cmds[] = {
	{ "attach", "PID|NAME", "attach to a process (pid, name or Android package)", NULL,
	  NULL, NULL, REPL_COMPLETE_PROCESS, 0, c_attach },
	{ "detach", "", "detach from the target (it runs on as before)", NULL, NULL, NULL,
	  REPL_COMPLETE_NONE, 1, c_detach },
	{ "threads", "", "the target's threads: tid, name, state, CPU % (over 0.25 s)", NULL,
	  NULL, NULL, REPL_COMPLETE_NONE, 1, c_threads },
	{ "dump", "[TID]", "the stack of every thread (or one) now", NULL, NULL, NULL,
	  REPL_COMPLETE_TID, 1, c_dump },
	{ "record", "[start|stop|status|wait] [options]", "record a profile",
	  "    record [options]        in the foreground, until -d SEC, Ctrl-C or the target exits\n"
	  "    record start [options]  in the background; the prompt stays usable\n"
	  "    record stop | wait      stop it / wait for its -d; record status\n"
	  "    options: -F HZ, -d SEC, -o FILE (written at the end; the ending picks the format),\n"
	  "             --format NAME, --mode wall|cpu, --stack-size BYTES, --lines\n",
	  record_words, record_opts, REPL_COMPLETE_NONE, 0, c_record },
	{ "top", "[-F HZ] [-d SEC] [-n ROWS]", "live view of the hottest functions (a key or "
	  "Ctrl-C stops)", NULL, NULL, top_opts, REPL_COMPLETE_NONE, 1, c_top },
	{ "report", "[FORMAT] [FILE]", "the last recording in FORMAT (default: top functions)",
	  NULL, NULL, NULL, REPL_COMPLETE_FORMAT, 0, c_report },
	{ "save", "FILE", "write the last recording (the ending picks the format)", NULL, NULL,
	  NULL, REPL_COMPLETE_FILE, 0, c_save },
	{ "maps", "[--exec] [SUBSTRING]", "the target's memory mappings", NULL, NULL, maps_opts,
	  REPL_COMPLETE_NONE, 1, c_maps },
	{ "set", "rate|duration|stack-size|mode VALUE", "recording defaults (no value: show them)",
	  NULL, set_words, NULL, REPL_COMPLETE_NONE, 0, c_set },
	{ "help", "[COMMAND]", "this list, or one command's help", NULL, NULL, NULL,
	  REPL_COMPLETE_COMMAND, 0, c_help },
	{ "quit", "", "detach and leave (also Ctrl-D)", NULL, NULL, NULL, REPL_COMPLETE_NONE, 0,
	  c_quit },
};
const size_t repl_nr_cmds = ARRAY_SIZE(repl_cmds);

const struct repl_cmd *repl_cmd_find(const char *name)
{
	for (size_t i = 0; i < repl_nr_cmds; i++)
		if (!strcmp(repl_cmds[i].name, name))
			return &repl_cmds[i];
	if (!strcmp(name, "exit"))
		return repl_cmd_find("quit");
	return NULL;
}
