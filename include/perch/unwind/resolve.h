/* Turns a snapshot into a stack in the profile: unwind, then name every pc (module, function,
 * file:line, inlined frames) and add the tail-call frames between them (tailcall.h). Maps are
 * re-read when a pc falls outside every known mapping (see modules_find_fresh) and after exec. */
#ifndef PERCH_RESOLVE_H
#define PERCH_RESOLVE_H

#include <stdint.h>
#include <sys/types.h>

#include "perch/unwind/unwind.h"

struct perch_arch;
struct profile;
struct symbolizer;
struct unwind_snapshot;

struct resolve_stats {
	uint64_t stacks;
	uint64_t to_root;   /* outermost frame is a thread root (_start, clone, ...) */
	uint64_t fp_used;   /* stacks that needed the frame-pointer fallback */
	uint64_t fp_frames; /* frames found by that fallback (no usable CFI) */
	uint64_t stopped[UNWIND_STOP_NR]; /* stacks that ended before a root, by reason */
	uint64_t truncated;		  /* stacks cut at the frame limit */
	uint64_t frames;
	uint64_t unwind_ns; /* perch CPU time spent unwinding (wall clock of the calls) */
	uint64_t symbolize_ns;
	/* One-time costs, kept out of the two above: calls during which a module was used for the
	 * first time (its ELF opened, unwind table built, symbols or DWARF read) or the maps were
	 * re-read. @loads counts those calls. */
	uint64_t unwind_load_ns, symbolize_load_ns, loads;
	uint64_t java_frames; /* interpreted Java frames (ART) */
	uint64_t java_ns;     /* naming them (current dex pc, method, line) and hiding ART's
			       * frames next to them */
	uint64_t reloads;
};

struct art_proc;
struct resolver;

struct resolver *resolver_new(pid_t pid, const struct perch_arch *arch, struct profile *p,
			      struct symbolizer *sym);
void resolver_free(struct resolver *r);
/* Unwind at most @max frames a stack (UNWIND_DEFAULT_FRAMES until set; 0: no limit but the
 * snapshot's stack copy); a stack cut there ends in a "[truncated]" pseudo-frame (module
 * "[perch]") at its root end. */
void resolver_set_max_frames(struct resolver *r, int max);
/* Stacks that ended before a root, all reasons together. */
static inline uint64_t resolve_stats_stopped(const struct resolve_stats *st)
{
	uint64_t n = 0;

	for (int i = 0; i < UNWIND_STOP_NR; i++)
		n += st->stopped[i];
	return n;
}
/* Show the frames of ART's runtime library between Java frames (hidden by default, as
 * simpleperf does; art_hide_runtime_frames()). */
void resolver_show_art_frames(struct resolver *r, int on);
/* The ART awareness of @r's process (art.h), the runtime looked for in its modules now: for
 * reading ART's threads (art_proc_threads(), art_proc_java_wait()). */
struct art_proc *resolver_art(struct resolver *r);
/* The process exec'd or its maps changed: re-read them now. */
void resolver_reload(struct resolver *r);
/* The process is gone (or about to be): @maps_text is its /proc/PID/maps as read at its exit;
 * use it from now on and never re-read the live file. */
void resolver_final_maps(struct resolver *r, const char *maps_text);
/* Unwind and name @snap; returns its stack id in the profile. */
uint32_t resolver_stack(struct resolver *r, const struct unwind_snapshot *snap);
/* @stack with a pseudo-frame @text (e.g. "[io read /x]": why the thread waits) below its
 * leaf; returns the new stack's id. */
uint32_t resolver_add_leaf(struct resolver *r, uint32_t stack, const char *text);
const struct resolve_stats *resolver_stats(struct resolver *r);
/* The raw pcs the unwinder gave for the last resolver_stack() call, leaf first. */
const uint64_t *resolver_last_pcs(const struct resolver *r, int *n);
/* The pc of each location of the last resolver_stack() stack (same order): the unwound
 * frames' pcs and, for a tail-call frame, the address after its jump. */
const uint64_t *resolver_last_loc_pcs(const struct resolver *r, int *n);

/* How the last resolver_stack() walk ended (flags and stop reason); *@at_root: it reached a
 * thread's root (by the CFI, or by the outermost frame's name). */
const struct unwind_result *resolver_last_result(const struct resolver *r, int *at_root);

/* Is @name a function where a thread's stack legitimately ends? */
int resolve_is_root_name(const char *name);

#endif
