/* Atomic output files: write to "<path>.tmp.<pid>", then fsync and rename over <path>, so a
 * reader never sees a half-written profile. The writers themselves only see a FILE *. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/output.h"
#include "perch/writers.h"
#include "perch/xalloc.h"

const struct output_format output_formats[] = {
	{ "folded", ".folded", out_folded_write, 0, "folded stacks (flamegraph.pl, speedscope)" },
	{ "svg", ".svg", out_flamegraph_write, 0, "interactive flame graph (open in a browser)" },
	{ "pprof", ".pb.gz", out_pprof_write, 0, "pprof profile.proto (go tool pprof)" },
	{ "speedscope", ".speedscope.json", out_speedscope_write, 1, "speedscope JSON" },
	{ "chrome", ".trace.json", out_chrome_write, 1, "Chrome trace JSON (Perfetto UI)" },
	{ "sentry", ".sentry.json", out_sentry_write, 1, "Sentry v2 profile chunk" },
	{ "arttrace", ".trace", out_arttrace_write, 1, "Android ART method trace (Android Studio)" },
	{ "text", ".txt", out_text_write, 0, "text: call tree with percentages, top functions" },
	{ "top", NULL, out_top_write, 0, "text: hottest functions by self and total" },
};
const size_t output_nr_formats = sizeof(output_formats) / sizeof(output_formats[0]);

const struct output_format *output_format_by_name(const char *name)
{
	for (size_t i = 0; i < output_nr_formats; i++)
		if (!strcmp(output_formats[i].name, name))
			return &output_formats[i];
	return NULL;
}

const struct output_format *output_format_for_path(const char *path)
{
	const struct output_format *best = NULL;
	size_t len = strlen(path), best_len = 0;

	for (size_t i = 0; i < output_nr_formats; i++) {
		size_t n = output_formats[i].ext ? strlen(output_formats[i].ext) : 0;

		if (n && n <= len && n > best_len && !strcmp(path + len - n, output_formats[i].ext)) {
			best = &output_formats[i];
			best_len = n;
		}
	}
	return best;
}

static void output_reset(struct output_file *of)
{
	free(of->path);
	free(of->tmp);
	of->f = NULL;
	of->path = NULL;
	of->tmp = NULL;
}

int output_open(struct output_file *of, const char *path)
{
	int fd, err;

	memset(of, 0, sizeof(*of));
	if (!strcmp(path, "-")) {
		of->f = stdout;
		of->path = xstrdup(path);
		return 0;
	}
	of->path = xstrdup(path);
	of->tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	/* O_EXCL: never follow a planted symlink or reuse a stale file; 0644 minus umask */
	fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = errno;
		output_reset(of);
		return -err;
	}
	of->f = fdopen(fd, "w");
	if (!of->f) {
		err = errno;
		close(fd);
		unlink(of->tmp);
		output_reset(of);
		return -err;
	}
	return 0;
}

int output_commit(struct output_file *of)
{
	int err = 0;

	if (!of->f)
		return -EBADF;
	if (!of->tmp) { /* stdout: nothing to rename */
		if (fflush(of->f))
			err = errno;
		else if (ferror(of->f))
			err = EIO;
		output_reset(of);
		return -err;
	}
	if (fflush(of->f))
		err = errno ? errno : EIO;
	else if (ferror(of->f))
		err = EIO; /* an earlier write failed; errno is long gone */
	else if (fsync(fileno(of->f)))
		err = errno;
	if (fclose(of->f) && !err)
		err = errno ? errno : EIO;
	of->f = NULL;
	if (!err && rename(of->tmp, of->path))
		err = errno;
	if (err)
		unlink(of->tmp);
	output_reset(of);
	return -err;
}

void output_abort(struct output_file *of)
{
	if (!of->f)
		return;
	if (of->tmp) {
		fclose(of->f);
		unlink(of->tmp);
	} else {
		fflush(of->f);
	}
	output_reset(of);
}
