/* CPU and memory timelines during a recording (see timeline.h): a collector thread reads
 * /proc at two intervals into its own series; the owner turns them into profile counters and
 * summary lines once the collector has stopped. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/proc/timeline.h"
#include "perch/profile/profile.h"

/* One counter's points as meta text ("T=V T=V ...", writers.h "counters"), formatted as they
 * come. Kept until timeline_drain() hands them on (a recording streams them to disk), or for
 * the whole recording when nothing drains them (timeline_store() then sets the meta). */
struct series {
	struct strbuf text; /* points not handed on yet */
	int started;	    /* a point was added: the next one starts with a space */
	int ready;	    /* to be stored: a thread that ran, a category not 0 all along */
	int drained;	    /* some of it was handed on (the meta key already exists there) */
	char *key;	    /* "counter:NAME" once drained (a thread's name then) */
};

/* A thread's CPU, owned by the collector. */
struct thread_cpu {
	pid_t tid;
	char comm[64];
	struct proc_stat first, last;
	uint64_t first_t, last_t;
	double last_v; /* the latest point's value (points only where it changes) */
	struct series s;
};

/* Samples per state of a thread, owned by the sampler worker. */
enum { ST_R, ST_S, ST_D, ST_T, ST_OTHER, ST_NR }; /* T: stopped (job control or a debugger) */

struct thread_states {
	pid_t tid;
	uint64_t n[ST_NR];
};

/* Start, end and peak of one memory field over the readings (summary lines). */
struct mem_range {
	uint64_t start, end, peak;
	int seen;
};

#define NR_CPU_SERIES 3
#define NR_MEM_SERIES (4 + TIMELINE_NR_CATS)

struct timeline {
	struct timeline_opts o;

	pthread_t thread;
	int running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop; /* under mu */
	int gone; /* the process went away */
	/* the series and figures below: written by the collector, drained by the owner */
	pthread_mutex_t series_mu;

	struct proc_stat_files files; /* the threads' stat files, for the collector */
	struct timeline_reading prev;
	int has_prev;
	struct series cpu[NR_CPU_SERIES];
	size_t nr_cpu, nr_sys;
	double cpu_sum, cpu_all_sum, cpu_peak, sys_sum, sys_peak;
	struct thread_cpu *threads; /* sorted by tid */
	size_t nr_threads, alloc_threads;

	struct series memser[NR_MEM_SERIES];
	struct mem_range range[NR_MEM_SERIES];
	size_t nr_mem_points;
	int has_summary;
	struct timeline_mem *mem; /* every point, only when no one drains (tests, the REPL) */
	size_t nr_mem, alloc_mem;
	enum meminfo_rules rules;
	uint64_t smaps_reads, smaps_ns, smaps_max_ns;
	/* smaps is read whole at one memory reading in smaps_every (collect_mem()); the next
	 * whole read after smaps_wait more */
	unsigned int smaps_every, smaps_wait;

	struct thread_states *states; /* sorted by tid */
	size_t nr_states, alloc_states;
};

static const char *const cat_keys[TIMELINE_NR_CATS] = {
    "java_heap", "native_heap", "code", "stack", "graphics", "private_other", "system",
};
static const char *const cat_labels[TIMELINE_NR_CATS] = {
    "Java Heap", "Native Heap", "Code", "Stack", "Graphics", "Private Other", "System",
};

const char *timeline_cat_key(int cat)
{
	return cat >= 0 && cat < TIMELINE_NR_CATS ? cat_keys[cat] : "?";
}

const char *timeline_cat_label(int cat)
{
	return cat >= 0 && cat < TIMELINE_NR_CATS ? cat_labels[cat] : "?";
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* readings */

int timeline_read(pid_t pid, struct proc_stat_files *files, int with_tasks,
		  struct timeline_reading *r)
{
	struct cpustat sys;
	pid_t *tids = NULL;
	int n, ret;

	r->time_ns = mono_ns();
	r->nr_tasks = 0;
	ret = proc_stat_read(pid, 0, &r->proc);
	if (ret < 0)
		return ret;
	r->has_sys = cpustat_load(&sys) == 0;
	if (r->has_sys) {
		r->sys = sys.all;
		cpustat_release(&sys);
	}
	r->has_tasks = with_tasks;
	if (!with_tasks)
		return 0;
	n = files ? proc_stat_files_tids(files, r->proc.num_threads, &tids)
		  : proc_task_list(pid, &tids);
	for (int i = 0; i < n; i++) {
		struct proc_stat *st;

		ALLOC_GROW(r->tasks, r->nr_tasks + 1, r->alloc_tasks);
		st = &r->tasks[r->nr_tasks];
		/* a thread that exited between the listing and this read is left out */
		if ((files ? proc_stat_files_read(files, tids[i], st)
			   : proc_stat_read(pid, tids[i], st)) == 0)
			r->nr_tasks++;
	}
	free(tids);
	return 0;
}

void timeline_reading_release(struct timeline_reading *r)
{
	free(r->tasks);
	r->tasks = NULL;
	r->nr_tasks = r->alloc_tasks = 0;
}

void timeline_mem_from(const struct proc_smaps_usage *rollup, const struct proc_smaps *s,
		       const struct meminfo *mi, uint64_t time_ns, struct timeline_mem *out)
{
	const struct proc_smaps_usage *u = rollup ? rollup : s ? &s->total : NULL;

	memset(out, 0, sizeof(*out));
	out->time_ns = time_ns;
	if (u) {
		out->rss = u->rss * 1024;
		out->pss = u->pss * 1024;
		out->uss = proc_smaps_uss(u) * 1024;
		out->swap = u->swap * 1024;
	}
	if (mi) {
		const struct meminfo_line *l[TIMELINE_NR_CATS] = {
		    &mi->java_heap, &mi->native_heap,	&mi->code,   &mi->stack,
		    &mi->graphics,  &mi->private_other, &mi->system,
		};

		out->has_summary = 1;
		for (int i = 0; i < TIMELINE_NR_CATS; i++)
			out->cat[i] = l[i]->pss * 1024;
	}
}

int timeline_read_mem(pid_t pid, int with_smaps, enum meminfo_rules *rules,
		      struct timeline_mem *out, uint64_t *smaps_ns)
{
	struct proc_smaps_rollup ro;
	struct proc_smaps *s = NULL;
	struct meminfo *mi = NULL;
	uint64_t t = mono_ns(), t0;
	int have_rollup = proc_smaps_rollup_load(pid, &ro) == 0;

	*smaps_ns = 0;
	if (with_smaps || !have_rollup) {
		t0 = mono_ns();
		s = proc_smaps_load(pid);
		if (!s && !have_rollup)
			return -errno;
		if (s && with_smaps) {
			mi = xmalloc(sizeof(*mi));
			if (*rules == MEMINFO_RULES_AUTO)
				*rules = meminfo_detect_rules(s);
			meminfo_compute(s, *rules, mi);
			*smaps_ns = mono_ns() - t0;
		}
	}
	timeline_mem_from(have_rollup ? &ro.u : NULL, s, mi, t, out);
	proc_smaps_free(s);
	free(mi);
	return 0;
}

/* the series */

struct timeline *timeline_new(const struct timeline_opts *o)
{
	struct timeline *tl = xcalloc(1, sizeof(*tl));

	tl->o = *o;
	proc_stat_files_init(&tl->files, o->pid);
	if (tl->o.clk_tck <= 0)
		tl->o.clk_tck = cpustat_clk_tck();
	if (!tl->o.ncpus)
		tl->o.ncpus = cpustat_ncpus();
	pthread_mutex_init(&tl->mu, NULL);
	pthread_mutex_init(&tl->series_mu, NULL);
	for (int i = 0; i < NR_CPU_SERIES; i++) {
		strbuf_init(&tl->cpu[i].text, 0);
		tl->cpu[i].ready = 1;
	}
	for (int i = 0; i < NR_MEM_SERIES; i++)
		strbuf_init(&tl->memser[i].text, 0);
	return tl;
}

static void series_release(struct series *se)
{
	strbuf_release(&se->text);
	free(se->key);
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	timeline_stop(tl);
	pthread_mutex_destroy(&tl->mu);
	pthread_mutex_destroy(&tl->series_mu);
	timeline_reading_release(&tl->prev);
	proc_stat_files_release(&tl->files);
	for (int i = 0; i < NR_CPU_SERIES; i++)
		series_release(&tl->cpu[i]);
	for (int i = 0; i < NR_MEM_SERIES; i++)
		series_release(&tl->memser[i]);
	for (size_t i = 0; i < tl->nr_threads; i++)
		series_release(&tl->threads[i].s);
	free(tl->threads);
	free(tl->mem);
	free(tl->states);
	free(tl);
}

/* Index of @tid in a tid-sorted array of @nr elements of @size bytes (tid first), or the
 * insertion point with *@found 0. */
static size_t find_tid(const void *base, size_t nr, size_t size, pid_t tid, int *found)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		pid_t t = *(const pid_t *)((const char *)base + mid * size);

		if (t == tid) {
			*found = 1;
			return mid;
		}
		if (t < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

static struct thread_cpu *thread_cpu_of(struct timeline *tl, pid_t tid)
{
	int found;
	size_t i = find_tid(tl->threads, tl->nr_threads, sizeof(*tl->threads), tid, &found);

	if (!found) {
		ALLOC_GROW(tl->threads, tl->nr_threads + 1, tl->alloc_threads);
		memmove(tl->threads + i + 1, tl->threads + i,
			(tl->nr_threads - i) * sizeof(*tl->threads));
		memset(&tl->threads[i], 0, sizeof(tl->threads[i]));
		strbuf_init(&tl->threads[i].s.text, 0);
		tl->threads[i].tid = tid;
		tl->nr_threads++;
	}
	return &tl->threads[i];
}

/* Append the point @t=@fmt to @se (nothing is kept with TIMELINE_POINTS_NONE). */
static void series_add(struct timeline *tl, struct series *se, uint64_t t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void series_add(struct timeline *tl, struct series *se, uint64_t t, const char *fmt, ...)
{
	va_list ap;

	if (tl->o.points != TIMELINE_POINTS_NONE) {
		strbuf_addf(&se->text, "%s%" PRIu64 "=", se->started ? " " : "", t);
		va_start(ap, fmt);
		strbuf_vaddf(&se->text, fmt, ap);
		va_end(ap);
	}
	se->started = 1;
}

static void thread_add(struct timeline *tl, const struct proc_stat *st, uint64_t t)
{
	struct thread_cpu *th = thread_cpu_of(tl, st->pid);
	struct cpustat_task_usage u;
	int ret = -ENOENT;

	snprintf(th->comm, sizeof(th->comm), "%s", st->comm);
	if (th->last_t && t > th->last_t)
		ret = cpustat_task_usage(&th->last, st, t - th->last_t, tl->o.clk_tck, tl->o.ncpus,
					 &u);
	if (ret == 0) {
		/* a step counter: a point only where the value changes */
		if (!th->s.started || th->last_v != u.one_core) {
			series_add(tl, &th->s, th->last_t, "%.2f", u.one_core);
			th->last_v = u.one_core;
			th->s.ready |= u.one_core > 0; /* a thread that never ran has no counter */
		}
	} else if (ret != -ENOENT) {
		/* a new thread with a reused tid (or a counter going back): start over */
		th->first_t = 0;
	}
	if (!th->first_t) {
		th->first = *st;
		th->first_t = t;
	}
	th->last = *st;
	th->last_t = t;
}

/* One point of the process's CPU (@sys NaN when unknown) at @t. */
static void cpu_point(struct timeline *tl, uint64_t t, double one, double all, double sys)
{
	series_add(tl, &tl->cpu[0], t, "%.2f", one);
	series_add(tl, &tl->cpu[1], t, "%.2f", all);
	tl->cpu_sum += one;
	tl->cpu_all_sum += all;
	if (one > tl->cpu_peak)
		tl->cpu_peak = one;
	if (!isnan(sys)) {
		series_add(tl, &tl->cpu[2], t, "%.2f", sys);
		tl->sys_sum += sys;
		if (!tl->nr_sys || sys > tl->sys_peak)
			tl->sys_peak = sys;
		tl->nr_sys++;
	}
	tl->nr_cpu++;
}

void timeline_add_cpu(struct timeline *tl, const struct timeline_reading *r)
{
	struct timeline_reading *p = &tl->prev;

	pthread_mutex_lock(&tl->series_mu);
	if (tl->has_prev && r->time_ns > p->time_ns) {
		struct cpustat_task_usage u;
		struct cpustat_usage su;
		double sys = NAN;

		if (p->has_sys && r->has_sys && cpustat_usage(&p->sys, &r->sys, &su) == 0)
			sys = su.busy;
		if (cpustat_task_usage(&p->proc, &r->proc, r->time_ns - p->time_ns, tl->o.clk_tck,
				       tl->o.ncpus, &u) == 0)
			cpu_point(tl, p->time_ns, u.one_core, u.all_cores, sys);
	}
	for (size_t i = 0; i < r->nr_tasks; i++)
		thread_add(tl, &r->tasks[i], r->time_ns);
	if (r->has_tasks) {
		ALLOC_GROW(p->tasks, r->nr_tasks + 1, p->alloc_tasks);
		if (r->nr_tasks) /* none when the task list could not be read (exiting) */
			memcpy(p->tasks, r->tasks, r->nr_tasks * sizeof(*r->tasks));
		p->nr_tasks = r->nr_tasks;
	}
	p->time_ns = r->time_ns;
	p->proc = r->proc;
	p->sys = r->sys;
	p->has_sys = r->has_sys;
	tl->has_prev = 1;
	pthread_mutex_unlock(&tl->series_mu);
}

/* Field @c of @m: rss, pss, uss, swap, then the categories. */
static uint64_t mem_field(const struct timeline_mem *m, int c)
{
	return c == 0	? m->rss
	       : c == 1 ? m->pss
	       : c == 2 ? m->uss
	       : c == 3 ? m->swap
			: m->cat[c - 4];
}

void timeline_add_mem(struct timeline *tl, const struct timeline_mem *m)
{
	pthread_mutex_lock(&tl->series_mu);
	if (tl->o.points == TIMELINE_POINTS_KEEP) {
		ALLOC_GROW(tl->mem, tl->nr_mem + 1, tl->alloc_mem);
		tl->mem[tl->nr_mem++] = *m;
	}
	tl->nr_mem_points++;
	tl->has_summary |= m->has_summary;
	for (int c = 0; c < NR_MEM_SERIES; c++) {
		struct mem_range *r = &tl->range[c];
		uint64_t x = mem_field(m, c);

		/* the categories come from smaps, read only at some readings */
		if (c >= 4 && !m->has_summary)
			continue;
		series_add(tl, &tl->memser[c], m->time_ns, "%" PRIu64, x);
		/* no track for a category that stays empty (the Java heap of a C program) */
		tl->memser[c].ready |= c < 4 || x;
		if (!r->seen++)
			r->start = x;
		r->end = x;
		if (x > r->peak)
			r->peak = x;
	}
	pthread_mutex_unlock(&tl->series_mu);
}

void timeline_note_state(struct timeline *tl, pid_t tid, char state, uint32_t weight)
{
	int found;
	size_t i = find_tid(tl->states, tl->nr_states, sizeof(*tl->states), tid, &found);
	int k;

	if (!found) {
		ALLOC_GROW(tl->states, tl->nr_states + 1, tl->alloc_states);
		memmove(tl->states + i + 1, tl->states + i,
			(tl->nr_states - i) * sizeof(*tl->states));
		memset(&tl->states[i], 0, sizeof(tl->states[i]));
		tl->states[i].tid = tid;
		tl->nr_states++;
	}
	switch (state) {
	case 'R':
		k = ST_R;
		break;
	case 'S':
		k = ST_S;
		break;
	case 'D':
		k = ST_D;
		break;
	case 'T': /* group-stopped (SIGSTOP, Ctrl-Z) */
	case 't': /* the same seen while traced: /proc says 't' for a stopped tracee */
		k = ST_T;
		break;
	default:
		k = ST_OTHER;
	}
	tl->states[i].n[k] += weight;
}

/* the collector thread */

/* The threads are read at every reading of a process with few of them, else every
 * TIMELINE_TASKS_EVERY_MAX-th (at most): 200 threads' stat files every 100 ms cost perch
 * 17 us per tick at 1000 Hz (2026-11-27), for a per-thread CPU table a second's steps show
 * as well. */
#define TIMELINE_TASKS_PER_STEP	 20
#define TIMELINE_TASKS_EVERY_MAX 10

static void collect_cpu(struct timeline *tl)
{
	struct timeline_reading r = {0};
	uint64_t every = tl->prev.proc.num_threads / TIMELINE_TASKS_PER_STEP;
	int ret;

	every = every < 1 ? 1 : every > TIMELINE_TASKS_EVERY_MAX ? TIMELINE_TASKS_EVERY_MAX : every;
	ret = timeline_read(tl->o.pid, &tl->files, tl->nr_cpu % every == 0, &r);

	if (ret == -ENOENT || ret == -ESRCH)
		tl->gone = 1;
	else if (ret == 0)
		timeline_add_cpu(tl, &r);
	timeline_reading_release(&r);
}

#define TIMELINE_SMAPS_SLOW_NS	 5000000u
#define TIMELINE_SMAPS_SHARE	 200 /* 0.5% */
#define TIMELINE_SMAPS_MAX_EVERY 60

unsigned int timeline_smaps_every(uint64_t mean_ns, unsigned int interval_ms)
{
	uint64_t budget = (uint64_t)interval_ms * 1000000u / TIMELINE_SMAPS_SHARE;
	uint64_t every;

	if (mean_ns <= TIMELINE_SMAPS_SLOW_NS || !budget)
		return 1;
	every = (mean_ns + budget - 1) / budget;
	return every > TIMELINE_SMAPS_MAX_EVERY ? TIMELINE_SMAPS_MAX_EVERY : (unsigned int)every;
}

/* One memory reading: RSS, PSS, USS and swap from smaps_rollup, the categories from smaps
 * read whole at the first and @last readings and at one in smaps_every() between them. */
static void collect_mem(struct timeline *tl, int last)
{
	int whole = last || !tl->smaps_wait;
	struct timeline_mem m;
	uint64_t ns;
	int ret = timeline_read_mem(tl->o.pid, whole, &tl->rules, &m, &ns);

	if (ret == -ENOENT || ret == -ESRCH)
		tl->gone = 1;
	if (ret < 0)
		return;
	timeline_add_mem(tl, &m);
	if (m.has_summary) {
		tl->smaps_reads++;
		tl->smaps_ns += ns;
		if (ns > tl->smaps_max_ns)
			tl->smaps_max_ns = ns;
	}
	if (whole) {
		tl->smaps_every = timeline_smaps_every(
		    tl->smaps_reads ? tl->smaps_ns / tl->smaps_reads : 0, tl->o.mem_interval_ms);
		tl->smaps_wait = tl->smaps_every - 1;
	} else {
		tl->smaps_wait--;
	}
}

static uint64_t next_after(uint64_t next, uint64_t now, unsigned int ms)
{
	next += (uint64_t)ms * 1000000;
	/* behind (a slow smaps read): skip the missed readings */
	return next > now ? next : now + (uint64_t)ms * 1000000;
}

static void *collector(void *arg)
{
	struct timeline *tl = arg;
	uint64_t now = mono_ns(), next_cpu = now, next_mem = now;
	unsigned int cpu_ms = tl->o.cpu_interval_ms, mem_ms = tl->o.mem_interval_ms;

	if (tl->o.launched)
		next_mem = now + (uint64_t)mem_ms * 1000000;

	pthread_mutex_lock(&tl->mu);
	while (!tl->stop && !tl->gone) {
		uint64_t wake = UINT64_MAX;
		struct timespec ts;

		pthread_mutex_unlock(&tl->mu);
		now = mono_ns();
		if (cpu_ms && now >= next_cpu) {
			collect_cpu(tl);
			next_cpu = next_after(next_cpu, mono_ns(), cpu_ms);
		}
		if (mem_ms && now >= next_mem && !tl->gone) {
			collect_mem(tl, 0);
			next_mem = next_after(next_mem, mono_ns(), mem_ms);
		}
		if (cpu_ms)
			wake = next_cpu;
		if (mem_ms && next_mem < wake)
			wake = next_mem;
		pthread_mutex_lock(&tl->mu);
		if (wake == UINT64_MAX)
			break;
		ts.tv_sec = (time_t)(wake / 1000000000ULL);
		ts.tv_nsec = (long)(wake % 1000000000ULL);
		while (!tl->stop && mono_ns() < wake)
			if (pthread_cond_timedwait(&tl->cv, &tl->mu, &ts) == ETIMEDOUT)
				break;
	}
	pthread_mutex_unlock(&tl->mu);
	return NULL;
}

int timeline_start(struct timeline *tl)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int ret;

	if (tl->running || (!tl->o.cpu_interval_ms && !tl->o.mem_interval_ms))
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&tl->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* the collector must never take a signal meant for the sampler */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&tl->thread, NULL, collector, tl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_cond_destroy(&tl->cv);
		return -ret;
	}
	tl->running = 1;
	return 0;
}

void timeline_stop(struct timeline *tl)
{
	if (!tl->running)
		return;
	pthread_mutex_lock(&tl->mu);
	tl->stop = 1;
	pthread_cond_signal(&tl->cv);
	pthread_mutex_unlock(&tl->mu);
	pthread_join(tl->thread, NULL);
	pthread_cond_destroy(&tl->cv);
	tl->running = 0;
	/* the end of the recording: one last point of each, if it is not too close */
	if (!tl->gone && tl->o.cpu_interval_ms && tl->has_prev &&
	    mono_ns() - tl->prev.time_ns >= (uint64_t)tl->o.cpu_interval_ms * 500000)
		collect_cpu(tl);
	if (!tl->gone && tl->o.mem_interval_ms)
		collect_mem(tl, 1);
}

/* results */

/* Thread names go into counter names: keep [A-Za-z0-9_.-]. */
static void add_sanitized(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';

		strbuf_addch(sb, ok ? c : '_');
	}
}

static const char *const cpu_names[NR_CPU_SERIES] = {"cpu_usage", "cpu_usage_all_cores",
						     "system_cpu_usage"};
static const char *const mem_names[4] = {"rss", "pss", "uss", "swap"};

/* The meta key of series @i: the 3 CPU series, the threads, then the memory series. A
 * thread's name is the one it has when its counter is first written. */
static char *series_key(const struct timeline *tl, size_t i, struct series **se)
{
	struct strbuf k = STRBUF_INIT;

	if (i < NR_CPU_SERIES) {
		*se = (struct series *)&tl->cpu[i];
		strbuf_addf(&k, "counter:%s", cpu_names[i]);
	} else if ((i -= NR_CPU_SERIES) < tl->nr_threads) {
		const struct thread_cpu *th = &tl->threads[i];

		*se = (struct series *)&th->s;
		if (th->s.key)
			return xstrdup(th->s.key);
		strbuf_addf(&k, "counter:thread_cpu_usage.%d.", (int)th->tid);
		add_sanitized(&k, th->comm);
	} else {
		i -= tl->nr_threads;
		*se = (struct series *)&tl->memser[i];
		strbuf_addf(&k, "counter:%s_bytes", i < 4 ? mem_names[i] : cat_keys[i - 4]);
	}
	return strbuf_detach(&k, NULL);
}

void timeline_drain(struct timeline *tl, timeline_drain_fn *fn, void *arg)
{
	size_t nr;

	pthread_mutex_lock(&tl->series_mu);
	nr = NR_CPU_SERIES + tl->nr_threads + NR_MEM_SERIES;
	for (size_t i = 0; i < nr; i++) {
		struct series *se;
		char *key;

		key = series_key(tl, i, &se);
		/* a series not ready yet waits: it may never be stored */
		if (se->ready && se->text.len) {
			fn(arg, key, se->text.buf);
			strbuf_reset(&se->text);
			se->drained = 1;
			if (!se->key)
				se->key = xstrdup(key);
		}
		free(key);
	}
	pthread_mutex_unlock(&tl->series_mu);
}

void timeline_store(const struct timeline *tl, struct profile *p)
{
	struct strbuf list = STRBUF_INIT;
	const char *old = profile_meta(p, "counters");
	size_t nr = NR_CPU_SERIES + tl->nr_threads + NR_MEM_SERIES;
	char buf[32];

	if (old && *old)
		strbuf_addstr(&list, old);
	for (size_t i = 0; i < nr; i++) {
		struct series *se;
		char *key = series_key(tl, i, &se);

		/* with TIMELINE_POINTS_NONE nothing was kept: no counter at all */
		if (se->ready && (se->drained || se->text.len)) {
			if (se->text.len)
				profile_set_meta(p, key, se->text.buf);
			if (list.len)
				strbuf_addch(&list, ' ');
			strbuf_addstr(&list, key + 8); /* after "counter:" */
		}
		free(key);
	}
	if (list.len)
		profile_set_meta(p, "counters", list.buf);
	snprintf(buf, sizeof(buf), "%u", tl->o.cpu_interval_ms);
	profile_set_meta(p, "cpu_interval_ms", buf);
	snprintf(buf, sizeof(buf), "%u", tl->o.mem_interval_ms);
	profile_set_meta(p, "mem_interval_ms", buf);
	strbuf_release(&list);
}

void timeline_cpu_figures(const struct timeline *tl, struct timeline_cpu_figures *out)
{
	memset(out, 0, sizeof(*out));
	out->sys_avg = out->sys_peak = NAN;
	out->points = tl->nr_cpu;
	out->peak = tl->cpu_peak;
	if (tl->nr_cpu) {
		out->avg = tl->cpu_sum / (double)tl->nr_cpu;
		out->avg_all = tl->cpu_all_sum / (double)tl->nr_cpu;
	}
	if (tl->nr_sys) {
		out->sys_avg = tl->sys_sum / (double)tl->nr_sys;
		out->sys_peak = tl->sys_peak;
	}
}

static double thread_avg(const struct timeline *tl, const struct thread_cpu *th)
{
	uint64_t a = th->first.utime + th->first.stime, b = th->last.utime + th->last.stime;

	if (!th->first_t || th->last_t <= th->first_t || b < a)
		return -1;
	return 100.0 * (double)(b - a) / (double)tl->o.clk_tck /
	       ((double)(th->last_t - th->first_t) / 1e9);
}

double timeline_thread_cpu(const struct timeline *tl, pid_t tid)
{
	int found;
	size_t i = find_tid(tl->threads, tl->nr_threads, sizeof(*tl->threads), tid, &found);

	return found ? thread_avg(tl, &tl->threads[i]) : -1;
}

const struct timeline_mem *timeline_mem_points(const struct timeline *tl, size_t *n)
{
	*n = tl->nr_mem;
	return tl->mem;
}

static void print_mem_row(const struct timeline *tl, const char *prefix, const char *label,
			  int field, FILE *f)
{
	const struct mem_range *r = &tl->range[field];

	/* a category that stayed empty (the Java heap of a C program) says nothing */
	if (r->seen && (field < 4 || r->peak))
		fprintf(f, "%s  %-14s %10.1f %10.1f %10.1f\n", prefix, label,
			(double)r->start / 1048576.0, (double)r->end / 1048576.0,
			(double)r->peak / 1048576.0);
}

struct trow {
	pid_t tid;
	const char *name;
	double cpu;
	const uint64_t *n;
};

static int cmp_trow(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu > y->cpu ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void print_threads(const struct timeline *tl, const char *prefix, size_t max, FILE *f)
{
	static const uint64_t none[ST_NR];
	size_t nr = 0, i, j, alloc = tl->nr_threads + tl->nr_states;
	struct trow *rows = xcalloc(alloc + 1, sizeof(*rows));

	for (i = 0; i < tl->nr_threads; i++)
		rows[nr++] = (struct trow){tl->threads[i].tid, tl->threads[i].comm,
					   thread_avg(tl, &tl->threads[i]), none};
	for (i = 0; i < tl->nr_states; i++) {
		for (j = 0; j < tl->nr_threads && rows[j].tid != tl->states[i].tid; j++)
			;
		if (j == tl->nr_threads)
			rows[nr++] = (struct trow){tl->states[i].tid, "", -1, none};
		rows[j].n = tl->states[i].n;
	}
	if (!nr) {
		free(rows);
		return;
	}
	qsort(rows, nr, sizeof(*rows), cmp_trow);
	fprintf(f, "%s  threads by CPU (CPU%% of one core, states as shares of the samples):\n",
		prefix);
	fprintf(f, "%s  %9s  %-16s %6s %6s %6s %6s %6s %6s\n", prefix, "TID", "NAME", "CPU%", "R%",
		"S%", "D%", "T%", "other%");
	for (i = 0; i < nr && i < max; i++) {
		uint64_t total = 0;
		char cpu[16];

		for (j = 0; j < ST_NR; j++)
			total += rows[i].n[j];
		if (rows[i].cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%.1f", rows[i].cpu);
		else
			snprintf(cpu, sizeof(cpu), "-");
		fprintf(f, "%s  %9d  %-16.16s %6s", prefix, (int)rows[i].tid, rows[i].name, cpu);
		for (j = 0; j < ST_NR; j++) {
			if (total)
				fprintf(f, " %6.1f", 100.0 * (double)rows[i].n[j] / (double)total);
			else
				fprintf(f, " %6s", "-");
		}
		fputc('\n', f);
	}
	if (nr > max)
		fprintf(f, "%s  (%zu more threads)\n", prefix, nr - max);
	free(rows);
}

void timeline_print_summary(const struct timeline *tl, const char *prefix, size_t max_threads,
			    FILE *f)
{
	struct timeline_cpu_figures cf;

	timeline_cpu_figures(tl, &cf);
	if (cf.points) {
		fprintf(f,
			"%s  CPU: process avg %.1f%%, peak %.1f%% of one core (avg %.1f%% of %u "
			"cores)",
			prefix, cf.avg, cf.peak, cf.avg_all, tl->o.ncpus);
		if (!isnan(cf.sys_avg))
			fprintf(f, "; system busy avg %.1f%%, peak %.1f%%", cf.sys_avg,
				cf.sys_peak);
		fprintf(f, " (%zu readings every %u ms)\n", cf.points, tl->o.cpu_interval_ms);
	}
	if (tl->nr_mem_points) {
		fprintf(f,
			"%s  memory (MiB)      start        end       peak   (%zu readings every "
			"%u ms",
			prefix, tl->nr_mem_points, tl->o.mem_interval_ms);
		if (tl->smaps_reads)
			fprintf(f, "; smaps read + classify %.1f ms avg, %.1f ms max, %s rules",
				(double)tl->smaps_ns / 1e6 / (double)tl->smaps_reads,
				(double)tl->smaps_max_ns / 1e6, meminfo_rules_name(tl->rules));
		if (tl->smaps_reads && tl->smaps_reads < tl->nr_mem_points)
			fprintf(f, "; categories at %" PRIu64 " of them: smaps is slow here",
				tl->smaps_reads);
		fprintf(f, ")\n");
		print_mem_row(tl, prefix, "RSS", 0, f);
		print_mem_row(tl, prefix, "PSS", 1, f);
		print_mem_row(tl, prefix, "USS", 2, f);
		print_mem_row(tl, prefix, "Swap", 3, f);
		for (int c = 0; tl->has_summary && c < TIMELINE_NR_CATS; c++)
			print_mem_row(tl, prefix, cat_labels[c], 4 + c, f);
	}
	print_threads(tl, prefix, max_threads, f);
}
