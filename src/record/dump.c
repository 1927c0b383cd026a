/* One snapshot of every thread of a process, held stopped together (see dump.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perch/arch.h"
#include "perch/base/monotime.h"
#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "perch/proc/proc-task.h"
#include "perch/profile/profile.h"
#include "perch/record/dump.h"
#include "perch/sample/sampler.h"
#include "perch/sample/tracee.h"
#include "perch/unwind/resolve.h"

#define DUMP_STACK_SIZE (256 * 1024)
/* A stopped thread's stack is copied whole, up to this (a 3000-frame recursion of 200-byte
 * frames takes 600 KiB; glibc's default thread stack is 8 MiB) */
#define DUMP_STACK_MAX	     (64 * 1024 * 1024)
#define DUMP_STOP_TIMEOUT_MS 2000
/* how often threads that have not stopped are checked for uninterruptible sleep */
#define DUMP_D_CHECK_NS (50 * 1000000ULL)

struct dump_thread *dump_states(pid_t pid, size_t *nr)
{
	pid_t *tids = NULL;
	int n = proc_task_list(pid, &tids);
	struct dump_thread *dts;
	struct proc_stat ps;

	*nr = n > 0 ? (size_t)n : 0;
	dts = xcalloc(*nr ? *nr : 1, sizeof(*dts));
	for (size_t i = 0; i < *nr; i++) {
		dts[i].tid = tids[i];
		dts[i].state = proc_stat_read(pid, tids[i], &ps) == 0 ? ps.state : '?';
	}
	free(tids);
	return dts;
}

static struct dump_thread *dump_find(struct dump_thread *dts, size_t nr, pid_t tid)
{
	for (size_t i = 0; i < nr; i++)
		if (dts[i].tid == tid)
			return &dts[i];
	return NULL;
}

struct dump_thread *dump_threads(const struct tracee *t, pid_t only, const struct dump_thread *pre,
				 size_t nr_pre, size_t *nr)
{
	pid_t *tids = NULL;
	int n = proc_task_list(t->pid, &tids);
	struct dump_thread *dts;
	struct proc_stat ps;

	*nr = 0;
	dts = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*dts));
	for (int i = 0; i < n; i++) {
		struct dump_thread *dt = &dts[*nr];
		const struct tracee_thread *th = tracee_find(t, tids[i]);

		if (only && tids[i] != only)
			continue;
		(*nr)++;
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
	if (!*nr) {
		free(dts);
		return NULL;
	}
	return dts;
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

/* Threads still interrupted but not stopped that went to sleep in 'D' meanwhile: from /proc.
 * Returns how many were taken so. */
static size_t check_blocked(struct tracee *t, const struct perch_arch *arch,
			    struct dump_thread *dts, size_t nr)
{
	size_t taken = 0;

	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct dump_thread *dt = dump_find(dts, nr, th->tid);

		if (dt && !dt->taken && !dt->why && th->state == TRACEE_INTERRUPTING &&
		    in_d_state(t->pid, th->tid)) {
			dt->state = 'D';
			take_blocked(t, arch, dt);
			taken++;
		}
	}
	return taken;
}

void dump_collect(struct tracee *t, const struct perch_arch *arch, struct dump_thread *dts,
		  size_t nr)
{
	uint64_t start = monotime_ns(), next_check = start + DUMP_D_CHECK_NS;
	uint64_t deadline = start + DUMP_STOP_TIMEOUT_MS * 1000000ULL;
	struct tracee_event ev;
	size_t waiting = 0;
	/* where each stack ends: a copy of the whole stack stops there */
	struct proc_maps *maps = proc_maps_load(t->pid);

	for (size_t i = 0; i < nr; i++)
		dts[i].snap.maps = maps;
	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct dump_thread *dt = dump_find(dts, nr, th->tid);

		if (dt && dt->state == 'D')
			take_blocked(t, arch, dt);
		else if (dt && tracee_interrupt(t, th, monotime_ns()) == 0)
			waiting++;
	}
	while (waiting && monotime_ns() < deadline) {
		int ret = tracee_poll(t, &ev);
		struct dump_thread *dt;

		if (ret < 0)
			break;
		if (ret == 0) {
			struct timespec ts = {0, 100000};

			if (monotime_ns() >= next_check) {
				next_check += DUMP_D_CHECK_NS;
				waiting -= check_blocked(t, arch, dts, nr);
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
		if (ev.kind != TRACEE_EV_STOPPED)
			continue;
		if (!dt || dt->taken) { /* not asked for: it runs on */
			tracee_resume(t, ev.thread);
			continue;
		}
		waiting--;
		dt->taken =
		    sampler_snapshot(t, arch, ev.thread, &dt->snap) == 0 ? DUMP_STOPPED : DUMP_NONE;
		/* the thread waits for us: the whole stack, not the first part */
		if (dt->taken)
			unwind_snapshot_grow(ev.thread->tid, &dt->snap, DUMP_STACK_MAX);
	}
	for (size_t i = 0; i < nr; i++)
		dts[i].snap.maps = NULL;
	if (maps)
		proc_maps_free(maps);
}

void dump_resume(struct tracee *t)
{
	for (size_t i = 0; i < t->nr_threads; i++)
		if (t->threads[i]->state == TRACEE_STOPPED)
			tracee_resume(t, t->threads[i]);
}

int dump_frames(struct profile *p, struct resolver *r, struct dump_thread *dt, dump_frame_fn *fn,
		void *arg)
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
			struct dump_frame df = {
			    .n = n++,
			    .pc = i < (size_t)npcs ? pcs[i] : 0,
			    .func = profile_str(p, f->name),
			    .detail = f->detail ? profile_str(p, f->detail) : "",
			    .module = *module ? module : "?",
			    /* an interpreted Java frame whose line is unknown keeps its file:
			       "File.java:?" (never the method's first line) */
			    .file = f->file && (f->line || f->kind == PROFILE_FRAME_INTERP)
					? profile_str(p, f->file)
					: NULL,
			    .line = f->line,
			    .inlined = f->inlined,
			    .tailcall = f->tailcall,
			};

			fn(arg, &df);
		}
	}
	return resolver_stats(r)->truncated != truncated;
}

void dump_frame_text(const struct dump_frame *f, struct strbuf *sb)
{
	strbuf_addf(sb, "#%zu  0x%016llx %s%s (%s)", f->n, (unsigned long long)f->pc, f->func,
		    f->detail, f->module);
	if (f->file && f->line)
		strbuf_addf(sb, " at %s:%u", f->file, f->line);
	else if (f->file)
		strbuf_addf(sb, " at %s:?", f->file);
	if (f->inlined)
		strbuf_addstr(sb, " [inlined]");
	if (f->tailcall) /* gdb shows these as plain frames; perch says so */
		strbuf_addstr(sb, " (tail call)");
}

const char *dump_note(const struct dump_thread *dt, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (dt->taken == DUMP_BLOCKED)
		strbuf_addstr(sb, "(in uninterruptible sleep: it cannot be stopped, so only its "
				  "stack pointer, pc and system-call registers are known; frames "
				  "may be missing)");
	else if (!dt->taken)
		strbuf_addf(sb, "(no stack: %s)",
			    dt->why ? dt->why : "the thread did not stop in time or exited");
	else
		return NULL;
	return sb->buf;
}

void dump_release(struct dump_thread *dts, size_t nr)
{
	for (size_t i = 0; dts && i < nr; i++)
		free(dts[i].snap.stack);
	free(dts);
}
