/* CPU holders for the sampler: see include/perch/sample/sampler-hold.h for why and how. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "perch/sample/sampler-hold.h"
#include "perch/sample/tracee.h"

struct holder {
	struct sampler_hold *h;
	int cpu;
	pthread_t thread;
	atomic_int armed;
	atomic_int failed;	      /* cannot run on its CPU (cpuset, offline) */
	atomic_uint_fast64_t holding; /* the tick it is holding its CPU for, 0 none */
	atomic_uint_fast64_t taken;   /* its task clock when it took the CPU for @holding */
	int sched_fd;		      /* its own /proc/thread-self/sched (stamps), else -1 */
};

struct sampler_hold {
	pthread_mutex_t lock;
	pthread_cond_t wake;   /* armed holders wait here for the next tick */
	pthread_cond_t arm;    /* unarmed ones wait here, not woken by every tick */
	int waiters;	       /* holders blocked on @wake (under @lock) */
	pthread_mutex_t qlock; /* @qwake: holders sleeping until a tick, woken early to quit */
	pthread_cond_t qwake;
	atomic_uint_fast64_t fire;     /* the next tick */
	atomic_uint_fast64_t lead;     /* wake this long before it */
	atomic_uint_fast64_t released; /* the last tick whose interrupts were sent */
	atomic_int tracer_cpu;	       /* the ptrace thread's CPU at its last tick */
	atomic_int quit;
	int rt_prio, nice;
	int stamps;	      /* holders note their task clock as they take their CPU */
	uint64_t max_hold_ns; /* a holder never spins longer than this */
	struct holder *cpus[SAMPLER_HOLD_MAX_CPUS];
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Sleep until CLOCK_MONOTONIC @ns, or until sampler_hold_free() (a tick may be seconds away
 * at low rates). */
static void sleep_until(struct sampler_hold *h, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};

	pthread_mutex_lock(&h->qlock);
	while (!atomic_load(&h->quit) && monotime_ns() < ns)
		if (pthread_cond_timedwait(&h->qwake, &h->qlock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&h->qlock);
}

/* Keep this CPU busy for tick @fire until the ptrace thread released it (or for at most
 * @h->max_hold_ns). Not when the ptrace thread itself last ran here: it holds the CPU by
 * running, and a spinning holder would only delay it. */
static void hold(struct holder *c, uint64_t fire)
{
	struct sampler_hold *h = c->h;
	uint64_t start = monotime_ns();
	unsigned int n = 0;

	if (atomic_load(&h->tracer_cpu) == c->cpu)
		return;
	/* (before @holding: the ptrace thread reads it once it sees the hold) */
	atomic_store(&c->taken, h->stamps ? proc_sched_read_exec_start(c->sched_fd) : 0);
	atomic_store(&c->holding, fire);
	while (atomic_load(&h->released) < fire && !atomic_load(&h->quit)) {
		cpu_relax();
		if ((++n & 63) == 0 && monotime_ns() - start > h->max_hold_ns)
			break;
	}
	atomic_store(&c->holding, 0);
}

/* SCHED_FIFO when allowed (its wakeup preempts the target at once), else a raised nice level
 * (best effort); children of a holder would start as normal threads (none are made). */
static void set_priority(const struct sampler_hold *h)
{
	struct sched_param sp = {.sched_priority = h->rt_prio};

	if (sched_setscheduler((pid_t)gettid(), SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
		return;
	log_debug("CPU holder without real-time priority: %s", strerror(errno));
	setpriority(PRIO_PROCESS, (id_t)gettid(), h->nice);
}

static void *holder_main(void *p)
{
	struct holder *c = p;
	struct sampler_hold *h = c->h;
	uint64_t done = 0;
	cpu_set_t set;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		log_debug("no CPU holder on CPU %d: %s", c->cpu, strerror(errno));
		atomic_store(&c->failed, 1);
		return NULL;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	set_priority(h);
	c->sched_fd = h->stamps ? proc_sched_open_self() : -1;
	while (!atomic_load(&h->quit)) {
		uint64_t fire = atomic_load(&h->fire);

		if (!atomic_load(&c->armed)) {
			pthread_mutex_lock(&h->lock);
			while (!atomic_load(&h->quit) && !atomic_load(&c->armed))
				pthread_cond_wait(&h->arm, &h->lock);
			pthread_mutex_unlock(&h->lock);
			continue;
		}
		if (fire <= done) {
			pthread_mutex_lock(&h->lock);
			h->waiters++;
			while (!atomic_load(&h->quit) && atomic_load(&c->armed) &&
			       atomic_load(&h->fire) <= done)
				pthread_cond_wait(&h->wake, &h->lock);
			h->waiters--;
			pthread_mutex_unlock(&h->lock);
			continue;
		}
		sleep_until(h, fire - atomic_load(&h->lead));
		if (atomic_load(&c->armed))
			hold(c, fire);
		done = fire;
	}
	if (c->sched_fd >= 0)
		close(c->sched_fd);
	return NULL;
}

struct sampler_hold *sampler_hold_new(int rt_prio, int nice, uint64_t period_ns, int stamps)
{
	struct sampler_hold *h = xcalloc(1, sizeof(*h));
	pthread_condattr_t attr;

	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	pthread_cond_init(&h->arm, NULL);
	pthread_mutex_init(&h->qlock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&h->qwake, &attr);
	pthread_condattr_destroy(&attr);
	atomic_init(&h->tracer_cpu, -1);
	h->rt_prio = rt_prio;
	h->nice = nice;
	h->stamps = stamps;
	h->max_hold_ns = period_ns / 4 < SAMPLER_HOLD_MAX_NS ? period_ns / 4 : SAMPLER_HOLD_MAX_NS;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	return h;
}

static void wake_all(struct sampler_hold *h)
{
	pthread_mutex_lock(&h->lock);
	pthread_cond_broadcast(&h->wake);
	pthread_cond_broadcast(&h->arm);
	pthread_mutex_unlock(&h->lock);
}

void sampler_hold_free(struct sampler_hold *h)
{
	if (!h)
		return;
	atomic_store(&h->quit, 1);
	wake_all(h);
	pthread_mutex_lock(&h->qlock);
	pthread_cond_broadcast(&h->qwake);
	pthread_mutex_unlock(&h->qlock);
	for (int i = 0; i < SAMPLER_HOLD_MAX_CPUS; i++) {
		if (!h->cpus[i])
			continue;
		pthread_join(h->cpus[i]->thread, NULL);
		free(h->cpus[i]);
	}
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->wake);
	pthread_cond_destroy(&h->arm);
	pthread_mutex_destroy(&h->qlock);
	pthread_cond_destroy(&h->qwake);
	free(h);
}

void sampler_hold_publish(struct sampler_hold *h, uint64_t fire_ns, uint64_t lead_ns)
{
	int waiters;

	atomic_store(&h->lead, lead_ns < fire_ns ? lead_ns : 0);
	atomic_store(&h->fire, fire_ns);
	pthread_mutex_lock(&h->lock);
	waiters = h->waiters;
	if (waiters)
		pthread_cond_broadcast(&h->wake);
	pthread_mutex_unlock(&h->lock);
}

static struct holder *holder_start(struct sampler_hold *h, int cpu)
{
	struct holder *c = xcalloc(1, sizeof(*c));
	int ret;

	c->h = h;
	c->cpu = cpu;
	ret = pthread_create(&c->thread, NULL, holder_main, c);
	if (ret) {
		log_debug("cannot start a CPU holder: %s", strerror(ret));
		free(c);
		return NULL;
	}
	return c;
}

void sampler_hold_arm(struct sampler_hold *h, const unsigned char *want, int n)
{
	int self = sched_getcpu(), woke = 0;

	atomic_store(&h->tracer_cpu, self);
	for (int i = 0; i < SAMPLER_HOLD_MAX_CPUS; i++) {
		int on = i < n && want[i] && i != self;
		struct holder *c = h->cpus[i];

		if (on && !c)
			c = h->cpus[i] = holder_start(h, i);
		if (!c)
			continue;
		if (on && !atomic_load(&c->armed))
			woke = 1;
		atomic_store(&c->armed, on);
	}
	if (woke)
		wake_all(h);
}

int sampler_hold_wait(struct sampler_hold *h, int cpu, int self, uint64_t fire_ns,
		      uint64_t deadline_ns, uint64_t *taken)
{
	struct holder *c;
	unsigned int n = 0;

	if (taken)
		*taken = 0;
	if (cpu == self)
		return 1;
	if (cpu < 0 || cpu >= SAMPLER_HOLD_MAX_CPUS || !(c = h->cpus[cpu]) ||
	    !atomic_load(&c->armed) || atomic_load(&c->failed))
		return 0;
	while (atomic_load(&c->holding) != fire_ns) {
		cpu_relax();
		if ((++n & 15) == 0 && monotime_ns() >= deadline_ns)
			return 0;
	}
	if (taken)
		*taken = atomic_load(&c->taken);
	return 1;
}

void sampler_hold_release(struct sampler_hold *h, uint64_t fire_ns)
{
	atomic_store(&h->released, fire_ns);
}

void sampler_spin_until(uint64_t ns)
{
	while (monotime_ns() < ns)
		cpu_relax();
}
