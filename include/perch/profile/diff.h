/* Differences between two profiles (`perch report --diff BASE NEW`): the functions and call
 * paths of a BASE and a NEW profile paired across builds, their share of each thread's samples
 * in both, and whether a change is larger than noise. Pure data: profiles in, tables out; the
 * writers (out-diff.c, out-folded.c, out-flamegraph.c) only read them.
 *
 * Pairing (the two sides may come from different builds, file names or machines; diff-pair.c):
 * - modules: the main executable of each side with the other's, whatever its file name or
 *   build-id (meta "exe:PID" of the recorded process, else the module mapped lowest, as
 *   /proc/PID/maps lists it first); a library by its file name without the version suffix
 *   ("libfoo.so.1.2" and "libfoo.so.1.3" are "libfoo.so");
 * - threads: the main thread (tid == pid) with the main thread; others by name with every run
 *   of digits as '#' ("worker-3" ~ "worker-#"), the threads of one such name (a pool) added up
 *   as one group; in a recording of several processes, each by its role (process name with its
 *   digits as '#'), the recorded process with the other side's whatever its name; or every
 *   thread as one group (merge_threads);
 * - --map OLD=NEW pairs BASE's module or thread (or process) named OLD with NEW's named NEW;
 * - a named frame by function name + module, never by address;
 * - a frame without a name ("app+0x1130") by module + ELF address, and only when the module has
 *   the same GNU build-id in both (meta "build_id:PATH"); otherwise they are different frames;
 * - pseudo frames (wait reasons, "[no stack]") by their text.
 * A sample is *compared* when its thread group has samples on both sides and the module of
 * its innermost frame was seen on both sides (diff_compared()): what a reader must check
 * before trusting "nothing changed".
 *
 * Shares: a function's total share in a thread group is the samples with it anywhere on the
 * stack (once per sample, recursion or not) over the group's samples; its self share the
 * samples with it innermost. The change is NEW share - BASE share (x100: points). A side of
 * several recordings (replicates: runs of one build) counts all their samples.
 *
 * Noise (diff-stat.c): each change is a two-proportion test at the group's sample counts.
 * Samples of one thread are not independent (a function that runs for 50 ms fills 5
 * consecutive samples at 100 Hz), so the variance is widened by a design effect estimated from
 * the data: each side's samples of the group are cut into DIFF_BATCHES batches of consecutive
 * samples, and the variance of the batch shares (batch means) is compared with the binomial
 * one; each side's part of the variance is widened by that ratio when it is above 1 (never
 * narrowed), and the critical value comes from Student's t with (batches - 1) degrees of
 * freedom. With replicates, the spread between the runs widens it too: each side's dispersion
 * between runs (Pearson's chi-square of the group's self shares over the runs, per degree of
 * freedom) and the function's own (its share's spread over the runs against the binomial,
 * averaged with the group's by degrees of freedom: alone, an estimate from three runs swings
 * too much) replace the design effect when larger. The level is family-wise: alpha is divided by
 * the number of tests made (Bonferroni), separately for the function table and for the call paths
 * of the flame graph. Correlation over longer than a batch within one run is seen only through
 * replicates. */
#ifndef PERCH_DIFF_H
#define PERCH_DIFF_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

struct profile;

#define DIFF_BATCHES	    32	 /* batches of consecutive samples per side and thread group */
#define DIFF_BATCH_MIN	    10	 /* samples per batch at least (fewer batches for short runs) */
#define DIFF_DEFAULT_ALPHA  0.01 /* family-wise false-positive rate */
#define DIFF_MAX_REPLICATES 16	 /* recordings per side */

enum diff_side { DIFF_BASE = 0, DIFF_NEW = 1 };

struct diff_opts {
	double alpha;	      /* family-wise false-positive rate in (0, 0.5]; 0: the default */
	int merge_threads;    /* every thread in one group ("all threads") */
	const char *label[2]; /* names of the two profiles for titles (file names); copied */
	/* --map OLD=NEW: BASE's module, thread or process named OLD (file base name, thread or
	 * process name) pairs with NEW's named NEW. Borrowed for diff_new()'s call. */
	const struct diff_map {
		const char *old, *new;
	} * map;
	size_t nr_map;
};

/* One change of share: x of n samples in BASE and in NEW. */
struct diff_stat {
	uint64_t x[2], n[2];
	double share[2];  /* x / n, 0 when n == 0 */
	double change;	  /* share[NEW] - share[BASE], a fraction (x100: points) */
	double margin;	  /* half-width of the interval around change at the family-wise level */
	double z;	  /* change / standard error */
	double se;	  /* standard error of change (0 when untested) */
	double p;	  /* two-sided p-value of this one test (not corrected) */
	double deff;	  /* design effect: how much the variance was widened (>= 1) in all */
	int df;		  /* degrees of freedom of the t reference (0: normal) */
	int tested;	  /* both sides have samples of the group */
	int beyond_noise; /* tested and |change| > margin */
};

/* A thread group: the threads paired as one (see Pairing above). */
struct diff_group {
	const char *label;   /* "process/thread" (BASE's names, or NEW's when only in NEW, a pool
			      * as "worker-#"), or "all threads" */
	const char *name[2]; /* the first thread's "process/thread" on each side, NULL: none */
	const char *how;     /* how they were paired: "main thread", "name", "numbers as #",
			      * "--map", "all threads" */
	uint64_t samples[2]; /* its samples in BASE and NEW */
	uint32_t threads[2]; /* its threads in BASE and NEW */
};

/* A module as paired: its file base name on each side (NULL: not seen there). */
struct diff_module {
	const char *name[2];
	const char *how;     /* "main executable", "name", "soname stem", "--map" */
	uint64_t samples[2]; /* samples whose innermost frame is in it */
};

/* A function of one thread group. */
struct diff_fn {
	uint32_t group;
	const char *name;   /* function name ("app+0x1130" when it has none) */
	const char *module; /* module base name, "" for none */
	uint8_t kind;	    /* enum profile_frame_kind */
	struct diff_stat total, self;
};

/* A call path (node of the merged call tree). Node 0 is the root ("all"), its children are the
 * thread groups, their descendants the frames, outermost first (inlined frames are nodes of
 * their own, as in the flame graph). */
#define DIFF_NODE_ROOT	 100 /* kinds beyond enum profile_frame_kind */
#define DIFF_NODE_THREAD 101
struct diff_node {
	uint32_t parent, group, depth;
	const char *name;
	uint8_t kind;
	uint64_t self[2];    /* samples that end at this node */
	struct diff_stat st; /* samples through this path of the group's samples; root and
			      * thread nodes: of all samples (never tested) */
};

struct diff;

/* Compare @base with @new (neither is changed; both must outlive the diff). Samples in time order
 * (profile_keep_samples, as a recording read back has them) give the design effect; without them
 * samples are taken as independent (diff_time_ordered() says so). Never fails (out of memory dies).
 */
struct diff *diff_new(const struct profile *base, const struct profile *new,
		      const struct diff_opts *o);
/* The same with @nr[side] recordings per side (replicates: runs of one build), 1 to
 * DIFF_MAX_REPLICATES each (more are ignored). */
struct diff *diff_new_replicates(const struct profile *const *base, size_t nr_base,
				 const struct profile *const *new, size_t nr_new,
				 const struct diff_opts *o);
void diff_free(struct diff *d);

const char *diff_label(const struct diff *d, enum diff_side side);
double diff_alpha(const struct diff *d);
/* All samples of a side. */
uint64_t diff_samples(const struct diff *d, enum diff_side side);
/* The samples of a side that were compared (see Pairing above). */
uint64_t diff_compared(const struct diff *d, enum diff_side side);
/* The recordings of a side. */
size_t diff_nr_replicates(const struct diff *d, enum diff_side side);
/* Modules in the order first seen (BASE first). */
size_t diff_nr_modules(const struct diff *d);
const struct diff_module *diff_module(const struct diff *d, uint32_t idx);
/* Both sides had their samples in time order (the design effect was estimated). */
int diff_time_ordered(const struct diff *d);
/* The number of tests the function table's level was divided by (total and self changes). */
size_t diff_nr_tests(const struct diff *d);
/* The same for the call paths. */
size_t diff_nr_node_tests(const struct diff *d);
/* The meta value @key of a side's (first) profile, or NULL. */
const char *diff_meta(const struct diff *d, enum diff_side side, const char *key);
/* The (first) profile of a side (borrowed from the caller of diff_new(): both must outlive @d). */
const struct profile *diff_profile(const struct diff *d, enum diff_side side);

size_t diff_nr_groups(const struct diff *d);
const struct diff_group *diff_group(const struct diff *d, uint32_t idx);
/* Group indexes, NEW samples descending, then BASE samples, then label. Borrowed. */
const uint32_t *diff_groups_sorted(const struct diff *d);

size_t diff_nr_fns(const struct diff *d);
const struct diff_fn *diff_fn(const struct diff *d, uint32_t idx);
/* Function indexes, by group (in diff_groups_sorted() order), then largest |change| of total
 * or self first, then name. Borrowed. */
const uint32_t *diff_fns_sorted(const struct diff *d);

size_t diff_nr_nodes(const struct diff *d);
const struct diff_node *diff_node(const struct diff *d, uint32_t idx);

/* Statistics, exported for the tests. */
/* P(|T| > @t) for Student's t with @df degrees of freedom (@df 0: the standard normal). */
double diff_tail2(double t, int df);
/* The t with diff_tail2(t, @df) == @p, for 0 < @p < 1. */
double diff_crit2(double p, int df);
/* The design effect of a share estimated from @nb batches (@xb[i] of @ns[i] samples): the
 * batch-means variance of the share over the binomial one; 0 when it cannot be estimated
 * (fewer than 2 batches with samples, or a share of 0 or 1). */
double diff_batch_deff(const uint32_t *xb, const uint32_t *ns, size_t nb);
/* Fill @st's share, change, z, p, margin, deff and beyond_noise from @st->x and @st->n: the
 * two-proportion test, each side's part of the variance widened by its design effect
 * @deff[side] (values under 1 count as 1; @deff NULL: none), the larger of the pooled and
 * the unpooled variance, @df degrees of freedom (0: normal), the critical value @crit. */
void diff_stat_test(struct diff_stat *st, const double deff[2], int df, double crit);

/* --fail-if FUNCTION_REGEX:+POINTS: trips when a function whose name matches (POSIX extended,
 * unanchored) grew in total share by more than POINTS beyond noise, that is when
 * change - margin > POINTS / 100 (which also makes the change beyond noise). A rule whose
 * regex matches no function of either side is an error for the caller (diff_rule_matches()). */
struct diff_rule {
	char *text; /* the argument as given */
	regex_t re;
	double points;
};
/* Parse "REGEX:+POINTS" (the last ":+" splits; POINTS a decimal >= 0). 0, or -EINVAL with a
 * message printed. */
int diff_rule_parse(struct diff_rule *r, const char *arg);
void diff_rule_release(struct diff_rule *r);
int diff_rule_trips(const struct diff_rule *r, const struct diff_fn *fn);
/* Does @r's regex match the name of a function of @d (in BASE or NEW)? */
int diff_rule_matches(const struct diff *d, const struct diff_rule *r);
/* The gate's own family: a rule asks one question of the functions it names, so its level is
 * family-wise over those alone, not over every test of the table. diff_rule_family() is the
 * number of tested functions whose name @r matches; diff_rule_margin() the margin of @fn's
 * total change at alpha / @family (its standard error times Student's t at its degrees of
 * freedom, two-sided); diff_rule_trips_at() trips when
 * @r matches @fn and change - that margin > POINTS / 100. The table's '*' stays at its own, wider,
 * level. */
size_t diff_rule_family(const struct diff *d, const struct diff_rule *r);
double diff_rule_margin(const struct diff *d, const struct diff_fn *fn, size_t family);
int diff_rule_trips_at(const struct diff *d, const struct diff_rule *r, const struct diff_fn *fn,
		       size_t family);

#endif
