/* Helpers shared by the e2e target programs: ptrace permission, the ready handshake, clocks.
 * Targets never sleep() to synchronise with the test; they print "ready <pid>" instead. */
#ifndef PERCH_TARGET_COMMON_H
#define PERCH_TARGET_COMMON_H

#ifdef __cplusplus
extern "C" {
#endif

/* Let any process ptrace us (Yama's PR_SET_PTRACER); harmless where Yama is absent. */
void target_allow_ptrace(void);
/* Print "ready <pid>\n" on stdout and flush: every thread of the target is running. */
void target_ready(void);
/* CLOCK_MONOTONIC and this thread's CLOCK_THREAD_CPUTIME_ID, in seconds. */
double target_now(void);
double target_thread_cpu(void);
/* This thread's time on a CPU and waiting for one (run queue), in seconds, from
 * /proc/self/task/TID/schedstat: 0, or -1 when the file cannot be read (a line that does not
 * parse reads as 0 and 0). */
int target_schedstat(double *run_s, double *wait_s);
/* CLOCK_MONOTONIC in nanoseconds, and a sleep until such a time (restarted when interrupted). */
unsigned long long target_now_ns(void);
void target_sleep_until_ns(unsigned long long ns);
/* argv[i] as a number, or @def when absent; exits 64 on garbage. */
double target_arg(int argc, char **argv, int i, double def);

#ifdef __cplusplus
}
#endif

#endif
