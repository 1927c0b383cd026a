/* `perch record`: attach to a process (or launch one), sample it, write the profile. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/cmd.h"
#include "perch/log.h"
#include "perch/output.h"
#include "perch/proc-task.h"
#include "perch/profile.h"
#include "perch/recording.h"
#include "perch/resolve.h"
#include "perch/sampler.h"
#include "perch/stall.h"
#include "perch/symbolize.h"
#include "perch/timeline.h"
#include "perch/tracee.h"
#include "perch/unwind.h"
#include "perch/waitreason.h"
#include "perch/xalloc.h"

#define RECORD_DEFAULT_HZ 100
#define RECORD_DEFAULT_STACK (32 * 1024)
#define RECORD_MAX_STACK (1024 * 1024)
#define RECORD_MAX_OUTPUTS 8

static const char record_usage[] =
	"usage: perch record [options] -p PID\n"
	"       perch record [options] -- PROGRAM [ARGS...]\n"
	"\n"
	"Sample the stacks of every thread of a running process (-p) or of a program perch\n"
	"starts, and write them as folded stacks.\n"
	"\n"
	"  -p, --pid PID          attach to process PID\n"
	"  -F, --freq HZ          samples per second per thread (default 100)\n"
	"  -d, --duration SEC     stop after SEC seconds (default: until the target exits or\n"
	"                         Ctrl-C / SIGTERM)\n"
	"  -o, --output FILE      write the profile to FILE ('-' for stdout); the ending picks\n"
	"                         the format: .folded, .svg/.html (flame graph), .pb.gz (pprof),\n"
	"                         .speedscope.json, .trace.json (Chrome/Perfetto), .sentry.json,\n"
	"                         .trace (Android method trace), .txt (call tree and top\n"
	"                         functions), .perch (a recording, written while sampling, that\n"
	"                         perch report renders later); up to 8 -o\n"
	"      --format NAME      format for -o files with another ending (default folded):\n"
	"                         folded svg html pprof speedscope chrome sentry arttrace text\n"
	"                         top perch\n"
	"      --lines            add ' (file:line)' to folded frames when known\n"
	"      --mode wall|cpu    wall (default): every thread at every tick, a waiting thread's\n"
	"                         stack ending in why it waits ([io read PATH], [lock futex],\n"
	"                         [sleep nanosleep], [poll epoll_wait], ...); cpu: only threads\n"
	"                         that are running\n"
	"      --stack-size BYTES bytes of stack copied per sample (default 32768)\n"
	"      --cpu-interval MS  read process, thread and system CPU use from /proc every MS\n"
	"                         ms (default 100; 0: off): summary and counter tracks\n"
	"      --mem-interval MS  read RSS/PSS/USS/swap (smaps_rollup) and the meminfo\n"
	"                         categories (smaps) every MS ms (default 1000; 0: off); one\n"
	"                         smaps read + classify costs about 0.6 ms at 80 mappings, 16 ms\n"
	"                         at 2000, 270 ms at 20000 (measured on a busy 2-core host;\n"
	"                         the summary prints the figure for the target)\n"
	"      --stall MS         report intervals in which the watched thread stayed off-CPU\n"
	"                         or ran in one stack for MS ms or more (default 200; 0: off)\n"
	"      --stall-thread TID|NAME  the thread to watch (default: the main thread)\n"
	"      --top N            print the N hottest functions at the end\n"
	"      --verify           also unwind every sample inside the stop with libunwind-ptrace\n"
	"                         and count the samples whose frames differ (slow: a check of\n"
	"                         perch's own unwinder)\n"
	"      --no-follow-cpu    do not move perch's sampling thread to the target's CPU\n"
	"      --no-idle-reuse    interrupt blocked threads at every tick (measures what\n"
	"                         reusing their last stack saves)\n"
	"      --sysroot DIR      look for debug files under DIR/usr/lib/debug\n"
	"      --symfs DIR        look for unstripped copies of modules under DIR first\n"
	"  -q, --quiet            no summary\n"
	"  -v, --verbose          more messages (twice for debug)\n"
	"\n"
	"Exit status: 0 ok, 1 finished with per-sample errors, 2 fatal error, 64 usage;\n"
	"with PROGRAM, its own exit status (128+N if killed by signal N).\n";

/* Where a thread's recent samples were taken (user SP, PC) and their stacks, so the sampler
 * can count a blocked thread again without stopping it (see sampler_ops.reuse). */
struct record_sites {
	struct record_site {
		uint64_t sp, pc;
		uint32_t stack; /* stack id + 1, without a wait frame */
		uint32_t wait;  /* string id + 1 of the last wait frame seen there, 0 none */
	} s[2 * SAMPLER_SITES];
	unsigned int next; /* round robin */
};

struct record {
	pid_t pid;
	double hz, duration;
	size_t stack_size;
	struct record_output {
		const char *path;
		const struct output_format *fmt;
	} outputs[RECORD_MAX_OUTPUTS];
	int nr_outputs;
	const struct output_format *default_fmt; /* --format, for -o without a known ending */
	const char *sysroot, *symfs;
	int lines, top, quiet, cpu_mode;
	int verify, no_follow_cpu, no_idle_reuse;
	uint64_t verified, verify_differ; /* --verify: samples compared, and differing */
	char **argv; /* program to launch, or NULL */

	struct tracee t;
	struct profile *p;
	struct symbolizer *sym;
	struct resolver *r;
	struct record_sites *sites; /* stacks of recent sample sites, per profile thread */
	size_t nr_sites;
	const struct perch_arch *arch;
	unsigned int cpu_ms, mem_ms;	/* timeline intervals, 0: off */
	double stall_ms;		/* 0: no stall detection */
	const char *stall_thread;	/* --stall-thread, or NULL for the main thread */
	struct timeline *tl;
	struct stall_detector *stall;
	uint64_t mono_start;		/* CLOCK_MONOTONIC when sampling began */
	struct recording_writer *rw; /* the -o FILE.perch streamed while sampling, or NULL */
	const char *rw_path;
};

int cmd_parse_pid(const char *s, int *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v <= 0 || v > 0x7fffffff)
		return log_err(-EINVAL, "'%s' is not a process id", s);
	*pid = (int)v;
	return 0;
}

/* The profile's index of thread @tid, named @comm when known. */
static uint32_t thread_of(struct record *rec, pid_t tid, const char *comm)
{
	return profile_thread(rec->p, tid, comm && comm[0] ? comm : NULL);
}

/* Read a thread's name now (at attach and for new threads; samples bring their own). */
static void name_thread(struct record *rec, pid_t tid)
{
	char comm[64];

	if (proc_task_comm(rec->t.pid, tid, comm, sizeof(comm)) == 0)
		profile_thread(rec->p, tid, comm);
	else
		profile_thread(rec->p, tid, NULL);
}

/* The stack to count: @stack, ending in why the thread waits ("[lock futex]") when it was
 * not running. Added per sample, not stored with a site: the same SP and PC are also seen
 * just after the thread woke up. @site (may be NULL) remembers the last reason seen there:
 * a sleeper that perch interrupted once resumes in restart_syscall at the same place, and the
 * reason is still the call it restarts. */
static uint32_t with_wait_frame(struct record *rec, const struct sampler_info *info,
				uint32_t stack, struct record_site *site)
{
	pid_t pid = rec->t.pid;
	struct waitreason wr;
	const char *frame;

	if (!info->state || info->state == 'R')
		return stack;
	waitreason_classify(rec->arch->e_machine, info->state, info->syscall, NULL,
			    waitreason_fd_path_proc, &pid, &wr);
	/* woke up between the two reads: it runs */
	if (wr.kind == WAITREASON_RUNNING || !wr.frame[0])
		return stack;
	frame = wr.frame;
	if (wr.syscall && !strcmp(wr.syscall, "restart_syscall")) {
		if (site && site->wait)
			frame = profile_str(rec->p, site->wait - 1);
	} else if (site) {
		site->wait = profile_intern_str(rec->p, frame) + 1;
	}
	return resolver_add_leaf(rec->r, stack, frame);
}

static struct record_sites *sites_of(struct record *rec, uint32_t thread)
{
	if (thread >= rec->nr_sites) {
		size_t n = rec->nr_sites;

		ALLOC_GROW(rec->sites, thread + 1, rec->nr_sites);
		memset(rec->sites + n, 0, (rec->nr_sites - n) * sizeof(*rec->sites));
	}
	return &rec->sites[thread];
}

static struct record_site *site_find(struct record_sites *rs, uint64_t sp, uint64_t pc)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(rs->s); i++)
		if (rs->s[i].stack && rs->s[i].sp == sp && rs->s[i].pc == pc)
			return &rs->s[i];
	return NULL;
}

/* Write the recording's next chunk when one is due (a write error is reported at the end). */
static void record_stream(struct record *rec, uint64_t now_ns)
{
	if (rec->rw)
		recording_maybe_flush(rec->rw, rec->p, now_ns);
}

/* Per-thread state shares and the stall detector see every sample as it is counted. */
static void watch_sample(struct record *rec, const struct sampler_info *info, uint32_t stack)
{
	if (rec->tl)
		timeline_note_state(rec->tl, info->tid, info->state, info->weight);
	if (rec->stall)
		stall_feed_stack(rec->stall, rec->p, info->tid, info->comm, info->time_ns,
				 info->state, stack);
}

/* --verify: do the frames of the last resolver_stack() call equal libunwind-ptrace's? */
static void verify_sample(struct record *rec, const struct sampler_info *info)
{
	int n, m = info->nr_verify;
	const uint64_t *pcs = resolver_last_pcs(rec->r, &n);

	if (m <= 0)
		return;
	rec->verified++;
	/* libunwind-ptrace keeps at most SAMPLER_VERIFY_MAX frames */
	if (n > SAMPLER_VERIFY_MAX && m == SAMPLER_VERIFY_MAX)
		n = SAMPLER_VERIFY_MAX;
	if (n == m && !memcmp(pcs, info->verify_pcs, (size_t)n * sizeof(*pcs)))
		return;
	rec->verify_differ++;
	if (log_level >= LOG_LEVEL_DEBUG) {
		log_debug("verify: thread %d: perch %d frames, libunwind-ptrace %d", info->tid, n, m);
		for (int i = 0; i < n || i < m; i++)
			log_debug("  #%-3d %#18llx %#18llx", i,
				  i < n ? (unsigned long long)pcs[i] : 0ULL,
				  i < m ? (unsigned long long)info->verify_pcs[i] : 0ULL);
	}
}

static void on_sample(void *arg, const struct sampler_info *info,
		      const struct unwind_snapshot *snap)
{
	struct record *rec = arg;
	uint32_t thread = thread_of(rec, info->tid, info->comm);
	uint64_t sp = perch_regs_sp(rec->arch, &snap->regs), pc = perch_regs_pc(rec->arch, &snap->regs);
	uint32_t stack = resolver_stack(rec->r, snap);
	struct record_sites *rs = sites_of(rec, thread);
	struct record_site *site = site_find(rs, sp, pc);

	if (!site) {
		site = &rs->s[rs->next++ % ARRAY_SIZE(rs->s)];
		site->sp = sp;
		site->pc = pc;
		site->wait = 0;
	}
	site->stack = stack + 1;
	if (rec->verify)
		verify_sample(rec, info);
	stack = with_wait_frame(rec, info, stack, site);
	profile_add_weighted(rec->p, thread, stack, info->time_ns, info->state, info->weight);
	watch_sample(rec, info, stack);
	record_stream(rec, info->time_ns);
}

static void on_reuse(void *arg, const struct sampler_info *info, uint64_t sp, uint64_t pc)
{
	struct record *rec = arg;
	uint32_t thread = thread_of(rec, info->tid, info->comm);
	struct record_site *site = site_find(sites_of(rec, thread), sp, pc);

	/* the sampler names only sites of snapshots it queued before this item */
	if (site) {
		uint32_t stack = with_wait_frame(rec, info, site->stack - 1, site);

		profile_add_weighted(rec->p, thread, stack, info->time_ns, info->state,
				     info->weight);
		watch_sample(rec, info, stack);
	}
	record_stream(rec, info->time_ns);
}

static void on_event(void *arg, int kind, pid_t tid)
{
	struct record *rec = arg;

	if (kind == TRACEE_EV_THREAD_NEW)
		name_thread(rec, tid);
	else if (kind == TRACEE_EV_EXEC)
		resolver_reload(rec->r);
}

static int parse_args(struct record *rec, int argc, char **argv)
{
	enum { OPT_STACK = 256, OPT_TOP, OPT_LINES, OPT_SYSROOT, OPT_SYMFS, OPT_HELP, OPT_FORMAT,
	       OPT_MODE, OPT_CPU_INTERVAL, OPT_MEM_INTERVAL, OPT_STALL, OPT_STALL_THREAD,
	       OPT_VERIFY, OPT_NO_FOLLOW, OPT_NO_REUSE };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "stack-size", required_argument, NULL, OPT_STACK },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "sysroot", required_argument, NULL, OPT_SYSROOT },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "cpu-interval", required_argument, NULL, OPT_CPU_INTERVAL },
		{ "mem-interval", required_argument, NULL, OPT_MEM_INTERVAL },
		{ "stall", required_argument, NULL, OPT_STALL },
		{ "stall-thread", required_argument, NULL, OPT_STALL_THREAD },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "no-follow-cpu", no_argument, NULL, OPT_NO_FOLLOW },
		{ "no-idle-reuse", no_argument, NULL, OPT_NO_REUSE },
		{ 0 },
	};
	char *end;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:F:d:o:qv", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cmd_parse_pid(optarg, &rec->pid) < 0)
				return -EINVAL;
			break;
		case 'F':
			rec->hz = strtod(optarg, &end);
			if (*end || end == optarg || !(rec->hz > 0 && rec->hz <= 100000))
				return log_err(-EINVAL, "-F wants a rate in Hz between 0 and 100000, "
							"not '%s'", optarg);
			break;
		case 'd':
			rec->duration = strtod(optarg, &end);
			if (*end || end == optarg || !(rec->duration > 0))
				return log_err(-EINVAL, "-d wants a positive number of seconds, "
							"not '%s'", optarg);
			break;
		case 'o':
			if (rec->nr_outputs == RECORD_MAX_OUTPUTS)
				return log_err(-EINVAL, "at most %d -o options", RECORD_MAX_OUTPUTS);
			rec->outputs[rec->nr_outputs++].path = optarg;
			break;
		case OPT_CPU_INTERVAL:
		case OPT_MEM_INTERVAL: {
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 0 || v > 3600000 || (v > 0 && v < 10))
				return log_err(-EINVAL, "--%s wants 0 (off) or 10 to 3600000 ms, "
							"not '%s'", c == OPT_CPU_INTERVAL ?
							"cpu-interval" : "mem-interval", optarg);
			*(c == OPT_CPU_INTERVAL ? &rec->cpu_ms : &rec->mem_ms) = (unsigned int)v;
			break;
		}
		case OPT_STALL:
			rec->stall_ms = strtod(optarg, &end);
			if (*end || end == optarg || !(rec->stall_ms >= 0 && rec->stall_ms <= 3.6e6))
				return log_err(-EINVAL, "--stall wants 0 (off) to 3600000 ms, not '%s'",
					       optarg);
			break;
		case OPT_STALL_THREAD:
			if (!*optarg)
				return log_err(-EINVAL, "--stall-thread wants a thread id or name");
			rec->stall_thread = optarg;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "wall") && strcmp(optarg, "cpu"))
				return log_err(-EINVAL, "--mode is wall or cpu, not '%s'", optarg);
			rec->cpu_mode = !strcmp(optarg, "cpu");
			break;
		case OPT_FORMAT:
			rec->default_fmt = output_format_by_name(optarg);
			if (!rec->default_fmt)
				return log_err(-EINVAL, "unknown --format '%s' (see perch record --help)",
					       optarg);
			break;
		case 'q':
			rec->quiet = 1;
			break;
		case 'v':
			log_level++;
			break;
		case OPT_STACK: {
			long v = strtol(optarg, &end, 0);

			if (*end || v < 0 || v > RECORD_MAX_STACK)
				return log_err(-EINVAL, "--stack-size wants 0 to %d bytes, not '%s'",
					       RECORD_MAX_STACK, optarg);
			rec->stack_size = (size_t)v;
			break;
		}
		case OPT_TOP:
			rec->top = atoi(optarg);
			if (rec->top <= 0)
				return log_err(-EINVAL, "--top wants a positive number, not '%s'",
					       optarg);
			break;
		case OPT_LINES:
			rec->lines = 1;
			break;
		case OPT_VERIFY:
			rec->verify = 1;
			break;
		case OPT_NO_FOLLOW:
			rec->no_follow_cpu = 1;
			break;
		case OPT_NO_REUSE:
			rec->no_idle_reuse = 1;
			break;
		case OPT_SYSROOT:
			rec->sysroot = optarg;
			break;
		case OPT_SYMFS:
			rec->symfs = optarg;
			break;
		case OPT_HELP:
			fputs(record_usage, stdout);
			exit(PERCH_EXIT_OK);
		default:
			return log_err(-EINVAL, "unknown or incomplete option '%s'",
				       argv[optind - 1]);
		}
	}
	if (optind < argc)
		rec->argv = argv + optind;
	/* each -o by its ending; otherwise --format, otherwise folded */
	for (int i = 0; i < rec->nr_outputs; i++) {
		struct record_output *ro = &rec->outputs[i];

		ro->fmt = output_format_for_path(ro->path);
		if (!ro->fmt)
			ro->fmt = rec->default_fmt ? rec->default_fmt : &output_formats[0];
	}
	if (!rec->pid == !rec->argv)
		return log_err(-EINVAL, rec->pid ? "give either -p PID or a program, not both"
						 : "nothing to profile: give -p PID or -- PROGRAM");
	return 0;
}

static void print_summary(struct record *rec, const struct sampler_stats *st)
{
	const struct resolve_stats *rs = resolver_stats(rec->r);
	uint64_t total = profile_total_samples(rec->p);
	/* weight beyond one per sample; a stop can also give no sample (e.g. a thread that
	 * exited before the worker got to it), so do not let the difference wrap */
	uint64_t credited = total > st->samples + st->reused ? total - st->samples - st->reused : 0;
	double stacks = rs->stacks ? (double)rs->stacks : 1;
	const char *why = st->stop_reason == SAMPLER_STOP_EXIT	   ? "the target exited"
			  : st->stop_reason == SAMPLER_STOP_SIGNAL ? strsignal(st->signal)
			  : st->stop_reason == SAMPLER_STOP_ERROR  ? "an error"
								   : "duration reached";

	fprintf(stderr,
		"perch: recorded process %d for %.2f s at %g Hz (%s mode), stopped by %s\n"
		"perch:   samples: %llu  (%llu stops, %llu of blocked threads left alone, %llu credited "
		"for late stops and missed ticks)\n"
		"perch:   threads seen: %llu  ticks: %llu  missed ticks: %llu\n"
		"perch:   stop window per sample: p50 %llu us, p99 %llu us\n"
		"perch:   unwound to root: %.1f%%  (frame-pointer fallback %.1f%%, stopped early "
		"%.1f%%, cut at %d frames %.1f%%, %.1f frames, unwind %.1f us, symbolize %.1f us per "
		"sample; maps read %llu times)\n"
		"perch:   errors: registers %llu, stack copy %llu, dropped (perch behind) %llu; "
		"threads exited under perch %llu; signals passed through %llu\n",
		rec->t.pid, st->elapsed_s, rec->hz, rec->cpu_mode ? "cpu" : "wall", why,
		(unsigned long long)profile_total_samples(rec->p), (unsigned long long)st->samples,
		(unsigned long long)st->reused, (unsigned long long)credited,
		(unsigned long long)rec->t.stats.threads_seen, (unsigned long long)st->ticks,
		(unsigned long long)st->missed_ticks,
		(unsigned long long)sampler_stop_percentile(st, 50),
		(unsigned long long)sampler_stop_percentile(st, 99),
		100.0 * (double)rs->to_root / stacks, 100.0 * (double)rs->fp_used / stacks,
		100.0 * (double)rs->cfi_failed / stacks, UNWIND_MAX_FRAMES,
		100.0 * (double)rs->truncated / stacks, (double)rs->frames / stacks,
		(double)rs->unwind_ns / 1e3 / stacks, (double)rs->symbolize_ns / 1e3 / stacks,
		(unsigned long long)rs->reloads,
		(unsigned long long)st->err_regs, (unsigned long long)st->err_stack,
		(unsigned long long)st->dropped, (unsigned long long)(st->races + rec->t.stats.thread_races),
		(unsigned long long)rec->t.stats.signals);
	if (rec->verify)
		fprintf(stderr, "perch:   verify: %llu of %llu samples differ from libunwind-ptrace's "
				"unwind in the stop\n",
			(unsigned long long)rec->verify_differ, (unsigned long long)rec->verified);
}

static int write_one(struct record *rec, const struct profile *p, const struct record_output *ro)
{
	struct output_opts oo = { .lines = rec->lines, .top = rec->top };
	struct output_file of;
	int ret;

	ret = output_open(&of, ro->path);
	if (ret < 0)
		return log_errno(ret, "cannot create %s", ro->path);
	ret = ro->fmt->write(p, &oo, of.f);
	if (ret < 0) {
		output_abort(&of);
		return log_errno(ret, "cannot write %s", ro->path);
	}
	ret = output_commit(&of);
	if (ret < 0)
		return log_errno(ret, "cannot write %s", ro->path);
	if (!rec->quiet && strcmp(ro->path, "-"))
		fprintf(stderr, "perch: wrote %s (%s)\n", ro->path, ro->fmt->name);
	return 0;
}

static int is_recording(const struct record_output *ro)
{
	return ro->fmt->write == out_recording_write;
}

/* Close the streamed recording; the other outputs are then rendered from it, read back, so
 * that they have every sample (the live profile dropped the ones it had written). *@back is
 * NULL when it cannot be read back: they use the live profile's counts. */
static int finish_recording(struct record *rec, struct profile **back)
{
	uint64_t bytes = recording_bytes(rec->rw);
	struct recording_info info;
	int ret;

	*back = NULL;
	ret = recording_close(rec->rw, rec->p);
	rec->rw = NULL;
	if (ret < 0)
		return log_errno(ret, "cannot write %s", rec->rw_path);
	if (!rec->quiet)
		fprintf(stderr, "perch: wrote %s (perch recording, %llu KiB)\n", rec->rw_path,
			(unsigned long long)(bytes + 1023) / 1024);
	for (int i = 0; i < rec->nr_outputs; i++) {
		if (is_recording(&rec->outputs[i]))
			continue;
		ret = recording_read(rec->rw_path, back, &info);
		if (ret < 0 || !info.complete)
			log_warn(0, "cannot read back %s (%s): other outputs have no time line",
				 rec->rw_path, info.error[0] ? info.error : strerror(-ret));
		if (ret >= 0 && !info.complete) {
			profile_free(*back);
			*back = NULL;
		}
		break;
	}
	return 0;
}

static int write_outputs(struct record *rec)
{
	struct profile *back = NULL;
	int ret = 0;

	if (rec->rw && finish_recording(rec, &back) < 0)
		ret = -1;
	for (int i = 0; i < rec->nr_outputs; i++)
		if (!is_recording(&rec->outputs[i]) &&
		    write_one(rec, back ? back : rec->p, &rec->outputs[i]) < 0)
			ret = -1;
	profile_free(back);
	return ret;
}

/* Create the -o FILE.perch (at most one) before attaching: it is written while sampling. */
static int open_recording(struct record *rec)
{
	for (int i = 0; i < rec->nr_outputs; i++) {
		const struct record_output *ro = &rec->outputs[i];

		if (!is_recording(ro))
			continue;
		if (rec->rw_path)
			return log_err(-EINVAL, "only one recording (.perch) per run");
		if (!strcmp(ro->path, "-"))
			return log_err(-EINVAL, "a recording is written to a file, not to stdout");
		rec->rw_path = ro->path;
	}
	if (rec->rw_path && !(rec->rw = recording_create(rec->rw_path)))
		return log_errno(-errno, "cannot create %s", rec->rw_path);
	return 0;
}

/* What the writers need to know about the recording (see include/perch/writers.h). */
static void set_meta(struct record *rec, uint64_t start_realtime_ns, double elapsed_s)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%d", rec->t.pid);
	profile_set_meta(rec->p, "pid", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(1e9 / rec->hz));
	profile_set_meta(rec->p, "period_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)start_realtime_ns);
	profile_set_meta(rec->p, "start_time_ns", buf);
	if (elapsed_s >= 0) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(elapsed_s * 1e9));
		profile_set_meta(rec->p, "duration_ns", buf);
	}
	profile_set_meta(rec->p, "mode", rec->cpu_mode ? "cpu" : "wall");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The CPU/memory timeline (its own thread, /proc only) and the stall detector (fed by
 * watch_sample() on the sampler's worker thread). Neither can stop the recording. */
static void procstats_start(struct record *rec)
{
	rec->mono_start = mono_ns();
	if (rec->cpu_ms || rec->mem_ms) {
		struct timeline_opts o = { .pid = rec->t.pid, .cpu_interval_ms = rec->cpu_ms,
					   .mem_interval_ms = rec->mem_ms };
		int ret;

		rec->tl = timeline_new(&o);
		ret = timeline_start(rec->tl);
		if (ret < 0) {
			log_errno(ret, "no CPU and memory timeline: cannot start its thread");
			timeline_free(rec->tl);
			rec->tl = NULL;
		}
	}
	if (rec->stall_ms > 0) {
		struct stall_opts so = { .threshold_ns = (uint64_t)(rec->stall_ms * 1e6),
					 .period_ns = (uint64_t)(1e9 / rec->hz),
					 .cpu_mode = rec->cpu_mode, .tid = rec->t.pid };
		const char *s = rec->stall_thread;

		if (s && s[strspn(s, "0123456789")]) {
			so.tid = 0;
			so.name = s;
		} else if (s) {
			so.tid = (pid_t)strtol(s, NULL, 10);
		}
		rec->stall = stall_new(&so);
	}
}

static void procstats_stop(struct record *rec)
{
	if (rec->tl)
		timeline_stop(rec->tl);
	if (rec->stall)
		stall_finish(rec->stall, mono_ns());
}

static void procstats_summary(struct record *rec)
{
	const struct stall *v;
	size_t n, off = 0;
	pid_t tid;
	char name[64] = "";

	if (rec->tl)
		timeline_print_summary(rec->tl, "perch: ", 20, stderr);
	if (!rec->stall)
		return;
	v = stall_list(rec->stall, &n);
	tid = stall_watched(rec->stall);
	if (!tid) {
		fprintf(stderr, "perch:   stalls: no thread named '%s' was seen\n", rec->stall_thread);
		return;
	}
	for (size_t i = 0; i < n; i++)
		off += v[i].kind == STALL_OFF_CPU;
	for (size_t i = 0; i < profile_nr_threads(rec->p); i++)
		if (profile_thread_get(rec->p, (uint32_t)i)->tid == tid)
			snprintf(name, sizeof(name), "%s",
				 profile_str(rec->p, profile_thread_get(rec->p, (uint32_t)i)->name));
	fprintf(stderr, "perch:   stalls of thread %d (%s), %g ms or longer: %zu (%zu off-cpu, %zu "
			"running in one stack)%s\n",
		(int)tid, name, rec->stall_ms, n, off, n - off, n ? ", the longest:" : "");
	stall_print_longest(v, n, 5, rec->p, rec->mono_start, "perch:     ", stderr);
}

/* Timelines as counters, stalls as meta "stalls" (see writers.h). */
static void procstats_store(struct record *rec)
{
	char buf[32];

	if (rec->tl)
		timeline_store(rec->tl, rec->p);
	if (rec->stall) {
		size_t n;
		const struct stall *v = stall_list(rec->stall, &n);
		char *text = stall_meta_format(v, n);

		profile_set_meta(rec->p, "stalls", text);
		free(text);
		snprintf(buf, sizeof(buf), "%d", (int)stall_watched(rec->stall));
		profile_set_meta(rec->p, "stall_thread", buf);
		snprintf(buf, sizeof(buf), "%g", rec->stall_ms);
		profile_set_meta(rec->p, "stall_ms", buf);
	}
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

static int record_run(int argc, char **argv)
{
	const struct perch_arch *arch = perch_arch_host();
	struct record rec = { .hz = RECORD_DEFAULT_HZ, .stack_size = RECORD_DEFAULT_STACK,
			      .cpu_ms = TIMELINE_DEFAULT_CPU_MS, .mem_ms = TIMELINE_DEFAULT_MEM_MS,
			      .stall_ms = STALL_DEFAULT_MS };
	struct sampler_opts so;
	struct sampler_ops ops = { on_sample, on_reuse, on_event };
	struct sampler_stats *st = xcalloc(1, sizeof(*st));
	int ret, code = PERCH_EXIT_OK;
	uint64_t start_realtime_ns;
	struct timespec now;
	sigset_t old;

	if (parse_args(&rec, argc, argv) < 0) {
		fprintf(stderr, "\n%s", record_usage);
		free(st);
		return PERCH_EXIT_USAGE;
	}
	ret = open_recording(&rec);
	if (ret < 0) {
		free(st);
		return ret == -EINVAL ? PERCH_EXIT_USAGE : PERCH_EXIT_FATAL;
	}
	sampler_block_signals(&old);
	ret = rec.argv ? tracee_launch(&rec.t, rec.argv) : tracee_attach(&rec.t, rec.pid);
	if (ret < 0) {
		if (rec.rw) {
			/* nothing recorded: leave no empty recording behind */
			recording_close(rec.rw, NULL);
			unlink(rec.rw_path);
		}
		free(st);
		return PERCH_EXIT_FATAL;
	}
	log_info("attached to %d (%zu threads)", rec.t.pid, rec.t.nr_threads);

	rec.arch = arch;
	rec.p = profile_new();
	for (int i = 0; i < rec.nr_outputs; i++)
		if (rec.outputs[i].fmt->needs_samples)
			profile_keep_samples(rec.p, 1);
	clock_gettime(CLOCK_REALTIME, &now);
	start_realtime_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	rec.sym = symbolizer_new(rec.sysroot, rec.symfs);
	rec.r = resolver_new(rec.t.pid, arch, rec.p, rec.sym);
	for (size_t i = 0; i < rec.t.nr_threads; i++)
		name_thread(&rec, rec.t.threads[i]->tid);
	/* the process's name now: it may be gone when the profile is written */
	if (profile_nr_threads(rec.p))
		profile_set_meta(rec.p, "comm",
				 profile_str(rec.p, profile_thread_get(rec.p, 0)->name));

	set_meta(&rec, start_realtime_ns, -1);
	so = (struct sampler_opts){ .hz = rec.hz, .duration = rec.duration,
				    .stack_size = rec.stack_size, .cpu_mode = rec.cpu_mode,
				    .follow_cpu = !rec.no_follow_cpu, .verify = rec.verify,
				    .no_idle_reuse = rec.no_idle_reuse };
	procstats_start(&rec);
	ret = sampler_run(&rec.t, arch, &so, &ops, &rec, st);
	procstats_stop(&rec);
	if (ret < 0)
		log_errno(ret, "sampling stopped");
	if (rec.t.alive)
		tracee_detach_all(&rec.t, 2000);

	if (second_interrupt_pending()) {
		log_err(0, "interrupted twice: detached, no output written");
		code = 128 + SIGINT;
		goto out;
	}
	if (!rec.quiet) {
		print_summary(&rec, st);
		procstats_summary(&rec);
	}
	set_meta(&rec, start_realtime_ns, st->elapsed_s);
	procstats_store(&rec);
	if (write_outputs(&rec) < 0)
		code = PERCH_EXIT_FATAL;
	if (rec.top) {
		struct output_opts oo = { .lines = rec.lines, .top = rec.top };

		fflush(stdout);
		out_top_write(rec.p, &oo, stderr);
	}
	if (ret < 0)
		code = PERCH_EXIT_FATAL;
	else if (code == PERCH_EXIT_OK && (st->err_regs || st->err_stack))
		code = PERCH_EXIT_SAMPLE_ERRORS;
	if (rec.argv && code != PERCH_EXIT_FATAL) {
		/* launched: the program's own status, once it is done */
		/* a signal sent to perch alone (not the terminal's, which the program got too)
		 * is passed on, so the program ends as it would have */
		if (rec.t.alive && st->stop_reason == SAMPLER_STOP_SIGNAL &&
		    (st->signal_code == SI_USER || st->signal_code == SI_QUEUE))
			kill(rec.t.pid, st->signal);
		code = exit_code_of(tracee_wait_exit(&rec.t));
	}
out:
	if (rec.rw)
		recording_close(rec.rw, rec.p);
	timeline_free(rec.tl);
	stall_free(rec.stall);
	resolver_free(rec.r);
	symbolizer_free(rec.sym);
	profile_free(rec.p);
	tracee_release(&rec.t);
	free(rec.sites);
	free(st);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return code;
}

const struct cmd cmd_record = {
	.name = "record",
	.summary = "sample a process's stacks and write a profile",
	.usage = record_usage,
	.run = record_run,
};
