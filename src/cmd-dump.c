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
/* A stopped thread's stack is copied whole, up to this (a 3000-frame recursion of 200-byte
 * frames takes 600 KiB; glibc's default thread stack is 8 MiB) */
#define DUMP_STACK_MAX	     (64 * 1024 * 1024)
#define DUMP_STOP_TIMEOUT_MS 2000
/* how often threads that have not stopped are checked for uninterruptible sleep */
#define DUMP_D_CHECK_NS (50 * 1000000ULL)

static const char dump_usage[] =
    "usage: perch dump [options] -p PID\n"
    "\n"
    "Print the stack of every thread of PID once, then detach.\n"
    "\n"
    "  -p, --pid PID       the process\n"
    "      --sysroot DIR   look for debug files under DIR/usr/lib/debug\n"
    "      --symfs DIR     look for unstripped copies of modules under DIR first\n"
    "  -n, --max-frames N  show at most N frames a thread (default 1024; 0: 4000); a\n"
    "                      longer stack ends in a [truncated] frame\n"
    "      --show-art-frames  keep the Android runtime's own frames between Java frames\n"
    "  -v, --verbose       more messages\n";

enum dump_taken {
	DUMP_NONE,
	DUMP_STOPPED, /* registers and stack from a ptrace-stop */
	DUMP_BLOCKED, /* from /proc: it is in uninterruptible sleep and cannot be stopped */
};

struct dump_thread {
	pid_t tid;
	char name[64];
	char state;
	enum dump_taken taken;
	const char *why; /* no stack: why */
	struct unwind_snapshot snap;
};

static void print_stack(struct profile *p, struct resolver *r, struct dump_thread *dt,
			int max_frames)
{
	uint64_t truncated = resolver_stats(r)->truncated;
	uint32_t stack = resolver_stack(r, &dt->snap);
	size_t nlocs, n = 0;
	const uint32_t *locs = profile_stack(p, stack, &nlocs);
	int npcs;
	const uint64_t *pcs = resolver_last_loc_pcs(r, &npcs);

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
			if (f->tailcall) /* gdb shows these as plain frames; perch says so */
				printf(" (tail call)");
			putchar('\n');
		}
	}
	if (resolver_stats(r)->truncated != truncated)
		log_warn(0, "thread %d: stack cut at %d frames (--max-frames N shows more, 0 all)",
			 dt->tid, max_frames);
}

static struct dump_thread *dump_find(struct dump_thread *dts, size_t nr, pid_t tid)
{
	for (size_t i = 0; i < nr; i++)
		if (dts[i].tid == tid)
			return &dts[i];
	return NULL;
}

/* A thread in uninterruptible sleep ('D') would not stop before it leaves the kernel (a vfork
 * parent waits there until its child execs): take what /proc shows of it instead. */
static void take_blocked(const struct tracee *t, const struct perch_arch *arch,
			 struct dump_thread *dt)
{
	char path[64], *text;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", t->pid, dt->tid);
	text = proc_read_file(path, NULL);
	if (sampler_snapshot_blocked(arch, dt->tid, text, &dt->snap) == 0)
		dt->taken = DUMP_BLOCKED;
	else
		dt->why = "it is in uninterruptible sleep (D) outside a system call, so it "
			  "cannot be stopped and /proc does not show where it is";
	free(text);
}

/* Is the thread in uninterruptible sleep now? */
static int in_d_state(pid_t pid, pid_t tid)
{
	struct proc_stat ps;

	return proc_stat_read(pid, tid, &ps) == 0 && ps.state == 'D';
}

/* Interrupt every thread and snapshot each as its stop arrives; threads stay stopped. Threads
 * in uninterruptible sleep are not interrupted (the stop would come only when they wake):
 * they are read from /proc, as is one that goes to sleep so before its stop arrives. */
static void collect(struct tracee *t, const struct perch_arch *arch, struct dump_thread *dts,
		    size_t nr)
{
	uint64_t start = tracee_now_ns(), next_check = start + DUMP_D_CHECK_NS;
	uint64_t deadline = start + DUMP_STOP_TIMEOUT_MS * 1000000ULL;
	struct tracee_event ev;
	size_t waiting = 0;

	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct dump_thread *dt = dump_find(dts, nr, th->tid);

		if (dt && dt->state == 'D')
			take_blocked(t, arch, dt);
		else if (dt && tracee_interrupt(t, th, tracee_now_ns()) == 0)
			waiting++;
	}
	while (waiting && tracee_now_ns() < deadline) {
		int ret = tracee_poll(t, &ev);
		struct dump_thread *dt;

		if (ret < 0)
			break;
		if (ret == 0) {
			struct timespec ts = {0, 100000};

			if (tracee_now_ns() >= next_check) {
				next_check += DUMP_D_CHECK_NS;
				for (size_t i = 0; i < t->nr_threads; i++) {
					struct tracee_thread *th = t->threads[i];

					dt = dump_find(dts, nr, th->tid);
					if (dt && !dt->taken && th->state == TRACEE_INTERRUPTING &&
					    in_d_state(t->pid, th->tid)) {
						dt->state = 'D';
						take_blocked(t, arch, dt);
						waiting--;
					}
				}
			}
			nanosleep(&ts, NULL);
			continue;
		}
		if (ev.kind == TRACEE_EV_EXIT)
			break;
		dt = ev.thread ? dump_find(dts, nr, ev.thread->tid) : NULL;
		if (ev.kind == TRACEE_EV_THREAD_GONE && dt && !dt->taken) {
			dt->why = "the thread exited";
			waiting--;
		}
		if (ev.kind != TRACEE_EV_STOPPED || !dt || dt->taken)
			continue;
		waiting--;
		dt->taken =
		    sampler_snapshot(t, arch, ev.thread, &dt->snap) == 0 ? DUMP_STOPPED : DUMP_NONE;
		/* the thread waits for us: the whole stack, not the first part */
		if (dt->taken)
			unwind_snapshot_grow(ev.thread->tid, &dt->snap, DUMP_STACK_MAX);
	}
}

/* The states, before perch stops anything: a thread perch stops reads as 't', and a stopped
 * process's threads too once they are traced. */
static void read_states(pid_t pid, struct dump_thread *dts, size_t nr)
{
	struct proc_stat ps;

	for (size_t i = 0; i < nr; i++)
		dts[i].state = proc_stat_read(pid, dts[i].tid, &ps) == 0 ? ps.state : '?';
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

/* Every thread of @pid now: the traced ones and those perch cannot trace (an exited main
 * thread), ascending, each with the state it had before the attach when it was known. */
static struct dump_thread *dump_threads(const struct tracee *t, const struct dump_thread *pre,
					size_t nr_pre, size_t *nr)
{
	pid_t *tids = NULL;
	int n = proc_task_list(t->pid, &tids);
	struct dump_thread *dts;
	struct proc_stat ps;

	*nr = n > 0 ? (size_t)n : 0;
	dts = xcalloc(*nr ? *nr : 1, sizeof(*dts));
	for (size_t i = 0; i < *nr; i++) {
		struct dump_thread *dt = &dts[i];
		const struct tracee_thread *th = tracee_find(t, tids[i]);

		dt->tid = tids[i];
		dt->state = '?';
		for (size_t k = 0; k < nr_pre; k++)
			if (pre[k].tid == dt->tid)
				dt->state = pre[k].state;
		if (dt->state == '?' && proc_stat_read(t->pid, dt->tid, &ps) == 0)
			dt->state = tracee_state_letter(th, ps.state);
		if (proc_task_comm(t->pid, dt->tid, dt->name, sizeof(dt->name)) < 0)
			strcpy(dt->name, "?");
		if (!th)
			dt->why = dt->tid == t->pid && (dt->state == 'Z' || dt->state == 'X')
				      ? "the main thread has exited; the process runs on in its "
					"other threads"
				      : "perch could not attach to it";
		dt->snap.stack_cap = DUMP_STACK_SIZE;
		dt->snap.stack = xmalloc(DUMP_STACK_SIZE);
	}
	free(tids);
	return dts;
}

static void print_thread(struct profile *p, struct resolver *r, struct dump_thread *dt,
			 int max_frames)
{
	printf("TID %d \"%s\" (%c)\n", dt->tid, dt->name, dt->state);
	if (dt->taken)
		print_stack(p, r, dt, max_frames);
	if (dt->taken == DUMP_BLOCKED)
		printf("    (in uninterruptible sleep: it cannot be stopped, so only its stack "
		       "pointer, pc and system-call registers are known; frames may be missing)\n");
	else if (!dt->taken)
		printf("    (no stack: %s)\n",
		       dt->why ? dt->why : "the thread did not stop in time or exited");
}

static int dump_run(int argc, char **argv)
{
	enum { OPT_SYSROOT = 256, OPT_SYMFS, OPT_ART_FRAMES, OPT_HELP };
	static const struct option opts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"sysroot", required_argument, NULL, OPT_SYSROOT},
	    {"symfs", required_argument, NULL, OPT_SYMFS},
	    {"max-frames", required_argument, NULL, 'n'},
	    {"show-art-frames", no_argument, NULL, OPT_ART_FRAMES},
	    {"help", no_argument, NULL, OPT_HELP},
	    {0},
	};
	const struct perch_arch *arch;
	const char *sysroot = NULL, *symfs = NULL;
	struct dump_thread *dts, *pre;
	struct symbolizer *sym;
	struct resolver *r;
	struct profile *p;
	struct proc_stat ps;
	struct tracee t;
	pid_t pid = 0, task, *tids = NULL;
	int c, n, code = PERCH_EXIT_OK, max_frames = UNWIND_DUMP_DEFAULT_FRAMES, art_frames = 0;
	char *end;
	long v;
	size_t nr, nr_pre;
	char ns[64];
	sigset_t old;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:vn:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cmd_parse_pid(optarg, &pid) < 0)
				return PERCH_EXIT_USAGE;
			break;
		case 'v':
			log_level++;
			break;
		case 'n':
			v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < 0 || v > UNWIND_MAX_FRAMES) {
				log_err(0, "--max-frames wants 0 to %d frames (0: %d), not '%s'",
					UNWIND_MAX_FRAMES, UNWIND_MAX_FRAMES, optarg);
				return PERCH_EXIT_USAGE;
			}
			max_frames = v ? (int)v : UNWIND_MAX_FRAMES;
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

	if (!perch_arch_of_pid(pid))
		return PERCH_EXIT_FATAL;
	/* states first: once traced, a stopped process's threads read as 't' */
	n = proc_task_list(pid, &tids);
	nr_pre = n > 0 ? (size_t)n : 0;
	pre = xcalloc(nr_pre ? nr_pre : 1, sizeof(*pre));
	for (size_t i = 0; i < nr_pre; i++)
		pre[i].tid = tids[i];
	free(tids);
	read_states(pid, pre, nr_pre);
	sampler_block_signals(&old);
	if (tracee_attach(&t, pid) < 0) {
		free(pre);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return PERCH_EXIT_FATAL;
	}
	arch = t.procs[0]->arch ? t.procs[0]->arch : perch_arch_host();
	task = tracee_proc_task(&t, t.procs[0]);
	dts = dump_threads(&t, pre, nr_pre, &nr);
	free(pre);
	collect(&t, arch, dts, nr);
	tracee_detach_all(&t, 2000);

	p = profile_new();
	sym = symbolizer_new(sysroot, symfs);
	/* memory and maps through a live thread: an exited main thread has none */
	r = resolver_new(task, arch, p, sym);
	resolver_set_max_frames(r, max_frames);
	resolver_show_art_frames(r, art_frames);
	ns_note(pid, ns, sizeof(ns));
	if (proc_stat_read(pid, 0, &ps) == 0)
		printf("PID %d (%s)%s\n", pid, ps.comm, ns);
	else
		printf("PID %d%s\n", pid, ns);
	for (size_t i = 0; i < nr; i++) {
		print_thread(p, r, &dts[i], max_frames);
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
