/* dump target: three threads blocked in known places, for `perch dump` against gdb. */
#ifndef PERCH_TARGET_DUMP_H
#define PERCH_TARGET_DUMP_H

#define DUMP_NOINLINE __attribute__((noinline, noclone))

/* Sleep in nanosleep() slices until CLOCK_MONOTONIC reaches @until. */
int dump_sleeper_wait(double until);
/* Block in read() on @fd until a byte or EOF arrives. */
int dump_reader_wait(int fd);

#endif
