/* The file descriptor budget: see include/perch/base/fdlimit.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "perch/base/fdlimit.h"
#include "perch/base/log.h"

static struct rlimit original;
static int raised;

void fdlimit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		original = rl;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			raised = 1;
	}
	fdlimit_reserve(FDLIMIT_AT_START);
}

static unsigned long failures;

void fdlimit_note_failure(int err)
{
	if (err == EMFILE || err == ENFILE)
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

unsigned long fdlimit_failures(void)
{
	return __atomic_load_n(&failures, __ATOMIC_RELAXED);
}

void fdlimit_restore(void)
{
	if (raised)
		setrlimit(RLIMIT_NOFILE, &original);
}

void fdlimit_reserve(size_t n)
{
	struct rlimit rl;
	int any, fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur != RLIM_INFINITY && n >= rl.rlim_cur)
		n = (size_t)rl.rlim_cur - 1;
	if (n < 64 || n > (size_t)INT32_MAX)
		return; /* (the table starts with 64) */
	/* the lowest free descriptor >= n - 1: the table grows to hold it, and stays grown */
	any = open("/", O_PATH | O_CLOEXEC);
	fd = any < 0 ? -1 : fcntl(any, F_DUPFD_CLOEXEC, (int)(n - 1));
	if (fd < 0)
		log_debug("cannot grow the descriptor table to %zu: %s", n, strerror(errno));
	else
		close(fd);
	if (any >= 0)
		close(any);
}

/* (SIZE_MAX: not set yet) */
static size_t keep_budget = SIZE_MAX, kept;

void fdlimit_keep_budget(void)
{
	struct rlimit rl;
	size_t open_now = 0, limit, budget = SIZE_MAX - 1;
	DIR *d;
	struct dirent *e;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		d = opendir("/proc/self/fd");
		while (d && (e = readdir(d)))
			open_now += e->d_name[0] != '.';
		if (d)
			closedir(d);
		limit = (size_t)rl.rlim_cur;
		budget = limit > open_now + FDLIMIT_SPARE ? limit - open_now - FDLIMIT_SPARE : 0;
		/* (the ones kept already were open now: they count against it again) */
		budget += __atomic_load_n(&kept, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&keep_budget, budget, __ATOMIC_RELAXED);
}

int fdlimit_keep(void)
{
	size_t n = __atomic_load_n(&kept, __ATOMIC_RELAXED);

	if (__atomic_load_n(&keep_budget, __ATOMIC_RELAXED) == SIZE_MAX)
		fdlimit_keep_budget();
	do {
		if (n >= __atomic_load_n(&keep_budget, __ATOMIC_RELAXED))
			return 0;
	} while (
	    !__atomic_compare_exchange_n(&kept, &n, n + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return 1;
}

void fdlimit_unkeep(void)
{
	__atomic_sub_fetch(&kept, 1, __ATOMIC_RELAXED);
}

size_t fdlimit_kept(void)
{
	return __atomic_load_n(&kept, __ATOMIC_RELAXED);
}
