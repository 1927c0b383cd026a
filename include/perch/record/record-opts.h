/* The options of a recording, declared once: the table in record-opts.c parses `perch
 * record`, the prompt's `record`, `top` and `set`, prints their help and names their
 * completion words. The values checked as they are stored (a failed `set` changes nothing).
 * Used by the commands and by the recording core (record-core.h), which reads the result. */
#ifndef PERCH_RECORD_OPTS_H
#define PERCH_RECORD_OPTS_H

#include <stddef.h>
#include <sys/types.h>

struct output_format;
struct strbuf;

#define RECORD_DEFAULT_HZ    100
#define RECORD_DEFAULT_STACK (32 * 1024)
#define RECORD_MAX_STACK     (1024 * 1024)
#define RECORD_MAX_OUTPUTS   8

struct record_output {
	char *path;
	const struct output_format *fmt; /* from the ending, else --format, else folded */
};

/* The record options. Strings are owned (record_opts_release() frees them). */
struct record_opts {
	pid_t *pids; /* -p PID[,PID...]: every one, @nr_pids of them */
	size_t nr_pids;
	char *app;	     /* --app NAME: every process named NAME or NAME:* (CLI only) */
	char *wait_name;     /* --wait NAME: the process to wait for (RECORD_PARSE_CLI only) */
	double wait_timeout; /* --wait-timeout SEC, 0: none */
	int follow;	     /* follow forked children: 1 --follow-children, 0 --no-follow,
			      * -1 not said (on for PROGRAM, off for -p; RECORD_PARSE_CLI only) */
	char **argv;	     /* PROGRAM [ARGS] after the options (borrowed from the caller's argv,
			      * RECORD_PARSE_CLI only), or NULL */
	double hz, duration; /* duration 0: until stopped */
	size_t stack_size;
	int max_frames; /* --max-frames: frames unwound a stack */
	struct record_output outputs[RECORD_MAX_OUTPUTS];
	int nr_outputs;
	const struct output_format *default_fmt; /* --format, or NULL */
	char *sysroot, *symfs, *stall_thread;
	int lines, top, quiet, cpu_mode;
	int summary;	   /* --summary (or -v, PERCH_SUMMARY=full): all of it, not its head */
	int allow_partial; /* --allow-partial: a recording short of ticks still exits 0 */
	int verify, follow_cpu, no_idle_reuse, no_cpu_hold;
	int art_frames; /* --show-art-frames: keep ART's runtime frames between Java frames */
	unsigned int cpu_ms, mem_ms; /* timeline intervals, 0: off */
	double stall_ms;	     /* 0: no stall detection */
	/* windows written while sampling (RECORD_PARSE_CLI only; record-ring.h) */
	double ring_s;		 /* --ring SEC: keep the last SEC seconds only (0: off) */
	double chunk_s;		 /* --chunk SEC: consecutive chunks (0: off) */
	double trigger_stall_ms; /* --trigger stall:MS (0: none) */
	int trigger_signal;	 /* --trigger signal:USR1|USR2 (0: none) */
	int trigger_max;	 /* --trigger-max N (0: no limit) */
};

/* Defaults of `perch record`. */
void record_opts_init(struct record_opts *o);
void record_opts_release(struct record_opts *o);
/* A deep copy of @src into @dst (which is overwritten, not released). */
void record_opts_copy(struct record_opts *dst, const struct record_opts *src);

/* Which command line record_opts_parse() reads; each option of the table applies to some. */
enum record_parse_flags {
	RECORD_PARSE_CLI = 0x1,	   /* perch record: also -p PID, --app NAME, --wait NAME,
				    * --wait-timeout SEC, -q, -v, --help, --follow-children,
				    * --no-follow, PROGRAM; one of -p, --app, --wait and PROGRAM is
				    * required */
	RECORD_PARSE_PROMPT = 0x2, /* the prompt's record: the options only */
	RECORD_PARSE_TOP = 0x4,	   /* top: also -n/--rows N (= --top N); no -o */
};

#define RECORD_PARSE_HELP 1 /* record_opts_parse(): --help was given (nothing else done) */

/* Parse the record options of @argv (argv[0] is the command word) over @o (its values are
 * the defaults). 0, RECORD_PARSE_HELP, or -EINVAL with the message printed. Without
 * RECORD_PARSE_CLI a word after the options is an error. Uses getopt (state reset). */
int record_opts_parse(struct record_opts *o, int argc, char **argv, unsigned int flags);
/* One option by its long name without dashes ("freq", "stack-size", "verify", ...; also the
 * REPL's `set` names "rate" for freq) and its value (for flags: NULL, "on" or "off"). @what
 * names the option in error messages (NULL: "--NAME"). 0, or -EINVAL (message printed),
 * -ENOENT for an unknown name (no message). */
int record_opts_set(struct record_opts *o, const char *name, const char *value, const char *what);
/* The long name of the @i-th option record_opts_set() knows ("freq", ...), NULL past the
 * last (for the prompt's `set`, its help and completion). */
const char *record_opts_name(size_t i);
/* The value of option @name as text into @buf ("" when unset); -ENOENT when unknown. */
int record_opts_get(const struct record_opts *o, const char *name, char *buf, size_t size);

/* The format of each -o: by its ending, otherwise --format, otherwise folded (after
 * record_opts_set() changed them). */
void record_opts_resolve_outputs(struct record_opts *o);

/* The option lines of the help of @flags' command line (as record_opts_parse() reads it),
 * appended to @sb. */
void record_opts_help(struct strbuf *sb, unsigned int flags);
/* Each option of @flags' command line as a completion word ("-F", "--freq", ...), given to
 * @add. */
void record_opts_complete(unsigned int flags, void (*add)(void *arg, const char *word), void *arg);

#endif
