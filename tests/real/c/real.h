/* The C oracle program (tests/real/c): every thread parks in a known blocking call at the end
 * of a known call chain. Split over three files so that no optimisation level inlines one
 * step into another across files; inside a file, steps are noinline except where a frame is
 * meant to be inline (rd_c) or a tail call (tail_b). */
#ifndef PERCH_REAL_H
#define PERCH_REAL_H

#include <pthread.h>
#include <semaphore.h>

#define NOINLINE __attribute__((noinline))

extern int real_pipe_rd[2];	/* never written: readers block forever */
extern sem_t real_sem;		/* never posted */
extern pthread_mutex_t real_mu;
extern pthread_cond_t real_cv;	/* never signalled */
extern volatile int real_sink;	/* defeats tail calls and constant propagation */

/* real_chain.c: the call chains, one per thread */
void rd_a(int fd);
void sl_a(void);
void sm_a(void);
void cv_a(void);
int rec(int n, int fd);
void tail_a(int fd);
void sg_a(void);
void sg_h(int fd);
void pl_a(int fd);

/* real_block.c: the leaves that call libc */
void block_read(int fd);
int block_read_tail(int fd);
void block_sleep(void);
void block_sem(void);
void block_cond(void);
void block_poll(int fd);

#endif
