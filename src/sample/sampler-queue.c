/* The queue between the sampler's ptrace thread and its worker: items (snapshots, reused
 * stacks, thread events) move free -> ring -> worker -> free; the worker hands them to the
 * caller's ops in order. */
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "sampler-int.h"

/* ---- the queue ---- */
void sampler_queue_init(struct queue *q, size_t cap, size_t stack_size, int verify)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->wake, NULL);
	pthread_cond_init(&q->freed, NULL);
	q->cap = cap;
	q->items = xcalloc(cap, sizeof(*q->items));
	q->ring = xcalloc(cap, sizeof(*q->ring));
	q->free = xcalloc(cap, sizeof(*q->free));
	/* one block (a mapping whose pages come as they are used): 512 separate buffers grow
	 * the heap a brk at a time, tens of ms before the first tick on a busy host */
	size_t bytes = stack_size ? stack_size : 1;

	q->stacks = xmalloc(cap * bytes);
	for (size_t i = 0; i < cap; i++) {
		q->items[i].snap.stack = q->stacks + i * bytes;
		q->items[i].snap.stack_cap = stack_size;
		if (verify)
			q->items[i].verify = xcalloc(SAMPLER_VERIFY_MAX, sizeof(uint64_t));
		q->free[q->nr_free++] = &q->items[i];
	}
}

void sampler_queue_release(struct queue *q)
{
	for (size_t i = 0; i < q->cap; i++)
		free(q->items[i].verify);
	free(q->stacks);
	free(q->items);
	free(q->ring);
	free(q->free);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->wake);
	pthread_cond_destroy(&q->freed);
}

/* A free item, or NULL when the worker is a whole queue behind. */
struct item *sampler_queue_get_free(struct queue *q)
{
	struct item *it = NULL;

	pthread_mutex_lock(&q->lock);
	if (q->nr_free)
		it = q->free[--q->nr_free];
	pthread_mutex_unlock(&q->lock);
	return it;
}

void sampler_queue_push(struct queue *q, struct item *it)
{
	pthread_mutex_lock(&q->lock);
	q->ring[(q->head + q->len) % q->cap] = it;
	q->len++;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

/* The same without waking the worker: reused stacks (one per blocked thread) and snapshots
 * come many per tick, and each wakeup costs the ptrace thread two system calls and a switch
 * (with every thread stopped at every tick, --no-idle-reuse, a wakeup per snapshot doubled
 * the target's slowdown); sampler_queue_wake() once per tick and once per pass of the main loop. */
void sampler_queue_push_nowake(struct queue *q, struct item *it)
{
	pthread_mutex_lock(&q->lock);
	q->ring[(q->head + q->len) % q->cap] = it;
	q->len++;
	pthread_mutex_unlock(&q->lock);
}

void sampler_queue_wake(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	if (q->len)
		pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

/* Hand one item to the caller's ops. */
static void worker_do(struct worker *w, struct item *it)
{
	if (it->kind == ITEM_SAMPLE || it->kind == ITEM_REUSE) {
		struct sampler_info info = {
		    .pid = it->pid,
		    .arch = it->arch,
		    .tid = it->tid,
		    .weight = it->weight,
		    .state = it->state,
		    .syscall = it->has_syscall ? it->syscall : NULL,
		    .comm = it->comm,
		    .ran = it->ran,
		    .time_ns = it->snap.time_ns,
		    .verify_pcs = it->verify,
		    .nr_verify = it->verify ? it->nr_verify : -1,
		};

		if (it->kind == ITEM_SAMPLE)
			w->ops->sample(w->arg, &info, &it->snap);
		else
			w->ops->reuse(w->arg, &info, it->site_sp, it->site_pc);
	} else if (w->ops->event) {
		struct sampler_event ev = {
		    .kind = it->kind, .pid = it->pid, .tid = it->tid, .arch = it->arch};

		w->ops->event(w->arg, &ev);
	}
}

/* The worker: takes the queued items a few at a time (each lock the ptrace thread finds
 * taken costs it a sleep), hands them on in order, gives them back together. */
void *sampler_worker_main(void *p)
{
	struct worker *w = p;
	struct queue *q = &w->q;
	struct item *batch[SAMPLER_WORKER_BATCH];

	pthread_mutex_lock(&q->lock);
	for (;;) {
		size_t n = 0;

		while (!q->len && !q->done)
			pthread_cond_wait(&q->wake, &q->lock);
		if (!q->len)
			break;
		while (q->len && n < SAMPLER_WORKER_BATCH) {
			batch[n++] = q->ring[q->head];
			q->head = (q->head + 1) % q->cap;
			q->len--;
		}
		pthread_mutex_unlock(&q->lock);
		for (size_t i = 0; i < n; i++)
			worker_do(w, batch[i]);
		pthread_mutex_lock(&q->lock);
		for (size_t i = 0; i < n; i++)
			q->free[q->nr_free++] = batch[i];
		pthread_cond_signal(&q->freed);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

void sampler_queue_push_free(struct queue *q, struct item *it)
{
	pthread_mutex_lock(&q->lock);
	q->free[q->nr_free++] = it;
	pthread_mutex_unlock(&q->lock);
}

/* Wait (@q locked) until the worker gives an item back. Items pushed without a wakeup
 * (sampler_queue_push_nowake()) may fill the whole queue before the worker is woken: it is woken
 * here, or both threads would wait for each other for ever. */
static void wait_freed(struct queue *q)
{
	if (q->len)
		pthread_cond_signal(&q->wake);
	pthread_cond_wait(&q->freed, &q->lock);
}

/* A free item for an event: unlike a sample, an event is never dropped (the worker's view of
 * the processes, their programs and architectures depends on every one): when the worker is
 * a whole queue behind, wait for it to give one back (it does, one sample at a time). */
struct item *sampler_queue_get_free_wait(struct queue *q)
{
	struct item *it;

	pthread_mutex_lock(&q->lock);
	while (!q->nr_free)
		wait_freed(q);
	it = q->free[--q->nr_free];
	pthread_mutex_unlock(&q->lock);
	return it;
}

/* Wait until the worker gave an item back (only the ptrace thread takes free ones). */
void sampler_queue_wait_free(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	while (!q->nr_free)
		wait_freed(q);
	pthread_mutex_unlock(&q->lock);
}
