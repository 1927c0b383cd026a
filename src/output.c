/* Atomic output files: write to "<path>.tmp.<pid>", then fsync and rename over <path>, so a
 * reader never sees a half-written profile. The writers themselves only see a FILE *. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/output.h"
#include "perch/xalloc.h"

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
