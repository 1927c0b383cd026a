/* Per-process and per-thread facts from /proc: thread list, names, stat and status fields.
 * Every reader has a *_parse() twin that takes text, so it can be tested on fixtures. */
#ifndef PERCH_PROC_TASK_H
#define PERCH_PROC_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/PID/task/TID/stat, the fields perch uses:
 *   1234 (comm with) spaces) R 1 1234 ... utime stime ... processor ...
 */
struct proc_stat {
	pid_t pid;
	char comm[64]; /* between the first '(' and the LAST ')' */
	char state;    /* 'R', 'S', 'D', 'T', 't', 'Z', 'X', 'I', ... */
	pid_t ppid;
	uint64_t utime, stime; /* clock ticks */
	uint64_t starttime;    /* clock ticks since boot */
	uint64_t num_threads;
	int processor; /* CPU last run on */
};

/* /proc/PID/status, the fields perch uses */
struct proc_status {
	char name[64];
	char state; /* first letter of "State:" */
	pid_t tgid;
	pid_t tracer_pid; /* TracerPid: 0 when not traced */
	uid_t uid_real, uid_effective;
	int64_t threads;  /* Threads: (-1 when the line is absent) */
	uint64_t cap_eff; /* CapEff: bit mask */
	pid_t ns_pid;	  /* NSpid's last value: its id inside its own PID namespace (the
			   * Tgid/Pid seen here when it is in ours, or without NSpid) */
};

/* 0 or -EINVAL for malformed text. proc_status_parse() needs at least Name, State and Tgid. */
int proc_stat_parse(const char *text, struct proc_stat *out);
int proc_status_parse(const char *text, struct proc_status *out);

/* /proc/PID/task/TID/sched (CONFIG_SCHED_DEBUG; always there since Linux 6.16), the line perch
 * uses:
 *   se.exec_start                                :       1416738.059032
 * the run queue's task clock (ns, printed as ms.ns) when the thread last started running or its
 * run time was last accounted: for a thread preempted by another, the moment of the switch,
 * which the thread that took the CPU also has as its own exec_start (both come from one clock
 * read in __schedule()). *@ns in nanoseconds; 0, or -EINVAL when the line is missing. */
int proc_sched_exec_start(const char *text, uint64_t *ns);
/* The same from an open sched file @fd (read again from its start): 0 when it cannot be read.
 * proc_sched_open_self() opens the calling thread's own (/proc/thread-self/sched), or returns
 * -1 where the kernel has none or it does not hold the line. */
uint64_t proc_sched_read_exec_start(int fd);
int proc_sched_open_self(void);

/* Read /proc/@pid/stat (@tid == 0) or /proc/@pid/task/@tid/stat. 0 or -errno. */
int proc_stat_read(pid_t pid, pid_t tid, struct proc_stat *out);
/* The stat files of a process's threads kept open across reads, so that reading a thread again
 * is one pread() instead of open, read and close: for a collector that reads every thread many
 * times a second. At most PROC_STAT_FILES_MAX are kept; past that a read opens and closes. */
#define PROC_STAT_FILES_MAX 512
struct proc_stat_files {
	pid_t pid;
	struct proc_stat_file {
		pid_t tid;
		int fd;
	} * f; /* sorted by tid */
	size_t nr, alloc;
};

void proc_stat_files_init(struct proc_stat_files *sf, pid_t pid);
void proc_stat_files_release(struct proc_stat_files *sf);
/* /proc/PID/task/@tid/stat through its kept file (opened on first use; a thread that exited
 * has its file closed, and a new thread of a reused tid gets a new one). 0 or -errno. */
int proc_stat_files_read(struct proc_stat_files *sf, pid_t tid, struct proc_stat *out);
/* Close the files of the threads not in @tids (sorted ascending, @n of them). */
void proc_stat_files_keep(struct proc_stat_files *sf, const pid_t *tids, size_t n);
/* The threads to read now, sorted ascending, into *@tids (malloc'ed): the kept files' own when
 * there are @num_threads of them (the process's stat's, read just before; a file whose read
 * failed is closed, so a thread that exited makes the counts differ); otherwise /proc/PID/task
 * listed again, and the files of the threads gone closed. Listing costs the kernel a lookup per
 * thread: a collector that reads 200 threads ten times a second spent a tenth of its time there.
 * Count or -errno. */
int proc_stat_files_tids(struct proc_stat_files *sf, uint64_t num_threads, pid_t **tids);

/* Read /proc/@pid/status (@tid == 0) or the task's. 0 or -errno. */
int proc_status_read(pid_t pid, pid_t tid, struct proc_status *out);

/* The thread ids in /proc/@pid/task, sorted ascending. Returns the count (>= 0) with *@tids
 * malloc'ed (caller frees), or -errno. */
int proc_task_list(pid_t pid, pid_t **tids);
/* The same for any directory laid out like /proc/PID/task (numeric entries; others are
 * ignored), so fixtures can be listed. */
int proc_task_list_dir(const char *dir, pid_t **tids);

/* Thread name from /proc/@pid/task/@tid/comm, newline stripped, into @buf (at most @len - 1
 * chars). 0 or -errno. */
int proc_task_comm(pid_t pid, pid_t tid, char *buf, size_t len);
/* The same from a comm file at @path (a fixture). 0 or -errno. */
int proc_task_comm_file(const char *path, char *buf, size_t len);
/* The path of @pid's program (the link /proc/@pid/exe) into @buf. 0, or -errno (-ENAMETOOLONG
 * when it does not fit in @len - 1 chars). */
int proc_task_exe(pid_t pid, char *buf, size_t len);

/* A process whose main thread called pthread_exit() keeps a zombie leader: its /proc/PID
 * maps, smaps and smaps_rollup are empty or fail while its other threads run on. The path
 * of @file ("maps") through a live thread, "/proc/PID/task/TID/FILE", allocated; NULL when the
 * leader is not a zombie (or no thread is alive). For a fallback after /proc/PID/@file read
 * empty: two small reads more, only then. */
char *proc_live_task_path(pid_t pid, const char *file);

/* Read a whole small /proc file into a malloc'ed NUL-terminated buffer. NULL with errno set. */
char *proc_read_file(const char *path, size_t *len);

#endif
