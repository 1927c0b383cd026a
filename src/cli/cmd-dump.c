/* `perch dump`: one snapshot of every thread (name, state, frames with file:line), like
 * eu-stack, then detach. All threads are held stopped together so the picture is consistent;
 * unwinding and naming happen after the detach. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/arch.h"
#include "perch/art/art-thread.h"
#include "perch/art/art.h"
#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/cli/repl.h"
#include "perch/proc/proc-task.h"
#include "perch/profile/profile.h"
#include "perch/record/dump.h"
#include "perch/sample/sampler.h"
#include "perch/sample/tracee.h"
#include "perch/symbols/symbolize.h"
#include "perch/unwind/resolve.h"
#include "perch/unwind/unwind.h"

enum { OPT_SYSROOT = 256, OPT_SYMFS, OPT_ART_FRAMES, OPT_FORMAT, OPT_HELP };

/* A dump is short-lived and reads much DWARF at once: its heap grows in huge pages
 * (xalloc_short_lived). 32 MiB is of address space; only what is used is backed. */
#define DUMP_HEAP_BYTES (32u << 20)
/* the largest -n N (0 asks for every frame the stack copy holds) */
#define DUMP_MAX_FRAMES_ARG 10000000

static const struct opt_spec dump_opts[] = {
    {"pid", 'p', "PID|NAME", "the process: a pid, or a name as attach takes it", 0},
    {"sysroot", OPT_SYSROOT, "DIR", "look for debug files under DIR/usr/lib/debug", 0},
    {"symfs", OPT_SYMFS, "DIR", "look for unstripped copies of modules under DIR first", 0},
    {"max-frames", 'n', "N",
     "show at most N frames a thread (default 1024; 0: all, as\n"
     "far as the stack copy goes); a longer stack ends in a\n"
     "[truncated] frame",
     0},
    {"show-art-frames", OPT_ART_FRAMES, NULL,
     "keep the Android runtime's own frames between Java frames", 0},
    {"format", OPT_FORMAT, "NAME",
     "text (default), or the Java threads in the layout of\n"
     "ART's own thread dump (kill -3, an ANR trace) with anr:\n"
     "text anr",
     0},
    {"verbose", 'v', NULL, "more messages", 0},
    {"help", OPT_HELP, NULL, NULL, 0},
};

static void dump_help(struct strbuf *sb)
{
	strbuf_addstr(sb, "usage: perch dump [options] -p PID|NAME\n"
			  "\n"
			  "Print the stack of every thread of PID once, then detach.\n"
			  "\n");
	opts_help(sb, dump_opts, ARRAY_SIZE(dump_opts), 0, 22);
}

/* ", pid 1 in its PID namespace" when @pid is known by another number inside its own PID
 * namespace (a container, `unshare -p`), else "". */
static void ns_note(pid_t pid, char *buf, size_t size)
{
	struct proc_status st;

	buf[0] = 0;
	if (proc_status_read(pid, 0, &st) == 0 && st.ns_pid != pid)
		snprintf(buf, size, ", pid %d in its PID namespace", (int)st.ns_pid);
}

static void print_frame(void *arg, const struct dump_frame *f)
{
	struct strbuf *sb = arg;

	strbuf_reset(sb);
	dump_frame_text(f, sb);
	puts(sb->buf);
}

static void print_thread(struct profile *p, struct resolver *r, struct dump_thread *dt,
			 const struct art_thread *jt, int max_frames)
{
	struct strbuf sb = STRBUF_INIT;
	const char *note;

	printf("TID %d \"%s\" (%c)\n", dt->tid, dt->name, dt->state);
	if (jt) {
		dump_java_text(jt, &sb);
		printf("    %s\n", sb.buf);
	}
	if (dt->wait[0])
		printf("    %s\n", dt->wait);
	if (dt->taken && dump_frames(p, r, dt, print_frame, &sb))
		log_warn(0, "thread %d: stack cut at %d frames (--max-frames N shows more, 0 all)",
			 dt->tid, max_frames);
	note = dump_note(dt, &sb);
	if (note)
		printf("    %s\n", note);
	strbuf_release(&sb);
}

/* --format anr: ART's thread dump layout, its Java threads only */
static void print_anr(struct profile *p, struct resolver *r, pid_t pid, struct dump_thread *dts,
		      size_t nr, const struct art_threads *jts)
{
	struct strbuf sb = STRBUF_INIT;

	printf("----- pid %d -----\n\nDALVIK THREADS (%zu):\n", (int)pid, jts->nr);
	for (size_t i = 0; i < nr; i++) {
		const struct art_thread *jt = art_threads_find(jts, dts[i].tid);

		if (!jt)
			continue;
		strbuf_reset(&sb);
		dump_anr_thread(p, r, &dts[i], jt, &sb);
		fputs(sb.buf, stdout);
	}
	printf("----- end %d -----\n", (int)pid);
	strbuf_release(&sb);
}

static int dump_run(int argc, char **argv)
{
	const struct perch_arch *arch;
	const char *sysroot = NULL, *symfs = NULL;
	struct dump_thread *dts, *pre;
	struct symbolizer *sym;
	struct resolver *r;
	struct profile *p;
	struct proc_stat ps;
	struct opts_getopt g;
	struct tracee t;
	pid_t pid = 0, task;
	int c, code = PERCH_EXIT_OK, max_frames = UNWIND_DUMP_DEFAULT_FRAMES, art_frames = 0;
	int anr = 0, java;
	struct art_threads jts;
	char *end;
	long v;
	size_t nr, nr_pre;
	char ns[64];
	sigset_t old;

	xalloc_short_lived(DUMP_HEAP_BYTES);
	opts_getopt_init(&g, 0);
	opts_getopt_add(&g, dump_opts, ARRAY_SIZE(dump_opts), 0);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			code = cmd_find_pid(optarg, &pid);
			if (code)
				return code;
			break;
		case 'v':
			log_level++;
			break;
		case 'n':
			v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < 0 || v > DUMP_MAX_FRAMES_ARG) {
				log_err(0, "--max-frames wants 0 (all) to %d frames, not '%s'",
					DUMP_MAX_FRAMES_ARG, optarg);
				return PERCH_EXIT_USAGE;
			}
			max_frames = (int)v;
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
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "anr")) {
				log_err(0, "--format wants text or anr, not '%s'", optarg);
				return PERCH_EXIT_USAGE;
			}
			anr = !strcmp(optarg, "anr");
			break;
		case OPT_HELP:
			cmd_print_help(&cmd_dump, stdout);
			return PERCH_EXIT_OK;
		default:
			log_err(0, "unknown or incomplete option '%s'", argv[optind - 1]);
			cmd_print_help(&cmd_dump, stderr);
			return PERCH_EXIT_USAGE;
		}
	}
	if (!pid || optind < argc) {
		log_err(0, pid ? "unexpected argument '%s'" : "give the process with -p PID",
			pid ? argv[optind] : "");
		cmd_print_help(&cmd_dump, stderr);
		return PERCH_EXIT_USAGE;
	}

	if (!perch_arch_of_pid(pid))
		return PERCH_EXIT_FATAL;
	/* states first: once traced, a stopped process's threads read as 't' */
	pre = dump_states(pid, &nr_pre);
	sampler_block_signals(&old);
	if (tracee_attach(&t, pid) < 0) {
		free(pre);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return PERCH_EXIT_FATAL;
	}
	arch = t.procs[0]->arch ? t.procs[0]->arch : perch_arch_host();
	task = tracee_proc_task(&t, t.procs[0]);
	dts = dump_threads(&t, 0, pre, nr_pre, &nr);
	dump_release(pre, 0);
	dump_collect(&t, arch, &dts, &nr, DUMP_NEW_THREADS);
	p = profile_new();
	sym = symbolizer_new(sysroot, symfs);
	/* memory and maps through a live thread: an exited main thread has none */
	r = resolver_new(task, arch, p, sym);
	/* ART's threads while they are held stopped: the states of the stacks' moment */
	java = art_proc_threads(resolver_art(r), &jts);
	tracee_detach_all(&t, 2000);

	resolver_set_max_frames(r, max_frames);
	resolver_show_art_frames(r, art_frames);
	ns_note(pid, ns, sizeof(ns));
	if (anr)
		; /* ART's layout has its own header */
	else if (proc_stat_read(pid, 0, &ps) == 0)
		printf("PID %d (%s)%s\n", pid, ps.comm, ns);
	else
		printf("PID %d%s\n", pid, ns);
	if (anr && java < 0) {
		log_err(0, "no Java threads to show in ART's layout: %s",
			java == -EPROTO ? "the runtime's layout is not one perch knows"
					: "no Android runtime found in the process");
		code = PERCH_EXIT_FATAL;
	} else if (anr) {
		print_anr(p, r, pid, dts, nr, &jts);
	}
	for (size_t i = 0; i < nr && !anr; i++) {
		print_thread(p, r, &dts[i], java == 0 ? art_threads_find(&jts, dts[i].tid) : NULL,
			     max_frames);
		if (i + 1 < nr)
			putchar('\n');
	}
	art_threads_release(&jts);
	resolver_free(r);
	symbolizer_free(sym);
	profile_free(p);
	tracee_release(&t);
	dump_release(dts, nr);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return code;
}

const struct cmd cmd_dump = {
    .name = "dump",
    .summary = "print the stack of every thread once, like eu-stack",
    .help = dump_help,
    .run = dump_run,
    .prompt = &repl_dump,
};
