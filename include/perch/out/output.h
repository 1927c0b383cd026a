/* Writers: render a profile. Each writer only reads the profile. Files are written
 * atomically with output_open()/output_commit() (temporary name + rename). */
#ifndef PERCH_OUTPUT_H
#define PERCH_OUTPUT_H

#include <stdio.h>

struct profile;

struct output_opts {
	int lines; /* folded: append " (file:line)" to frames with a known line */
	int top;   /* text: how many functions --top prints */
};

/* Folded stacks (docs/design/formats.md section 1): one line per distinct (thread, stack),
 * "threadname-TID;root;...;leaf COUNT", lines in byte order, frame names cleaned (no ';',
 * no newline, no trailing " <digits>", never empty). Returns 0 or -errno (write error). */
int out_folded_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* The N hottest functions by self and by total share (a function counted once per sample
 * even when recursive), like perf report --stdio's top. Returns 0 or -errno. */
int out_top_write(const struct profile *p, const struct output_opts *o, FILE *f);
/* The @n hottest functions by self share, "name (module) 23.4%, ..." appended to @sb. */
struct strbuf;
void out_top_brief(const struct profile *p, size_t n, struct strbuf *sb);

/* The writer table: one entry per output format. */
typedef int output_write_fn(const struct profile *p, const struct output_opts *o, FILE *f);

struct output_format {
	const char *name; /* for --format: "folded", "svg", "pprof", ... */
	const char *ext;  /* file name ending that selects it: ".folded", ".pb.gz", ...;
			   * NULL: only by --format */
	output_write_fn *write;
	int needs_samples; /* needs the samples in time order (profile_keep_samples) */
	const char *summary;
};

extern const struct output_format output_formats[];
extern const size_t output_nr_formats;

/* The format named @name, or NULL. */
const struct output_format *output_format_by_name(const char *name);
/* The format whose ending @path has (longest match), or NULL. */
const struct output_format *output_format_for_path(const char *path);

/* Atomic output: open an unnamed file in @path's directory (O_TMPFILE; where the file system
 * has none, "<path>.tmp.<pid>") for writing; output_commit() flushes and fsyncs it, names it
 * "<path>.tmp.<pid>" (or "....<pid>.N" when that exists), closes it and renames it over @path
 * (returns 0 or -errno and removes the temporary on failure);
 * output_abort() closes and removes it. A symbolic link is followed: the file it names is
 * written (temporary beside it, renamed over it), never the link. "-" means stdout (commit
 * only flushes); perch's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/N) and a path
 * that is not a regular file (/dev/null, a FIFO) are written in place; a directory is
 * -EISDIR, a regular file perch may not write -EACCES; the commit never renames over
 * anything but a regular file. Run as root
 * with SUDO_UID/SUDO_GID set, the file is chowned to that user before the rename. */
struct output_file {
	FILE *f;
	char *path; /* the file written: the end of the given path's links */
	char *tmp;  /* NULL: written in place (stdout, or @path is a device or FIFO) */
	int anon;   /* the file has no name yet (O_TMPFILE): nothing to remove on failure */
	int direct; /* @path is a device or FIFO opened as it is (closed on commit) */
};
int output_open(struct output_file *of, const char *path);
int output_commit(struct output_file *of);
void output_abort(struct output_file *of);
/* Would output_open(@path) work now, by the same rules? A directory is -EISDIR; otherwise the
 * directory the temporary file goes to must be writable. For checking outputs before a long
 * recording. 0 or -errno (nothing printed). */
int output_check(const char *path);

#endif
