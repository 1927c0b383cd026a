/* Call chains of the C oracle program, one per thread (see real_main.c). The empty asm after
 * each call keeps the call from being a tail call, except in tail_b, where -O2 makes it one. */
#include <signal.h>

#include "real.h"

#define KEEP() __asm__ volatile("" ::: "memory")

/* reader: rd_a -> rd_b -> rd_c (inlined into rd_b) -> block_read -> read */
static inline __attribute__((always_inline)) void rd_c(int fd)
{
	block_read(fd + real_sink);
	KEEP();
}

NOINLINE static void rd_b(int fd)
{
	rd_c(fd);
	KEEP();
}

NOINLINE void rd_a(int fd)
{
	rd_b(fd);
	KEEP();
}

/* sleeper: sl_a -> sl_b -> block_sleep -> nanosleep */
NOINLINE static void sl_b(void)
{
	block_sleep();
	KEEP();
}

NOINLINE void sl_a(void)
{
	sl_b();
	KEEP();
}

/* sem: sm_a -> sm_b -> block_sem -> sem_wait */
NOINLINE static void sm_b(void)
{
	block_sem();
	KEEP();
}

NOINLINE void sm_a(void)
{
	sm_b();
	KEEP();
}

/* cond: cv_a -> block_cond -> pthread_cond_wait */
NOINLINE void cv_a(void)
{
	block_cond();
	KEEP();
}

/* deep: rec(n) -> rec(n - 1) -> ... -> rec(0) -> block_read: n + 1 frames of rec */
NOINLINE int rec(int n, int fd)
{
	int r;

	if (n == 0) {
		block_read(fd);
		r = real_sink;
	} else {
		r = rec(n - 1, fd);
	}
	__asm__ volatile("" : "+r"(r)::"memory");
	return r + 1;
}

/* tail: tail_a -> tail_b => block_read_tail (a sibling call from -O2 on: tail_b's frame is
 * gone from the stack and only DWARF call-site information brings it back) */
NOINLINE static int tail_b(int fd)
{
	return block_read_tail(fd + real_sink);
}

NOINLINE void tail_a(int fd)
{
	real_sink += tail_b(fd);
	KEEP();
}

/* sig: sg_a -> sg_b -> raise(SIGUSR1) -> [signal frame] -> handler -> sg_h -> block_read */
NOINLINE static void sg_b(void)
{
	raise(SIGUSR1);
	KEEP();
}

NOINLINE void sg_a(void)
{
	sg_b();
	KEEP();
}

NOINLINE void sg_h(int fd)
{
	block_read(fd);
	KEEP();
}

/* poll: pl_a -> block_poll -> poll */
NOINLINE void pl_a(int fd)
{
	block_poll(fd);
	KEEP();
}
