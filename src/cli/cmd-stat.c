/* `perch stat`: a live table of one process's CPU, thread states and memory, refreshed every
 * interval (like pidstat or top for one process). Reads /proc only: no ptrace. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/proc/cpustat.h"
#include "perch/proc/proc-task.h"
#include "perch/proc/timeline.h"

#define STAT_DEFAULT_MS 1000

static const struct opt_spec stat_opts[] = {
    {"pid", 'p', "PID", "the process to watch", 0},
    {"interval", 'i', "MS", "refresh every MS milliseconds (default 1000, at least 10)", 0},
    {"duration", 'd', "SEC",
     "stop after SEC seconds (default: until the process exits or\n"
     "Ctrl-C)",
     0},
    {"help", 'h', NULL, NULL, 0},
};

static void stat_complete_options(void (*add)(void *arg, const char *word), void *arg)
{
	opts_complete(stat_opts, ARRAY_SIZE(stat_opts), 0, add, arg);
}

static void stat_help(struct strbuf *sb)
{
	strbuf_addstr(
	    sb,
	    "usage: perch stat [options] -p PID\n"
	    "\n"
	    "Show a process's CPU use (whole process and per thread: % of one core, user and\n"
	    "system), each thread's state, and its memory (RSS, PSS, USS, swap from\n"
	    "/proc/PID/smaps_rollup), refreshed every interval, from /proc only (no ptrace). On a\n"
	    "terminal the table is redrawn in place; otherwise the tables follow one another.\n"
	    "\n");
	opts_help(sb, stat_opts, ARRAY_SIZE(stat_opts), 0, 25);
	strbuf_addstr(sb, "\nExit status: 0 ok (also when the process exits), 2 cannot read it, "
			  "64 usage.\n");
}

static volatile sig_atomic_t stat_stop;

static void on_signal(int sig)
{
	(void)sig;
	stat_stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const struct proc_stat *find_task(const struct timeline_reading *r, pid_t tid)
{
	size_t lo = 0, hi = r->nr_tasks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->tasks[mid].pid == tid)
			return &r->tasks[mid];
		if (r->tasks[mid].pid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void print_table(pid_t pid, const struct timeline_reading *a,
			const struct timeline_reading *b, const struct timeline_mem *m,
			int have_mem, double since_s, long clk, unsigned int ncpus, FILE *f)
{
	uint64_t wall = b->time_ns - a->time_ns;
	struct cpustat_task_usage u;
	struct cpustat_usage su;

	fprintf(f, "perch stat: %d (%s)  +%.1f s  threads %zu\n", (int)pid, b->proc.comm, since_s,
		b->nr_tasks);
	if (cpustat_task_usage(&a->proc, &b->proc, wall, clk, ncpus, &u) == 0)
		fprintf(f,
			"  CPU %.1f%% of one core (%.1f%% of %u cores; user %.1f%%, system "
			"%.1f%%)",
			u.one_core, u.all_cores, ncpus, u.user, u.system);
	if (a->has_sys && b->has_sys && cpustat_usage(&a->sys, &b->sys, &su) == 0)
		fprintf(f, "  system busy %.1f%%", su.busy);
	fputc('\n', f);
	if (have_mem)
		fprintf(f, "  memory: RSS %.1f MiB  PSS %.1f MiB  USS %.1f MiB  swap %.1f MiB\n",
			(double)m->rss / 1048576.0, (double)m->pss / 1048576.0,
			(double)m->uss / 1048576.0, (double)m->swap / 1048576.0);
	fprintf(f, "  %8s  %-16s %s %6s %6s %6s %4s\n", "TID", "NAME", "S", "CPU%", "USR%", "SYS%",
		"CPU#");
	for (size_t i = 0; i < b->nr_tasks; i++) {
		const struct proc_stat *t = &b->tasks[i], *prev = find_task(a, t->pid);

		fprintf(f, "  %8d  %-16.16s %c", (int)t->pid, t->comm, t->state ? t->state : '?');
		if (prev && cpustat_task_usage(prev, t, wall, clk, ncpus, &u) == 0)
			fprintf(f, " %6.1f %6.1f %6.1f", u.one_core, u.user, u.system);
		else
			fprintf(f, " %6s %6s %6s", "-", "-", "-");
		fprintf(f, " %4d\n", t->processor);
	}
}

static int stat_run(int argc, char **argv)
{
	struct opts_getopt g;
	struct timeline_reading a = {0}, b = {0}, tmp;
	struct proc_stat_files files;
	long clk = cpustat_clk_tck(), interval = STAT_DEFAULT_MS;
	unsigned int ncpus = cpustat_ncpus();
	double duration = 0;
	enum meminfo_rules rules = MEMINFO_RULES_AUTO;
	int c, pid = 0, tty = isatty(STDOUT_FILENO), ret, tables = 0;
	struct sigaction sa = {.sa_handler = on_signal};
	uint64_t start, next;
	char *end;

	opts_getopt_init(&g, 1);
	opts_getopt_add(&g, stat_opts, ARRAY_SIZE(stat_opts), 0);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (opt_parse_pid(optarg, &pid) < 0)
				goto usage;
			break;
		case 'i':
			interval = strtol(optarg, &end, 10);
			if (*end || end == optarg || interval < 10 || interval > 3600000) {
				log_err(0, "-i wants 10 to 3600000 milliseconds, not '%s'", optarg);
				goto usage;
			}
			break;
		case 'd':
			duration = strtod(optarg, &end);
			if (*end || end == optarg || !(duration > 0)) {
				log_err(0, "-d wants a positive number of seconds, not '%s'",
					optarg);
				goto usage;
			}
			break;
		case 'h':
			cmd_print_help(&cmd_stat, stdout);
			return PERCH_EXIT_OK;
		default:
			log_err(0, "unknown or incomplete option '%s'", argv[optind - 1]);
			goto usage;
		}
	}
	if (optind < argc) {
		log_err(0, "unexpected argument '%s'", argv[optind]);
		goto usage;
	}
	if (!pid) {
		log_err(0, "nothing to watch: give -p PID");
		goto usage;
	}
	proc_stat_files_init(&files, pid);
	ret = timeline_read(pid, &files, 1, &a);
	if (ret < 0) {
		log_errno(ret, "cannot read /proc/%d", pid);
		timeline_reading_release(&a);
		proc_stat_files_release(&files);
		return PERCH_EXIT_FATAL;
	}
	stat_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	start = next = a.time_ns;
	while (!stat_stop) {
		struct timeline_mem m;
		uint64_t smaps_ns, now;
		struct timespec ts;
		int have_mem;

		next += (uint64_t)interval * 1000000;
		if (duration > 0 && (double)(next - start) / 1e9 > duration + 1e-3)
			break;
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
		    stat_stop)
			break;
		ret = timeline_read(pid, &files, 1, &b);
		if (ret < 0) {
			fprintf(stderr, "perch: process %d is gone\n", pid);
			break;
		}
		have_mem = timeline_read_mem(pid, 0, &rules, &m, &smaps_ns) == 0;
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (tables)
			fputc('\n', stdout);
		print_table(pid, &a, &b, &m, have_mem, (double)(b.time_ns - start) / 1e9, clk,
			    ncpus, stdout);
		tables++;
		if (fflush(stdout) || ferror(stdout)) {
			log_err(0, "cannot write the table");
			break;
		}
		tmp = a;
		a = b;
		b = tmp;
		now = now_ns();
		if (next < now)
			next = now; /* fell behind (a stopped terminal): no burst of tables */
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	timeline_reading_release(&a);
	timeline_reading_release(&b);
	proc_stat_files_release(&files);
	return PERCH_EXIT_OK;
usage:
	cmd_print_help(&cmd_stat, stderr);
	return PERCH_EXIT_USAGE;
}

const struct cmd cmd_stat = {
    .name = "stat",
    .summary = "a live table of a process's CPU, thread states and memory (no ptrace)",
    .help = stat_help,
    .complete_options = stat_complete_options,
    .run = stat_run,
    .flags = CMD_PID | CMD_NO_PTRACE,
};
