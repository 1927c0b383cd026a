/* Helpers shared by the fault-injection suites (see faults.h). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "faults.h"

const char *faults_perch_fault(void)
{
	const char *p = getenv("PERCH_FAULT");

	H_ASSERT(p && !access(p, X_OK),
		 "PERCH_FAULT=%s is not an executable (run through "
		 "`make check-faults`)",
		 p ? p : "(unset)");
	return p;
}

static uint64_t rng_state;

uint64_t faults_rand(uint64_t lo, uint64_t hi)
{
	uint64_t x;

	if (!rng_state) {
		const char *s = getenv("FAULTS_SEED");
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		rng_state =
		    s ? strtoull(s, NULL, 0)
		      : (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
		if (!rng_state)
			rng_state = 1;
		harness_context_add("random seed: FAULTS_SEED=%llu\n",
				    (unsigned long long)rng_state);
	}
	/* xorshift64* */
	x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	x *= 2685821657736338717ULL;
	return hi > lo ? lo + x % (hi - lo + 1) : lo;
}

void faults_assert_released_at(pid_t pid, double timeout, int allow_stopped, const char *file,
			       int line)
{
	double end = harness_now() + timeout;
	char states[256];
	int n, tracer;

	for (;;) {
		n = harness_task_states(pid, states, sizeof(states));
		tracer = harness_tracer_pid(pid);
		if (tracer == 0 && n > 0 && !strchr(states, 't') &&
		    (allow_stopped || !strchr(states, 'T')))
			return;
		if (harness_now() > end)
			harness_fail(
			    file, line, "released",
			    "%.1f s after perch ended, target %d: TracerPid %d, task states "
			    "\"%s\"",
			    timeout, (int)pid, tracer, n > 0 ? states : "(gone)");
		harness_sleep(0.005);
	}
}

void faults_assert_runs_at(pid_t pid, long long ticks, double timeout, const char *file, int line)
{
	long long t0 = harness_cpu_ticks(pid), t1 = t0;
	double end = harness_now() + timeout;

	while (harness_now() < end) {
		harness_sleep(0.01);
		t1 = harness_cpu_ticks(pid);
		if (t0 >= 0 && t1 - t0 >= ticks)
			return;
	}
	harness_fail(file, line, "runs", "target %d used %lld clock ticks in %.2f s (want %lld)",
		     (int)pid, t0 < 0 || t1 < 0 ? -1 : t1 - t0, timeout, ticks);
}

/* Threads of @pid in state 't' right now, into @tids (at most @max). */
static int stopped_tids(pid_t pid, pid_t *tids, int max)
{
	char path[320], buf[512];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < max) {
		const char *rp;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) && rp[1] == ' ' &&
		    rp[2] == 't')
			tids[n++] = (pid_t)atoi(de->d_name);
		fclose(f);
	}
	closedir(d);
	return n;
}

#define WATCH_MAX 64

void faults_watch_until_exit_at(struct harness_proc *p, pid_t pid, double timeout, double max_stop,
				struct faults_watch *w, const char *file, int line)
{
	pid_t seen[WATCH_MAX], now[WATCH_MAX];
	double since[WATCH_MAX], nsince[WATCH_MAX], end = harness_now() + timeout;
	int nseen = 0, n;

	memset(w, 0, sizeof(*w));
	while (harness_proc_wait(p, 0.005) != 0) {
		double t = harness_now();

		if (t > end)
			harness_fail(file, line, "exit", "%s did not exit within %.0f s", p->label,
				     timeout);
		n = stopped_tids(pid, now, WATCH_MAX);
		w->polls++;
		for (int i = 0; i < n; i++) {
			nsince[i] = t;
			for (int j = 0; j < nseen; j++)
				if (seen[j] == now[i])
					nsince[i] = since[j];
			if (t - nsince[i] > w->longest) {
				w->longest = t - nsince[i];
				w->longest_tid = now[i];
			}
		}
		nseen = n < 0 ? 0 : n;
		memcpy(seen, now, sizeof(pid_t) * (size_t)nseen);
		memcpy(since, nsince, sizeof(double) * (size_t)nseen);
		if (w->longest > max_stop)
			harness_fail(file, line, "stopped",
				     "thread %d of %d has been in tracing stop 't' for %.2f s",
				     (int)w->longest_tid, (int)pid, w->longest);
	}
}

void faults_assert_quiet_at(struct harness_proc *perch, const char *file, int line)
{
	static const char *const bad[] = {"error:",	   "fatal:",	    "AddressSanitizer",
					  "runtime error", "LeakSanitizer", "BUG"};
	const char *err = perch->err.buf ? perch->err.buf : "";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(err, bad[i]))
			harness_fail(file, line, "quiet", "perch printed \"%s\"", bad[i]);
}

long long faults_field(const char *text, const char *key)
{
	const char *s = text ? strstr(text, key) : NULL;

	return s ? strtoll(s + strlen(key), NULL, 10) : -1;
}

void faults_victim_check_at(struct harness_proc *t, int stop, int all_ran, const char *file,
			    int line)
{
	long r[3], bad, spawned;
	const char *l;

	if (stop)
		harness_proc_kill(t, SIGTERM);
	if (harness_proc_wait(t, 10))
		harness_fail(file, line, "victim",
			     "the victim did not exit within 10 s of SIGTERM");
	l = harness_proc_wait_line(t, "victim rounds ", 0);
	if (!l ||
	    sscanf(l, "%ld %ld %ld bad %ld spawned %ld", &r[0], &r[1], &r[2], &bad, &spawned) != 5)
		harness_fail(file, line, "victim", "no result line from the victim (exit %d)",
			     harness_proc_exit_code(t));
	if (harness_proc_exit_code(t) != 0 || bad || (all_ran && (!r[0] || !r[1] || !r[2])))
		harness_fail(file, line, "victim",
			     "victim exit %d, rounds %ld %ld %ld, bad %ld (want exit 0, every "
			     "thread > 0 rounds, 0 bad)",
			     harness_proc_exit_code(t), r[0], r[1], r[2], bad);
}
