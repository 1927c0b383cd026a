/* CPU holders: the sampler's way to take a running thread's sample where the thread was when
 * the tick fired, not where it noticed the stop.
 *
 * Why: PTRACE_INTERRUPT marks the thread at once (TIF_SIGPENDING) but reaches a thread that runs
 * on another CPU only through an IPI, 40-80 us later on the project VMs (ptrace-stop seen with a
 * busy-polling tracer, 2026-11-22). Every return to user mode checks the mark, so a thread that
 * enters any system call within that window stops at the call's exit: each system call gains
 * the IPI latency as apparent time (a target with 4.5% of its time in cached preads showed
 * 25-28% of perch's samples in pread; docs-pending/truth.md). No per-sample check from outside
 * can undo it: /proc/TID/syscall says "running", stat's kstkeip is 0, and the thread CPU clock
 * of another process is refused (EINVAL) while schedstat is only updated at the scheduler tick.
 *
 * The fix is to make the tick a local interrupt on the thread's CPU, as perf's hrtimer is: a
 * holder thread pinned to that CPU sleeps until the tick on its own timer, and its wakeup
 * preempts the target thread right where it is (in user mode at the timer interrupt; inside a
 * system call it is preempted at that call's exit, which is then the right place). Holders run
 * SCHED_FIFO when allowed: a woken real-time thread preempts a normal one at once, where a
 * niced normal thread's wakeup (the fallback) may wait for the target's slice to end under
 * EEVDF (Linux 6.6 on): with nice -5 holders 20-40% of the holds came too late and the bias
 * came back (+0.5 to +10 points on the sysbias test, 2026-11-26; SCHED_FIFO: 98% held). The holder
 * then keeps the CPU busy until the ptrace thread has sent its PTRACE_INTERRUPTs (to a thread
 * that is not running: no IPI, no window), and the thread stops where it was preempted.
 * The ptrace thread's own CPU needs no holder: while it runs, no target thread does there.
 *
 * Holders exist only for CPUs on which target threads that needed a hold were running at the
 * previous tick (see SAMPLER_HOLD_QUIET), so idle and CPU-bound threads cost nothing here;
 * an unarmed holder sleeps until it is armed, not woken by each tick. A hold lasts until the
 * interrupts are sent or at most SAMPLER_HOLD_MAX_NS or a quarter of the sampling period, whichever
 * is shorter (a real-time holder must never starve its CPU). The ptrace thread publishes each
 * tick's time before it fires. */
#ifndef PERCH_SAMPLER_HOLD_H
#define PERCH_SAMPLER_HOLD_H

#include <stdint.h>

#define SAMPLER_HOLD_MAX_CPUS 256
#define SAMPLER_HOLD_MAX_NS   1000000ULL /* a holder never spins longer than this */
/* A running thread whose last SAMPLER_HOLD_QUIET stops all came in user code (perch_regs
 * from_kernel -1: no system call or fault crossed its stop window) is interrupted without a
 * hold: a CPU-bound thread gains nothing from one and a hold costs it two context switches a
 * tick (1 busy thread at 1000 Hz, six interleaved runs: +26.2% slowdown with a hold at every
 * tick, +17.5% with this rule; perf --call-graph dwarf +4.0%; 2026-11-26). Its
 * first stop at a kernel exit brings the holds back for the next SAMPLER_HOLD_QUIET stops, so
 * at most one sample in SAMPLER_HOLD_QUIET + 1 of such a thread can carry the bias. Not where
 * the architecture does not say how a thread came to its stop (aarch64): always held. */
#define SAMPLER_HOLD_QUIET 200
/* the ptrace thread waits for holders at most this long per tick (and at most 1/8 of the period) */
#define SAMPLER_HOLD_WAIT_NS 300000ULL

struct sampler_hold;

/* Holders for up to SAMPLER_HOLD_MAX_CPUS CPUs; no thread is started until a CPU is armed.
 * They run SCHED_FIFO at @rt_prio when allowed, else at nice @nice when allowed (either weaker
 * than or equal to the ptrace thread's); ticks come every @period_ns. With @stamps each holder
 * notes its task clock (proc_sched_read_exec_start()) as it takes its CPU, which is the
 * se.exec_start of the thread it preempted (cpu mode: sampler-cpu.c).
 * Sets the calling (ptrace) thread's timer slack to 1 ns so that both wake on time. */
struct sampler_hold *sampler_hold_new(int rt_prio, int nice, uint64_t period_ns, int stamps);
/* Stops and joins every holder. NULL does nothing. */
void sampler_hold_free(struct sampler_hold *h);

/* The next tick will fire at CLOCK_MONOTONIC @fire_ns: armed holders sleep until @lead_ns
 * before it (their timers wake them late by about as much as the ptrace thread's) and hold
 * their CPUs from then on. */
void sampler_hold_publish(struct sampler_hold *h, uint64_t fire_ns, uint64_t lead_ns);
/* Hold (from the next published tick on) exactly the CPUs set in @want[0..n) (non-zero = hold),
 * except the calling thread's current CPU. Starts holder threads as needed. */
void sampler_hold_arm(struct sampler_hold *h, const unsigned char *want, int n);
/* Tick @fire_ns is being served by the calling thread, which now runs on CPU @self. Is @cpu
 * held for it (waiting until CLOCK_MONOTONIC @deadline_ns for its holder to get there)? 1
 * when a thread that ran on @cpu is not running now: its holder or the caller is on it. With
 * @taken (may be NULL): the holder's task clock when it took the CPU (0: no stamps, not
 * known, or @cpu is @self). */
int sampler_hold_wait(struct sampler_hold *h, int cpu, int self, uint64_t fire_ns,
		      uint64_t deadline_ns, uint64_t *taken);
/* Every interrupt of tick @fire_ns was sent: let the holders go. */
void sampler_hold_release(struct sampler_hold *h, uint64_t fire_ns);
/* Spin until CLOCK_MONOTONIC @ns (the last microseconds before a tick). */
void sampler_spin_until(uint64_t ns);

#endif
