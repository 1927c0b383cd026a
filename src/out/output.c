/* Atomic output files: write to an unnamed file in <path>'s directory (O_TMPFILE), give it
 * the name "<path>.tmp.<pid>" once complete and fsynced, then rename that over <path>: a
 * reader never sees a half-written profile, and a perch killed while writing leaves nothing
 * behind. Where the file system has no O_TMPFILE, the temporary is named from the start. A
 * symbolic link is followed first (the file it names is replaced, never the link); devices,
 * FIFOs and perch's own descriptors (/dev/stdout) are written in place. The writers themselves
 * only see a FILE *. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perch/base/path.h"
#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/out/writers.h"
#include "perch/profile/recording.h"

const struct output_format output_formats[] = {
    {"folded", ".folded", out_folded_write, 0, "folded stacks (flamegraph.pl, speedscope)"},
    {"svg", ".svg", out_flamegraph_write, 0, "interactive flame graph (open in a browser)"},
    {"html", ".html", out_report_html_write, 1, "report page: timeline, charts, flame graph"},
    {"flamegraph-html", NULL, out_flamegraph_html_write, 0, "the flame graph as an HTML page"},
    {"pprof", ".pb.gz", out_pprof_write, 0, "pprof profile.proto (go tool pprof)"},
    {"speedscope", ".speedscope.json", out_speedscope_write, 1, "speedscope JSON"},
    {"chrome", ".trace.json", out_chrome_write, 1, "Chrome trace JSON (Perfetto UI)"},
    {"sentry", ".sentry.json", out_sentry_write, 1, "Sentry v2 profile chunk"},
    {"arttrace", ".trace", out_arttrace_write, 1, "Android ART method trace (Android Studio)"},
    {"text", ".txt", out_text_write, 0, "text: call tree with percentages, top functions"},
    {"top", NULL, out_top_write, 0, "text: hottest functions by self and total"},
    {"perch", ".perch", out_recording_write, 1, "perch recording (perch report renders it)"},
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

		if (n && n <= len && n > best_len &&
		    !strcmp(path + len - n, output_formats[i].ext)) {
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
	of->direct = 0;
	of->anon = 0;
}

/* An unnamed file in @path's directory, or -1 (no O_TMPFILE there: errno set). Only where
 * /proc/self/fd can name it later (linkat() through it needs no privilege). */
static int open_anon(const char *path)
{
	char *dir;
	int fd;

	if (access("/proc/self/fd", X_OK) < 0)
		return -1;
	dir = path_dir(path);
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	free(dir);
	return fd;
}

/* Give the unnamed file @fd the name @of->tmp, or the first free "@of->tmp.N" (a file
 * already there is never followed or replaced). 0 or -1 with errno set. */
static int name_anon(struct output_file *of, int fd)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (int i = 1; i <= 100; i++) {
		if (linkat(AT_FDCWD, proc, AT_FDCWD, of->tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
		free(of->tmp);
		of->tmp = xasprintf("%s.tmp.%d.%d", of->path, (int)getpid(), i);
	}
	return -1;
}

/* The descriptor @path names when it is one of perch's own (/dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N, /proc/<perch's pid>/fd/N), else -1. */
static int own_fd(const char *path)
{
	static const char *const prefixes[] = {"/dev/fd/", "/proc/self/fd/",
					       "/proc/thread-self/fd/"};
	char mine[40];
	const char *n = NULL;
	char *end;
	long fd;

	if (!strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !n; i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			n = path + strlen(prefixes[i]);
	snprintf(mine, sizeof(mine), "/proc/%d/fd/", (int)getpid());
	if (!n && !strncmp(path, mine, strlen(mine)))
		n = path + strlen(mine);
	if (!n || *n < '0' || *n > '9')
		return -1;
	fd = strtol(n, &end, 10);
	return *end || fd > 1 << 30 ? -1 : (int)fd;
}

/* May link @p (lstat @lnk) be followed? As the kernel's fs.protected_symlinks rules it for
 * open(), which this resolution bypasses: not in a sticky world-writable directory (/tmp)
 * unless perch or the directory's owner owns the link, so that a link planted there cannot
 * make perch replace another file. */
static int may_follow(const char *p, const struct stat *lnk)
{
	char *dir = path_dir(p);
	struct stat st;
	int ok = stat(dir, &st) < 0 || !(st.st_mode & S_ISVTX) || !(st.st_mode & S_IWOTH) ||
		 lnk->st_uid == geteuid() || lnk->st_uid == st.st_uid;

	free(dir);
	return ok;
}

/* @path with every symbolic link in its last component followed (the file it finally names
 * need not exist: a dangling link creates its target), allocated; stops early at one of
 * perch's own descriptors (*@fd set, else -1). NULL with errno set (ELOOP, EACCES for a link
 * may_follow() refuses, ...). */
static char *follow_links(const char *path, int *fd)
{
	char *p = xstrdup(path), target[4096];
	struct stat st;

	for (int hops = 0; hops < 40; hops++) {
		ssize_t n;
		char *dir, *next;

		*fd = own_fd(p);
		if (*fd >= 0 || lstat(p, &st) < 0 || !S_ISLNK(st.st_mode))
			return p;
		if (!may_follow(p, &st)) {
			free(p);
			errno = EACCES;
			return NULL;
		}
		n = readlink(p, target, sizeof(target) - 1);
		if (n < 0) {
			free(p);
			return NULL;
		}
		target[n] = '\0';
		dir = path_dir(p);
		next = target[0] == '/' ? xstrdup(target) : xasprintf("%s/%s", dir, target);
		free(dir);
		free(p);
		p = next;
	}
	errno = ELOOP;
	free(p);
	return NULL;
}

/* @path (the end of its links) is written as it is: a device, FIFO or socket, or perch's
 * own descriptor @fd (duplicated: its offset and O_APPEND are the shell's). */
static int open_direct(struct output_file *of, const char *path, int fd)
{
	int err;

	fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	of->f = fdopen(fd, "w");
	if (!of->f) {
		err = errno;
		close(fd);
		return -err;
	}
	of->path = xstrdup(path);
	of->direct = 1;
	return 0;
}

/* Where an output at @path goes: 0 with *@real set (allocated, the end of @path's links)
 * and *@fd (perch's own descriptor, or -1); *@direct when it is written in place (not a
 * regular file). -EISDIR for a directory, -EACCES for a regular file perch may not write. */
static int output_target(const char *path, char **real, int *fd, int *direct)
{
	struct stat st;

	*real = follow_links(path, fd);
	if (!*real)
		return -errno;
	*direct = *fd >= 0;
	if (*direct || stat(*real, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode)) {
		free(*real);
		return -EISDIR;
	}
	*direct = !S_ISREG(st.st_mode);
	if (!*direct && access(*real, W_OK) < 0) { /* read-only: not perch's to replace */
		int err = errno;

		free(*real);
		return -err;
	}
	return 0;
}

int output_open(struct output_file *of, const char *path)
{
	int fd, err, direct;
	char *real;

	memset(of, 0, sizeof(*of));
	if (!strcmp(path, "-")) {
		of->f = stdout;
		of->path = xstrdup(path);
		return 0;
	}
	err = output_target(path, &real, &fd, &direct);
	if (err)
		return err;
	/* a device, a FIFO or perch's own stdout is written as it is: renaming a file over it
	 * would replace the device node or the link */
	if (direct) {
		err = open_direct(of, real, fd);
		free(real);
		return err;
	}
	of->path = real; /* a link's target: the temporary goes beside it, the rename over it */
	of->tmp = xasprintf("%s.tmp.%d", real, (int)getpid());
	fd = open_anon(real);
	of->anon = fd >= 0;
	/* (any failure there: the named open says why, when it fails too) O_EXCL: never follow
	 * a planted symlink or reuse a stale file; 0644 minus umask */
	if (fd < 0)
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
		if (!of->anon)
			unlink(of->tmp);
		output_reset(of);
		return -err;
	}
	return 0;
}

int output_check(const char *path)
{
	int fd, direct, ret;
	char *real, *dir;

	if (!strcmp(path, "-"))
		return 0;
	ret = output_target(path, &real, &fd, &direct);
	if (ret || direct) {
		if (!ret)
			free(real);
		return ret; /* devices, FIFOs and perch's own descriptors: written in place */
	}
	dir = path_dir(real);
	if (access(dir, W_OK | X_OK) < 0)
		ret = -errno;
	free(dir);
	free(real);
	return ret;
}

/* Run through sudo (root with SUDO_UID/SUDO_GID set), give the file to the user who invoked
 * sudo, before it appears under its name: a profile in their directory they cannot delete or
 * overwrite would be a surprise. Returns 0, or -1 with errno set. */
static int output_chown_sudo(int fd)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	unsigned long uid, gid;
	char *end;

	if (geteuid() != 0 || !u || !g || !*u || !*g)
		return 0;
	errno = 0;
	uid = strtoul(u, &end, 10);
	if (errno || *end || uid >= (uid_t)-1)
		return 0; /* not a number sudo would set: leave the file to root */
	gid = strtoul(g, &end, 10);
	if (errno || *end || gid >= (gid_t)-1)
		return 0;
	return fchown(fd, (uid_t)uid, (gid_t)gid);
}

/* 0 when nothing is at @path or a regular file is (what output_open() saw may have changed
 * since: a link or a directory put there is never renamed over); -1 with errno set. */
static int replaceable(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISREG(st.st_mode))
		return 0;
	errno = S_ISDIR(st.st_mode) ? EISDIR : EEXIST;
	return -1;
}

int output_commit(struct output_file *of)
{
	int err = 0;

	if (!of->f)
		return -EBADF;
	if (!of->tmp) { /* stdout or a device: nothing to rename */
		if (fflush(of->f))
			err = errno;
		else if (ferror(of->f))
			err = EIO;
		if (of->direct && fclose(of->f) && !err)
			err = errno ? errno : EIO;
		output_reset(of);
		return -err;
	}
	if (fflush(of->f))
		err = errno ? errno : EIO;
	else if (ferror(of->f))
		err = EIO; /* an earlier write failed; errno is long gone */
	else if (fsync(fileno(of->f)))
		err = errno;
	else if (output_chown_sudo(fileno(of->f)))
		err = errno;
	else if (of->anon && name_anon(of, fileno(of->f)))
		err = errno;
	else
		of->anon = 0; /* named now: removed below on failure */
	if (fclose(of->f) && !err)
		err = errno ? errno : EIO;
	of->f = NULL;
	if (!err && replaceable(of->path))
		err = errno;
	else if (!err && rename(of->tmp, of->path))
		err = errno;
	if (err && !of->anon)
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
		if (!of->anon)
			unlink(of->tmp);
	} else if (of->direct) {
		fclose(of->f);
	} else {
		fflush(of->f);
	}
	output_reset(of);
}
