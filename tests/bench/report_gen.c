/* report-gen: write a long, many-threaded recording for the report page's benchmark (make bench,
 * section "report page") through perch's own recording writer, as `perch record -o X.perch`
 * streams one, in seconds instead of the minutes of recording it stands for.
 *
 *   report-gen OUT.perch [SECONDS [THREADS [HZ]]]      (default 600 50 100)
 *
 * Content shaped like an app's (deterministic, a fixed seed): 2000 C++-style functions in 24
 * modules; each thread has a role: a main thread that runs and polls, workers that run in a few
 * hundred hot stacks 8 to 40 deep (a new working set every 30 s), pool threads waiting on a lock,
 * I/O threads in read(), idle threads sleeping; waiting stacks end in perch's wait frames;
 * ticks at a random moment of each period; CPU counters every 100 ms (process, system and one
 * per thread, points where the value changes), memory every second (RSS/PSS/USS/swap and the
 * meminfo categories), and a stall list for the main thread. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"

#define NFUNCS	  2000
#define NMODS	  24
#define MAX_DEPTH 40

enum role { ROLE_MAIN, ROLE_WORKER, ROLE_POOL, ROLE_IO, ROLE_IDLE };

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned int pick(unsigned int n)
{
	return (unsigned int)(next() % n);
}

/* a Zipf-like pick: small indexes far more often */
static unsigned int skewed(unsigned int n)
{
	double u = (double)(next() >> 11) / (double)(1ULL << 53);

	return (unsigned int)((double)n * u * u * u) % n;
}

struct gen {
	struct profile *p;
	uint32_t loc[NFUNCS]; /* one location per function */
	uint32_t wait_loc[5]; /* wait frames: lock, io, sleep, poll, running */
	uint32_t *hot[64];    /* per thread: its working set of stacks (profile stack ids) */
	unsigned int nhot[64];
};

static void make_functions(struct gen *g)
{
	static const char *const ns[] = {"app", "net", "ui", "db", "json", "img", "core", "io"};
	static const char *const verbs[] = {"parse",  "render", "update", "compute", "encode",
					    "decode", "flush",	"visit",  "lookup",  "merge"};
	static const char *const waits[] = {"[lock futex]", "[io read /data/app/base.apk]",
					    "[sleep clock_nanosleep]", "[poll epoll_wait]",
					    "[running]"};
	char name[160], mod[64];

	for (unsigned int i = 0; i < NFUNCS; i++) {
		struct profile_frame fr = {0};

		snprintf(name, sizeof(name), "%s::%sHandler%u::%s%u(std::vector<int> const&, long)",
			 ns[i % 8], verbs[(i / 8) % 10], i / 80, verbs[i % 10], i);
		snprintf(mod, sizeof(mod), "/usr/lib/x86_64-linux-gnu/libmod%02u.so", i % NMODS);
		fr.module = profile_intern_str(g->p, mod);
		fr.name = profile_intern_str(g->p, name);
		fr.file = profile_intern_str(g->p, "src/module.cc");
		fr.line = 10 + i;
		g->loc[i] = profile_intern_location(g->p, fr.module, 0x10000 + 0x40 * i, &fr, 1);
	}
	for (unsigned int i = 0; i < 5; i++) {
		struct profile_frame fr = {.kind = PROFILE_FRAME_PSEUDO};

		fr.name = profile_intern_str(g->p, waits[i]);
		g->wait_loc[i] = profile_intern_location(g->p, 0, 0xffff0000 + i, &fr, 1);
	}
}

/* A stack leaf first: a path down a fixed call graph from a per-role entry. */
static uint32_t make_stack(struct gen *g, unsigned int entry, int wait)
{
	uint32_t locs[MAX_DEPTH + 1], path[MAX_DEPTH];
	unsigned int depth = 8 + pick(MAX_DEPTH - 8), f = entry, n = 0;

	for (unsigned int d = 0; d < depth; d++) {
		path[d] = g->loc[f];
		/* each function calls one of a few callees: shared prefixes, as in real code */
		f = (f * 31 + 7 + pick(3 + d / 8) * 97) % NFUNCS;
	}
	if (wait >= 0)
		locs[n++] = g->wait_loc[wait];
	for (unsigned int d = depth; d-- > 0;)
		locs[n++] = path[d];
	return profile_intern_stack(g->p, locs, n);
}

static enum role role_of(unsigned int t, unsigned int nthreads)
{
	if (t == 0)
		return ROLE_MAIN;
	if (t <= nthreads / 6)
		return ROLE_WORKER;
	if (t <= nthreads / 2)
		return ROLE_POOL;
	if (t <= nthreads * 7 / 10)
		return ROLE_IO;
	return ROLE_IDLE;
}

static void working_set(struct gen *g, unsigned int t, enum role r)
{
	unsigned int n = r == ROLE_WORKER ? 300 : r == ROLE_MAIN ? 200 : 12;
	unsigned int entry = (t * 53 + pick(NFUNCS)) % NFUNCS;
	int wait = r == ROLE_POOL ? 0 : r == ROLE_IO ? 1 : r == ROLE_IDLE ? 2 : -1;

	g->hot[t] = xrealloc(g->hot[t], n * sizeof(uint32_t));
	g->nhot[t] = n;
	for (unsigned int i = 0; i < n; i++)
		g->hot[t][i] = make_stack(g, entry, r == ROLE_MAIN && i % 4 == 3 ? 3 : wait);
}

/* One sample of thread @t in role @r: its state and stack. */
static void sample(struct gen *g, unsigned int t, enum role r, uint64_t now, uint32_t thread)
{
	unsigned int k = skewed(g->nhot[t]);
	char state = 'S';

	switch (r) {
	case ROLE_MAIN:
		state = k % 4 == 3 ? 'S' : 'R';
		break;
	case ROLE_WORKER:
		state = pick(10) ? 'R' : 'S';
		break;
	case ROLE_IO:
		state = pick(5) ? 'S' : 'D';
		break;
	default:
		break;
	}
	profile_add_sample(g->p, thread, g->hot[t][k], now, state);
}

static void counters(struct profile *p, unsigned int nthreads, uint64_t t0, uint64_t span)
{
	struct strbuf names = STRBUF_INIT, v = STRBUF_INIT;
	static const char *const mem[] = {"rss_bytes",	"pss_bytes",	     "uss_bytes",
					  "swap_bytes", "native_heap_bytes", "code_bytes",
					  "stack_bytes"};
	char key[96];

	for (unsigned int c = 0; c < 2 + nthreads; c++) {
		double val = 0;

		strbuf_reset(&v);
		for (uint64_t t = 0; t < span; t += 100000000ULL) {
			double nv = c == 0				      ? 150 + pick(100)
				    : c == 1				      ? 60 + pick(40)
				    : role_of(c - 2, nthreads) <= ROLE_WORKER ? 60 + pick(40)
									      : (double)pick(3);
			if (c >= 2 && nv == val && t)
				continue; /* thread series: points where the value changes */
			val = nv;
			strbuf_addf(&v, "%s%" PRIu64 "=%.1f", v.len ? " " : "", t0 + t, val);
		}
		if (c < 2)
			snprintf(key, sizeof(key), "%s", c ? "system_cpu_usage" : "cpu_usage");
		else
			snprintf(key, sizeof(key), "thread_cpu_usage.%u.worker-%u", 1000 + c - 2,
				 c - 2);
		strbuf_addf(&names, "%s%s", names.len ? " " : "", key);
		char *k = xasprintf("counter:%s", key);

		profile_set_meta(p, k, v.buf);
		free(k);
	}
	for (unsigned int m = 0; m < 7; m++) {
		uint64_t base = (uint64_t)(200 >> (m / 2)) << 20;

		strbuf_reset(&v);
		for (uint64_t t = 0; t < span; t += 1000000000ULL)
			strbuf_addf(&v, "%s%" PRIu64 "=%" PRIu64, v.len ? " " : "", t0 + t,
				    (uint64_t)(base + (t / 1000000000ULL) * 4096 + pick(1 << 20)));
		strbuf_addf(&names, " %s", mem[m]);
		snprintf(key, sizeof(key), "counter:%s", mem[m]);
		profile_set_meta(p, key, v.buf);
	}
	profile_set_meta(p, "counters", names.buf);
	strbuf_release(&names);
	strbuf_release(&v);
}

static void stalls(struct profile *p, uint32_t stack, uint64_t t0, uint64_t span)
{
	struct strbuf s = STRBUF_INIT;

	for (uint64_t t = 3000000000ULL; t < span; t += 7000000000ULL + pick(5) * 1000000000ULL)
		strbuf_addf(&s, "%" PRIu64 " %u000000 1000 %u off-cpu 0 [poll epoll_wait]\n",
			    t0 + t, 200 + pick(800), stack);
	profile_set_meta(p, "stalls", s.buf);
	profile_set_meta(p, "stall_thread", "1000");
	profile_set_meta(p, "stall_ms", "200");
	strbuf_release(&s);
}

int main(int argc, char **argv)
{
	unsigned int secs = argc > 2 ? (unsigned int)atoi(argv[2]) : 600;
	unsigned int nthreads = argc > 3 ? (unsigned int)atoi(argv[3]) : 50;
	unsigned int hz = argc > 4 ? (unsigned int)atoi(argv[4]) : 100;
	struct gen g = {0};
	struct recording_writer *w;
	uint64_t period, t0 = 4000000000000ULL, span;
	uint32_t thread[64];
	char buf[64];
	int ret;

	if (argc < 2 || !secs || !nthreads || nthreads > 64 || !hz) {
		fprintf(stderr, "usage: report-gen OUT.perch [SECONDS [THREADS (<= 64) [HZ]]]\n");
		return 64;
	}
	period = 1000000000ULL / hz;
	span = (uint64_t)secs * 1000000000ULL;
	w = recording_create(argv[1]);
	if (!w) {
		fprintf(stderr, "report-gen: cannot create %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	g.p = profile_new();
	profile_keep_samples(g.p, 1);
	make_functions(&g);
	for (unsigned int t = 0; t < nthreads; t++) {
		snprintf(buf, sizeof(buf), t ? "worker-%u" : "app", t);
		thread[t] = profile_thread(g.p, 1000 + t, buf);
	}
	profile_set_meta(g.p, "pid", "1000");
	profile_set_meta(g.p, "comm", "app");
	snprintf(buf, sizeof(buf), "%" PRIu64, period);
	profile_set_meta(g.p, "period_ns", buf);
	profile_set_meta(g.p, "mode", "wall");
	profile_set_meta(g.p, "start_time_ns", "1767225600000000000");
	for (uint64_t tick = 0; tick * period < span; tick++) {
		uint64_t now = t0 + tick * period;

		if (tick % ((uint64_t)hz * 30) == 0)
			for (unsigned int t = 0; t < nthreads; t++)
				working_set(&g, t, role_of(t, nthreads));
		for (unsigned int t = 0; t < nthreads; t++)
			sample(&g, t, role_of(t, nthreads), now + pick((unsigned int)period),
			       thread[t]);
		if (recording_maybe_flush(w, g.p, now - t0) < 0)
			break;
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, span);
	profile_set_meta(g.p, "duration_ns", buf);
	counters(g.p, nthreads, t0, span);
	stalls(g.p, g.hot[0][0], t0, span);
	ret = recording_close(w, g.p);
	if (ret < 0) {
		fprintf(stderr, "report-gen: cannot write %s: %s\n", argv[1], strerror(-ret));
		return 2;
	}
	for (unsigned int t = 0; t < nthreads; t++)
		free(g.hot[t]);
	profile_free(g.p);
	return 0;
}
