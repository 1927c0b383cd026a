/* `perch report --diff BASE NEW` and the REPL's `diff`: read both recordings (through the
 * report filters and symfs of report.h), compare them (diff.h), write the outputs and judge
 * the --fail-if rules. */
#ifndef PERCH_REPORT_DIFF_H
#define PERCH_REPORT_DIFF_H

#include <stddef.h>

#include "perch/base/options.h"
#include "perch/out/output.h"
#include "perch/profile/diff.h"

struct profile;
struct report_filter;
struct report_symfs;

/* The comparison options (--diff, --fail-if, --alpha, --merge-threads, --map), for a command's
 * option tables: keys from REPORT_DIFF_KEY on; --diff BASE has scope REPORT_DIFF_BASE (the
 * prompt's `diff` names BASE as a word). */
#define REPORT_DIFF_KEY	 0x1100
#define REPORT_DIFF_BASE 0x1
extern const struct opt_table report_diff_table;
/* The comparison option whose key is @key, or NULL. */
const struct opt_spec *report_diff_opt(int key);

/* Both sides read, filtered and compared: each one recording, or several (replicates). */
struct report_diff_run {
	struct profile *read[2][DIFF_MAX_REPLICATES]; /* as read (NULL: given by the caller) */
	struct profile *kept[2][DIFF_MAX_REPLICATES]; /* after the filters (NULL: as read) */
	size_t nr[2];
	struct diff *d;
};

/* The rules and options of one comparison. */
struct report_diff_args {
	const char *path[2]; /* BASE and NEW recordings, each one path or a comma-separated list
			      * (replicates); path[NEW] may be NULL with @live */
	const struct profile *live; /* the NEW profile when path[NEW] is NULL (REPL's last one) */
	const struct report_filter *filter;
	struct report_symfs *rs; /* may be NULL */
	struct diff_opts opts;
	struct diff_rule *rules;
	size_t nr_rules, alloc_rules;
	struct diff_map *maps; /* --map OLD=NEW (strings owned) */
	size_t nr_maps, alloc_maps;
	int quiet;
};

void report_diff_args_init(struct report_diff_args *a);
void report_diff_args_release(struct report_diff_args *a);
/* --fail-if, --alpha, --merge-threads, --map (@name without dashes) with @arg. 0, or -EINVAL
 * with a message printed. */
int report_diff_option(struct report_diff_args *a, const char *name, const char *arg);

/* Read, filter and compare. 0, or a perch exit code (message printed); @run is then empty.
 * Less than half of a side's samples compared is a warning (unless quiet); a --fail-if rule
 * that matches no function of either side is an error (PERCH_EXIT_FATAL, the rule named). */
int report_diff_open(struct report_diff_run *run, const struct report_diff_args *a);
void report_diff_close(struct report_diff_run *run);

/* Call @fn for every (rule, function) that trips (diff_rule_trips_at(): each rule at the level
 * of its own family); the number of trips. */
typedef void report_diff_trip_fn(const struct diff_rule *r, const struct diff_fn *fn, void *arg);
size_t report_diff_trips(const struct diff *d, const struct report_diff_args *a,
			 report_diff_trip_fn *fn, void *arg);
/* "step_b (app) of thread app/app grew by 26.70 points (±6.12), more than 5 (--fail-if
 * 'step_b:+5')", the margin the rule's. Malloc'ed. */
char *report_diff_trip_text(const struct diff *d, const struct diff_rule *r,
			    const struct diff_fn *fn);

/* Write the diff to @path in format @format (a name of out_diff_writer()); "-" is stdout.
 * 0 or a perch exit code (message printed). */
int report_diff_write(const struct diff *d, const struct output_opts *o, const char *path,
		      const char *format, int quiet);
/* The diff format for an output path: by its ending (.txt, .folded, .svg, .html), else
 * @fallback; NULL with a message printed when that is not a diff format. */
const char *report_diff_format(const char *path, const char *fallback);

#endif
