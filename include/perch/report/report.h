/* What `perch report` and `perch annotate` share: loading a recording with clear messages, the
 * sample filters (thread ids, thread-name regex, wall/cpu mode, time window) and
 * re-symbolizing frames from a symfs directory by build-id. */
#ifndef PERCH_REPORT_H
#define PERCH_REPORT_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perch/base/options.h"

struct elffile;
struct profile;

struct report_filter {
	pid_t *tids; /* keep only these threads (none: all) */
	size_t nr_tids, alloc_tids;
	regex_t thread_re; /* keep threads whose name matches (when have_re) */
	int have_re;
	int cpu_only;	       /* --mode cpu: samples whose thread state was 'R' */
	double start_s, end_s; /* window in seconds from the first sample; end_s < 0: open */
};

/* The filter options (--tid, --thread, --mode, --start, --end), for a command's option
 * tables: keys from REPORT_FILTER_KEY on; --tid has scope REPORT_FILTER_TIDS (a command
 * comparing runs leaves it out: thread ids differ between them). */
#define REPORT_FILTER_KEY  0x1000
#define REPORT_FILTER_TIDS 0x1
extern const struct opt_table report_filter_table;
/* The filter option whose key is @key, or NULL. */
const struct opt_spec *report_filter_opt(int key);

void report_filter_init(struct report_filter *f);
void report_filter_release(struct report_filter *f);
/* Apply the shared option @name ("tid", "thread", "mode", "start" or "end") with @arg.
 * 0, or -EINVAL with a message printed. */
int report_filter_option(struct report_filter *f, const char *name, const char *arg);
/* Does the filter keep everything? */
int report_filter_is_empty(const struct report_filter *f);

/* Read the recording @path; a recording cut short is read up to its last complete chunk
 * with a warning. 0, or a perch exit code (message printed). */
int report_load(const char *path, struct profile **out, int quiet);

struct report_symfs;

/* A symfs directory for re-symbolizing; NULL (message printed) when it cannot be opened. */
struct report_symfs *report_symfs_new(const char *dir);
void report_symfs_free(struct report_symfs *rs);
/* The symfs copy of module @path (matched by the recording's "build_id:PATH" meta in @p),
 * opened; NULL when there is none. Borrowed until report_symfs_free(). */
struct elffile *report_symfs_elf(struct report_symfs *rs, const struct profile *p,
				 const char *path);

/* A new profile with the samples of @src that @f keeps (kept in time order), their frames
 * re-symbolized from @rs when it is not NULL and knows the module, and every meta key of
 * @src. */
struct profile *report_apply(const struct profile *src, const struct report_filter *f,
			     struct report_symfs *rs);

#endif
