/* threads4 target: four threads "wA".."wD" busy 100/70/40/10% of wall time in burn_a..burn_d. */
#ifndef PERCH_TARGET_THREADS4_H
#define PERCH_TARGET_THREADS4_H

#define THREADS4_NOINLINE __attribute__((noinline, noclone))

void burn_a(double until, unsigned long *state);
void burn_b(double until, unsigned long *state);
void burn_c(double until, unsigned long *state);
void burn_d(double until, unsigned long *state);

#endif
