/* Waiting for a process to start by name: kernel process events when allowed, else /proc
 * polling; see include/perch/record/procwait.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perch/base/log.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "perch/record/procwait.h"

#define COMM_LEN	15		    /* TASK_COMM_LEN - 1: the kernel truncates comm */
#define YOUNG_NS	(2 * 1000000000ULL) /* polling: a new process is looked at again this long */
#define RECHECK_NS	1000000000ULL	    /* polling: every process looked at again this often */
#define SETTLE_NS	(20 * 1000000ULL)   /* polling: a new pid is looked for this long */
#define PROBE_MAX	128 /* polling: new pids looked up one by one, else /proc read */
#define RETRY_NS	(10 * 1000000000ULL) /* attach checks every poll this long */
#define RETRY_MAX_NS	(10 * 1000000ULL)    /* then this far apart */
#define NETLINK_IDLE_MS 1000		     /* longest sleep with process events */
#define ACK_WAIT_MS	200		     /* the kernel's answer to the subscription */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- names ---- */

/* @comm is @name cut to 15 characters at its start (exec) or its end (Android's
 * SetThreadName keeps the last 15 characters of a dotted name) */
static int comm_truncates(const char *name, const char *comm)
{
	size_t n = strlen(name);

	if (n <= COMM_LEN || strlen(comm) != COMM_LEN)
		return 0;
	return !strncmp(name, comm, COMM_LEN) || !strcmp(name + n - COMM_LEN, comm);
}

enum procwait_match procwait_name_matches(const char *name, const char *comm, const char *cmdline,
					  size_t len)
{
	size_t a0 = cmdline ? strnlen(cmdline, len) : 0;
	const char *base;

	if (!*name)
		return PROCWAIT_NO;
	if (comm && !strcmp(comm, name))
		return PROCWAIT_YES;
	if (a0) {
		if (a0 == strlen(name) && !memcmp(cmdline, name, a0))
			return PROCWAIT_YES;
		base = memrchr(cmdline, '/', a0);
		base = base ? base + 1 : cmdline;
		if ((size_t)(cmdline + a0 - base) == strlen(name) &&
		    !memcmp(base, name, strlen(name)))
			return PROCWAIT_YES;
	}
	return comm && comm_truncates(name, comm) ? PROCWAIT_MAYBE : PROCWAIT_NO;
}

/* Read a small /proc file of @pid into @buf: its length, or -errno. */
static ssize_t read_pid_file(pid_t pid, const char *what, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

/* procwait_check() (@app: as an app, procwait_app_matches()) that keeps the comm it read in
 * @comm (32 bytes); when @same_comm is set and the comm equals what @comm held, PROCWAIT_NO
 * without reading the cmdline (a process that execs or renames itself changes its comm too).
 * -1: gone. */
static int check_comm(pid_t pid, const char *name, int app, char *comm, int same_comm)
{
	enum procwait_match m;

	char now[32], cmd[PATH_MAX + 1];
	ssize_t n = read_pid_file(pid, "comm", now, sizeof(now) - 1), c;

	if (n <= 0)
		return -1;
	now[n] = '\0';
	if (now[n - 1] == '\n')
		now[n - 1] = '\0';
	if (same_comm && !strcmp(now, comm))
		return PROCWAIT_NO;
	memcpy(comm, now, sizeof(now));
	if (!strcmp(now, name))
		return PROCWAIT_YES;
	c = read_pid_file(pid, "cmdline", cmd, sizeof(cmd) - 1);
	if (c < 0)
		return -1;
	cmd[c] = '\0';
	/* no argv: a kernel thread, or a process in the middle of an exec, whose comm is the new
	 * program's before its argv is there (load_elf_binary() sets it up after
	 * begin_new_exec()): the comm alone must not say next time that the name is known */
	if (!c)
		comm[0] = '\0';
	m = procwait_name_matches(name, now, cmd, (size_t)c);
	if (m != PROCWAIT_YES && app && procwait_app_matches(name, now, cmd, (size_t)c))
		m = PROCWAIT_YES;
	return m;
}

enum procwait_match procwait_check(pid_t pid, const char *name)
{
	char comm[32];
	int m = check_comm(pid, name, 0, comm, 0);

	return m < 0 ? PROCWAIT_NO : (enum procwait_match)m;
}

int procwait_attachable(pid_t pid)
{
	char path[64];
	int fd;

	/* opening a process's memory makes the kernel's ptrace access check for attaching
	 * (PTRACE_MODE_ATTACH: uids, dumpable, capabilities, Yama, LSMs), without attaching */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	close(fd);
	return 0;
}

/* ---- the processes known, sorted by pid ---- */

enum pw_state {
	PW_NO,	     /* looked at: another name */
	PW_OLD,	     /* that name, already running when the watch began: left alone */
	PW_MAYBE,    /* a truncated comm matches: looked at again */
	PW_DENIED,   /* that name, not attachable yet: looked at again */
	PW_FOUND,    /* that name and attachable: to report */
	PW_REPORTED, /* reported (procwatch_next()) */
};

struct pw_proc {
	pid_t pid;
	enum pw_state state;
	uint64_t first_ns, last_ns; /* first and last looked at */
	uint64_t appeared_ns;	    /* PW_DENIED, PW_FOUND: when it got the name */
	uint64_t found_ns, ready_ns;
	char comm[32]; /* as last read ("" before) */
};

struct procwatch {
	const char *name;
	int app;		    /* match as an app (procwait_app_matches()) */
	struct procwait_result res; /* the statistics, and the last process reported */
	struct pw_proc *v;
	size_t n, alloc;
	size_t nr_found; /* entries in state PW_FOUND */
	uint64_t poll_ns, last_poll_ns, last_recheck_ns;
	long last_pid;	    /* the last pid handed out (/proc/loadavg), -1 unknown */
	struct pw_pending { /* pids handed out, not in /proc yet */
		pid_t pid;
		uint64_t since_ns;
	} pending[PROBE_MAX];
	size_t nr_pending;
	uint64_t boot_tick; /* clock ticks since boot when the watch began */
	int nl, loadavg;
};

static struct pw_proc *pw_find(struct procwatch *w, pid_t pid, size_t *at)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	return lo < w->n && w->v[lo].pid == pid ? &w->v[lo] : NULL;
}

static struct pw_proc *pw_add(struct procwatch *w, pid_t pid, uint64_t now)
{
	size_t at;
	struct pw_proc *p = pw_find(w, pid, &at);

	if (p)
		return p;
	if (w->n == w->alloc) {
		w->alloc = w->alloc ? 2 * w->alloc : 256;
		w->v = xrealloc(w->v, w->alloc * sizeof(*w->v));
	}
	memmove(&w->v[at + 1], &w->v[at], (w->n - at) * sizeof(*w->v));
	w->n++;
	p = &w->v[at];
	*p = (struct pw_proc){.pid = pid, .state = PW_NO, .first_ns = now};
	return p;
}

/* Look at @p (now @now); @appeared_ns: when it may have got its name. 1 when it is one to
 * report (PW_FOUND), 0 otherwise. */
static int pw_look(struct procwatch *w, struct pw_proc *p, uint64_t now, uint64_t appeared_ns)
{
	int m, ret;

	if (p->state == PW_OLD || p->state == PW_FOUND || p->state == PW_REPORTED)
		return 0;
	p->last_ns = now;
	if (p->state != PW_DENIED) {
		/* a process looked at before that kept its comm kept its name */
		m = check_comm(p->pid, w->name, w->app, p->comm, p->state == PW_NO && p->comm[0]);
		if (m < 0) {
			p->state = PW_NO;
			return 0;
		}
		if (m == PROCWAIT_NO) {
			p->state = PW_NO;
			return 0;
		}
		if (m == PROCWAIT_MAYBE) {
			p->state = PW_MAYBE;
			return 0;
		}
		p->appeared_ns = appeared_ns;
		p->found_ns = now;
	}
	ret = procwait_attachable(p->pid);
	if (ret == -EPERM || ret == -EACCES) {
		if (p->state != PW_DENIED)
			p->first_ns = now; /* retried from now on */
		p->state = PW_DENIED;
		w->res.denied++;
		if (!w->res.pid)
			w->res.pid = p->pid;
		return 0;
	}
	if (ret < 0) {
		p->state = PW_NO;
		return 0;
	}
	p->state = PW_FOUND;
	p->ready_ns = mono_ns();
	w->nr_found++;
	return 1;
}

/* Forget what was known of @p: its pid is a new process's. */
static void pw_reset(struct procwatch *w, struct pw_proc *p, uint64_t now)
{
	if (p->state == PW_FOUND)
		w->nr_found--;
	*p = (struct pw_proc){.pid = p->pid, .state = PW_NO, .first_ns = now};
}

/* Is it time to look at @p again? New processes often, then less and less (a pause of a
 * quarter of its age, at least one poll): a process renames itself or execs soon after fork,
 * if ever, and many young processes must not cost a read each per poll. With process events
 * a rename or exec is an event: only a truncated comm waits for its cmdline. */
static int pw_due(const struct procwatch *w, const struct pw_proc *p, uint64_t now)
{
	uint64_t age = now - p->first_ns, gap = age / 4;

	switch (p->state) {
	case PW_OLD:
	case PW_FOUND:
	case PW_REPORTED:
		return 0;
	case PW_NO:
		if (w->nl >= 0 || age > YOUNG_NS)
			return 0;
		break;
	case PW_MAYBE:
		if (age > YOUNG_NS)
			return 0;
		break;
	case PW_DENIED:
		/* it becomes attachable at one moment (zygote's EnableDebugger): every poll,
		 * an open() each, for RETRY_NS, then less often */
		gap = age < RETRY_NS ? 0 : RETRY_MAX_NS;
		break;
	}
	return now - p->last_ns >= (gap > w->poll_ns ? gap : w->poll_ns) - w->poll_ns / 4;
}

static void pw_look_due(struct procwatch *w, uint64_t now)
{
	for (size_t i = 0; i < w->n; i++)
		if (pw_due(w, &w->v[i], now))
			pw_look(w, &w->v[i], now, w->last_poll_ns ? w->last_poll_ns : now);
}

/* ---- /proc ---- */

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int procwait_app_matches(const char *name, const char *comm, const char *cmdline, size_t len)
{
	size_t a0 = cmdline ? strnlen(cmdline, len) : 0, n = strlen(name);

	if (procwait_name_matches(name, comm, cmdline, len) == PROCWAIT_YES)
		return 1;
	return n && a0 > n + 1 && cmdline[n] == ':' && !memcmp(cmdline, name, n) &&
	       !memchr(cmdline, '/', a0);
}

int procwait_list_app(const char *name, pid_t **pids)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t nr = 0, alloc = 0;

	*pids = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char comm[32], cmd[PATH_MAX + 1], *end;
		long v = strtol(de->d_name, &end, 10);
		ssize_t n, c;

		if (*end || v <= 0 || v == getpid())
			continue;
		n = read_pid_file((pid_t)v, "comm", comm, sizeof(comm) - 1);
		c = read_pid_file((pid_t)v, "cmdline", cmd, sizeof(cmd) - 1);
		if (n <= 0 || c < 0)
			continue; /* gone meanwhile */
		comm[n] = '\0';
		if (comm[n - 1] == '\n')
			comm[n - 1] = '\0';
		cmd[c] = '\0';
		if (!procwait_app_matches(name, comm, cmd, (size_t)c))
			continue;
		ALLOC_GROW(*pids, nr + 1, alloc);
		(*pids)[nr++] = (pid_t)v;
	}
	closedir(d);
	if (nr)
		qsort(*pids, nr, sizeof(**pids), cmp_pid);
	return (int)nr;
}

/* The pids in /proc, merged into the table: new ones are looked at (@initial: the first
 * scan, whose matches are old unless they started just now). */
static void pw_scan(struct procwatch *w, uint64_t now, int initial)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t *seen = NULL;
	size_t nseen = 0, aseen = 0, j = 0, k = 0;

	if (!d)
		return;
	w->res.scans++;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0)
			continue;
		if (nseen == aseen) {
			aseen = aseen ? 2 * aseen : 512;
			seen = xrealloc(seen, aseen * sizeof(*seen));
		}
		seen[nseen++] = (pid_t)v;
	}
	closedir(d);
	/* /proc lists processes by pid, but a scan may race with the pid counter wrapping */
	for (size_t i = 1; i < nseen; i++)
		if (seen[i] <= seen[i - 1]) {
			qsort(seen, nseen, sizeof(*seen), cmp_pid);
			break;
		}
	/* keep the known pids still there, drop the gone ones */
	for (size_t i = 0; i < w->n; i++) {
		while (j < nseen && seen[j] < w->v[i].pid)
			j++;
		if (j < nseen && seen[j] == w->v[i].pid)
			w->v[k++] = w->v[i];
		else if (w->v[i].state == PW_FOUND)
			w->nr_found--; /* gone before it was reported */
	}
	w->n = k;
	for (size_t i = 0; i < nseen; i++) {
		struct pw_proc *p;

		if (pw_find(w, seen[i], NULL))
			continue;
		p = pw_add(w, seen[i], now);
		if (initial) {
			struct proc_stat st;
			int m = check_comm(p->pid, w->name, w->app, p->comm, 0);

			/* running before: not young (renames are caught by the periodic look or
			 * an event) */
			p->first_ns = now - YOUNG_NS - 1;
			p->last_ns = now;
			if (m == PROCWAIT_MAYBE)
				p->first_ns = now;
			if (m != PROCWAIT_YES) {
				p->state = m == PROCWAIT_MAYBE ? PW_MAYBE : PW_NO;
				continue;
			}
			/* started before the watch began: an old one */
			p->first_ns = now;
			if (proc_stat_read(p->pid, 0, &st) < 0 || st.starttime < w->boot_tick) {
				p->state = PW_OLD;
				w->res.ignored++;
				w->res.ignored_pid = p->pid;
				continue;
			}
		}
		pw_look(w, p, now, w->last_poll_ns ? w->last_poll_ns : now);
	}
	free(seen);
}

/* The last pid the kernel handed out in our namespace (/proc/loadavg's last field), or -1. */
static long pw_last_pid(struct procwatch *w)
{
	char buf[128], *sp;
	ssize_t n;

	if (w->loadavg < 0)
		return -1;
	n = pread(w->loadavg, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	sp = strrchr(buf, ' ');
	return sp ? strtol(sp + 1, NULL, 10) : -1;
}

/* Look up the pids handed out since the last poll one by one (threads take pids too, and a
 * pid is handed out a moment before its task shows in /proc: such a pid is looked up again
 * for SETTLE_NS); the whole of /proc is read only when too many came or the counter wrapped. */
static void pw_poll_new(struct procwatch *w, uint64_t now)
{
	long last = pw_last_pid(w);
	size_t k = 0;

	if (last < 0 || last < w->last_pid || last - w->last_pid > PROBE_MAX) {
		w->last_pid = last;
		w->nr_pending = 0;
		pw_scan(w, now, 0);
		return;
	}
	for (long pid = w->last_pid + 1; pid <= last; pid++) {
		if (w->nr_pending == PROBE_MAX)
			memmove(w->pending, w->pending + 1, --w->nr_pending * sizeof(*w->pending));
		w->pending[w->nr_pending++] = (struct pw_pending){(pid_t)pid, now};
	}
	w->last_pid = last;
	for (size_t i = 0; i < w->nr_pending; i++) {
		struct pw_pending *q = &w->pending[i];
		struct proc_status st;
		struct pw_proc *p;
		int ret = proc_status_read(q->pid, 0, &st);

		if (ret < 0) {
			if (now - q->since_ns < SETTLE_NS)
				w->pending[k++] = *q;
			continue;
		}
		if (st.tgid != q->pid)
			continue; /* a thread */
		p = pw_find(w, q->pid, NULL);
		/* a pid handed out again: a process left alone or reported is another one now */
		if (p && (p->state == PW_OLD || p->state == PW_REPORTED))
			pw_reset(w, p, now);
		else if (p)
			continue;
		pw_look(w, p ? p : pw_add(w, q->pid, now), now, w->last_poll_ns);
	}
	w->nr_pending = k;
}

/* ---- kernel process events ---- */

/* The subscription message: PROC_CN_MCAST_LISTEN/IGNORE, and on Linux 6.6+ which events
 * (older kernels read the first word only). */
struct pw_listen {
	struct nlmsghdr h;
	struct cn_msg m;
	struct {
		uint32_t op;
		uint32_t event_type;
	} in;
} __attribute__((packed, aligned(NLMSG_ALIGNTO)));

static int nl_send(int fd, uint32_t op, uint32_t event_type)
{
	struct pw_listen msg = {0};
	size_t len = event_type ? sizeof(msg) : sizeof(msg) - sizeof(uint32_t);

	msg.h.nlmsg_len = (uint32_t)len;
	msg.h.nlmsg_type = NLMSG_DONE;
	msg.m.id.idx = CN_IDX_PROC;
	msg.m.id.val = CN_VAL_PROC;
	msg.m.len = (uint16_t)(event_type ? sizeof(msg.in) : sizeof(uint32_t));
	msg.in.op = op;
	msg.in.event_type = event_type;
	return send(fd, &msg, len, 0) < 0 ? -errno : 0;
}

/* Linux 6.6 or later: the subscription can name the events (others are not sent). */
static int kernel_filters_events(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major > 6 || (major == 6 && minor >= 6);
}

/* The event of message @h into @ev: the event follows the 20-byte cn_msg header, so it is
 * not 8-byte aligned in the buffer. 0 when the message is too short. */
static int nl_event_copy(const struct nlmsghdr *h, struct proc_event *ev)
{
	const struct cn_msg *cm = NLMSG_DATA(h);
	size_t have = h->nlmsg_len > NLMSG_HDRLEN + sizeof(*cm)
			  ? h->nlmsg_len - NLMSG_HDRLEN - sizeof(*cm)
			  : 0;

	memset(ev, 0, sizeof(*ev));
	if (have < offsetof(struct proc_event, event_data))
		return 0;
	memcpy(ev, cm->data, have < sizeof(*ev) ? have : sizeof(*ev));
	return 1;
}

/* The kernel's answer to a subscription: 0, or its error. */
static int nl_ack(int fd)
{
	uint64_t until = mono_ns() + ACK_WAIT_MS * 1000000ULL;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char buf[1024] __attribute__((aligned(NLMSG_ALIGNTO)));

	while (mono_ns() < until) {
		ssize_t n;

		if (poll(&pfd, 1, ACK_WAIT_MS) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; n > 0 && NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			struct proc_event ev;

			if (!nl_event_copy(h, &ev))
				continue;
			if (ev.what == PROC_EVENT_NONE)
				return -(int)ev.event_data.ack.err;
		}
	}
	return -ETIMEDOUT;
}

/* A socket that receives fork, exec and comm events, or -errno (no CAP_NET_ADMIN: EPERM). */
static int nl_open(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
	int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
	int rcv = 4 << 20, ret;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		goto fail;
	}
	/* the plain subscription is acknowledged with the kernel's error (EPERM without
	 * CAP_NET_ADMIN in the initial user namespace); a filtered one is not (the
	 * acknowledgement is filtered out too), so it comes second */
	ret = nl_send(fd, PROC_CN_MCAST_LISTEN, 0);
	if (!ret)
		ret = nl_ack(fd);
	if (ret)
		goto fail;
	if (kernel_filters_events())
		nl_send(fd, PROC_CN_MCAST_LISTEN,
			PROC_EVENT_FORK | PROC_EVENT_EXEC | PROC_EVENT_COMM);
	return fd;
fail:
	close(fd);
	return ret;
}

static void nl_close(int fd)
{
	/* kernels before 6.6 count listeners until told */
	nl_send(fd, PROC_CN_MCAST_IGNORE, 0);
	close(fd);
}

/* Look at the process an event names, cheaply: most events are of other processes. A forked
 * process has its parent's name: it is new with that name only when the parent had it (a
 * process of that name running before the watch, or reported); a comm event carries the new
 * comm (as an app, an Android app's other processes are renamed "NAME:SUFFIX": any rename of
 * a main thread is looked at). Only processes still to be looked at again, or reported, stay
 * in the table. */
static void nl_event(struct procwatch *w, const struct proc_event *ev, uint64_t now)
{
	struct pw_proc tmp, *p;
	pid_t pid;

	switch (ev->what) {
	case PROC_EVENT_FORK:
		if (ev->event_data.fork.child_pid != ev->event_data.fork.child_tgid)
			return; /* a thread */
		pid = ev->event_data.fork.child_tgid;
		/* what was known under its pid was of a process gone since */
		p = pw_find(w, pid, NULL);
		if (p)
			pw_reset(w, p, now);
		p = pw_find(w, ev->event_data.fork.parent_tgid, NULL);
		if (!p || (p->state != PW_OLD && p->state != PW_FOUND && p->state != PW_REPORTED))
			return;
		break;
	case PROC_EVENT_EXEC:
		pid = ev->event_data.exec.process_tgid;
		break;
	case PROC_EVENT_COMM: {
		char comm[sizeof(ev->event_data.comm.comm) + 1];

		memcpy(comm, ev->event_data.comm.comm, sizeof(ev->event_data.comm.comm));
		comm[sizeof(comm) - 1] = '\0';
		pid = ev->event_data.comm.process_tgid;
		p = pw_find(w, pid, NULL);
		if (strcmp(comm, w->name) && !comm_truncates(w->name, comm) &&
		    (!p || p->state == PW_NO) &&
		    !(w->app && pid == ev->event_data.comm.process_pid))
			return;
		break;
	}
	default:
		return;
	}
	p = pw_find(w, pid, NULL);
	if (p) {
		pw_look(w, p, now, ev->timestamp_ns);
		return;
	}
	tmp = (struct pw_proc){.pid = pid, .first_ns = now};
	pw_look(w, &tmp, now, ev->timestamp_ns);
	if (tmp.state != PW_NO)
		*pw_add(w, pid, now) = tmp;
}

/* Read the queued events; look at the processes they name. 0, or -ENOBUFS (events were
 * lost: scan /proc). */
static int nl_read(struct procwatch *w, uint64_t now)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));

	for (;;) {
		ssize_t n = recv(w->nl, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0)
			return errno == ENOBUFS ? -ENOBUFS : 0;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			struct proc_event ev;

			if (!nl_event_copy(h, &ev))
				continue;
			w->res.events++;
			nl_event(w, &ev, now);
		}
	}
}

/* ---- the wait ---- */

/* The clock tick (since boot) of the wait's start, rounded down: a process that started in
 * that tick or later is new. */
static uint64_t boot_tick_now(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	if (hz <= 0)
		hz = 100;
	return (uint64_t)ts.tv_sec * (uint64_t)hz + (uint64_t)ts.tv_nsec / (1000000000ULL / hz);
}

/* One round after waking up at @now: what it finds is marked PW_FOUND. */
static void pw_round(struct procwatch *w, uint64_t now)
{
	if (w->nl >= 0) {
		if (nl_read(w, now) == -ENOBUFS)
			pw_scan(w, now, 0);
	} else {
		pw_poll_new(w, now);
		/* renames and execs of processes seen before (and anything missed) */
		if (now - w->last_recheck_ns >= RECHECK_NS) {
			w->last_recheck_ns = now;
			pw_scan(w, now, 0);
			for (size_t i = 0; i < w->n; i++)
				if (w->v[i].state == PW_NO)
					pw_look(w, &w->v[i], now, w->last_poll_ns);
		}
	}
	pw_look_due(w, now);
	w->last_poll_ns = now;
}

/* Report a process found: 1 with *@pid, 0 when none is left to report. */
static int pw_report(struct procwatch *w, pid_t *pid)
{
	for (size_t i = 0; i < w->n && w->nr_found; i++) {
		struct pw_proc *p = &w->v[i];

		if (p->state != PW_FOUND)
			continue;
		p->state = PW_REPORTED;
		w->nr_found--;
		w->res.pid = *pid = p->pid;
		w->res.appeared_ns = p->appeared_ns;
		w->res.found_ns = p->found_ns;
		w->res.ready_ns = p->ready_ns;
		return 1;
	}
	w->nr_found = 0;
	return 0;
}

struct procwatch *procwatch_open(const struct procwatch_opts *o)
{
	struct procwatch *w = xcalloc(1, sizeof(*w));

	w->name = o->name;
	w->app = o->app;
	w->nl = w->loadavg = -1;
	w->poll_ns = (uint64_t)(o->poll_us ? o->poll_us : PROCWAIT_DEFAULT_POLL_US) * 1000ULL;
	w->res.start_ns = mono_ns();
	w->boot_tick = boot_tick_now();
	/* listen first, then list what runs: a process that starts in between is seen twice,
	 * never missed */
	if (!o->no_netlink) {
		w->nl = nl_open();
		if (w->nl < 0)
			log_debug("no process events (%s): polling /proc every %u us",
				  strerror(-w->nl), (unsigned)(w->poll_ns / 1000));
	}
	w->res.how = w->nl >= 0 ? PROCWAIT_NETLINK : PROCWAIT_POLL;
	if (w->nl < 0) {
		w->loadavg = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
		w->last_pid = pw_last_pid(w);
	}
	w->last_recheck_ns = w->res.start_ns;
	pw_scan(w, w->res.start_ns, 1);
	w->last_poll_ns = mono_ns();
	return w;
}

int procwatch_next(struct procwatch *w, uint64_t now, pid_t *pid)
{
	if (!now)
		now = mono_ns();
	/* (a caller that takes every process found calls again at once: no second round) */
	if (!w->nr_found && now - w->last_poll_ns >= w->poll_ns / 2)
		pw_round(w, now);
	return w->nr_found ? pw_report(w, pid) : 0;
}

const struct procwait_result *procwatch_result(const struct procwatch *w)
{
	return &w->res;
}

void procwatch_close(struct procwatch *w)
{
	if (!w)
		return;
	if (w->nl >= 0)
		nl_close(w->nl);
	if (w->loadavg >= 0)
		close(w->loadavg);
	free(w->v);
	free(w);
}

/* ---- the wait ---- */

/* How long to sleep (ms) before the next round. */
static int pw_sleep_ms(const struct procwatch *w, uint64_t now, uint64_t deadline)
{
	uint64_t ms = w->poll_ns / 1000000ULL ? w->poll_ns / 1000000ULL : 1;

	if (w->nl >= 0) {
		int pending = 0;

		for (size_t i = 0; i < w->n && !pending; i++)
			pending = w->v[i].state == PW_DENIED ||
				  (w->v[i].state == PW_MAYBE && now - w->v[i].first_ns < YOUNG_NS);
		if (!pending)
			ms = NETLINK_IDLE_MS;
	}
	if (deadline && now < deadline && (deadline - now) / 1000000ULL < ms)
		ms = (deadline - now) / 1000000ULL + 1;
	return (int)ms;
}

/* Sleep and look until a process is found (1, *@pid), the deadline (-ETIMEDOUT) or a signal
 * on @sfd (-EINTR). */
static int pw_loop(struct procwatch *w, int sfd, uint64_t deadline, pid_t *pid)
{
	for (;;) {
		struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN},
					{.fd = w->nl, .events = POLLIN}};
		uint64_t now = mono_ns();
		int ret;

		if (w->nr_found && pw_report(w, pid))
			return 1;
		if (deadline && now >= deadline)
			return -ETIMEDOUT;
		if (w->poll_ns >= 1000000ULL || w->nl >= 0) {
			ret = poll(pfd, 2, pw_sleep_ms(w, now, deadline));
		} else {
			struct timespec ts = {0, (long)w->poll_ns};

			ret = ppoll(pfd, 2, &ts, NULL);
		}
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				w->res.signal = (int)si.ssi_signo;
				return -EINTR;
			}
		}
		pw_round(w, mono_ns());
	}
}

int procwait_run(const struct procwait_opts *o, struct procwait_result *res)
{
	struct procwatch_opts wo = {
	    .name = o->name, .poll_us = o->poll_us, .no_netlink = o->no_netlink};
	struct procwatch *w;
	uint64_t deadline;
	int sfd = -1, ret;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (o->stop) {
		sfd = signalfd(-1, o->stop, SFD_CLOEXEC | SFD_NONBLOCK);
		if (sfd < 0)
			return -errno;
	}
	w = procwatch_open(&wo);
	deadline = o->timeout_s > 0 ? w->res.start_ns + (uint64_t)(o->timeout_s * 1e9) : 0;
	if (o->ready)
		o->ready(o->arg, &w->res);
	ret = pw_loop(w, sfd, deadline, &pid);
	*res = w->res;
	if (ret == -ETIMEDOUT && res->denied)
		ret = -EPERM;
	else if (ret == -ETIMEDOUT)
		res->pid = 0;
	procwatch_close(w);
	if (sfd >= 0)
		close(sfd);
	return ret == 1 ? 0 : ret;
}
