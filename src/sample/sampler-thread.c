/* What the sampler reads and keeps of each thread and process: its /proc stat, syscall and
 * schedstat files through kept descriptors, the sites where it was found blocked, whether it
 * ran since, cpu mode's weights, and the snapshot of a stopped or blocked thread. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/fdlimit.h"
#include "perch/base/monotime.h"
#include "perch/base/xalloc.h"
#include "perch/proc/waitreason.h"
#include "sampler-int.h"

/* Registers and stack of @th, stopped: 0 or -errno. */
int sampler_take_snapshot(struct tracee *t, const struct perch_arch *arch,
			  const struct tracee_thread *th, struct unwind_snapshot *snap)
{
	snap->time_ns = monotime_ns();
	snap->regs.valid = 0; /* (a reused item's, if the read fails) */
	snap->regs.broken_call = 0;
	snap->regs.eintr_call = 0;
	return unwind_snapshot_take(t->pid, th->tid, arch, snap);
}

/* Note the blocking call a stop of @th broke off (@regs, read in that stop), for the thread's
 * syscall file to name it again (it names restart_syscall until the call returns). */
void sampler_note_broken_call(struct tracee_thread *th, const struct perch_arch *arch,
			      const struct perch_regs *regs)
{
	if (regs->broken_call && !waitreason_is_restart(arch->e_machine, regs->broken_call - 1)) {
		th->broken_call = regs->broken_call;
		th->broken_sp = perch_regs_sp(arch, regs);
		th->broken_pc = perch_regs_pc(arch, regs);
	}
}

int sampler_snapshot(struct tracee *t, const struct perch_arch *arch, struct tracee_thread *th,
		     struct unwind_snapshot *snap)
{
	int ret = sampler_take_snapshot(t, arch, th, snap);

	sampler_note_broken_call(th, arch, &snap->regs);
	return ret;
}

int sampler_snapshot_blocked(const struct perch_arch *arch, pid_t tid, const char *syscall,
			     struct unwind_snapshot *snap)
{
	struct waitreason_syscall sc;

	snap->time_ns = monotime_ns();
	snap->tid = tid;
	snap->pac_mask = 0;
	snap->stack_len = 0; /* (an item's buffer holds its previous stack) */
	memset(&snap->regs, 0, sizeof(snap->regs));
	if (!syscall || waitreason_syscall_parse(syscall, &sc) < 0 ||
	    sc.what != WAITREASON_SC_SYSCALL || !sc.sp || !sc.pc)
		return -EAGAIN;
	/* (a table without the list has six zeros) */
	for (int i = 0; i < 6 && arch->dw_sysargs[0] != arch->dw_sysargs[1]; i++) {
		int r = arch->dw_sysargs[i];

		if (r >= 0 && r < PERCH_MAX_DWREGS) {
			snap->regs.r[r] = sc.args[i];
			snap->regs.valid |= 1ULL << r;
		}
	}
	snap->regs.r[arch->dw_sp] = sc.sp;
	snap->regs.r[arch->dw_pc] = sc.pc;
	snap->regs.valid |= 1ULL << arch->dw_sp | 1ULL << arch->dw_pc;
	return unwind_snapshot_read_stack(tid, sc.sp, snap);
}

struct sthread *sampler_thread_of(struct tracee_thread *th)
{
	struct sthread *s = th->user;

	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->stat_fd = s->syscall_fd = s->schedstat_fd = s->sched_fd = -1;
		th->user = s;
	}
	return s;
}

struct sproc *sampler_proc_of(struct tracee_proc *p)
{
	if (!p->user)
		p->user = xcalloc(1, sizeof(struct sproc));
	return p->user;
}

void sampler_proc_free(struct tracee_proc *p)
{
	struct sproc *sp = p->user;

	if (sp)
		free(sp->gated);
	free(sp);
	p->user = NULL;
}

void sampler_thread_free(struct tracee_thread *th)
{
	struct sthread *s = th->user;

	if (!s)
		return;
	sampler_list_remove(th);
	sampler_fd_close(&s->stat_fd);
	sampler_fd_close(&s->syscall_fd);
	sampler_fd_close(&s->schedstat_fd);
	sampler_fd_close(&s->sched_fd);
	free(s);
	th->user = NULL;
}

/* Read a small /proc/PID/task/TID/NAME file through a kept descriptor (pread: 1-2 us instead
 * of 3 for open+read+close). Returns its length, or -1. */
/* The descriptors kept here come from perch's one budget (fdlimit_keep()): past that a file
 * is opened, read and closed at each read. A process of any thread count keeps its names and
 * stacks then: perch's own files (ELF, /proc maps) need descriptors too, and with 3-4 kept per
 * thread a 600-thread target under `ulimit -n 1024` left none for them (every frame was
 * libc.so.6+0x...). */
void sampler_fd_close(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		fdlimit_unkeep();
	}
	*fd = -1;
}

ssize_t sampler_read_task_file(struct tracee *t, struct tracee_thread *th, int *fd,
			       const char *name, char *buf, size_t len)
{
	int once = -1;
	ssize_t n;

	(void)t;
	if (*fd == -1) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", th->proc->pid, th->tid, name);
		once = open(path, O_RDONLY | O_CLOEXEC);
		if (once < 0 && errno != EMFILE && errno != ENFILE)
			*fd = -2; /* (out of descriptors: tried again at the next read) */
		if (once >= 0 && fdlimit_keep()) {
			*fd = once; /* kept for the next reads */
			once = -1;
		}
	}
	n = *fd >= 0 ? pread(*fd, buf, len - 1, 0) : once >= 0 ? pread(once, buf, len - 1, 0) : -1;
	if (once >= 0)
		close(once);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The thread's .../schedstat alone (the gate's run times untouched). 0 or -1 (unreadable:
 * kernels without CONFIG_SCHED_INFO). */
int sampler_peek_schedstat(struct tracee *t, struct tracee_thread *th, struct sthread *s,
			   struct schedstat *ss)
{
	char buf[128], *p, *end;

	if (sampler_read_task_file(t, th, &s->schedstat_fd, "schedstat", buf, sizeof(buf)) < 0)
		return -1;
	ss->run_ns = strtoull(buf, &p, 10);
	ss->wait_ns = strtoull(p, &end, 10);
	if (end == p)
		return -1;
	ss->slices = strtoull(end, &p, 10);
	if (p == end)
		return -1;
	return 0;
}

/* The thread's .../schedstat, its run time also kept in @s (@s->run_tick: the tick that
 * visited it last). 0 or -1 (unreadable: kernels without CONFIG_SCHED_INFO). */
int sampler_read_schedstat(struct tracee *t, struct tracee_thread *th, struct sthread *s,
			   struct schedstat *ss)
{
	if (sampler_peek_schedstat(t, th, s, ss) < 0)
		return -1;
	s->run_ns = ss->run_ns;
	s->run_tick = s->tick;
	return 0;
}

/* The state letter, name and last CPU from .../stat ("1234 (comm) S ..."; comm may hold
 * ')'; the CPU is field 39): the state or 0 when unknown; @s->comm is left as it was when the
 * line cannot be read, @s->cpu is -1 when it has no CPU field. */
char sampler_read_state(struct tracee *t, struct tracee_thread *th, struct sthread *s)
{
	char buf[512], *open, *close, *p;
	int field = 3;

	s->cpu = -1;
	if (sampler_read_task_file(t, th, &s->stat_fd, "stat", buf, sizeof(buf)) < 0)
		return 0;
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open || close[1] != ' ')
		return 0;
	snprintf(s->comm, sizeof(s->comm), "%.*s", (int)(close - open - 1), open + 1);
	for (p = close + 2; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	if (field == 39 && *p >= '0' && *p <= '9')
		s->cpu = (int)strtol(p, NULL, 10);
	return close[2];
}

/* Newest first; a known site moves to the front, a new one pushes out the oldest. */
void sampler_remember_site(struct sthread *s, uint64_t sp, uint64_t pc)
{
	int i;

	for (i = 0; i < s->nr_sites; i++)
		if (s->sites[i].sp == sp && s->sites[i].pc == pc)
			break;
	if (i == s->nr_sites) {
		if (s->nr_sites < SAMPLER_SITES)
			s->nr_sites++;
		i = s->nr_sites - 1;
	}
	memmove(s->sites + 1, s->sites, (size_t)i * sizeof(s->sites[0]));
	s->sites[0].sp = sp;
	s->sites[0].pc = pc;
}

/* A thread found blocked at a site at an earlier tick: is it still there? Not switched in
 * since (schedstat's slice count unchanged) means it has not run, so its stack is the same:
 * but it may be blocked, or woken and waiting for a CPU, which schedstat cannot tell apart (a
 * woken thread changes nothing there until it runs). Where the thread's CPU is contended
 * (its schedstat shows it waited for a CPU more than SAMPLER_WAIT_PPM of the time since it
 * was last found blocked) its state is read as well, so a woken thread counts as running
 * ('R'); elsewhere a wakeup is followed by running within microseconds, and the one cheap
 * read per tick suffices. IDLE_STILL: still blocked there; IDLE_WOKEN: runnable, @s->state
 * read; IDLE_GONE: it ran since (or schedstat cannot be read). */
int sampler_idle_check(struct tracee *t, struct tracee_thread *th, struct sthread *s, uint64_t now)
{
	struct schedstat ss;
	char state;

	if (sampler_read_schedstat(t, th, s, &ss) < 0)
		return IDLE_GONE;
	if (ss.slices != s->idle_ss.slices) {
		uint64_t dt = now > s->idle_ns ? now - s->idle_ns : 0;

		if (dt && ss.wait_ns >= s->idle_ss.wait_ns) {
			uint64_t ppm = (ss.wait_ns - s->idle_ss.wait_ns) / (dt / 1000000 + 1);

			/* a moving average over the thread's recent wakeups */
			s->wait_ppm =
			    (uint32_t)((s->wait_ppm + (ppm < 1000000 ? ppm : 1000000)) / 2);
		}
		s->ran_since_idle = 1; /* switched in since: it ran, wherever it is now */
		return IDLE_GONE;
	}
	if (s->wait_ppm < SAMPLER_WAIT_PPM)
		return IDLE_STILL;
	state = sampler_read_state(t, th, s);
	if (state == 'R') {
		s->state = state;
		return IDLE_WOKEN;
	}
	if (state)
		s->state = state;
	return IDLE_STILL;
}

/* Is the thread blocked in a system call at the SP and PC of one of its earlier samples?
 * @s->syscall holds /proc/PID/task/TID/syscall ("NR ARG1..ARG6 SP PC", "-1 SP PC" or
 * "running"). Returns the site's index, or -1. */
int sampler_blocked_site(const struct sthread *s)
{
	struct waitreason_syscall sc;

	if (!s->nr_sites || !s->has_syscall)
		return -1;
	/* "running", or blocked outside a system call: interrupt it */
	if (waitreason_syscall_parse(s->syscall, &sc) < 0 || sc.what != WAITREASON_SC_SYSCALL)
		return -1;
	for (int i = 0; i < s->nr_sites; i++)
		if (s->sites[i].sp == sc.sp && s->sites[i].pc == sc.pc)
			return i;
	return -1;
}

/* Fill a sample or reuse item from what the last tick read of the thread. */
void sampler_fill_item(struct item *it, int kind, struct tracee_thread *th, struct sthread *s)
{
	it->kind = kind;
	it->pid = th->proc->pid;
	it->arch = th->proc->arch;
	it->tid = th->tid;
	it->weight = 1 + s->late_ticks;
	it->state = s->state;
	it->ran = s->ran == SAMPLER_RAN_YES ? 1 : s->ran == SAMPLER_RAN_NO ? 0 : -1;
	s->ran = SAMPLER_RAN_UNKNOWN;
	memcpy(it->comm, s->comm, sizeof(it->comm));
	it->has_syscall = s->has_syscall;
	if (s->has_syscall)
		memcpy(it->syscall, s->syscall, sizeof(it->syscall));
	s->late_ticks = 0;
}

/* A sample of a group-stopped thread: its state is 'T' (/proc reads 't' while perch traces
 * it), and it stays where it is until SIGCONT, so later ticks count this stack again without
 * stopping it (tick_stopped()). */
void sampler_note_stopped(struct sthread *s, struct item *it, uint64_t sp, uint64_t pc,
			  struct sampler_stats *st)
{
	it->state = 'T';
	it->has_syscall = 0;
	s->stopped_known = 1;
	s->stopped_sp = sp;
	s->stopped_pc = pc;
	st->stopped++;
}

/* The architecture of @th's process (@arch when it is not known). */
const struct perch_arch *sampler_arch_of(const struct tracee_thread *th,
					 const struct perch_arch *arch)
{
	return th->proc->arch ? th->proc->arch : arch;
}
