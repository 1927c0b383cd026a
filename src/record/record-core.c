/* The recording core of `perch record` and the REPL's record/top: options, sampler callbacks,
 * timelines, stalls, the streamed recording, summary and outputs; see
 * include/perch/record/record-core.h. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perch/arch.h"
#include "perch/art/art.h"
#include "perch/base/log.h"
#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/proc/proc-task.h"
#include "perch/proc/stall.h"
#include "perch/proc/timeline.h"
#include "perch/proc/waitreason.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"
#include "perch/record/record-core.h"
#include "perch/record/record-opts.h"
#include "perch/record/record-ring.h"
#include "perch/sample/sampler-hold.h"
#include "perch/sample/tracee.h"
#include "perch/symbols/symbolize.h"
#include "perch/unwind/resolve.h"
#include "perch/unwind/unwind.h"

/* ---- the sampler callbacks (the sampler's worker thread) ---- */

/* ---- processes: each has its own maps, modules, unwinder and architecture ---- */

/* The live entry of process @pid, or NULL. */
static struct record_proc *proc_find(struct record_core *rc, pid_t pid)
{
	for (size_t i = rc->nr_procs; i-- > 0;)
		if (rc->procs[i].pid == pid && rc->procs[i].r)
			return &rc->procs[i];
	return NULL;
}

/* Read process @pid's name now into the profile (at attach, fork and exec), and its program
 * as meta "exe:PID" (what --diff pairs as the main executable). */
static void name_process(struct record_core *rc, pid_t pid, pid_t task)
{
	char comm[64], exe[4096], key[32];

	if (proc_task_comm(task, task, comm, sizeof(comm)) == 0)
		profile_process(rc->p, pid, comm);
	else
		profile_process(rc->p, pid, NULL);
	snprintf(key, sizeof(key), "exe:%d", (int)pid);
	if (proc_task_exe(task, exe, sizeof(exe)) == 0)
		profile_set_meta(rc->p, key, exe);
}

/* Start resolving process @pid (@task: a live thread of it), an @arch program it runs after
 * @execs execs. */
static struct record_proc *proc_open(struct record_core *rc, pid_t pid, pid_t task,
				     const struct perch_arch *arch, uint64_t execs)
{
	struct record_proc *rp = NULL;

	for (size_t i = 0; i < rc->nr_procs && !rp; i++)
		if (rc->procs[i].pid == pid && !rc->procs[i].r)
			rp = &rc->procs[i]; /* a gone one, its pid reused */
	if (!rp) {
		ALLOC_GROW(rc->procs, rc->nr_procs + 1, rc->alloc_procs);
		rp = &rc->procs[rc->nr_procs++];
	}
	memset(rp, 0, sizeof(*rp));
	rp->pid = pid;
	rp->execs = execs;
	rp->task = task;
	rp->arch = arch ? arch : perch_arch_host();
	rp->r = resolver_new(task, rp->arch, rc->p, rc->sym);
	resolver_set_max_frames(rp->r, rc->o.max_frames);
	resolver_show_art_frames(rp->r, rc->o.art_frames);
	name_process(rc, pid, task);
	if (pid == rc->pid) {
		rc->r = rp->r;
		rc->arch = rp->arch;
	}
	return rp;
}

/* @to += @from, field by field: every field of struct resolve_stats is a uint64_t counter
 * (checked below), so a field added there is summed too. */
static void add_resolve_stats(struct resolve_stats *to, const struct resolve_stats *from)
{
	uint64_t v[sizeof(*to) / sizeof(uint64_t)], w[sizeof(*to) / sizeof(uint64_t)];

	_Static_assert(sizeof(*to) % sizeof(uint64_t) == 0, "resolve_stats holds uint64_t only");
	memcpy(v, to, sizeof(v));
	memcpy(w, from, sizeof(w));
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		v[i] += w[i];
	memcpy(to, v, sizeof(v));
}

/* Process @pid is gone: keep what its resolver counted, free the rest. */
static void proc_close(struct record_core *rc, struct record_proc *rp)
{
	add_resolve_stats(&rc->gone_stats, resolver_stats(rp->r));
	if (rc->r == rp->r)
		rc->r = NULL;
	resolver_free(rp->r);
	rp->r = NULL;
}

/* The maps process @rp had when it exited, if the sampler has handed them over by now: its
 * queued samples are named with them (the live /proc file is gone, or is another process's). */
static void use_final_maps(struct record_core *rc, struct record_proc *rp)
{
	unsigned int gen = rc->final_gen;

	if (rp->final_seen == gen)
		return;
	rp->final_seen = gen;
	pthread_mutex_lock(&rc->final_lock);
	for (size_t i = 0; i < rc->nr_finals; i++) {
		struct record_final *f = &rc->finals[i];

		if (f->pid != rp->pid || f->execs != rp->execs || !f->maps)
			continue;
		resolver_final_maps(rp->r, f->maps);
		free(f->maps);
		*f = rc->finals[--rc->nr_finals];
		break;
	}
	pthread_mutex_unlock(&rc->final_lock);
}

/* The process of a sample: known, or one whose events the worker has not seen (its fork came
 * after the queue was full). */
static struct record_proc *proc_of(struct record_core *rc, const struct sampler_info *info)
{
	struct record_proc *rp = proc_find(rc, info->pid ? info->pid : rc->pid);

	if (!rp)
		rp = proc_open(rc, info->pid, info->pid, info->arch, 0);
	use_final_maps(rc, rp);
	return rp;
}

/* sampler_ops.exiting, on the ptrace thread. */
static void on_exiting(void *arg, pid_t pid, uint64_t execs, const char *maps)
{
	struct record_core *rc = arg;

	if (!maps)
		return;
	pthread_mutex_lock(&rc->final_lock);
	ALLOC_GROW(rc->finals, rc->nr_finals + 1, rc->alloc_finals);
	rc->finals[rc->nr_finals++] = (struct record_final){pid, execs, xstrdup(maps)};
	rc->final_gen++;
	pthread_mutex_unlock(&rc->final_lock);
}

const struct resolve_stats *record_core_resolve_stats(const struct record_core *rc,
						      struct resolve_stats *out)
{
	*out = rc->gone_stats;
	for (size_t i = 0; i < rc->nr_procs; i++)
		if (rc->procs[i].r)
			add_resolve_stats(out, resolver_stats(rc->procs[i].r));
	return out;
}

/* The profile's index of thread @tid of process @pid, named @comm when known; the main
 * thread's name is the process's. */
static uint32_t thread_of(struct record_core *rc, pid_t pid, pid_t tid, const char *comm)
{
	const char *name = comm && comm[0] ? comm : NULL;

	if (name && tid == pid)
		profile_process(rc->p, pid, name);
	return profile_thread_in(rc->p, pid, tid, name);
}

/* Read a thread's name now (at attach and for new threads; samples bring their own). */
static void name_thread(struct record_core *rc, pid_t pid, pid_t tid)
{
	char comm[64];

	if (proc_task_comm(pid, tid, comm, sizeof(comm)) == 0)
		profile_thread_in(rc->p, pid, tid, comm);
	else
		profile_thread_in(rc->p, pid, tid, NULL);
}

/* The stack to count: @stack, ending in why the thread waits ("[lock futex]") when it was
 * not running. Added per sample, not stored with a site: the same SP and PC are also seen
 * just after the thread woke up. */
static uint32_t with_wait_frame(struct record_proc *rp, const struct sampler_info *info,
				uint32_t stack)
{
	pid_t pid = rp->task;
	struct waitreason wr;
	char java[WAITREASON_PATH_MAX];

	if (!info->state || info->state == 'R')
		return stack;
	waitreason_classify(rp->arch->e_machine, info->state, info->syscall, NULL,
			    waitreason_fd_path_proc, &pid, &wr);
	/* woke up between the two reads: it runs */
	if (wr.kind == WAITREASON_RUNNING || !wr.frame[0])
		return stack;
	/* a Java thread waiting in Java: ART's own reason (art-thread.h) */
	if (art_proc_java_wait(resolver_art(rp->r), info->tid, java, sizeof(java)) == 0)
		return resolver_add_leaf(rp->r, stack, java);
	return resolver_add_leaf(rp->r, stack, wr.frame);
}

static struct record_sites *sites_of(struct record_core *rc, uint32_t thread)
{
	if (thread >= rc->nr_sites) {
		size_t n = rc->nr_sites;

		ALLOC_GROW(rc->sites, thread + 1, rc->nr_sites);
		memset(rc->sites + n, 0, (rc->nr_sites - n) * sizeof(*rc->sites));
	}
	return &rc->sites[thread];
}

/* The site at (@sp, @pc), marked used now; NULL when it is not kept. */
static struct record_site *site_find(struct record_sites *rs, uint64_t sp, uint64_t pc)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(rs->s); i++)
		if (rs->s[i].stack && rs->s[i].sp == sp && rs->s[i].pc == pc) {
			rs->s[i].used = ++rs->clock;
			return &rs->s[i];
		}
	return NULL;
}

/* A slot for a new site: an empty one, else the least recently used. */
static struct record_site *site_new(struct record_sites *rs, uint64_t sp, uint64_t pc)
{
	struct record_site *site = &rs->s[0];

	for (unsigned int i = 1; i < ARRAY_SIZE(rs->s) && site->stack; i++)
		if (!rs->s[i].stack || rs->s[i].used < site->used)
			site = &rs->s[i];
	site->sp = sp;
	site->pc = pc;
	site->used = ++rs->clock;
	return site;
}

static void drain_to_recording(void *arg, const char *key, const char *text)
{
	recording_meta_add(arg, key, text);
}

static void stalls_to_recording(void *arg, const char *text)
{
	recording_meta_add(arg, "stalls", text);
}

/* ---- --ring and --chunk ---- */

/* --trigger signal:SIG: counted by the handler (any thread), turned into a save by the worker
 * at its next sample */
static volatile sig_atomic_t ring_signals;
static struct sigaction ring_old_action;

static void on_ring_signal(int sig)
{
	(void)sig;
	ring_signals++;
}

static void ring_stalls(void *arg, const char *text)
{
	record_ring_add_stalls(arg, text);
}

static void ring_points(void *arg, const char *key, const char *text)
{
	record_ring_add_points(arg, key, text);
}

/* A sample of the watched thread: the stall it is in passed --trigger stall:MS (save the
 * window, up to the end of the stall), or the stall that triggered is over (the window ends
 * a second later). */
static void ring_watch(struct record_core *rc, const struct sampler_info *info)
{
	uint64_t start = 0, t = info->time_ns, want = (uint64_t)(rc->o.trigger_stall_ms * 1e6);
	enum stall_kind kind = STALL_OFF_CPU;
	int on;

	if (!(rc->o.trigger_stall_ms > 0) || info->tid != stall_watched(rc->stall))
		return;
	on = stall_ongoing(rc->stall, &start, &kind);
	if (rc->stall_save >= 0 && (!on || start != rc->stall_fired)) {
		record_ring_until(rc->ring, rc->stall_save, t + 1000000000ULL);
		rc->stall_save = -1;
	}
	if (on && t - start >= want && start != rc->stall_fired) {
		char note[160];

		snprintf(note, sizeof(note),
			 "thread %d (%s) had been %s for %.0f ms (--trigger stall:%g)",
			 (int)info->tid, info->comm ? info->comm : "",
			 kind == STALL_OFF_CPU ? "off-cpu" : "running in one stack",
			 (double)(t - start) / 1e6, rc->o.trigger_stall_ms);
		rc->stall_fired = start;
		rc->stall_save = record_ring_trigger(rc->ring, "stall", t, UINT64_MAX, note);
	}
}

/* After each sample: a signal asked for a save, stalls found go to the ring, windows due. */
static void ring_step(struct record_core *rc, uint64_t now_ns)
{
	unsigned int n = (unsigned int)ring_signals;

	if (n != rc->signals_seen) {
		char note[96];

		rc->signals_seen = n;
		snprintf(note, sizeof(note), "SIG%s came (--trigger signal:%s)",
			 rc->o.trigger_signal == SIGUSR1 ? "USR1" : "USR2",
			 rc->o.trigger_signal == SIGUSR1 ? "USR1" : "USR2");
		record_ring_trigger(rc->ring, "signal", now_ns, now_ns, note);
	}
	if (rc->stall)
		stall_drain(rc->stall, ring_stalls, rc->ring);
	if (rc->tl && now_ns - rc->drained_ns >= RECORDING_FLUSH_NS / 4) {
		timeline_drain(rc->tl, ring_points, rc->ring);
		rc->drained_ns = now_ns;
	}
	record_ring_sample(rc->ring, now_ns);
}

static void ring_start(struct record_core *rc)
{
	struct record_ring_opts ro = {.ring_s = rc->o.ring_s,
				      .chunk_s = rc->o.chunk_s,
				      .trigger_max = rc->o.trigger_max,
				      .outputs = rc->o.outputs,
				      .nr_outputs = rc->o.nr_outputs,
				      .lines = rc->o.lines,
				      .period_ns = (uint64_t)(1e9 / rc->o.hz),
				      .start_realtime_ns = rc->start_realtime_ns,
				      .msgs = rc->o.quiet ? NULL : stderr};

	rc->ring = record_ring_new(&ro, rc->p);
	rc->stall_save = -1;
	if (rc->o.chunk_s > 0) {
		/* the chunks of one recording are one Sentry profiler session */
		char id[33];
		uint64_t a = rc->start_realtime_ns * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid(),
			 b = a * 0xbf58476d1ce4e5b9ULL ^ (uint64_t)rc->pid;

		snprintf(id, sizeof(id), "%016" PRIx64 "%016" PRIx64, a, b);
		profile_set_meta(rc->p, "profiler_id", id);
	}
	if (rc->o.trigger_signal) {
		struct sigaction sa = {.sa_handler = on_ring_signal};

		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		ring_signals = 0;
		rc->signals_seen = 0;
		sigaction(rc->o.trigger_signal, &sa, &ring_old_action);
	}
}

/* Write the recording's next chunk when one is due (a write error is reported at the end),
 * with the timeline's new points: memory stays flat however long the recording runs. */
static void record_stream(struct record_core *rc, uint64_t now_ns)
{
	if (rc->ring) {
		ring_step(rc, now_ns);
		return;
	}
	if (!rc->rw)
		return;
	if (now_ns - rc->drained_ns >= RECORDING_FLUSH_NS) {
		if (rc->tl)
			timeline_drain(rc->tl, drain_to_recording, rc->rw);
		if (rc->stall)
			stall_drain(rc->stall, stalls_to_recording, rc->rw);
		rc->drained_ns = now_ns;
	}
	recording_maybe_flush(rc->rw, rc->p, now_ns);
}

/* Per-thread state shares and the stall detector see every sample as it is counted. */
static void watch_sample(struct record_core *rc, const struct sampler_info *info, uint32_t stack)
{
	/* the timeline and its thread table are of the first process (its /proc/PID) */
	if (info->pid && info->pid != rc->pid)
		return;
	if (rc->tl)
		timeline_note_state(rc->tl, info->tid, info->state, info->weight);
	if (rc->stall) {
		stall_feed_stack(rc->stall, rc->p, info->tid, info->comm, info->time_ns,
				 info->state, info->ran, stack);
		if (rc->ring)
			ring_watch(rc, info);
		/* no output draws the list: the summary has the longest and the counts */
		else if (rc->no_points)
			stall_drain(rc->stall, NULL, NULL);
	}
}

/* --verify: do the frames of the last resolver_stack() call equal libunwind-ptrace's? */
static void verify_sample(struct record_core *rc, struct record_proc *rp,
			  const struct sampler_info *info)
{
	int n, m = info->nr_verify;
	const uint64_t *pcs = resolver_last_pcs(rp->r, &n);

	if (m <= 0)
		return;
	rc->verified++;
	/* libunwind-ptrace keeps at most SAMPLER_VERIFY_MAX frames */
	if (n > SAMPLER_VERIFY_MAX && m == SAMPLER_VERIFY_MAX)
		n = SAMPLER_VERIFY_MAX;
	if (n == m && !memcmp(pcs, info->verify_pcs, (size_t)n * sizeof(*pcs)))
		return;
	rc->verify_differ++;
	if (log_level >= LOG_LEVEL_DEBUG) {
		log_debug("verify: thread %d: perch %d frames, libunwind-ptrace %d", info->tid, n,
			  m);
		for (int i = 0; i < n || i < m; i++)
			log_debug("  #%-3d %#18llx %#18llx", i,
				  i < n ? (unsigned long long)pcs[i] : 0ULL,
				  i < m ? (unsigned long long)info->verify_pcs[i] : 0ULL);
	}
}

static void on_sample(void *arg, const struct sampler_info *info,
		      const struct unwind_snapshot *snap)
{
	struct record_core *rc = arg;
	struct record_proc *rp = proc_of(rc, info);
	uint32_t thread = thread_of(rc, rp->pid, info->tid, info->comm);
	uint64_t sp = perch_regs_sp(rp->arch, &snap->regs),
		 pc = perch_regs_pc(rp->arch, &snap->regs);
	uint32_t stack = resolver_stack(rp->r, snap);
	struct record_sites *rs = sites_of(rc, thread);
	struct record_site *site = NULL;

	/* where the thread was found blocked (running samples must not push those out), and
	 * apart from them where it last ran: the two places the sampler reuses */
	if (info->state && info->state != 'R') {
		site = site_find(rs, sp, pc);
		if (!site)
			site = site_new(rs, sp, pc);
		site->stack = stack + 1;
	} else if (info->state == 'R') {
		rs->ran = (struct record_site){sp, pc, stack + 1, 0};
	}
	if (rc->o.verify)
		verify_sample(rc, rp, info);
	stack = with_wait_frame(rp, info, stack);
	profile_add_weighted(rc->p, thread, stack, info->time_ns, info->state, info->weight);
	if (!rc->first_sample_ns)
		rc->first_sample_ns = info->time_ns;
	watch_sample(rc, info, stack);
	record_stream(rc, info->time_ns);
}

static void on_reuse(void *arg, const struct sampler_info *info, uint64_t sp, uint64_t pc)
{
	struct record_core *rc = arg;
	struct record_proc *rp = proc_of(rc, info);
	uint32_t thread = thread_of(rc, rp->pid, info->tid, info->comm);
	struct record_sites *rs = sites_of(rc, thread);
	struct record_site *site = info->state == 'R' ? NULL : site_find(rs, sp, pc);

	/* a runnable thread that has not run since its last sample: that sample's stack */
	if (info->state == 'R' && rs->ran.stack && rs->ran.sp == sp && rs->ran.pc == pc) {
		profile_add_weighted(rc->p, thread, rs->ran.stack - 1, info->time_ns, info->state,
				     info->weight);
		watch_sample(rc, info, rs->ran.stack - 1);
	} else if (site) {
		/* the sampler names only sites of snapshots it queued before this item */
		uint32_t stack = with_wait_frame(rp, info, site->stack - 1);

		profile_add_weighted(rc->p, thread, stack, info->time_ns, info->state,
				     info->weight);
		watch_sample(rc, info, stack);
	}
	record_stream(rc, info->time_ns);
}

static void on_event(void *arg, const struct sampler_event *ev)
{
	struct record_core *rc = arg;
	struct record_proc *rp = proc_find(rc, ev->pid);

	switch (ev->kind) {
	case TRACEE_EV_THREAD_NEW:
		name_thread(rc, ev->pid, ev->tid);
		break;
	case TRACEE_EV_PROC_NEW:
		if (rp)
			proc_close(rc, rp); /* its pid was reused */
		proc_open(rc, ev->pid, ev->pid, ev->arch, 0);
		name_thread(rc, ev->pid, ev->pid);
		break;
	case TRACEE_EV_EXEC: {
		/* a new program: new maps, maybe another architecture */
		uint64_t execs = rp ? rp->execs + 1 : 1;

		if (rp && rp->arch == (ev->arch ? ev->arch : perch_arch_host())) {
			/* the same unwinder: modules it knew (libc, the loader) stay loaded */
			rp->execs = execs;
			rp->final_seen = 0; /* its final maps may have come already */
			rp->task = ev->pid;
			resolver_reload(rp->r);
			name_process(rc, ev->pid, ev->pid);
			break;
		}
		if (rp)
			proc_close(rc, rp);
		proc_open(rc, ev->pid, ev->pid, ev->arch, execs);
		break;
	}
	case TRACEE_EV_PROC_GONE:
		if (rp)
			proc_close(rc, rp);
		break;
	}
}

const struct sampler_ops record_core_ops = {on_sample, on_reuse, on_event, on_exiting};

/* ---- a recording ---- */

void record_core_init(struct record_core *rc)
{
	memset(rc, 0, sizeof(*rc));
	record_opts_init(&rc->o);
	rc->tmp_fd = -1;
	rc->st = xcalloc(1, sizeof(*rc->st));
	pthread_mutex_init(&rc->final_lock, NULL);
}

void record_core_release(struct record_core *rc)
{
	if (rc->rw)
		recording_close(rc->rw, rc->p);
	timeline_free(rc->tl);
	stall_free(rc->stall);
	if (rc->ring && rc->o.trigger_signal)
		sigaction(rc->o.trigger_signal, &ring_old_action, NULL);
	record_ring_free(rc->ring);
	for (size_t i = 0; i < rc->nr_procs; i++)
		resolver_free(rc->procs[i].r);
	free(rc->procs);
	for (size_t i = 0; i < rc->nr_finals; i++)
		free(rc->finals[i].maps);
	free(rc->finals);
	pthread_mutex_destroy(&rc->final_lock);
	symbolizer_free(rc->sym);
	profile_free(rc->p);
	profile_free(rc->back);
	if (rc->tmp_fd >= 0)
		close(rc->tmp_fd);
	free(rc->sites);
	free(rc->st);
	record_opts_release(&rc->o);
	memset(rc, 0, sizeof(*rc));
}

static int is_recording(const struct record_output *ro)
{
	return ro->fmt->write == out_recording_write;
}

/* --ring or --chunk: windows written while sampling */
static int is_windowed(const struct record_core *rc)
{
	return rc->o.ring_s > 0 || rc->o.chunk_s > 0;
}

/* Does an output need every sample in time order (and the timelines and stalls)? */
static int wants_samples(const struct record_core *rc)
{
	for (int i = 0; i < rc->o.nr_outputs; i++)
		if (rc->o.outputs[i].fmt->needs_samples)
			return 1;
	return rc->keep_samples;
}

/* Outputs that need every sample, without a .perch: stream them to an unlinked temporary
 * recording read back at the end, so that nothing per sample stays in memory for the length
 * of the run. When that file cannot be made, the samples stay in memory (as the REPL keeps
 * them: it can save any format later). */
static void open_temp_recording(struct record_core *rc)
{
	const char *dir = getenv("TMPDIR");
	char *path = xasprintf("%s/perch-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);

	if (fd >= 0) {
		close(fd);
		rc->rw = recording_create(path);
		if (rc->rw)
			rc->tmp_fd = open(path, O_RDONLY | O_CLOEXEC);
		unlink(path);
	}
	if (rc->rw && rc->tmp_fd >= 0) {
		snprintf(rc->tmp_path, sizeof(rc->tmp_path), "/proc/self/fd/%d", rc->tmp_fd);
		rc->rw_path = rc->tmp_path;
	} else {
		log_warn(0,
			 "cannot create a temporary recording in %s (%s): the samples stay in "
			 "memory",
			 dir && *dir ? dir : "/tmp", strerror(errno));
		if (rc->rw)
			recording_close(rc->rw, NULL);
		rc->rw = NULL;
	}
	free(path);
}

int record_core_open(struct record_core *rc)
{
	record_opts_resolve_outputs(&rc->o);
	/* told before attaching, not after a long recording */
	for (int i = 0; i < rc->o.nr_outputs; i++) {
		const char *path = rc->o.outputs[i].path;
		int ret = output_check(path);

		if (ret < 0) {
			log_errno(ret, "cannot write %s", path);
			return ret == -EINVAL ? -EIO : ret; /* -EINVAL means a usage error */
		}
	}
	/* windows (--ring, --chunk) write every -o, a .perch too, as they go */
	for (int i = 0; i < rc->o.nr_outputs && !is_windowed(rc); i++) {
		const struct record_output *ro = &rc->o.outputs[i];

		if (!is_recording(ro))
			continue;
		if (rc->rw_path)
			return log_err(-EINVAL, "only one recording (.perch) per run");
		if (!strcmp(ro->path, "-"))
			return log_err(-EINVAL, "a recording is written to a file, not to stdout");
		rc->rw_path = ro->path;
	}
	if (rc->rw_path && !(rc->rw = recording_create(rc->rw_path)))
		return log_errno(-errno, "cannot create %s", rc->rw_path);
	if (!rc->rw && wants_samples(rc) && !rc->keep_samples && !is_windowed(rc))
		open_temp_recording(rc);
	return 0;
}

void record_core_discard(struct record_core *rc)
{
	if (!rc->rw)
		return;
	/* nothing recorded: leave no empty recording behind */
	recording_close(rc->rw, NULL);
	rc->rw = NULL;
	if (rc->tmp_fd < 0)
		unlink(rc->rw_path);
}

/* What the writers need to know about the recording (see include/perch/out/writers.h). */
static void set_meta(struct record_core *rc, double elapsed_s)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%d", rc->pid);
	profile_set_meta(rc->p, "pid", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(1e9 / rc->o.hz));
	profile_set_meta(rc->p, "period_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rc->start_realtime_ns);
	profile_set_meta(rc->p, "start_time_ns", buf);
	if (elapsed_s >= 0) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(elapsed_s * 1e9));
		profile_set_meta(rc->p, "duration_ns", buf);
	}
	profile_set_meta(rc->p, "mode", rc->o.cpu_mode ? "cpu" : "wall");
}

int record_core_setup(struct record_core *rc, const struct tracee *t)
{
	struct timespec now;

	rc->pid = t->pid;
	rc->nr_attached = t->nr_procs;
	rc->arch = perch_arch_of_pid(t->nr_procs ? tracee_proc_task(t, t->procs[0]) : t->pid);
	if (!rc->arch)
		return -ENOEXEC;
	if (rc->o.verify && !perch_arch_is_host(rc->arch))
		/* libunwind-ptrace is built for the host's architecture only */
		return log_err(-ENOEXEC,
			       "--verify (libunwind-ptrace) cannot unwind %s processes: "
			       "record without it",
			       rc->arch->name);
	rc->p = profile_new();
	for (int i = 0; i < rc->o.nr_outputs; i++)
		if (rc->o.outputs[i].fmt->needs_samples)
			profile_keep_samples(rc->p, 1);
	if (rc->keep_samples)
		profile_keep_samples(rc->p, 1);
	clock_gettime(CLOCK_REALTIME, &now);
	rc->start_realtime_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	rc->sym = symbolizer_new(rc->o.sysroot, rc->o.symfs);
	for (size_t i = 0; i < t->nr_procs; i++) {
		const struct tracee_proc *tp = t->procs[i];

		if (tp->alive)
			proc_open(rc, tp->pid, tracee_proc_task(t, tp),
				  tp->pid == rc->pid ? rc->arch : tp->arch, tp->execs);
	}
	if (!rc->r) /* no process of the set (a tracee the caller filled itself) */
		proc_open(rc, rc->pid, rc->pid, rc->arch, 0);
	for (size_t i = 0; i < t->nr_threads; i++)
		name_thread(rc, t->threads[i]->proc->pid, t->threads[i]->tid);
	/* the process's name now: it may be gone when the profile is written */
	if (profile_process_name(rc->p, rc->pid))
		profile_set_meta(rc->p, "comm", profile_process_name(rc->p, rc->pid));
	set_meta(rc, -1);
	return 0;
}

void record_core_sampler_opts(const struct record_core *rc, struct sampler_opts *so)
{
	*so = (struct sampler_opts){.hz = rc->o.hz,
				    .duration = rc->o.duration,
				    .stack_size = rc->o.stack_size,
				    .cpu_mode = rc->o.cpu_mode,
				    .follow_cpu = rc->o.follow_cpu,
				    .verify = rc->o.verify,
				    .no_idle_reuse = rc->o.no_idle_reuse,
				    .no_hold = rc->o.no_cpu_hold};
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The CPU/memory timeline (its own thread, /proc only) and the stall detector (fed by
 * watch_sample() on the sampler's worker thread). Neither can stop the recording. */
void record_core_start(struct record_core *rc)
{
	rc->mono_start = mono_ns();
	rc->no_points = !rc->rw && !wants_samples(rc) && !is_windowed(rc);
	if (rc->o.cpu_ms || rc->o.mem_ms) {
		/* the points go to the recording as they come; with none, they are kept only
		 * when an output draws them (the summary has its figures either way) */
		struct timeline_opts o = {.pid = rc->pid,
					  .cpu_interval_ms = rc->o.cpu_ms,
					  .mem_interval_ms = rc->o.mem_ms,
					  .launched = rc->o.argv != NULL,
					  .points = rc->rw || is_windowed(rc)
							? TIMELINE_POINTS_DRAIN
						    : rc->no_points ? TIMELINE_POINTS_NONE
								    : TIMELINE_POINTS_KEEP};
		int ret;

		rc->tl = timeline_new(&o);
		ret = timeline_start(rc->tl);
		if (ret < 0) {
			log_errno(ret, "no CPU and memory timeline: cannot start its thread");
			timeline_free(rc->tl);
			rc->tl = NULL;
		}
	}
	if (rc->o.stall_ms > 0 || rc->o.trigger_stall_ms > 0) {
		double ms = rc->o.stall_ms > 0 ? rc->o.stall_ms : rc->o.trigger_stall_ms;
		struct stall_opts so = {.threshold_ns = (uint64_t)(ms * 1e6),
					.period_ns = (uint64_t)(1e9 / rc->o.hz),
					.cpu_mode = rc->o.cpu_mode,
					.tid = rc->pid};
		const char *s = rc->o.stall_thread;

		if (s && s[strspn(s, "0123456789")]) {
			so.tid = 0;
			so.name = s;
		} else if (s) {
			so.tid = (pid_t)strtol(s, NULL, 10);
		}
		rc->stall = stall_new(&so);
	}
	if (is_windowed(rc))
		ring_start(rc);
}

void record_core_stop(struct record_core *rc)
{
	if (rc->tl)
		timeline_stop(rc->tl);
	if (rc->stall)
		stall_finish(rc->stall, mono_ns());
}

static void print_stalls(const struct record_core *rc, const char *prefix, FILE *f)
{
	const struct stall *v;
	size_t n, nv, off = 0;
	pid_t tid;
	char name[64] = "", *deeper;

	n = stall_count(rc->stall, &off);
	v = stall_longest(rc->stall, &nv);
	tid = stall_watched(rc->stall);
	if (!tid) {
		fprintf(f, "%s  stalls: no thread named '%s' was seen\n", prefix,
			rc->o.stall_thread);
		return;
	}
	for (size_t i = 0; i < profile_nr_threads(rc->p); i++)
		if (profile_thread_get(rc->p, (uint32_t)i)->tid == tid)
			snprintf(name, sizeof(name), "%s",
				 profile_str(rc->p, profile_thread_get(rc->p, (uint32_t)i)->name));
	fprintf(f,
		"%s  stalls of thread %d (%s), %g ms or longer: %zu (%zu off-cpu, %zu "
		"running in one stack)%s\n",
		prefix, (int)tid, name, rc->o.stall_ms, n, off, n - off, n ? ", the longest:" : "");
	deeper = xmalloc(strlen(prefix) + 5);
	sprintf(deeper, "%s    ", prefix);
	stall_print_longest(v, nv, 5, rc->p, rc->mono_start, deeper, f);
	free(deeper);
}

static void print_ring(const struct record_core *rc, const char *prefix, FILE *f)
{
	const struct record_ring_stats *st = record_ring_stats(rc->ring);

	if (rc->o.chunk_s > 0)
		fprintf(f, "%s  chunks of %g s: %llu written, the last one follows", prefix,
			rc->o.chunk_s, (unsigned long long)st->chunks);
	else
		fprintf(f,
			"%s  flight recorder: the last %g s kept, %llu windows saved on "
			"triggers (%llu more after --trigger-max)",
			prefix, rc->o.ring_s, (unsigned long long)st->triggered,
			(unsigned long long)st->ignored);
	fprintf(f, "; at most %llu samples held at once\n", (unsigned long long)st->held_max);
}

/* "stopped early: return address not in code 1.2%, no unwind info 0.3%" (of @stacks). */
static void print_stop_reasons(const struct resolve_stats *rs, double stacks, const char *prefix,
			       FILE *f)
{
	const char *sep = "";

	fprintf(f, "%s  stopped early:", prefix);
	for (int i = 1; i < UNWIND_STOP_NR; i++) {
		if (!rs->stopped[i])
			continue;
		fprintf(f, "%s %s %.1f%%", sep, unwind_stop_name((enum unwind_stop)i),
			100.0 * (double)rs->stopped[i] / stacks);
		sep = ",";
	}
	fputc('\n', f);
}

/* How the running threads' samples were placed at their ticks (sampler-hold.h): the
 * system-call bias correction, with its counts. */
static void print_hold(const struct record_core *rc, const char *prefix, FILE *f)
{
	const struct sampler_stats *st = rc->st;
	unsigned long long held = st->held, unheld = st->unheld, quiet = st->quiet;
	unsigned long long all = held + unheld + quiet;

	if (rc->o.no_cpu_hold || rc->o.follow_cpu) {
		fprintf(f,
			"%s  system-call bias: not corrected (%s): running threads were "
			"interrupted from perch's CPU, and such a stop lands at the exit of any "
			"system call entered meanwhile\n",
			prefix, rc->o.follow_cpu ? "--follow-cpu" : "--no-cpu-hold");
		return;
	}
	if (!all)
		return;
	fprintf(f,
		"%s  system-call bias: %llu of %llu running-thread samples (%.1f%%) taken with "
		"the thread's CPU held at the tick, so they show where it was then; %llu "
		"interrupted from another CPU (no holder there in time: such a stop may land "
		"at a later system call's exit); %llu of threads whose last %d stops all came "
		"in user code, without a hold (the next one at a system call's exit brings the "
		"holds back)\n",
		prefix, held, all, 100.0 * (double)held / (double)all, unheld, quiet,
		SAMPLER_HOLD_QUIET);
}

/* cpu mode: how the samples were counted, and how far the share at system-call exits can be
 * trusted (src/sample/sampler-cpu.c). */
static void print_cpu_mode(const struct sampler_stats *st, uint64_t total, const char *prefix,
			   FILE *f)
{
	double all = st->cpu_weight ? (double)st->cpu_weight : 1;

	if (!st->cpu_clocks) {
		fprintf(
		    f,
		    "%s  samples: %llu  (%llu stops, each weighed by its thread's time on a CPU "
		    "since its previous stop; %llu more stops with nothing due, not counted; "
		    "%llu of threads waiting for a CPU left alone)\n"
		    "%s  at system-call exits: %.1f%% of the weight, not to be trusted where "
		    "threads wait for CPUs or sleep between ticks: without the task clocks "
		    "(/proc/PID/task/TID/sched) perch cannot see who was on a CPU at a tick, and "
		    "the time a thread ran before it slept counts where its next wait ended\n",
		    prefix, (unsigned long long)total,
		    (unsigned long long)(st->samples - st->unrun), (unsigned long long)st->unrun,
		    (unsigned long long)st->waiting, prefix,
		    100.0 * (double)st->cpu_weight_kernel / all);
		return;
	}
	fprintf(f,
		"%s  samples: %llu  (%llu times a thread was on a CPU when perch took it at a "
		"tick, %llu of them on its way to block, read without a stop; %llu stops where "
		"perch did not take the CPU, %llu counted as they ran on from the tick; %llu "
		"runnable threads waiting for a CPU left alone)\n"
		"%s  at system-call exits: %.1f%% of the weight, %.1f%% of it seen on a CPU at "
		"the tick (in that call then)%s\n",
		prefix, (unsigned long long)total, (unsigned long long)st->oncpu,
		(unsigned long long)st->oncpu_blocking, (unsigned long long)st->unseen,
		(unsigned long long)st->unseen_counted, (unsigned long long)st->waiting, prefix,
		100.0 * (double)st->cpu_weight_kernel / all,
		st->cpu_weight_kernel
		    ? 100.0 * (double)(st->cpu_weight_kernel - st->cpu_weight_kernel_unseen) /
			  (double)st->cpu_weight_kernel
		    : 100.0,
		st->cpu_weight_kernel_unseen * 10 > st->cpu_weight_kernel
		    ? "; the rest only from stops on CPUs perch did not take, which may land at "
		      "a later system call's exit"
		    : "");
}

double record_core_served_pct(const struct record_core *rc)
{
	const struct sampler_stats *st = rc->st;
	uint64_t all = st->ticks + st->missed_ticks;

	return all ? 100.0 * (double)st->ticks / (double)all : 100.0;
}

void record_core_print_warnings(const struct record_core *rc, FILE *f)
{
	const struct sampler_stats *st = rc->st;
	struct resolve_stats rsum;
	const struct resolve_stats *rs = record_core_resolve_stats(rc, &rsum);
	double stacks = rs->stacks ? (double)rs->stacks : 1, served = record_core_served_pct(rc);

	if (served < RECORD_SERVED_WARN_PCT)
		fprintf(
		    f,
		    "perch: warning: perch served %.1f%% of its ticks (%llu missed: the machine, "
		    "or the target's thread count, kept it busy); the samples of the ticks it "
		    "missed were credited to the next ones\n",
		    served, (unsigned long long)st->missed_ticks);
	if (st->dropped * 100 > st->samples + st->reused + 1)
		fprintf(f,
			"perch: warning: %llu samples dropped: perch's worker fell a whole queue "
			"behind\n",
			(unsigned long long)st->dropped);
	if (st->err_regs || st->err_stack)
		fprintf(f,
			"perch: warning: %llu samples without registers and %llu without a stack "
			"copy\n",
			(unsigned long long)st->err_regs, (unsigned long long)st->err_stack);
	if (resolve_stats_stopped(rs) * 5 > rs->stacks && rs->stacks >= 10) {
		fprintf(f, "perch: warning: %.1f%% of the stacks stopped before their root\n",
			100.0 * (double)resolve_stats_stopped(rs) / stacks);
		print_stop_reasons(rs, stacks, "perch: ", f);
	}
	if (st->eintr)
		fprintf(
		    f,
		    "perch: warning: %llu blocking calls of the target failed with EINTR: perch "
		    "interrupted a thread as it went to block in epoll_wait(), semtimedop(), "
		    "sigtimedwait() or their kin\n",
		    (unsigned long long)st->eintr);
	if (rc->o.cpu_mode && !st->cpu_clocks)
		fprintf(
		    f,
		    "perch: warning: cpu mode without the task clocks (/proc/PID/task/TID/sched): "
		    "threads that share CPUs or sleep between ticks are counted where their waits "
		    "ended\n");
}

/* The headline's word on a rate perch could not keep ("" when it kept it). Static text. */
static const char *overload_note(const struct record_core *rc)
{
	static char note[96];
	double served = record_core_served_pct(rc);

	if (served >= RECORD_SERVED_WARN_PCT)
		return "";
	snprintf(note, sizeof(note), ", but perch kept only %.1f%% of the ticks (%.0f Hz)", served,
		 rc->o.hz * served / 100);
	return note;
}

void record_core_print_brief(const struct record_core *rc, const char *prefix, FILE *f)
{
	const struct sampler_stats *st = rc->st;
	struct resolve_stats rsum;
	const struct resolve_stats *rs = record_core_resolve_stats(rc, &rsum);
	const char *why = st->stop_reason == SAMPLER_STOP_EXIT	    ? "the target exited"
			  : st->stop_reason == SAMPLER_STOP_SIGNAL  ? strsignal(st->signal)
			  : st->stop_reason == SAMPLER_STOP_ERROR   ? "an error"
			  : st->stop_reason == SAMPLER_STOP_REQUEST ? "request"
								    : "duration reached";

	if (rc->nr_attached > 1)
		fprintf(f,
			"%srecorded %zu processes for %.2f s at %g Hz (%s mode), stopped by %s%s\n",
			prefix, rc->nr_attached, st->elapsed_s, rc->o.hz,
			rc->o.cpu_mode ? "cpu" : "wall", why, overload_note(rc));
	else
		fprintf(f, "%srecorded process %d for %.2f s at %g Hz (%s mode), stopped by %s%s\n",
			prefix, rc->pid, st->elapsed_s, rc->o.hz, rc->o.cpu_mode ? "cpu" : "wall",
			why, overload_note(rc));
	fprintf(f,
		"%s  %llu samples of %zu thread%s, unwound to root %.1f%% (--summary: all of it)\n",
		prefix, (unsigned long long)profile_total_samples(rc->p), profile_nr_threads(rc->p),
		profile_nr_threads(rc->p) == 1 ? "" : "s",
		rs->stacks ? 100.0 * (double)rs->to_root / (double)rs->stacks : 0.0);
}

void record_core_print_summary(const struct record_core *rc, const struct tracee_stats *ts,
			       const char *prefix, int headline, FILE *f)
{
	const struct sampler_stats *st = rc->st;
	struct resolve_stats rsum;
	const struct resolve_stats *rs = record_core_resolve_stats(rc, &rsum);
	uint64_t total = profile_total_samples(rc->p);
	/* weight beyond one per sample; a stop can also give no sample (e.g. a thread that
	 * exited before the worker got to it), so do not let the difference wrap */
	uint64_t counted = st->samples + st->reused + st->unmoved;
	uint64_t credited = total > counted ? total - counted : 0;
	double stacks = rs->stacks ? (double)rs->stacks : 1;
	const char *why = st->stop_reason == SAMPLER_STOP_EXIT	    ? "the target exited"
			  : st->stop_reason == SAMPLER_STOP_SIGNAL  ? strsignal(st->signal)
			  : st->stop_reason == SAMPLER_STOP_ERROR   ? "an error"
			  : st->stop_reason == SAMPLER_STOP_REQUEST ? "request"
								    : "duration reached";

	if (headline && rc->nr_attached > 1)
		fprintf(f,
			"%srecorded %zu processes (%d first) for %.2f s at %g Hz (%s mode), "
			"stopped by %s; CPU, memory and threads by CPU below are process %d's\n",
			prefix, rc->nr_attached, rc->pid, st->elapsed_s, rc->o.hz,
			rc->o.cpu_mode ? "cpu" : "wall", why, rc->pid);
	else if (headline)
		fprintf(f, "%srecorded process %d for %.2f s at %g Hz (%s mode), stopped by %s%s\n",
			prefix, rc->pid, st->elapsed_s, rc->o.hz, rc->o.cpu_mode ? "cpu" : "wall",
			why, overload_note(rc));
	if (rc->o.cpu_mode)
		print_cpu_mode(st, total, prefix, f);
	else
		fprintf(
		    f,
		    "%s  samples: %llu  (%llu stops, %llu of blocked threads read from /proc, "
		    "%llu of blocked threads left alone, %llu credited for late stops and missed "
		    "ticks; %llu of threads waiting for a CPU left alone)\n",
		    prefix, (unsigned long long)total,
		    (unsigned long long)(st->samples - st->blocked),
		    (unsigned long long)st->blocked, (unsigned long long)st->reused,
		    (unsigned long long)credited, (unsigned long long)st->unmoved);
	fprintf(
	    f,
	    "%s  threads seen: %llu  ticks: %llu (states read p50 %llu us, p99 %llu us after the "
	    "tick; timer set %llu us early)  missed ticks: %llu (%llu ticks put off: each "
	    "took more than half a period and the time to the next)\n"
	    "%s  stop window per sample: p50 %llu us, p99 %llu us\n"
	    "%s  unwound to root: %.1f%%  (frame-pointer fallback %.1f%% of frames, stopped early "
	    "%.1f%%, cut at %d frames %.1f%%, %.1f frames, unwind %.1f us, symbolize %.1f us per "
	    "sample without loading; loading modules and maps %.1f ms in %llu calls; maps read "
	    "%llu times)\n"
	    "%s  errors: registers %llu, stack copy %llu, dropped (perch behind) %llu (and %llu "
	    "stops of blocked threads held until the worker had room); "
	    "threads exited under perch %llu; signals passed through %llu\n",
	    prefix, (unsigned long long)ts->threads_seen, (unsigned long long)st->ticks,
	    (unsigned long long)sampler_tick_percentile(st, 50),
	    (unsigned long long)sampler_tick_percentile(st, 99),
	    (unsigned long long)(st->lead_ns / 1000), (unsigned long long)st->missed_ticks,
	    (unsigned long long)st->capped, prefix,
	    (unsigned long long)sampler_stop_percentile(st, 50),
	    (unsigned long long)sampler_stop_percentile(st, 99), prefix,
	    100.0 * (double)rs->to_root / stacks,
	    100.0 * (double)rs->fp_frames / (rs->frames ? (double)rs->frames : 1),
	    100.0 * (double)resolve_stats_stopped(rs) / stacks, rc->o.max_frames,
	    100.0 * (double)rs->truncated / stacks, (double)rs->frames / stacks,
	    (double)rs->unwind_ns / 1e3 / stacks, (double)rs->symbolize_ns / 1e3 / stacks,
	    (double)(rs->unwind_load_ns + rs->symbolize_load_ns) / 1e6,
	    (unsigned long long)rs->loads, (unsigned long long)rs->reloads, prefix,
	    (unsigned long long)st->err_regs, (unsigned long long)st->err_stack,
	    (unsigned long long)st->dropped, (unsigned long long)st->waited,
	    (unsigned long long)(st->races + ts->thread_races), (unsigned long long)ts->signals);
	if (st->blocked || st->eintr)
		fprintf(
		    f,
		    "%s  blocked threads: %llu samples read from /proc without a stop; %llu "
		    "blocking calls broken off with EINTR by a stop (a thread interrupted as it "
		    "went to block in epoll_wait(), semtimedop(), sigtimedwait() or their kin)\n",
		    prefix, (unsigned long long)st->blocked, (unsigned long long)st->eintr);
	if (st->gated || st->rescans)
		fprintf(f,
			"%s  idle gate: %llu of the blocked threads' samples counted on their "
			"process's run time alone, without a read of the thread (%llu rescans)\n",
			prefix, (unsigned long long)st->gated, (unsigned long long)st->rescans);
	if (resolve_stats_stopped(rs))
		print_stop_reasons(rs, stacks, prefix, f);
	if (ts->procs_seen > 1 || ts->procs_skipped) {
		uint64_t sampled = ts->procs_seen - ts->procs_skipped;
		uint64_t first = (rc->nr_attached ? rc->nr_attached : 1) + st->joined;

		fprintf(f,
			"%s  processes: %llu sampled (%llu forked children followed), %llu let "
			"go (not followed, or a program perch cannot profile)\n",
			prefix, (unsigned long long)sampled,
			(unsigned long long)(sampled > first ? sampled - first : 0),
			(unsigned long long)ts->procs_skipped);
	}
	if (st->joined)
		fprintf(f, "%s  %llu process%s joined during the recording\n", prefix,
			(unsigned long long)st->joined, st->joined > 1 ? "es" : "");
	print_hold(rc, prefix, f);
	if (rs->java_frames)
		fprintf(f,
			"%s  Java frames (interpreted): %.1f per sample, named in %.1f us per "
			"sample\n",
			prefix, (double)rs->java_frames / stacks,
			(double)rs->java_ns / 1e3 / stacks);
	if (rc->o.verify)
		fprintf(f,
			"%s  verify: %llu of %llu samples differ from libunwind-ptrace's "
			"unwind in the stop\n",
			prefix, (unsigned long long)rc->verify_differ,
			(unsigned long long)rc->verified);
	if (rc->tl)
		timeline_print_summary(rc->tl, prefix, 20, f);
	if (rc->stall)
		print_stalls(rc, prefix, f);
	if (rc->ring)
		print_ring(rc, prefix, f);
}

/* Unwind quality and per-sample errors as meta "unwind" and "errors" (one line of text each,
 * for the report page's summary). */
static void set_quality_meta(struct record_core *rc)
{
	const struct sampler_stats *st = rc->st;
	struct resolve_stats rsum;
	const struct resolve_stats *rs = record_core_resolve_stats(rc, &rsum);
	double stacks = rs->stacks ? (double)rs->stacks : 1;
	char buf[320];

	snprintf(buf, sizeof(buf),
		 "unwound to root %.1f%%, frame-pointer fallback %.1f%% of frames, stopped early "
		 "%.1f%%, cut at %d frames %.1f%%, %.1f frames per sample",
		 100.0 * (double)rs->to_root / stacks,
		 100.0 * (double)rs->fp_frames / (rs->frames ? (double)rs->frames : 1),
		 100.0 * (double)resolve_stats_stopped(rs) / stacks, rc->o.max_frames,
		 100.0 * (double)rs->truncated / stacks, (double)rs->frames / stacks);
	profile_set_meta(rc->p, "unwind", buf);
	snprintf(buf, sizeof(buf),
		 "registers %llu, stack copy %llu, dropped (perch behind) %llu, threads exited "
		 "under perch %llu, missed ticks %llu of %llu",
		 (unsigned long long)st->err_regs, (unsigned long long)st->err_stack,
		 (unsigned long long)st->dropped, (unsigned long long)st->races,
		 (unsigned long long)st->missed_ticks, (unsigned long long)st->ticks);
	profile_set_meta(rc->p, "errors", buf);
}

void record_core_why_empty(const struct record_core *rc, char *buf, size_t size)
{
	const struct sampler_stats *st = rc->st;
	double ms = st->elapsed_s * 1e3, period_ms = 1e3 / rc->o.hz;

	if (st->stop_reason == SAMPLER_STOP_ERROR)
		snprintf(buf, size, "sampling stopped on an error after %.0f ms", ms);
	else if (!st->ticks || (st->stop_reason == SAMPLER_STOP_EXIT && !st->samples &&
				!(rc->o.cpu_mode && st->skipped_idle)))
		snprintf(buf, size,
			 "%s after %.1f ms, before perch could sample it (a tick every "
			 "%.1f ms at -F %g): raise -F, or record a longer run",
			 st->stop_reason == SAMPLER_STOP_EXIT ? "the target exited"
							      : "the recording ended",
			 ms, period_ms, rc->o.hz);
	else if (rc->o.cpu_mode && st->skipped_idle)
		snprintf(buf, size,
			 "no thread was running at any of the %llu ticks (--mode cpu "
			 "counts running threads only: the target waited or was stopped; "
			 "--mode wall shows where it waits)",
			 (unsigned long long)st->ticks);
	else if (st->err_regs || st->dropped)
		snprintf(buf, size,
			 "every sample failed: %llu times the registers could not be "
			 "read, %llu dropped because perch fell behind",
			 (unsigned long long)st->err_regs, (unsigned long long)st->dropped);
	else if (st->late)
		snprintf(buf, size,
			 "no thread stopped for perch in %llu ticks (%llu times a stop "
			 "was still pending: the threads did not return to user space)",
			 (unsigned long long)st->ticks, (unsigned long long)st->late);
	else
		snprintf(buf, size,
			 "no thread stopped for perch in %llu ticks over %.0f ms (the "
			 "recording ended before a stop came, or the threads exited or "
			 "were let go)",
			 (unsigned long long)st->ticks, ms);
}

/* Timelines as counters, stalls as meta "stalls" (see writers.h). */
void record_core_finish(struct record_core *rc)
{
	char buf[32];

	set_meta(rc, rc->st->elapsed_s);
	set_quality_meta(rc);
	if (rc->tl && rc->rw)
		timeline_drain(rc->tl, drain_to_recording, rc->rw);
	if (rc->tl && rc->ring)
		timeline_drain(rc->tl, ring_points, rc->ring);
	if (rc->tl)
		timeline_store(rc->tl, rc->p);
	if (rc->stall) {
		size_t n;
		const struct stall *v;
		char *text;

		/* meta "stalls": set here ("" for none) unless some were streamed already; then
		 * the rest follows them into the recording */
		v = stall_list(rc->stall, &n);
		if (rc->rw && stall_count(rc->stall, NULL) > n) {
			stall_drain(rc->stall, stalls_to_recording, rc->rw);
		} else if (!rc->no_points) {
			text = stall_meta_format(v, n);
			profile_set_meta(rc->p, "stalls", text);
			free(text);
		}
		snprintf(buf, sizeof(buf), "%d", (int)stall_watched(rc->stall));
		profile_set_meta(rc->p, "stall_thread", buf);
		snprintf(buf, sizeof(buf), "%g", rc->o.stall_ms);
		profile_set_meta(rc->p, "stall_ms", buf);
	}
}

const struct profile *record_core_profile(const struct record_core *rc)
{
	return rc->back ? rc->back : rc->p;
}

static int write_one(const struct record_core *rc, const struct profile *p, const char *path,
		     const struct output_format *fmt, FILE *msgs)
{
	struct output_opts oo = {.lines = rc->o.lines, .top = rc->o.top};
	struct output_file of;
	int ret;

	ret = output_open(&of, path);
	if (ret < 0)
		return log_errno(ret, "cannot create %s", path);
	ret = fmt->write(p, &oo, of.f);
	if (ret < 0) {
		output_abort(&of);
		return log_errno(ret, "cannot write %s", path);
	}
	ret = output_commit(&of);
	if (ret < 0)
		return log_errno(ret, "cannot write %s", path);
	if (msgs && strcmp(path, "-"))
		fprintf(msgs, "perch: wrote %s (%s)\n", path, fmt->name);
	return 0;
}

int record_core_write(const struct record_core *rc, const char *path,
		      const struct output_format *fmt)
{
	return write_one(rc, record_core_profile(rc), path, fmt, NULL);
}

/* Close the streamed recording; the other outputs are then rendered from it, read back, so
 * that they have every sample (the live profile dropped the ones it had written). rc->back is
 * NULL when it cannot be read back: they use the live profile's counts. @read_back: also when
 * no other output needs it (the REPL renders the recording later). */
static int finish_recording(struct record_core *rc, FILE *msgs, int read_back)
{
	uint64_t bytes = recording_bytes(rc->rw);
	struct recording_info info;
	int ret;

	ret = recording_close(rc->rw, rc->p);
	rc->rw = NULL;
	if (ret < 0)
		return log_errno(ret, "cannot write %s",
				 rc->tmp_fd < 0 ? rc->rw_path : "the temporary recording");
	if (msgs && rc->tmp_fd < 0)
		fprintf(msgs, "perch: wrote %s (perch recording, %llu KiB)\n", rc->rw_path,
			(unsigned long long)(bytes + 1023) / 1024);
	for (int i = 0; i < rc->o.nr_outputs; i++)
		if (!is_recording(&rc->o.outputs[i]))
			read_back = 1;
	if (!read_back)
		return 0;
	ret = recording_read(rc->rw_path, &rc->back, &info);
	if (ret < 0 || !info.complete)
		log_warn(0, "cannot read back %s (%s): other outputs have no time line",
			 rc->rw_path, info.error[0] ? info.error : strerror(-ret));
	if (ret >= 0 && !info.complete) {
		profile_free(rc->back);
		rc->back = NULL;
	}
	if (rc->tmp_fd >= 0) {
		close(rc->tmp_fd);
		rc->tmp_fd = -1;
	}
	return 0;
}

int record_core_write_outputs(struct record_core *rc, FILE *msgs)
{
	int ret = 0;

	if (rc->ring) {
		/* the stall list's tail, then what is still owed */
		if (rc->stall)
			stall_drain(rc->stall, ring_stalls, rc->ring);
		return record_ring_finish(rc->ring, mono_ns());
	}
	if (rc->rw && finish_recording(rc, msgs, rc->keep_samples) < 0)
		ret = -1;
	for (int i = 0; i < rc->o.nr_outputs; i++) {
		const struct record_output *ro = &rc->o.outputs[i];

		if (!is_recording(ro) &&
		    write_one(rc, record_core_profile(rc), ro->path, ro->fmt, msgs) < 0)
			ret = -1;
	}
	return ret;
}
