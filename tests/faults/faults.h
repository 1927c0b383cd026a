/* Helpers shared by the fault-injection suites (tests/faults): on top of the e2e harness
 * (tests/e2e/harness.h), checks that a target was left alone by a perch that ended (well or
 * badly), a watchdog for threads stuck in a tracing stop, and a seeded random source whose
 * seed is printed with any failure so a run can be replayed (FAULTS_SEED=N). */
#ifndef PERCH_FAULTS_H
#define PERCH_FAULTS_H

#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

/* $PERCH_FAULT: perch built with -DPERCH_FAULT_INJECTION. */
const char *faults_perch_fault(void);

/* A random number in [lo, hi], from FAULTS_SEED or the clock (added to the failure context). */
uint64_t faults_rand(uint64_t lo, uint64_t hi);

/* Within @timeout: TracerPid 0 and no task of @pid in 't' (nor 'T' unless @allow_stopped). */
void faults_assert_released_at(pid_t pid, double timeout, int allow_stopped, const char *file,
			       int line);
#define faults_assert_released(pid, timeout, allow_stopped)                                        \
	faults_assert_released_at((pid), (timeout), (allow_stopped), __FILE__, __LINE__)

/* The process keeps using CPU: at least @ticks clock ticks within @timeout seconds. */
void faults_assert_runs_at(pid_t pid, long long ticks, double timeout, const char *file, int line);
#define faults_assert_runs(pid, ticks, timeout)                                                    \
	faults_assert_runs_at((pid), (ticks), (timeout), __FILE__, __LINE__)

/* Watch @pid until @p exits or @timeout passes: fails when one task stays in the tracing stop
 * 't' for longer than @max_stop seconds (perch's own sampling stops last microseconds). */
struct faults_watch {
	double longest; /* longest continuous 't' seen, seconds */
	pid_t longest_tid;
	unsigned polls;
};
void faults_watch_until_exit_at(struct harness_proc *p, pid_t pid, double timeout, double max_stop,
				struct faults_watch *w, const char *file, int line);
#define faults_watch_until_exit(p, pid, timeout, max_stop, w)                                      \
	faults_watch_until_exit_at((p), (pid), (timeout), (max_stop), (w), __FILE__, __LINE__)

/* perch's stderr has no error, fatal or sanitizer message. */
void faults_assert_quiet_at(struct harness_proc *perch, const char *file, int line);
#define faults_assert_quiet(perch) faults_assert_quiet_at((perch), __FILE__, __LINE__)

/* The number after @key in @text ("threads seen: " -> N), or -1. */
long long faults_field(const char *text, const char *key);

/* "victim rounds R0 R1 R2 bad B spawned S" of tests/targets/faults_victim.c: no bad round,
 * exit 0, and with @all_ran every thread made rounds (not for a victim that lived a few ms on
 * a busy machine). Sends SIGTERM first when @stop. */
void faults_victim_check_at(struct harness_proc *t, int stop, int all_ran, const char *file,
			    int line);
#define faults_victim_check(t, stop, all_ran)                                                      \
	faults_victim_check_at((t), (stop), (all_ran), __FILE__, __LINE__)

#endif
