/* The profile: interned strings, frames, locations and stacks, threads, and sample counts.
 * Pure data, no ptrace and no I/O, so every writer can be tested on a synthetic profile.
 *
 * Model (pprof's): a *location* is one code address (module + ELF vaddr) and expands to one
 * or more *frames* (inlined functions first, innermost first). A *stack* is a list of
 * location ids, LEAF FIRST. Every id is a uint32_t index that stays valid for the profile's
 * lifetime (ids survive realloc; pointers returned by the getters do not survive the next
 * intern call). Id 0 of strings is "" (the empty/none string). */
#ifndef PERCH_PROFILE_H
#define PERCH_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum profile_frame_kind {
	PROFILE_FRAME_NATIVE = 0, /* compiled native code */
	PROFILE_FRAME_PSEUDO,	  /* perch's own marker: wait reason, thread root, "[truncated]" */
	PROFILE_FRAME_KERNEL,
	PROFILE_FRAME_JIT,
	PROFILE_FRAME_INTERP, /* interpreted (e.g. dex) */
	PROFILE_FRAME_AOT,    /* ahead-of-time compiled managed code (oat) */
};

struct profile_frame {
	uint32_t name;	  /* string id: function name, or "module+0x1a2b" when unknown */
	uint32_t file;	  /* string id of the source file, 0 when unknown */
	uint32_t line;	  /* 0 when unknown */
	uint32_t module;  /* string id of the module path, 0 for none */
	uint32_t detail;  /* string id of what `perch dump` shows after the name (an interpreted
			   * Java method's signature, "(int, int)"), 0 for none */
	uint8_t kind;	  /* enum profile_frame_kind */
	uint8_t inlined;  /* inlined into the next frame of its location */
	uint8_t tailcall; /* a tail-call frame (tailcall.h): rebuilt from DWARF call sites, the
			   * function jumped to the next inner frame's; no pc of its own, never a
			   * leaf (no self time). Its location's frames all have it. */
};

struct profile_location {
	uint32_t module;      /* string id of the module path, 0 for none */
	uint64_t addr;	      /* ELF vaddr inside the module (absolute address when no module) */
	uint32_t first_frame; /* index into the location-frame list: see profile_location_frames */
	uint32_t nr_frames;
};

struct profile_thread {
	pid_t tid;
	uint32_t name;	  /* string id of the latest name seen (comm) */
	uint64_t samples; /* samples taken of this thread */
	pid_t pid;	  /* its process; 0 when not recorded (a profile of one process, whose
			   * id is the meta "pid") */
};

/* A process of the recording (a recording may hold several: followed children). */
struct profile_process {
	pid_t pid;
	uint32_t name; /* string id of its latest name (the main thread's comm), 0 unknown */
};

/* One sample as kept in time order (only when profile->keep_samples is set). */
struct profile_sample {
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	uint32_t thread;  /* thread index */
	uint32_t stack;	  /* stack id */
	char state;	  /* thread state letter from /proc ('R', 'S', ...), 0 when unknown */
	uint32_t weight;  /* ticks this sample stands for (>= 1) */
};

struct profile;

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Keep every sample (time order) in addition to the aggregated counts. Off by default. */
void profile_keep_samples(struct profile *p, int on);

/* Recording-wide facts that writers print. Strings are copied. */
void profile_set_meta(struct profile *p, const char *key, const char *value);
const char *profile_meta(const struct profile *p, const char *key); /* NULL when unset */
/* A meta value as an unsigned decimal ("4242"); 0 when unset, malformed or out of range. */
uint64_t profile_meta_u64(const struct profile *p, const char *key);

uint32_t profile_intern_str(struct profile *p, const char *s);
const char *profile_str(const struct profile *p, uint32_t id);

/* Intern a location with its frames (innermost first). The frames are interned too.
 * Same (module, addr) returns the same id; its frames are those of the first call. */
uint32_t profile_intern_location(struct profile *p, uint32_t module, uint64_t addr,
				 const struct profile_frame *frames, size_t nr_frames);
/* Look a location up without adding it: its id, or UINT32_MAX. */
uint32_t profile_find_location(const struct profile *p, uint32_t module, uint64_t addr);
const struct profile_location *profile_location(const struct profile *p, uint32_t id);
/* Frame ids of a location, innermost first; *@n set to the count. */
const uint32_t *profile_location_frames(const struct profile *p, uint32_t loc, size_t *n);
const struct profile_frame *profile_frame(const struct profile *p, uint32_t frame_id);
size_t profile_nr_frames(const struct profile *p);
size_t profile_nr_locations(const struct profile *p);

/* Intern a stack of location ids, leaf first. An empty stack is valid. */
uint32_t profile_intern_stack(struct profile *p, const uint32_t *locs, size_t n);
const uint32_t *profile_stack(const struct profile *p, uint32_t stack_id, size_t *n);
size_t profile_nr_stacks(const struct profile *p);

/* Find or add the thread @tid of process @pid (0: not recorded); a non-NULL @name replaces its
 * name. A new process gets its profile_process entry too. Returns the thread index. */
uint32_t profile_thread_in(struct profile *p, pid_t pid, pid_t tid, const char *name);
/* Thread @idx of @src into @dst (process, tid, name; the process's name too). Its index. */
uint32_t profile_thread_copy(struct profile *dst, const struct profile *src, uint32_t idx);
/* profile_thread_in(@p, 0, @tid, @name): a profile without processes. */
uint32_t profile_thread(struct profile *p, pid_t tid, const char *name);

/* Find or add process @pid; a non-NULL @name replaces its name. Returns its index. */
uint32_t profile_process(struct profile *p, pid_t pid, const char *name);
/* The index of process @pid, or UINT32_MAX. */
uint32_t profile_process_find(const struct profile *p, pid_t pid);
const struct profile_process *profile_process_get(const struct profile *p, uint32_t idx);
size_t profile_nr_processes(const struct profile *p);
/* The name of process @pid: its own, else its main thread's; NULL when unknown. Borrowed. */
const char *profile_process_name(const struct profile *p, pid_t pid);
/* Do the threads belong to more than one process? Writers then put the process before each
 * thread (folded "name-PID/thread-TID", a pprof label, a Chrome process track each); a
 * profile of one process keeps the layout it always had. */
int profile_multi_process(const struct profile *p);
const struct profile_thread *profile_thread_get(const struct profile *p, uint32_t idx);
size_t profile_nr_threads(const struct profile *p);

/* Count one sample of @thread on @stack. */
void profile_add_sample(struct profile *p, uint32_t thread, uint32_t stack, uint64_t time_ns,
			char state);
/* The same for a sample that stands for @weight ticks (a thread that could not be stopped at
 * some ticks is credited at the next stop it reaches). Counts and totals grow by @weight. */
void profile_add_weighted(struct profile *p, uint32_t thread, uint32_t stack, uint64_t time_ns,
			  char state, uint32_t weight);
uint64_t profile_total_samples(const struct profile *p);

/* Aggregated counts: calls @fn once per distinct (thread, stack) pair with its count, in
 * ascending (thread, stack) order. */
typedef void profile_count_fn(uint32_t thread, uint32_t stack, uint64_t count, void *arg);
void profile_foreach_count(const struct profile *p, profile_count_fn *fn, void *arg);

/* Samples in time order (empty unless keep_samples was on). */
const struct profile_sample *profile_samples(const struct profile *p, size_t *n);
/* Forget the kept samples (the aggregated counts and totals stay): a recording streamed to
 * disk drops what it has written, so memory stays bounded on long runs. Samples kept later
 * start again at index 0. */
void profile_drop_samples(struct profile *p);
/* Forget the kept samples taken before @time_ns (the others keep their order); how many
 * were dropped. A flight recorder keeps its last seconds so. */
size_t profile_drop_samples_before(struct profile *p, uint64_t time_ns);

/* What profile_copy() takes of its source. */
struct profile_copy_opts {
	uint64_t lo_ns, hi_ns; /* samples with lo_ns <= time_ns < hi_ns */
	int cpu_only;	       /* only samples whose thread state was 'R' */
	/* Optional: keep thread @idx of @src (its samples; a kept thread keeps its place and
	 * name even without samples in the window)? NULL: every thread. */
	int (*keep_thread)(const struct profile *src, uint32_t idx, void *arg);
	/* Optional: the copy of location @loc of @src in @dst (re-symbolized, say). NULL:
	 * profile_copy_location(). */
	uint32_t (*copy_location)(const struct profile *src, uint32_t loc, struct profile *dst,
				  void *arg);
	void *arg;
};
/* A new profile with the samples of @src that @o keeps (with their weights and states, in
 * @src's order, kept as samples too), their stacks and locations, and every meta key of @src. */
struct profile *profile_copy(const struct profile *src, const struct profile_copy_opts *o);
/* Stack @stack of @src interned in @dst (its locations through profile_copy_location()).
 * Copying the same stack again gives the same id. */
uint32_t profile_copy_stack(const struct profile *src, uint32_t stack, struct profile *dst);
/* Location @loc of @src interned in @dst as it is (module, address, frames). Its id in @dst. */
uint32_t profile_copy_location(const struct profile *src, uint32_t loc, struct profile *dst);

/* Meta entries in the order they were first set: the key of entry @i (its value in *@value),
 * or NULL when @i >= profile_nr_meta(). Borrowed until the next profile_set_meta(). */
size_t profile_nr_meta(const struct profile *p);
const char *profile_meta_at(const struct profile *p, size_t i, const char **value);

#endif
