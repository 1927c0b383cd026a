/* Stall detection: the intervals in which one watched thread stayed off-CPU, or ran in one
 * stack, for longer than a threshold (a jank / slow-method monitor from outside). Pure logic
 * on the watched thread's samples in time order; the caller (record's worker thread) feeds
 * every sample, the detector picks the watched thread's. Also the text form stalls take in
 * the profile meta ("stalls", see writers.h).
 *
 * A stall is a maximal run of consecutive samples of the thread that are either
 *  - all off-CPU (state not 'R' and known) with no progress between them: kind STALL_OFF_CPU;
 *    it starts at the first such sample and ends at the next sample that ran, or that found
 *    the thread blocked again after it ran in between (its switch-in count moved: a thread
 *    that wakes 100 times a second for a moment is found blocked at nearly every tick, yet
 *    makes progress), so each end is off by less than one period; the reason and stack are those of
 * the longest stretch of identical stacks inside it ("[sleep nanosleep]", or "state D" without a
 * wait frame);
 *  - or all on one stack (same functions root to leaf, whatever the PCs inside them) with
 *    the thread running in more than half of them: kind STALL_RUNNING, reason "running".
 * In cpu mode the sampler does not sample a waiting thread at all, so a gap of more than two
 * periods between two samples counts as off-CPU ("not running"), without a stack. A stall
 * that began at the first sample or was still going at the end is marked cut (its duration
 * is a lower bound). */
#ifndef PERCH_STALL_H
#define PERCH_STALL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct profile;

#define STALL_DEFAULT_MS 200
#define STALL_NO_STACK	 UINT32_MAX
#define STALL_REASON_MAX 256

enum stall_kind {
	STALL_OFF_CPU = 0,
	STALL_RUNNING,
};

struct stall {
	uint64_t start_ns; /* CLOCK_MONOTONIC, like the samples */
	uint64_t duration_ns;
	pid_t tid;
	uint32_t stack; /* profile stack id (leaf first, wait frame included), or
			 * STALL_NO_STACK */
	enum stall_kind kind;
	int cut;		       /* began before the first sample or outlived the last one */
	char reason[STALL_REASON_MAX]; /* no control characters */
};

struct stall_opts {
	uint64_t threshold_ns; /* report runs at least this long */
	uint64_t period_ns;    /* the sampling period */
	int cpu_mode;	       /* waiting threads are not sampled: gaps are off-CPU time */
	pid_t tid;	       /* the thread to watch; 0: the first whose name is @name */
	const char *name;      /* copied; NULL when watching by tid */
};

/* One sample of the watched thread. */
struct stall_sample {
	uint64_t time_ns;
	char state;	    /* /proc state letter, 0 unknown (counts as running) */
	uint32_t stack;	    /* reported as the stall's stack */
	uint64_t key;	    /* equal keys = the same stack (see stall_stack_key()) */
	const char *reason; /* the wait frame, NULL when none */
	int ran;	    /* ran since its previous sample: 1, 0 (no), -1 unknown (the state
			     * alone decides) */
};

struct stall_detector;

struct stall_detector *stall_new(const struct stall_opts *o);
void stall_free(struct stall_detector *d);

/* The thread watched: the option's tid, the tid the name matched, or 0 (none seen yet). */
pid_t stall_watched(const struct stall_detector *d);
/* Feed a sample of thread @tid named @comm (may be NULL); samples of other threads are
 * ignored. Times must not go backwards (a sample that does is dropped). */
void stall_feed(struct stall_detector *d, pid_t tid, const char *comm,
		const struct stall_sample *s);
/* stall_feed() of a sample on profile stack @stack: the key from stall_stack_key(), the
 * reason from its leaf pseudo-frame ("[lock futex]"). */
void stall_feed_stack(struct stall_detector *d, const struct profile *p, pid_t tid,
		      const char *comm, uint64_t time_ns, char state, int ran, uint32_t stack);
/* Is the watched thread in a run that would be a stall if it ended now (off-CPU, or running
 * in one stack)? 1 with its start in *@start_ns and its kind in *@kind (may be NULL; the
 * earlier run when both are open), 0 when not. Its length so far is the last sample's time
 * less the start: a flight recorder fires on it while the stall lasts. */
int stall_ongoing(const struct stall_detector *d, uint64_t *start_ns, enum stall_kind *kind);
/* Close the runs still open; @end_ns is when sampling stopped. Feeding after this starts
 * over (the stalls found so far are kept). */
void stall_finish(struct stall_detector *d, uint64_t end_ns);
/* The stalls found and not drained yet (all of them when nothing drains), in time order.
 * Borrowed; valid until the next feed/finish/drain/free. */
const struct stall *stall_list(const struct stall_detector *d, size_t *n);
/* How many stalls were found, drained or not; *@off_cpu (may be NULL) those off-CPU. */
size_t stall_count(const struct stall_detector *d, size_t *off_cpu);
/* The STALL_LONGEST longest stalls found, drained or not, longest first (the order of
 * stall_print_longest()). Borrowed, as stall_list(). */
#define STALL_LONGEST 8
const struct stall *stall_longest(const struct stall_detector *d, size_t *n);
/* Hand the stalls whose place in time order is final (none found later can start before
 * them; after stall_finish(), all) to @fn as meta text (stall_meta_format(), "" never) and
 * forget them: a recording streams them to disk (meta "stalls", appended), memory stays
 * bounded however long the run. @fn NULL: just forget them. */
typedef void stall_drain_fn(void *arg, const char *text);
void stall_drain(struct stall_detector *d, stall_drain_fn *fn, void *arg);

/* A function-level identity of @stack: a hash of the frame names (the location when a
 * frame has no name), so two samples in one function at different PCs have the same key. */
uint64_t stall_stack_key(const struct profile *p, uint32_t stack);
/* The name of the leaf frame of @stack when it is a pseudo-frame (a wait reason), else NULL.
 * Borrowed from the profile. */
const char *stall_stack_reason(const struct profile *p, uint32_t stack);

/* "off-cpu", "running" */
const char *stall_kind_name(enum stall_kind k);

/* Meta text form, one stall per line:
 *   START_NS DURATION_NS TID STACK KIND CUT REASON
 *   4061234000000 512000000 1234 17 off-cpu 0 [sleep nanosleep]
 * STACK is a profile stack id or "-", CUT 0 or 1, REASON the rest of the line. Malloc'ed
 * ("" for none). */
char *stall_meta_format(const struct stall *v, size_t n);
/* Parse that text into a malloc'ed array (*@v, count returned; *@v NULL when 0). Lines that
 * do not fit the form are skipped; control characters in the reason become '?'. */
size_t stall_meta_parse(const char *text, struct stall **v);

/* The @max longest stalls, for a summary: "  512.3 ms at +1.234 s off-cpu [sleep
 * nanosleep] in main <- work <- ..." lines, each starting with @prefix, times relative to
 * @base_ns. Stacks are read from @p (may be NULL). */
void stall_print_longest(const struct stall *v, size_t n, size_t max, const struct profile *p,
			 uint64_t base_ns, const char *prefix, FILE *f);

#endif
