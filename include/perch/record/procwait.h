/* Watching for processes as they start: every new process whose name matches, once, as soon
 * as perch may attach to it (`perch record --app NAME` takes the app's processes that start
 * while it records), and waiting for the first one (`perch record --wait NAME`). Names come
 * from /proc (comm, argv[0] of
 * cmdline, which is also where Android writes an app's process name); new processes are
 * learnt from the kernel's process events (netlink proc connector: fork, exec and comm
 * changes, with their time) when perch may listen to them (any user since Linux 6.6, else
 * CAP_NET_ADMIN), else by polling /proc cheaply: the pids handed out since the last poll
 * (/proc/loadavg's last field) are looked up one by one, and the whole directory is read only
 * when many came, and once a second. Attaching is left to the caller (tracee.c). */
#ifndef PERCH_PROCWAIT_H
#define PERCH_PROCWAIT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCWAIT_DEFAULT_POLL_US 1000 /* /proc polling period */

struct procwait_result;

struct procwait_opts {
	const char *name;     /* what to wait for (procwait_name_matches()) */
	double timeout_s;     /* 0: wait until a signal */
	unsigned int poll_us; /* /proc polling period (0: PROCWAIT_DEFAULT_POLL_US) */
	int no_netlink;	      /* poll /proc even when process events are available */
	const sigset_t *stop; /* signals that end the wait; the caller has them blocked
			       * (NULL: none) */
	/* Optional: called once what runs now is known (processes started from then on are
	 * new), with the result so far (@how, @ignored). */
	void (*ready)(void *arg, const struct procwait_result *res);
	void *arg;
};

enum procwait_how {
	PROCWAIT_NETLINK = 1, /* kernel process events */
	PROCWAIT_POLL,	      /* /proc polling */
};

struct procwait_result {
	pid_t pid;
	enum procwait_how how;
	uint64_t start_ns;    /* CLOCK_MONOTONIC when the wait began */
	uint64_t appeared_ns; /* CLOCK_MONOTONIC when a process of that name came to be: the
			       * kernel's time of its fork, exec or rename (events); with polling
			       * the last poll that did not see it yet, so that the time from
			       * there is an upper bound */
	uint64_t found_ns;    /* when it was seen with that name */
	uint64_t ready_ns;    /* when perch could attach (after it was not allowed to: an
			       * Android app until zygote has made it the app's and dumpable) */
	unsigned int denied;  /* attach checks refused before @ready_ns (EPERM/EACCES) */
	size_t ignored;	      /* processes of that name already running when the wait began */
	pid_t ignored_pid;    /* one of them */
	uint64_t scans;	      /* /proc directory reads */
	uint64_t events;      /* kernel process events read */
	int signal;	      /* the signal that ended the wait (-EINTR) */
};

enum procwait_match {
	PROCWAIT_NO = 0,
	PROCWAIT_YES = 1,
	PROCWAIT_MAYBE = 2, /* only a truncated comm (15 characters) matches: look again, its
			     * cmdline may not carry the name yet (Android renames the process
			     * after fork) */
};

/* Does a process with name @comm (/proc/PID/comm without newline) and command line @cmdline
 * (@len bytes of /proc/PID/cmdline: NUL-separated arguments) match @name? Yes when @name is
 * its comm, its argv[0], or the last path component of argv[0]. */
enum procwait_match procwait_name_matches(const char *name, const char *comm, const char *cmdline,
					  size_t len);
/* As an app (`perch record --app NAME`): procwait_name_matches()'s YES, or argv[0] is
 * "NAME:SUFFIX" without a '/' (an Android app's other processes, android:process=":remote"). */
int procwait_app_matches(const char *name, const char *comm, const char *cmdline, size_t len);
/* The processes running now that match @name as an app, ascending, perch itself left out:
 * how many (*@pids, to free()), or -errno. */
int procwait_list_app(const char *name, pid_t **pids);
/* The same for the live process @pid. PROCWAIT_NO when it is gone. */
enum procwait_match procwait_check(pid_t pid, const char *name);
/* May perch attach to @pid now (the kernel's ptrace access check, made by opening
 * /proc/PID/mem)? 0, -EPERM/-EACCES (not yet, or never), -ESRCH (gone). */
int procwait_attachable(pid_t pid);

struct procwatch;

struct procwatch_opts {
	const char *name;     /* what to watch for; borrowed: it must outlive the watcher */
	int app;	      /* match as an app (procwait_app_matches()), else as
			       * procwait_name_matches() */
	unsigned int poll_us; /* /proc polling period (0: PROCWAIT_DEFAULT_POLL_US) */
	int no_netlink;	      /* poll /proc even when process events are available */
};

/* Start watching. The processes that match now are old: never reported (except one that
 * started in the same clock tick), the caller lists them (procwait_list_app()) after this
 * call, so that none that starts in between is missed (it may be both listed and reported).
 * Never NULL. */
struct procwatch *procwatch_open(const struct procwatch_opts *o);
/* Look for new processes without blocking (@now: CLOCK_MONOTONIC ns, 0 to read the clock):
 * 1 with *@pid a new matching process perch may attach to now, 0 when there is none now.
 * Each process is reported once; one that matches but may not be attached to yet (an Android
 * app before zygote has made it the app's) is reported when it may. Looks at /proc or the
 * process events at most every half polling period: call it as often as new processes should
 * be seen, and again at once while it returns 1. */
int procwatch_next(struct procwatch *w, uint64_t now, pid_t *pid);
/* How it learns of processes (@how), its statistics, and the last process reported (@pid,
 * @appeared_ns, @found_ns, @ready_ns). Borrowed: valid until procwatch_close(). */
const struct procwait_result *procwatch_result(const struct procwatch *w);
/* procwatch_close(NULL) does nothing. */
void procwatch_close(struct procwatch *w);

/* Wait for a process named @o->name that was not running when the wait began (or started
 * just then) and that perch may attach to: the first one a watcher reports. Processes of that name
 * already running are left alone (counted in @res->ignored). 0 with @res filled; -ETIMEDOUT after
 * @o->timeout_s (a process that matched but stayed not attachable: -EPERM, @res->pid set); -EINTR
 * when a signal of @o->stop came (@res->signal); -errno. No message is printed: the caller says
 * what happened. */
int procwait_run(const struct procwait_opts *o, struct procwait_result *res);

#endif
