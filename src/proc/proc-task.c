/* Per-process and per-thread facts from /proc: stat, status, thread list and comm.
 * Text parsing is strict and bounded; callers decide what a missing process means. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/fdlimit.h"
#include "perch/base/textscan.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"

/* Larger than any /proc file perch reads (maps of a big Android app is a few MB). */
#define PROC_READ_MAX (256u << 20)
/* More threads than any kernel allows per process (threads-max is far lower in practice). */
#define PROC_TASK_MAX (1u << 22)

char *proc_read_file(const char *path, size_t *len)
{
	size_t alloc = 4096, n = 0;
	char *buf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = xmalloc(alloc);
	for (;;) {
		ssize_t r;

		/* files in /proc report st_size 0: read until EOF, growing as needed */
		if (alloc - n < 2) {
			if (alloc >= PROC_READ_MAX) {
				err = EFBIG;
				goto fail;
			}
			alloc *= 2;
			buf = xrealloc(buf, alloc);
		}
		r = read(fd, buf + n, alloc - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	errno = err;
	return NULL;
}

/* Signed decimal that fits an int. 0 or -EINVAL. */
static int parse_int(const char **s, int *out)
{
	const char *p = *s;
	int neg = 0;
	uint64_t v;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (textscan_u64(&p, NULL, &v) || v > (uint64_t)INT_MAX + neg)
		return -EINVAL;
	*out = neg ? (int)(-(int64_t)v) : (int)v;
	*s = p;
	return 0;
}

/* A whole field: the number must be followed by a space, a newline or the NUL. */
static int field_u64(const char *s, uint64_t *out)
{
	if (textscan_u64(&s, NULL, out))
		return -EINVAL;
	return (*s == ' ' || *s == '\n' || *s == '\0') ? 0 : -EINVAL;
}

static int field_int(const char *s, int *out)
{
	if (parse_int(&s, out))
		return -EINVAL;
	return (*s == ' ' || *s == '\n' || *s == '\0') ? 0 : -EINVAL;
}

/* Fields of proc(5) /proc/pid/stat, 1-based, that perch reads after the comm. */
enum {
	STAT_STATE = 3,
	STAT_PPID = 4,
	STAT_UTIME = 14,
	STAT_STIME = 15,
	STAT_NUM_THREADS = 20,
	STAT_STARTTIME = 22,
	STAT_PROCESSOR = 39,
	STAT_MAX_FIELD = STAT_PROCESSOR,
};

int proc_sched_exec_start(const char *text, uint64_t *ns)
{
	static const char key[] = "\nse.exec_start";
	const char *p = strstr(text, key);
	uint64_t ms = 0, frac = 0;
	int digits = 0;

	if (!p)
		return -EINVAL;
	p += sizeof(key) - 1;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != ':')
		return -EINVAL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9' && ms < UINT64_MAX / 100; p++)
		ms = ms * 10 + (uint64_t)(*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
			frac = frac * 10 + (uint64_t)(*p - '0');
	if (digits != 6 || (*p >= '0' && *p <= '9') || ms > UINT64_MAX / 1000000 - 1)
		return -EINVAL; /* (the kernel prints six digits: SPLIT_NS) */
	*ns = ms * 1000000 + frac;
	return 0;
}

uint64_t proc_sched_read_exec_start(int fd)
{
	char buf[512]; /* se.exec_start is the third line: the rest is not needed */
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	uint64_t ns;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return proc_sched_exec_start(buf, &ns) == 0 ? ns : 0;
}

int proc_sched_open_self(void)
{
	int fd = open("/proc/thread-self/sched", O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && !proc_sched_read_exec_start(fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int proc_stat_parse(const char *text, struct proc_stat *out)
{
	const char *open, *close, *p, *field[STAT_MAX_FIELD + 1] = {0};
	uint64_t pid;
	size_t n;
	int nr, ppid;

	memset(out, 0, sizeof(*out));
	p = text;
	if (textscan_u64(&p, NULL, &pid) || pid == 0 || pid > INT_MAX || p[0] != ' ' || p[1] != '(')
		return -EINVAL;
	open = p + 1;
	/* the comm may itself contain ") ", so the comm ends at the LAST ')' */
	close = strrchr(open, ')');
	if (!close || close[1] != ' ')
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(out->comm))
		n = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, n);
	out->comm[n] = '\0';

	/* split the rest into fields, numbered as in proc(5) (state is field 3) */
	p = close + 2;
	for (nr = STAT_STATE; nr <= STAT_MAX_FIELD && *p && *p != '\n'; nr++) {
		field[nr] = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		if (*p == ' ')
			p++;
	}
	if (!field[STAT_STARTTIME])
		return -EINVAL;
	if (field[STAT_STATE][0] == ' ' || (field[STAT_STATE][1] != ' '))
		return -EINVAL;
	out->pid = (pid_t)pid;
	out->state = field[STAT_STATE][0];
	if (field_int(field[STAT_PPID], &ppid) || ppid < 0)
		return -EINVAL;
	out->ppid = ppid;
	if (field_u64(field[STAT_UTIME], &out->utime) ||
	    field_u64(field[STAT_STIME], &out->stime) ||
	    field_u64(field[STAT_NUM_THREADS], &out->num_threads) ||
	    field_u64(field[STAT_STARTTIME], &out->starttime))
		return -EINVAL;
	out->processor = -1;
	if (field[STAT_PROCESSOR] && field_int(field[STAT_PROCESSOR], &out->processor))
		return -EINVAL;
	return 0;
}

/* The value of "Key:\tvalue" lines: @line points at the line, returns the value or NULL. */
static const char *status_value(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) || line[n] != ':')
		return NULL;
	line += n + 1;
	while (*line == '\t' || *line == ' ')
		line++;
	return line;
}

static int status_id(const char *v, uint64_t max, uint64_t *out)
{
	if (field_u64(v, out) || *out > max)
		return -EINVAL;
	return 0;
}

/* A hex mask that is the whole value (the kernel prints exactly 16 digits). */
static int status_hex(const char *v, uint64_t *out)
{
	uint64_t x;

	if (textscan_x64(&v, NULL, 16, &x) || (*v != '\n' && *v != '\0'))
		return -EINVAL;
	*out = x;
	return 0;
}

int proc_status_parse(const char *text, struct proc_status *out)
{
	const char *pos = text, *line, *eol, *v;
	int have_name = 0, have_tgid = 0;
	uint64_t x;

	memset(out, 0, sizeof(*out));
	out->threads = -1;
	while ((line = textscan_line(&pos, &eol))) {
		if ((v = status_value(line, "Name"))) {
			/* the kernel escapes '\n' and '\\' in Name, so the value is one line */
			size_t n = strcspn(v, "\n");

			if (n >= sizeof(out->name))
				n = sizeof(out->name) - 1;
			memcpy(out->name, v, n);
			out->name[n] = '\0';
			have_name = 1;
		} else if ((v = status_value(line, "State"))) {
			if (*v == '\n' || *v == '\0')
				return -EINVAL;
			out->state = *v;
		} else if ((v = status_value(line, "Tgid"))) {
			if (status_id(v, INT_MAX, &x))
				return -EINVAL;
			out->tgid = (pid_t)x;
			have_tgid = 1;
		} else if ((v = status_value(line, "TracerPid"))) {
			if (status_id(v, INT_MAX, &x))
				return -EINVAL;
			out->tracer_pid = (pid_t)x;
		} else if ((v = status_value(line, "Uid"))) {
			/* "Uid:\treal\teffective\tsaved\tfs" */
			if (textscan_u64(&v, eol, &x) || x > UINT32_MAX || *v != '\t')
				return -EINVAL;
			out->uid_real = (uid_t)x;
			v++;
			if (textscan_u64(&v, eol, &x) || x > UINT32_MAX ||
			    (*v != '\t' && *v != '\n' && *v))
				return -EINVAL;
			out->uid_effective = (uid_t)x;
		} else if ((v = status_value(line, "Threads"))) {
			if (status_id(v, INT64_MAX, &x))
				return -EINVAL;
			out->threads = (int64_t)x;
		} else if ((v = status_value(line, "CapEff"))) {
			if (status_hex(v, &out->cap_eff))
				return -EINVAL;
		} else if ((v = status_value(line, "NSpid"))) {
			/* "NSpid:\t1234\t1": outermost first; the last is its own namespace's */
			while (textscan_u64(&v, eol, &x) == 0 && x && x <= INT_MAX) {
				out->ns_pid = (pid_t)x;
				if (*v != '\t')
					break;
				v++;
			}
		}
	}
	if (!out->ns_pid)
		out->ns_pid = out->tgid; /* kernels before 4.1 have no NSpid line */
	return have_name && have_tgid && out->state ? 0 : -EINVAL;
}

static char *task_path(pid_t pid, pid_t tid, const char *file)
{
	if (tid)
		return xasprintf("/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
	return xasprintf("/proc/%d/%s", (int)pid, file);
}

int proc_stat_read(pid_t pid, pid_t tid, struct proc_stat *out)
{
	char *path = task_path(pid, tid, "stat"), *text;
	int ret;

	text = proc_read_file(path, NULL);
	ret = text ? proc_stat_parse(text, out) : -errno;
	free(text);
	free(path);
	return ret;
}

void proc_stat_files_init(struct proc_stat_files *sf, pid_t pid)
{
	memset(sf, 0, sizeof(*sf));
	sf->pid = pid;
}

void proc_stat_files_release(struct proc_stat_files *sf)
{
	for (size_t i = 0; i < sf->nr; i++) {
		close(sf->f[i].fd);
		fdlimit_unkeep();
	}
	free(sf->f);
	memset(sf, 0, sizeof(*sf));
}

/* Where @tid is or would go in @sf->f. */
static size_t stat_file_pos(const struct proc_stat_files *sf, pid_t tid)
{
	size_t lo = 0, hi = sf->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sf->f[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void stat_file_drop(struct proc_stat_files *sf, size_t i)
{
	close(sf->f[i].fd);
	fdlimit_unkeep();
	memmove(&sf->f[i], &sf->f[i + 1], (sf->nr - i - 1) * sizeof(sf->f[0]));
	sf->nr--;
}

/* The whole of the stat file open at @fd, parsed. 0 or -errno. */
static int stat_file_pread(int fd, struct proc_stat *out)
{
	char buf[2048];
	ssize_t n;

	do
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0 || (size_t)n == sizeof(buf) - 1)
		return -EINVAL; /* empty (gone), or longer than a stat line can be */
	buf[n] = 0;
	return proc_stat_parse(buf, out);
}

int proc_stat_files_read(struct proc_stat_files *sf, pid_t tid, struct proc_stat *out)
{
	size_t i = stat_file_pos(sf, tid);
	char *path;
	int fd, ret;

	if (i < sf->nr && sf->f[i].tid == tid) {
		ret = stat_file_pread(sf->f[i].fd, out);
		if (ret == 0)
			return 0;
		stat_file_drop(sf, i); /* exited: its tid may belong to a new thread now */
	}
	if (sf->nr >= PROC_STAT_FILES_MAX || !fdlimit_keep())
		return proc_stat_read(sf->pid, tid, out);
	path = task_path(sf->pid, tid, "stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ret = fd < 0 ? -errno : stat_file_pread(fd, out);
	free(path);
	if (ret < 0) {
		if (fd >= 0)
			close(fd);
		fdlimit_unkeep();
		return ret;
	}
	ALLOC_GROW(sf->f, sf->nr + 1, sf->alloc);
	memmove(&sf->f[i + 1], &sf->f[i], (sf->nr - i) * sizeof(sf->f[0]));
	sf->f[i] = (struct proc_stat_file){tid, fd};
	sf->nr++;
	return 0;
}

void proc_stat_files_keep(struct proc_stat_files *sf, const pid_t *tids, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < sf->nr;) {
		while (k < n && tids[k] < sf->f[i].tid)
			k++;
		if (k < n && tids[k] == sf->f[i].tid)
			i++;
		else
			stat_file_drop(sf, i);
	}
}

int proc_stat_files_tids(struct proc_stat_files *sf, uint64_t num_threads, pid_t **tids)
{
	int n;

	if (sf->nr && sf->nr == num_threads) {
		*tids = xmalloc(sf->nr * sizeof(**tids));
		for (size_t i = 0; i < sf->nr; i++)
			(*tids)[i] = sf->f[i].tid;
		return (int)sf->nr;
	}
	n = proc_task_list(sf->pid, tids);
	if (n >= 0)
		proc_stat_files_keep(sf, *tids, (size_t)n);
	return n;
}

int proc_status_read(pid_t pid, pid_t tid, struct proc_status *out)
{
	char *path = task_path(pid, tid, "status"), *text;
	int ret;

	text = proc_read_file(path, NULL);
	ret = text ? proc_status_parse(text, out) : -errno;
	free(text);
	free(path);
	return ret;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int proc_task_list_dir(const char *dir, pid_t **tids)
{
	size_t nr = 0, alloc = 0;
	pid_t *out = NULL;
	struct dirent *de;
	DIR *d;

	*tids = NULL;
	d = opendir(dir);
	if (!d)
		return -errno;
	for (;;) {
		const char *s;
		uint64_t v;

		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		s = de->d_name;
		if (textscan_u64(&s, NULL, &v) || *s || v == 0 || v > INT_MAX)
			continue; /* ".", ".." and anything that is not a thread id */
		if (nr >= PROC_TASK_MAX)
			break;
		ALLOC_GROW(out, nr + 1, alloc);
		out[nr++] = (pid_t)v;
	}
	if (errno) {
		int err = errno;

		closedir(d);
		free(out);
		return -err;
	}
	closedir(d);
	if (nr)
		qsort(out, nr, sizeof(*out), cmp_pid);
	*tids = out;
	return (int)nr;
}

int proc_task_list(pid_t pid, pid_t **tids)
{
	char *dir = xasprintf("/proc/%d/task", (int)pid);
	int ret = proc_task_list_dir(dir, tids);

	free(dir);
	return ret;
}

char *proc_live_task_path(pid_t pid, const char *file)
{
	struct proc_stat st;
	pid_t *tids = NULL, live = 0;
	int n;

	if (proc_stat_read(pid, 0, &st) < 0 || st.state != 'Z')
		return NULL;
	n = proc_task_list(pid, &tids);
	for (int i = 0; i < n && !live; i++)
		if (tids[i] != pid && proc_stat_read(pid, tids[i], &st) == 0 && st.state != 'Z' &&
		    st.state != 'X')
			live = tids[i];
	free(tids);
	return live ? task_path(pid, live, file) : NULL;
}

int proc_task_comm_file(const char *path, char *buf, size_t len)
{
	size_t n;
	char *text;

	if (!len)
		return -EINVAL;
	text = proc_read_file(path, &n);
	if (!text)
		return -errno;
	n = strcspn(text, "\n"); /* also stops at an embedded NUL */
	if (n > len - 1)
		n = len - 1;
	memcpy(buf, text, n);
	buf[n] = '\0';
	free(text);
	return 0;
}

int proc_task_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char *path = task_path(pid, tid ? tid : pid, "comm");
	int ret = proc_task_comm_file(path, buf, len);

	free(path);
	return ret;
}

int proc_task_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, len ? len - 1 : 0);
	if (n < 0)
		return -errno;
	if (len == 0 || (size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = 0;
	return 0;
}
