/* states target: the functions its threads and children wait or spin in, each in its own
 * translation unit (states_wait.c) so the stacks perch finds are known. */
#ifndef PERCH_TARGET_STATES_H
#define PERCH_TARGET_STATES_H

#define STATES_NOINLINE __attribute__((noinline, noclone))

/* Burn CPU until CLOCK_MONOTONIC reaches @until (forever when @until is 0). */
long states_spin(double until);
/* The same, in a forked child. */
long states_child_spin(double until);
/* Block in read() on @fd until a byte or EOF arrives; returns read()'s result. */
int states_reader_wait(int fd);
/* Sleep in nanosleep() slices until the flag at @stop is set. */
void states_helper_wait(volatile int *stop);
/* Wait on a condition variable that is never signalled before exit. */
void states_idle_wait(void);
/* vfork(): the parent sleeps uninterruptibly (D) in it until the child execs. */
int states_vfork_parent(const char *self);

#endif
