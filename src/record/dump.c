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
#include "perch/proc/waitreason.h"
#include "perch/profile/profile.h"
#include "perch/record/dump.h"
#include "perch/sample/sampler.h"
#include "perch/sample/tracee.h"
#include "perch/unwind/resolve.h"

#define DUMP_STACK_SIZE	 (256 * 1024)
#define WHY_NOT_ATTACHED "perch could not attach to it"
/* A stopped thread's stack is copied whole, up to this (a 3000-frame recursion of 200-byte
 * frames takes 600 KiB; glibc's default thread stack is 8 MiB) */
#define DUMP_STACK_MAX	     (64 * 1024 * 1024)
#define DUMP_STOP_TIMEOUT_MS 2000
/* From this many threads on, sleeping ones are read from /proc without a stop (take_sleeping():
 * the stops one by one would outlast any deadline, 80% of 10,000 threads were left without a
 * stack). Below it a stop gives every register, which Go's stack switches (the g in TLS) and
 * ART's method tracing need, and which /proc does not give. */
#define DUMP_FROM_PROC_MIN 1000
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

/* dump_collect()'s growing set of threads. */
struct dump_collect_set {
	struct dump_thread **dts;
	size_t *nr;
	struct proc_maps *maps;
};

static int cmp_tid(const void *key, const void *elem)
{
	pid_t a = *(const pid_t *)key, b = ((const struct dump_thread *)elem)->tid;

	return a < b ? -1 : a > b;
}

/* @tid's entry in @dts, or NULL: a binary search, as /proc lists them ascending (at ten
 * thousand threads a linear one was a tenth of the dump's CPU), then a look at every entry,
 * as threads created during the dump are appended. */
static struct dump_thread *dump_find(const struct dump_thread *dts, size_t nr, pid_t tid)
{
	struct dump_thread *dt = nr ? bsearch(&tid, dts, nr, sizeof(*dts), cmp_tid) : NULL;

	for (size_t i = 0; !dt && i < nr; i++)
		if (dts[i].tid == tid)
			dt = (struct dump_thread *)&dts[i];
	return dt;
}

/* Why @dt waits, when it sleeps ('S' or 'D'): the wait-reason frame record shows too. Read
 * before any stop of perch's breaks the call off. */
static void read_wait(pid_t pid, const struct tracee_thread *th, struct dump_thread *dt)
{
	const struct perch_arch *arch = th && th->proc->arch ? th->proc->arch : perch_arch_host();
	struct waitreason wr;

	dt->wait[0] = 0;
	if ((dt->state != 'S' && dt->state != 'D') ||
	    waitreason_read(pid, dt->tid, arch->e_machine, &wr) < 0)
		return;
	if (wr.kind != WAITREASON_UNKNOWN && wr.kind != WAITREASON_RUNNING)
		snprintf(dt->wait, sizeof(dt->wait), "%s", wr.frame);
}

/* Fill @dt for thread @tid of @t's process (state from @pre when listed there). */
static void thread_init(const struct tracee *t, struct dump_thread *dt, pid_t tid,
			const struct dump_thread *pre, size_t nr_pre)
{
	const struct tracee_thread *th = tracee_find(t, tid);
	const struct dump_thread *p;
	struct proc_stat ps;

	memset(dt, 0, sizeof(*dt));
	dt->tid = tid;
	dt->state = '?';
	if ((p = dump_find(pre, nr_pre, dt->tid)))
		dt->state = p->state;
	if (dt->state == '?' && proc_stat_read(t->pid, dt->tid, &ps) == 0)
		dt->state = tracee_state_letter(th, ps.state);
	if (proc_task_comm(t->pid, dt->tid, dt->name, sizeof(dt->name)) < 0)
		strcpy(dt->name, "?");
	if (!th && dt->state == '?')
		dt->why = "the thread exited"; /* listed by /proc a moment before */
	else if (!th)
		dt->why = dt->tid == t->pid && (dt->state == 'Z' || dt->state == 'X')
			      ? "the main thread has exited; the process runs on in its "
				"other threads"
			      : WHY_NOT_ATTACHED;
	read_wait(t->pid, th, dt);
	dt->snap.stack_cap = DUMP_STACK_SIZE;
	dt->snap.stack = xmalloc(DUMP_STACK_SIZE);
}

struct dump_thread *dump_threads(const struct tracee *t, pid_t only, const struct dump_thread *pre,
				 size_t nr_pre, size_t *nr)
{
	pid_t *tids = NULL;
	int n = proc_task_list(t->pid, &tids);
	struct dump_thread *dts;

	*nr = 0;
	dts = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*dts));
	for (int i = 0; i < n; i++) {
		if (only && tids[i] != only)
			continue;
		thread_init(t, &dts[(*nr)++], tids[i], pre, nr_pre);
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

/* The number of times @tid was switched in (the third field of its schedstat), or 0. */
static uint64_t switch_ins(pid_t pid, pid_t tid)
{
	char path[80], *text;
	unsigned long long run, wait, slices = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	text = proc_read_file(path, NULL);
	if (!text || sscanf(text, "%llu %llu %llu", &run, &wait, &slices) != 3)
		slices = 0;
	free(text);
	return slices;
}

/* A thread asleep in a system call ('S') in a process of DUMP_FROM_PROC_MIN threads or more:
 * its registers there (SP, PC) are in /proc and its stack does not change while it sleeps, so
 * it is read without a stop, as `record` reads blocked threads (no EINTR either). Kept only if the
 * thread was not switched in while its stack was copied (schedstat's count, read before and after):
 * else it is stopped as a running one. 0, or -1 with nothing taken. */
static int take_sleeping(const struct tracee *t, const struct perch_arch *arch,
			 struct dump_thread *dt)
{
	char path[64], *text;
	uint64_t before = switch_ins(t->pid, dt->tid);
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", t->pid, dt->tid);
	text = proc_read_file(path, NULL);
	ret = before ? sampler_snapshot_blocked(arch, dt->tid, text, &dt->snap) : -1;
	free(text);
	if (ret == 0 && dt->snap.stack_len == dt->snap.stack_cap)
		unwind_snapshot_grow(dt->tid, &dt->snap, DUMP_STACK_MAX);
	if (ret < 0 || switch_ins(t->pid, dt->tid) != before) {
		dt->snap.stack_len = 0;
		dt->snap.regs.valid = 0;
		return -1;
	}
	dt->taken = DUMP_ASLEEP;
	return 0;
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

		if (dt && dt->asked && !dt->taken && th->state == TRACEE_INTERRUPTING &&
		    in_d_state(t->pid, th->tid)) {
			dt->state = 'D';
			take_blocked(t, arch, dt);
			taken++;
		}
	}
	return taken;
}

/* The stop of @th, which dump_collect() asked for: its snapshot with the whole stack. */
static void take_stopped(struct tracee *t, const struct perch_arch *arch, struct tracee_thread *th,
			 struct dump_thread *dt)
{
	dt->taken = sampler_snapshot(t, arch, th, &dt->snap) == 0 ? DUMP_STOPPED : DUMP_NONE;
	/* the thread waits for us: the whole stack, not the first part */
	if (dt->taken)
		unwind_snapshot_grow(th->tid, &dt->snap, DUMP_STACK_MAX);
}

/* A thread that appeared during the dump: one more to stop and show. Returns 1 when it is to
 * be waited for. */
static int add_new_thread(struct tracee *t, struct tracee_thread *th, struct dump_collect_set *set)
{
	struct dump_thread *dt = dump_find(*set->dts, *set->nr, th->tid);

	if (!dt) {
		*set->dts = xrealloc(*set->dts, (*set->nr + 1) * sizeof(**set->dts));
		dt = &(*set->dts)[(*set->nr)++];
		thread_init(t, dt, th->tid, NULL, 0);
		dt->snap.maps = set->maps;
	} else if (dt->taken || (dt->why && strcmp(dt->why, WHY_NOT_ATTACHED))) {
		return 0;
	}
	dt->why = NULL; /* listed before its clone event was seen: traced now */
	dt->asked = tracee_interrupt_persist(t, th, monotime_ns()) == 0;
	if (!dt->asked)
		dt->why = "the thread exited";
	return dt->asked;
}

/* A thread perch could not attach to because it was on its way out (the kernel refuses to
 * trace an exiting thread) is gone by now: say that instead. */
static void gone_untraced(const struct tracee *t, struct dump_thread *dts, size_t nr)
{
	struct proc_stat ps;

	for (size_t i = 0; i < nr; i++)
		if (dts[i].why && !strcmp(dts[i].why, WHY_NOT_ATTACHED) &&
		    proc_stat_read(t->pid, dts[i].tid, &ps) < 0)
			dts[i].why = "the thread exited";
}

static int by_tid(const void *a, const void *b)
{
	const struct dump_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Ask every listed traced thread to stop (one in 'D' is read from /proc); how many stops are
 * awaited. */
static size_t ask_all(struct tracee *t, const struct perch_arch *arch, struct dump_thread *dts,
		      size_t nr)
{
	size_t waiting = 0;

	for (size_t i = 0; i < t->nr_threads; i++) {
		struct tracee_thread *th = t->threads[i];
		struct dump_thread *dt = dump_find(dts, nr, th->tid);

		if (dt && dt->state == 'D')
			take_blocked(t, arch, dt);
		else if (dt && !dt->why && dt->state == 'S' && nr >= DUMP_FROM_PROC_MIN &&
			 take_sleeping(t, arch, dt) == 0)
			continue;
		else if (dt && !dt->why && tracee_interrupt_persist(t, th, monotime_ns()) == 0)
			waiting += dt->asked = 1;
	}
	return waiting;
}

void dump_collect(struct tracee *t, const struct perch_arch *arch, struct dump_thread **dtsp,
		  size_t *nrp, int flags)
{
	uint64_t start = monotime_ns(), next_check = start + DUMP_D_CHECK_NS;
	uint64_t deadline = start + DUMP_STOP_TIMEOUT_MS * 1000000ULL;
	struct tracee_event ev;
	size_t waiting;
	/* where each stack ends: a copy of the whole stack stops there */
	struct dump_collect_set set = {dtsp, nrp, proc_maps_load(t->pid)};

	for (size_t i = 0; i < *nrp; i++)
		(*dtsp)[i].snap.maps = set.maps;
	waiting = ask_all(t, arch, *dtsp, *nrp);
	while (waiting && monotime_ns() < deadline) {
		int ret = tracee_poll(t, &ev);
		struct dump_thread *dt;

		if (ret < 0)
			break;
		if (ret == 0) {
			struct timespec ts = {0, 100000};

			if (monotime_ns() >= next_check) {
				next_check += DUMP_D_CHECK_NS;
				waiting -= check_blocked(t, arch, *dtsp, *nrp);
			}
			nanosleep(&ts, NULL);
			continue;
		}
		if (ev.kind == TRACEE_EV_EXIT || ev.kind == TRACEE_EV_EXEC)
			break;
		if (ev.kind == TRACEE_EV_THREAD_NEW && (flags & DUMP_NEW_THREADS) &&
		    ev.thread->proc == t->procs[0]) {
			waiting += (size_t)add_new_thread(t, ev.thread, &set);
			continue;
		}
		dt = ev.thread ? dump_find(*dtsp, *nrp, ev.thread->tid) : NULL;
		if (ev.kind == TRACEE_EV_THREAD_GONE && dt && dt->asked && !dt->taken) {
			dt->why = "the thread exited";
			waiting--;
		}
		if (ev.kind != TRACEE_EV_STOPPED)
			continue;
		if (!dt || dt->taken || !dt->asked) { /* not asked for: it runs on */
			tracee_resume(t, ev.thread);
			continue;
		}
		waiting--;
		take_stopped(t, arch, ev.thread, dt);
	}
	for (size_t i = 0; i < t->nr_threads; i++)
		tracee_interrupt_cancel(t->threads[i]);
	gone_untraced(t, *dtsp, *nrp);
	for (size_t i = 0; i < *nrp; i++)
		(*dtsp)[i].snap.maps = NULL;
	qsort(*dtsp, *nrp, sizeof(**dtsp), by_tid);
	if (set.maps)
		proc_maps_free(set.maps);
}

void dump_resume(struct tracee *t)
{
	for (size_t i = 0; i < t->nr_threads; i++)
		if (t->threads[i]->state == TRACEE_STOPPED)
			tracee_resume(t, t->threads[i]);
}

/* @dt->end: how its stack ended when not at a thread's root; @module: its last frame's. */
static void end_marker(struct resolver *r, struct dump_thread *dt, const char *module)
{
	int at_root, npcs;
	const struct unwind_result *res = resolver_last_result(r, &at_root);

	resolver_last_pcs(r, &npcs);
	dt->end[0] = 0;
	if (res->flags & UNWIND_TRUNCATED)
		snprintf(dt->end, sizeof(dt->end), "[truncated at %d frames]", npcs);
	else if (at_root || !(res->flags & UNWIND_STOPPED_EARLY))
		return;
	else if (res->stop == UNWIND_STOP_NO_INFO)
		snprintf(dt->end, sizeof(dt->end), "[stopped early: no CFI for %s]", module);
	else if (res->stop == UNWIND_STOP_MEMORY && dt->snap.stack_len >= DUMP_STACK_MAX)
		snprintf(dt->end, sizeof(dt->end),
			 "[stopped early: the stack copy ends here (%d MiB)]",
			 DUMP_STACK_MAX >> 20);
	else
		snprintf(dt->end, sizeof(dt->end), "[stopped early: %s in %s]",
			 unwind_stop_name(res->stop), module);
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
	const char *last = "?";

	for (size_t i = 0; i < nlocs; i++) {
		const struct profile_location *loc = profile_location(p, locs[i]);
		size_t nf;
		const uint32_t *frames = profile_location_frames(p, locs[i], &nf);
		const char *module = loc->module ? path_base(profile_str(p, loc->module)) : "?";

		if (strcmp(module, "[perch]"))
			last = *module ? module : "?";
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
	end_marker(r, dt, last);
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
	else if (dt->end[0])
		strbuf_addstr(sb, dt->end);
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
