/* `perch dump`: one snapshot of every thread (name, state, frames with file:line), like
 * eu-stack, then detach. All threads are held stopped together so the picture is consistent;
 * unwinding and naming happen after the detach. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perch/arch.h"
#include "perch/cmd.h"
#include "perch/log.h"
#include "perch/path.h"
#include "perch/proc-task.h"
#include "perch/profile.h"
#include "perch/resolve.h"
#include "perch/sampler.h"
#include "perch/symbolize.h"
#include "perch/tracee.h"
#include "perch/unwind.h"
#include "perch/xalloc.h"

#define DUMP_STACK_SIZE (256 * 1024)
#define DUMP_STOP_TIMEOUT_MS 2000

static const char dump_usage[] =
	"usage: perch dump [options] -p PID\n"
	"\n"
	"Print the stack of every thread of PID once, then detach.\n"
	"\n"
	"  -p, --pid PID       the process\n"
	"      --sysroot DIR   look for debug files under DIR/usr/lib/debug\n"
	"      --symfs DIR     look for unstripped copies of modules under DIR first\n"
	"      --show-art-frames  keep the Android runtime's own frames between Java frames\n"
	"  -v, --verbose       more messages\n";

struct dump_thread {
	pid_t tid;
	char name[64];
	char state;
	int taken;
	struct unwind_snapshot snap;
};

static void print_stack(struct profile *p, struct resolver *r, struct dump_thread *dt)
{
	uint32_t stack = resolver_stack(r, &dt->snap);
	size_t nlocs, n = 0;
	const uint32_t *locs = profile_stack(p, stack, &nlocs);
	int npcs;
	const uint64_t *pcs = resolver_last_pcs(r, &npcs);

	for (size_t i = 0; i < nlocs; i++) {
		const struct profile_location *loc = profile_location(p, locs[i]);
		size_t nf;
		const uint32_t *frames = profile_location_frames(p, locs[i], &nf);
		const char *module = loc->module ? path_base(profile_str(p, loc->module)) : "?";

		for (size_t k = 0; k < nf; k++) {
			const struct profile_frame *f = profile_frame(p, frames[k]);

			printf("#%zu  0x%016llx %s%s (%s)", n++,
			       (unsigned long long)(i < (size_t)npcs ? pcs[i] : 0),
			       profile_str(p, f->name), f->detail ? profile_str(p, f->detail) : "",
			       module);
			if (f->file && f->line)
				printf(" at %s:%u", profile_str(p, f->file), f->line);
			if (f->inlined)
				printf(" [inlined]");
			putchar('\n');
		}
	}
}

/* Interrupt every thread and snapshot each as its stop arrives; threads stay stopped. */
static void collect(struct tracee *t, const struct perch_arch *arch, struct dump_thread *dts,
		    size_t nr)
{
	uint64_t deadline = tracee_now_ns() + DUMP_STOP_TIMEOUT_MS * 1000000ULL;
	struct tracee_event ev;
	size_t waiting = 0;

	for (size_t i = 0; i < t->nr_threads; i++)
		if (tracee_interrupt(t, t->threads[i], tracee_now_ns()) == 0)
			waiting++;
	while (waiting && tracee_now_ns() < deadline) {
		int ret = tracee_poll(t, &ev);

		if (ret < 0)
			break;
		if (ret == 0) {
			struct timespec ts = { 0, 100000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (ev.kind == TRACEE_EV_EXIT)
			break;
		if (ev.kind == TRACEE_EV_THREAD_GONE)
			waiting--;
		if (ev.kind != TRACEE_EV_STOPPED)
			continue;
		waiting--;
		for (size_t i = 0; i < nr; i++) {
			if (dts[i].tid == ev.thread->tid) {
				dts[i].taken = sampler_snapshot(t, arch, ev.thread, &dts[i].snap) == 0;
				break;
			}
		}
	}
}

static int dump_run(int argc, char **argv)
{
	enum { OPT_SYSROOT = 256, OPT_SYMFS, OPT_ART_FRAMES, OPT_HELP };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "sysroot", required_argument, NULL, OPT_SYSROOT },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "show-art-frames", no_argument, NULL, OPT_ART_FRAMES },
		{ "help", no_argument, NULL, OPT_HELP },
		{ 0 },
	};
	const struct perch_arch *arch;
	const char *sysroot = NULL, *symfs = NULL;
	struct dump_thread *dts;
	struct symbolizer *sym;
	struct resolver *r;
	struct profile *p;
	struct proc_stat ps;
	struct tracee t;
	pid_t pid = 0, *tids = NULL;
	int c, n, code = PERCH_EXIT_OK, art_frames = 0;
	size_t nr;
	sigset_t old;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:v", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cmd_parse_pid(optarg, &pid) < 0)
				return PERCH_EXIT_USAGE;
			break;
		case 'v':
			log_level++;
			break;
		case OPT_SYSROOT:
			sysroot = optarg;
			break;
		case OPT_SYMFS:
			symfs = optarg;
			break;
		case OPT_ART_FRAMES:
			art_frames = 1;
			break;
		case OPT_HELP:
			fputs(dump_usage, stdout);
			return PERCH_EXIT_OK;
		default:
			log_err(0, "unknown or incomplete option '%s'", argv[optind - 1]);
			fprintf(stderr, "\n%s", dump_usage);
			return PERCH_EXIT_USAGE;
		}
	}
	if (!pid || optind < argc) {
		log_err(0, pid ? "unexpected argument '%s'" : "give the process with -p PID",
			pid ? argv[optind] : "");
		fprintf(stderr, "\n%s", dump_usage);
		return PERCH_EXIT_USAGE;
	}

	arch = perch_arch_of_pid(pid);
	if (!arch)
		return PERCH_EXIT_FATAL;
	sampler_block_signals(&old);
	if (tracee_attach(&t, pid) < 0)
		return PERCH_EXIT_FATAL;
	/* states first: a thread we stopped reads as 't' */
	n = proc_task_list(pid, &tids);
	nr = n > 0 ? (size_t)n : 0;
	dts = xcalloc(nr ? nr : 1, sizeof(*dts));
	for (size_t i = 0; i < nr; i++) {
		dts[i].tid = tids[i];
		dts[i].state = proc_stat_read(pid, tids[i], &ps) == 0 ? ps.state : '?';
		if (proc_task_comm(pid, tids[i], dts[i].name, sizeof(dts[i].name)) < 0)
			strcpy(dts[i].name, "?");
		dts[i].snap.stack_cap = DUMP_STACK_SIZE;
		dts[i].snap.stack = xmalloc(DUMP_STACK_SIZE);
	}
	free(tids);
	collect(&t, arch, dts, nr);
	tracee_detach_all(&t, 2000);

	p = profile_new();
	sym = symbolizer_new(sysroot, symfs);
	r = resolver_new(pid, arch, p, sym);
	resolver_show_art_frames(r, art_frames);
	if (proc_stat_read(pid, 0, &ps) == 0)
		printf("PID %d (%s)\n", pid, ps.comm);
	else
		printf("PID %d\n", pid);
	for (size_t i = 0; i < nr; i++) {
		printf("TID %d \"%s\" (%c)\n", dts[i].tid, dts[i].name, dts[i].state);
		if (dts[i].taken)
			print_stack(p, r, &dts[i]);
		else
			printf("    (no stack: the thread did not stop in time or exited)\n");
		if (i + 1 < nr)
			putchar('\n');
		free(dts[i].snap.stack);
	}
	resolver_free(r);
	symbolizer_free(sym);
	profile_free(p);
	tracee_release(&t);
	free(dts);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return code;
}

const struct cmd cmd_dump = {
	.name = "dump",
	.summary = "print the stack of every thread once, like eu-stack",
	.usage = dump_usage,
	.run = dump_run,
};
