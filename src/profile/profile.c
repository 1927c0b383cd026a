/* The profile: interned strings, frames, locations, stacks, threads and sample counts.
 * Everything is referred to by uint32_t ids into growable arrays; open-addressing hash
 * tables (of id + 1, 0 = empty slot) find existing entries. No I/O. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/xalloc.h"
#include "perch/profile/profile.h"

/* An open-addressing set of ids. The key of a slot is found through its id, so the table
 * holds only 4 bytes per slot; hash and equality come from the caller. */
struct idtab {
	uint32_t *slot; /* id + 1, 0 = empty */
	size_t mask;	/* capacity - 1; capacity is a power of two (0 when unallocated) */
	size_t nr;
};

typedef uint64_t idtab_hash_fn(const struct profile *p, uint32_t id);

struct count {
	uint32_t thread, stack;
	uint64_t count;
};

struct meta {
	char *key, *value;
};

struct profile {
	/* strings: NUL-terminated texts back to back in one buffer */
	char *str_data;
	size_t str_len, str_alloc;
	uint32_t *str_off;
	size_t str_nr, str_off_alloc;
	struct idtab str_tab;

	struct profile_frame *frames;
	size_t frames_nr, frames_alloc;
	struct idtab frame_tab;

	struct profile_location *locs;
	size_t locs_nr, locs_alloc;
	uint32_t *loc_frames; /* the frame ids of all locations, back to back */
	size_t loc_frames_nr, loc_frames_alloc;
	struct idtab loc_tab;

	/* stacks: location ids back to back; stack i is stack_data[stack_off[i] ..
	 * stack_off[i + 1]) */
	uint32_t *stack_data;
	size_t stack_data_nr, stack_data_alloc;
	uint32_t *stack_off;
	size_t stacks_nr, stack_off_alloc;
	struct idtab stack_tab;

	struct profile_thread *threads;
	size_t threads_nr, threads_alloc;
	struct idtab thread_tab;

	struct profile_process *procs;
	size_t procs_nr, procs_alloc;

	struct count *counts;
	size_t counts_nr, counts_alloc;
	struct idtab count_tab;
	uint64_t total;

	int keep_samples;
	struct profile_sample *samples;
	size_t samples_nr, samples_alloc;

	struct meta *meta;
	size_t meta_nr, meta_alloc;
};

/* Key being looked up; compared against the entry of an id. */
typedef int idtab_eq_fn(const struct profile *p, uint32_t id, const void *key);

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finalizer */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t hash_bytes(const void *data, size_t n)
{
	const unsigned char *s = data;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	while (n--) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return mix64(h);
}

static uint64_t hash_u32s(const uint32_t *v, size_t n)
{
	uint64_t h = mix64(n + 0x9e3779b97f4a7c15ULL);

	while (n--)
		h = mix64(h ^ *v++);
	return h;
}

/* The slot where @key lives or would go. */
static uint32_t *idtab_slot(const struct profile *p, const struct idtab *t, uint64_t h,
			    idtab_eq_fn *eq, const void *key)
{
	size_t i = (size_t)h & t->mask;

	for (;; i = (i + 1) & t->mask) {
		uint32_t *s = &t->slot[i];

		if (!*s || eq(p, *s - 1, key))
			return s;
	}
}

/* Find @key: its id, or UINT32_MAX. */
static uint32_t idtab_find(const struct profile *p, const struct idtab *t, uint64_t h,
			   idtab_eq_fn *eq, const void *key)
{
	uint32_t *s;

	if (!t->slot)
		return UINT32_MAX;
	s = idtab_slot(p, t, h, eq, key);
	return *s ? *s - 1 : UINT32_MAX;
}

static void idtab_grow(struct profile *p, struct idtab *t, idtab_hash_fn *hash)
{
	size_t cap = t->slot ? (t->mask + 1) * 2 : 64, i;
	uint32_t *old = t->slot;
	size_t old_cap = t->slot ? t->mask + 1 : 0;

	t->slot = xcalloc(cap, sizeof(*t->slot));
	t->mask = cap - 1;
	for (i = 0; i < old_cap; i++) {
		size_t j;

		if (!old[i])
			continue;
		for (j = (size_t)hash(p, old[i] - 1) & t->mask; t->slot[j]; j = (j + 1) & t->mask)
			;
		t->slot[j] = old[i];
	}
	free(old);
}

/* Add @id (whose key hashes to @h and is known to be absent). */
static void idtab_add(struct profile *p, struct idtab *t, uint64_t h, idtab_hash_fn *hash,
		      idtab_eq_fn *eq, const void *key, uint32_t id)
{
	/* keep the load factor under 1/2: probe chains stay short */
	if (!t->slot || (t->nr + 1) * 2 > t->mask + 1)
		idtab_grow(p, t, hash);
	*idtab_slot(p, t, h, eq, key) = id + 1;
	t->nr++;
}

static void idtab_release(struct idtab *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

/* Ids are uint32_t and UINT32_MAX means "none": refuse to hand out more. */
static uint32_t next_id(size_t nr, const char *what)
{
	if (nr >= UINT32_MAX - 1)
		die("profile: too many %s", what);
	return (uint32_t)nr;
}

/* strings */

static uint64_t str_hash_id(const struct profile *p, uint32_t id)
{
	const char *s = p->str_data + p->str_off[id];

	return hash_bytes(s, strlen(s));
}

static int str_eq(const struct profile *p, uint32_t id, const void *key)
{
	return !strcmp(p->str_data + p->str_off[id], key);
}

uint32_t profile_intern_str(struct profile *p, const char *s)
{
	size_t n = strlen(s);
	uint64_t h = hash_bytes(s, n);
	uint32_t id = idtab_find(p, &p->str_tab, h, str_eq, s);

	if (id != UINT32_MAX)
		return id;
	id = next_id(p->str_nr, "strings");
	if (p->str_len + n + 1 > UINT32_MAX)
		die("profile: string storage over 4 GiB");
	if (p->str_data && s >= p->str_data && s < p->str_data + p->str_len) {
		/* a tail of a stored string: it moves when the buffer grows */
		size_t off = (size_t)(s - p->str_data);

		ALLOC_GROW(p->str_data, p->str_len + n + 1, p->str_alloc);
		s = p->str_data + off;
	}
	ALLOC_GROW(p->str_data, p->str_len + n + 1, p->str_alloc);
	ALLOC_GROW(p->str_off, p->str_nr + 1, p->str_off_alloc);
	memcpy(p->str_data + p->str_len, s, n + 1);
	p->str_off[p->str_nr++] = (uint32_t)p->str_len;
	p->str_len += n + 1;
	idtab_add(p, &p->str_tab, h, str_hash_id, str_eq, s, id);
	return id;
}

const char *profile_str(const struct profile *p, uint32_t id)
{
	if (id >= p->str_nr)
		return NULL;
	return p->str_data + p->str_off[id];
}

/* frames */

static uint64_t frame_hash(const struct profile_frame *f)
{
	uint32_t v[5] = {f->name, f->file, f->line, f->module,
			 (uint32_t)f->kind << 8 | (uint32_t)f->tailcall << 1 | f->inlined};

	return hash_u32s(v, ARRAY_SIZE(v));
}

static uint64_t frame_hash_id(const struct profile *p, uint32_t id)
{
	return frame_hash(&p->frames[id]);
}

static int frame_eq(const struct profile *p, uint32_t id, const void *key)
{
	const struct profile_frame *a = &p->frames[id], *b = key;

	return a->name == b->name && a->file == b->file && a->line == b->line &&
	       a->module == b->module && a->detail == b->detail && a->kind == b->kind &&
	       a->inlined == b->inlined && a->tailcall == b->tailcall;
}

static uint32_t intern_frame(struct profile *p, const struct profile_frame *f)
{
	struct profile_frame key = {0};
	uint64_t h;
	uint32_t id;

	/* copy field by field so padding never takes part in equality */
	key.name = f->name;
	key.file = f->file;
	key.line = f->line;
	key.module = f->module;
	key.detail = f->detail;
	key.kind = f->kind;
	key.inlined = f->inlined;
	key.tailcall = f->tailcall;
	h = frame_hash(&key);
	id = idtab_find(p, &p->frame_tab, h, frame_eq, &key);
	if (id != UINT32_MAX)
		return id;
	id = next_id(p->frames_nr, "frames");
	ALLOC_GROW(p->frames, p->frames_nr + 1, p->frames_alloc);
	p->frames[p->frames_nr++] = key;
	idtab_add(p, &p->frame_tab, h, frame_hash_id, frame_eq, &key, id);
	return id;
}

const struct profile_frame *profile_frame(const struct profile *p, uint32_t frame_id)
{
	return frame_id < p->frames_nr ? &p->frames[frame_id] : NULL;
}

size_t profile_nr_frames(const struct profile *p)
{
	return p->frames_nr;
}

/* locations */

struct loc_key {
	uint32_t module;
	uint64_t addr;
};

static uint64_t loc_hash(uint32_t module, uint64_t addr)
{
	return mix64(addr ^ mix64((uint64_t)module + 1));
}

static uint64_t loc_hash_id(const struct profile *p, uint32_t id)
{
	return loc_hash(p->locs[id].module, p->locs[id].addr);
}

static int loc_eq(const struct profile *p, uint32_t id, const void *key)
{
	const struct loc_key *k = key;

	return p->locs[id].module == k->module && p->locs[id].addr == k->addr;
}

uint32_t profile_find_location(const struct profile *p, uint32_t module, uint64_t addr)
{
	struct loc_key k = {module, addr};

	return idtab_find(p, &p->loc_tab, loc_hash(module, addr), loc_eq, &k);
}

uint32_t profile_intern_location(struct profile *p, uint32_t module, uint64_t addr,
				 const struct profile_frame *frames, size_t nr_frames)
{
	struct loc_key k = {module, addr};
	uint64_t h = loc_hash(module, addr);
	struct profile_location *l;
	uint32_t id = idtab_find(p, &p->loc_tab, h, loc_eq, &k);
	size_t i, base;
	int inside;

	if (id != UINT32_MAX)
		return id;
	id = next_id(p->locs_nr, "locations");
	if (p->loc_frames_nr + nr_frames >= UINT32_MAX)
		die("profile: too many location frames");
	/* intern the frames first: it may grow arrays, but we hold no pointers yet */
	ALLOC_GROW(p->loc_frames, p->loc_frames_nr + nr_frames, p->loc_frames_alloc);
	/* @frames may point at stored frames (profile_frame()), which move on growth */
	inside = p->frames && frames >= p->frames && frames < p->frames + p->frames_nr;
	base = inside ? (size_t)(frames - p->frames) : 0;
	for (i = 0; i < nr_frames; i++) {
		const struct profile_frame *f = inside ? &p->frames[base + i] : &frames[i];

		p->loc_frames[p->loc_frames_nr + i] = intern_frame(p, f);
	}
	ALLOC_GROW(p->locs, p->locs_nr + 1, p->locs_alloc);
	l = &p->locs[p->locs_nr++];
	memset(l, 0, sizeof(*l));
	l->module = module;
	l->addr = addr;
	l->first_frame = (uint32_t)p->loc_frames_nr;
	l->nr_frames = (uint32_t)nr_frames;
	p->loc_frames_nr += nr_frames;
	idtab_add(p, &p->loc_tab, h, loc_hash_id, loc_eq, &k, id);
	return id;
}

const struct profile_location *profile_location(const struct profile *p, uint32_t id)
{
	return id < p->locs_nr ? &p->locs[id] : NULL;
}

const uint32_t *profile_location_frames(const struct profile *p, uint32_t loc, size_t *n)
{
	if (loc >= p->locs_nr) {
		*n = 0;
		return NULL;
	}
	*n = p->locs[loc].nr_frames;
	return p->loc_frames + p->locs[loc].first_frame;
}

size_t profile_nr_locations(const struct profile *p)
{
	return p->locs_nr;
}

/* stacks */

struct stack_key {
	const uint32_t *locs;
	size_t n;
};

static uint64_t stack_hash_id(const struct profile *p, uint32_t id)
{
	return hash_u32s(p->stack_data + p->stack_off[id], p->stack_off[id + 1] - p->stack_off[id]);
}

static int stack_eq(const struct profile *p, uint32_t id, const void *key)
{
	const struct stack_key *k = key;
	size_t n = p->stack_off[id + 1] - p->stack_off[id];

	return n == k->n &&
	       (!n || !memcmp(p->stack_data + p->stack_off[id], k->locs, n * sizeof(*k->locs)));
}

uint32_t profile_intern_stack(struct profile *p, const uint32_t *locs, size_t n)
{
	struct stack_key k = {locs, n};
	uint64_t h = hash_u32s(locs, n);
	uint32_t id = idtab_find(p, &p->stack_tab, h, stack_eq, &k);

	if (id != UINT32_MAX)
		return id;
	id = next_id(p->stacks_nr, "stacks");
	if (p->stack_data_nr + n >= UINT32_MAX)
		die("profile: stack storage over 4G entries");
	if (n) {
		uint32_t *old = p->stack_data;

		ALLOC_GROW(p->stack_data, p->stack_data_nr + n, p->stack_data_alloc);
		/* @locs may be a part of a stored stack (profile_stack()): it moved with it */
		if (old && locs >= old && locs < old + p->stack_data_nr)
			locs = p->stack_data + (locs - old);
		memcpy(p->stack_data + p->stack_data_nr, locs, n * sizeof(*locs));
	}
	p->stack_data_nr += n;
	/* stack_off[0] == 0 was set by profile_new() */
	ALLOC_GROW(p->stack_off, p->stacks_nr + 2, p->stack_off_alloc);
	p->stack_off[++p->stacks_nr] = (uint32_t)p->stack_data_nr;
	idtab_add(p, &p->stack_tab, h, stack_hash_id, stack_eq, &k, id);
	return id;
}

const uint32_t *profile_stack(const struct profile *p, uint32_t stack_id, size_t *n)
{
	if (stack_id >= p->stacks_nr) {
		*n = 0;
		return NULL;
	}
	*n = p->stack_off[stack_id + 1] - p->stack_off[stack_id];
	return p->stack_data + p->stack_off[stack_id];
}

size_t profile_nr_stacks(const struct profile *p)
{
	return p->stacks_nr;
}

/* threads: keyed by (process, thread id) */

struct thread_key {
	pid_t pid, tid;
};

static uint64_t thread_hash(pid_t pid, pid_t tid)
{
	return mix64((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid);
}

static uint64_t thread_hash_id(const struct profile *p, uint32_t id)
{
	return thread_hash(p->threads[id].pid, p->threads[id].tid);
}

static int thread_eq(const struct profile *p, uint32_t id, const void *key)
{
	const struct thread_key *k = key;

	return p->threads[id].tid == k->tid && p->threads[id].pid == k->pid;
}

uint32_t profile_thread_in(struct profile *p, pid_t pid, pid_t tid, const char *name)
{
	struct thread_key k = {pid, tid};
	uint64_t h = thread_hash(pid, tid);
	uint32_t idx = idtab_find(p, &p->thread_tab, h, thread_eq, &k);
	uint32_t name_id = name ? profile_intern_str(p, name) : 0;

	if (idx == UINT32_MAX) {
		struct profile_thread *t;

		idx = next_id(p->threads_nr, "threads");
		ALLOC_GROW(p->threads, p->threads_nr + 1, p->threads_alloc);
		t = &p->threads[p->threads_nr++];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		t->pid = pid;
		idtab_add(p, &p->thread_tab, h, thread_hash_id, thread_eq, &k, idx);
		if (pid && profile_process_find(p, pid) == UINT32_MAX)
			profile_process(p, pid, NULL);
	}
	if (name)
		p->threads[idx].name = name_id;
	return idx;
}

uint32_t profile_thread(struct profile *p, pid_t tid, const char *name)
{
	return profile_thread_in(p, 0, tid, name);
}

uint32_t profile_thread_copy(struct profile *dst, const struct profile *src, uint32_t idx)
{
	const struct profile_thread *t = profile_thread_get(src, idx);
	const char *name = t->name ? profile_str(src, t->name) : NULL;

	if (t->pid && profile_process_find(dst, t->pid) == UINT32_MAX)
		profile_process(dst, t->pid, profile_process_name(src, t->pid));
	return profile_thread_in(dst, t->pid, t->tid, name);
}

/* processes: few, looked up linearly from the newest */

uint32_t profile_process_find(const struct profile *p, pid_t pid)
{
	for (size_t i = p->procs_nr; i-- > 0;)
		if (p->procs[i].pid == pid)
			return (uint32_t)i;
	return UINT32_MAX;
}

uint32_t profile_process(struct profile *p, pid_t pid, const char *name)
{
	uint32_t idx = profile_process_find(p, pid);

	if (idx == UINT32_MAX) {
		idx = next_id(p->procs_nr, "processes");
		ALLOC_GROW(p->procs, p->procs_nr + 1, p->procs_alloc);
		memset(&p->procs[idx], 0, sizeof(p->procs[idx]));
		p->procs[idx].pid = pid;
		p->procs_nr++;
	}
	if (name)
		p->procs[idx].name = profile_intern_str(p, name);
	return idx;
}

const struct profile_process *profile_process_get(const struct profile *p, uint32_t idx)
{
	return idx < p->procs_nr ? &p->procs[idx] : NULL;
}

size_t profile_nr_processes(const struct profile *p)
{
	return p->procs_nr;
}

const char *profile_process_name(const struct profile *p, pid_t pid)
{
	uint32_t idx = profile_process_find(p, pid);
	const char *name = idx != UINT32_MAX ? profile_str(p, p->procs[idx].name) : NULL;

	if (name && *name)
		return name;
	/* its main thread's name, else none */
	for (size_t i = 0; i < p->threads_nr; i++)
		if (p->threads[i].pid == pid && p->threads[i].tid == pid)
			return profile_str(p, p->threads[i].name);
	return NULL;
}

int profile_multi_process(const struct profile *p)
{
	pid_t first = 0;

	for (size_t i = 0; i < p->threads_nr; i++) {
		if (!p->threads[i].pid)
			continue;
		if (first && p->threads[i].pid != first)
			return 1;
		first = p->threads[i].pid;
	}
	return 0;
}

const struct profile_thread *profile_thread_get(const struct profile *p, uint32_t idx)
{
	return idx < p->threads_nr ? &p->threads[idx] : NULL;
}

size_t profile_nr_threads(const struct profile *p)
{
	return p->threads_nr;
}

/* samples and counts */

static uint64_t count_hash(uint32_t thread, uint32_t stack)
{
	return mix64((uint64_t)thread << 32 | stack);
}

static uint64_t count_hash_id(const struct profile *p, uint32_t id)
{
	return count_hash(p->counts[id].thread, p->counts[id].stack);
}

static int count_eq(const struct profile *p, uint32_t id, const void *key)
{
	const struct count *k = key;

	return p->counts[id].thread == k->thread && p->counts[id].stack == k->stack;
}

void profile_add_sample(struct profile *p, uint32_t thread, uint32_t stack, uint64_t time_ns,
			char state)
{
	profile_add_weighted(p, thread, stack, time_ns, state, 1);
}

void profile_add_weighted(struct profile *p, uint32_t thread, uint32_t stack, uint64_t time_ns,
			  char state, uint32_t weight)
{
	struct count k = {thread, stack, 0};
	uint64_t h = count_hash(thread, stack);
	uint32_t id;

	/* ids come from this profile: anything else is a bug in perch itself */
	assert(thread < p->threads_nr && stack < p->stacks_nr);
	if (thread >= p->threads_nr || stack >= p->stacks_nr) {
		log_err(0, "BUG: sample of unknown thread %u or stack %u", thread, stack);
		return;
	}
	id = idtab_find(p, &p->count_tab, h, count_eq, &k);
	if (id == UINT32_MAX) {
		id = next_id(p->counts_nr, "counts");
		ALLOC_GROW(p->counts, p->counts_nr + 1, p->counts_alloc);
		p->counts[p->counts_nr++] = k;
		idtab_add(p, &p->count_tab, h, count_hash_id, count_eq, &k, id);
	}
	if (!weight)
		weight = 1;
	p->counts[id].count += weight;
	p->threads[thread].samples += weight;
	p->total += weight;
	if (p->keep_samples) {
		struct profile_sample *s;

		ALLOC_GROW(p->samples, p->samples_nr + 1, p->samples_alloc);
		s = &p->samples[p->samples_nr++];
		memset(s, 0, sizeof(*s));
		s->time_ns = time_ns;
		s->thread = thread;
		s->stack = stack;
		s->state = state;
		s->weight = weight;
	}
}

uint64_t profile_total_samples(const struct profile *p)
{
	return p->total;
}

static int cmp_count(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return (x->stack > y->stack) - (x->stack < y->stack);
}

void profile_foreach_count(const struct profile *p, profile_count_fn *fn, void *arg)
{
	struct count *sorted;
	size_t i;

	if (!p->counts_nr)
		return;
	/* a sorted copy: the profile stays const and the callback may read it freely */
	sorted = xmalloc(p->counts_nr * sizeof(*sorted));
	memcpy(sorted, p->counts, p->counts_nr * sizeof(*sorted));
	qsort(sorted, p->counts_nr, sizeof(*sorted), cmp_count);
	for (i = 0; i < p->counts_nr; i++)
		fn(sorted[i].thread, sorted[i].stack, sorted[i].count, arg);
	free(sorted);
}

void profile_keep_samples(struct profile *p, int on)
{
	p->keep_samples = !!on;
}

const struct profile_sample *profile_samples(const struct profile *p, size_t *n)
{
	*n = p->samples_nr;
	return p->samples;
}

void profile_drop_samples(struct profile *p)
{
	/* keep the allocation: the next second of samples needs about as much */
	p->samples_nr = 0;
}

size_t profile_drop_samples_before(struct profile *p, uint64_t time_ns)
{
	size_t k = 0, n = p->samples_nr;

	for (size_t i = 0; i < n; i++)
		if (p->samples[i].time_ns >= time_ns)
			p->samples[k++] = p->samples[i];
	p->samples_nr = k;
	return n - k;
}

uint32_t profile_copy_stack(const struct profile *src, uint32_t stack, struct profile *dst)
{
	size_t k;
	const uint32_t *sl = profile_stack(src, stack, &k);
	uint32_t *locs = xmalloc((k ? k : 1) * sizeof(*locs)), id;

	for (size_t j = 0; j < k; j++)
		locs[j] = profile_copy_location(src, sl[j], dst);
	id = profile_intern_stack(dst, locs, k);
	free(locs);
	return id;
}

uint32_t profile_copy_location(const struct profile *src, uint32_t loc, struct profile *dst)
{
	const struct profile_location *l = profile_location(src, loc);
	size_t n;
	const uint32_t *fr = profile_location_frames(src, loc, &n);
	struct profile_frame *pf = xcalloc(n ? n : 1, sizeof(*pf));
	uint32_t id;

	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *f = profile_frame(src, fr[i]);

		pf[i] = *f;
		pf[i].name = profile_intern_str(dst, profile_str(src, f->name));
		pf[i].file = profile_intern_str(dst, profile_str(src, f->file));
		pf[i].module = profile_intern_str(dst, profile_str(src, f->module));
		pf[i].detail = f->detail ? profile_intern_str(dst, profile_str(src, f->detail)) : 0;
	}
	id = profile_intern_location(dst, profile_intern_str(dst, profile_str(src, l->module)),
				     l->addr, pf, n);
	free(pf);
	return id;
}

/* The stack @stack of @src in @dst, its locations copied through @loc_map (id + 1, 0 not yet). */
static uint32_t copy_stack(const struct profile *src, uint32_t stack, struct profile *dst,
			   const struct profile_copy_opts *o, uint32_t *loc_map, uint32_t **locs,
			   size_t *alloc_locs)
{
	size_t k;
	const uint32_t *sl = profile_stack(src, stack, &k);

	ALLOC_GROW(*locs, k, *alloc_locs);
	for (size_t j = 0; j < k; j++) {
		if (!loc_map[sl[j]])
			loc_map[sl[j]] =
			    (o->copy_location ? o->copy_location(src, sl[j], dst, o->arg)
					      : profile_copy_location(src, sl[j], dst)) +
			    1;
		(*locs)[j] = loc_map[sl[j]] - 1;
	}
	return profile_intern_stack(dst, *locs, k);
}

struct profile *profile_copy(const struct profile *src, const struct profile_copy_opts *o)
{
	struct profile *dst = profile_new();
	size_t n, nt = profile_nr_threads(src), nstk = profile_nr_stacks(src);
	const struct profile_sample *s = profile_samples(src, &n);
	uint32_t *stack_map = xcalloc(nstk ? nstk : 1, sizeof(*stack_map)); /* id + 1 */
	uint32_t *loc_map = xcalloc(profile_nr_locations(src) + 1, sizeof(*loc_map));
	uint32_t *thread_map = xcalloc(nt ? nt : 1, sizeof(*thread_map)); /* idx + 1 */
	uint32_t *locs = NULL;
	size_t alloc_locs = 0;
	const char *key, *value;

	profile_keep_samples(dst, 1);
	for (size_t i = 0; (key = profile_meta_at(src, i, &value)); i++)
		profile_set_meta(dst, key, value);
	/* every thread kept keeps its place and name, even without samples left */
	for (uint32_t t = 0; t < nt; t++)
		if (!o->keep_thread || o->keep_thread(src, t, o->arg))
			thread_map[t] = profile_thread_copy(dst, src, t) + 1;
	for (size_t i = 0; i < n; i++) {
		if (!thread_map[s[i].thread] || s[i].time_ns < o->lo_ns ||
		    s[i].time_ns >= o->hi_ns || (o->cpu_only && s[i].state != 'R'))
			continue;
		if (!stack_map[s[i].stack])
			stack_map[s[i].stack] =
			    copy_stack(src, s[i].stack, dst, o, loc_map, &locs, &alloc_locs) + 1;
		profile_add_weighted(dst, thread_map[s[i].thread] - 1, stack_map[s[i].stack] - 1,
				     s[i].time_ns, s[i].state, s[i].weight);
	}
	free(stack_map);
	free(loc_map);
	free(thread_map);
	free(locs);
	return dst;
}

/* meta */

size_t profile_nr_meta(const struct profile *p)
{
	return p->meta_nr;
}

const char *profile_meta_at(const struct profile *p, size_t i, const char **value)
{
	if (i >= p->meta_nr)
		return NULL;
	*value = p->meta[i].value;
	return p->meta[i].key;
}

void profile_set_meta(struct profile *p, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < p->meta_nr; i++) {
		if (!strcmp(p->meta[i].key, key)) {
			free(p->meta[i].value);
			p->meta[i].value = xstrdup(value);
			return;
		}
	}
	ALLOC_GROW(p->meta, p->meta_nr + 1, p->meta_alloc);
	p->meta[p->meta_nr].key = xstrdup(key);
	p->meta[p->meta_nr].value = xstrdup(value);
	p->meta_nr++;
}

const char *profile_meta(const struct profile *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->meta_nr; i++)
		if (!strcmp(p->meta[i].key, key))
			return p->meta[i].value;
	return NULL;
}

uint64_t profile_meta_u64(const struct profile *p, const char *key)
{
	const char *s = profile_meta(p, key);
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end ? 0 : v;
}

/* lifecycle */

struct profile *profile_new(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));

	ALLOC_GROW(p->stack_off, 1, p->stack_off_alloc);
	p->stack_off[0] = 0;
	profile_intern_str(p, ""); /* id 0 */
	return p;
}

void profile_free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	free(p->str_data);
	free(p->str_off);
	idtab_release(&p->str_tab);
	free(p->frames);
	idtab_release(&p->frame_tab);
	free(p->locs);
	free(p->loc_frames);
	idtab_release(&p->loc_tab);
	free(p->stack_data);
	free(p->stack_off);
	idtab_release(&p->stack_tab);
	free(p->threads);
	idtab_release(&p->thread_tab);
	free(p->procs);
	free(p->counts);
	idtab_release(&p->count_tab);
	free(p->samples);
	for (i = 0; i < p->meta_nr; i++) {
		free(p->meta[i].key);
		free(p->meta[i].value);
	}
	free(p->meta);
	free(p);
}
