/* Windows of a recording written while it runs: the flight recorder (`perch record --ring SEC`
 * with --trigger) and chunked output (--chunk SEC). The live profile keeps its samples; a
 * window is the samples of a time range copied into a profile of its own (profile_copy()) and
 * written as every -o of the recording, under a name of its own. Samples no window can still
 * need are dropped, so memory follows the window, not the length of the run (the interned
 * stacks grow only with distinct stacks).
 *
 *  - ring: keeps the last ring_s seconds. A trigger (a stall of the watched thread, a signal)
 *    saves the ring_s seconds before it, up to a moment it gives (moved on while a stall
 *    lasts), as FILE-YYYYmmdd-HHMMSS.mmm-WHY.EXT for each -o FILE.EXT, with a text dump of
 *    every thread's stack at the trigger (FILE-...-WHY-threads.txt, from the samples nearest
 *    to it). At the end the -o files themselves get the last ring_s seconds.
 *    A window holds its samples, the stalls and counter points (CPU, memory) of its time.
 *  - chunks: every chunk_s seconds of sample time, the samples taken before the boundary and
 *    not written yet go to FILE.NNNN.EXT (NNNN from 0000), atomically: every sample is in
 *    exactly one chunk (one that arrives late goes to the next), and a chunk written is
 *    complete whatever happens to perch later. The last, partial chunk is written at the end.
 *
 * Everything runs on the sampler's worker thread, after each sample was counted. Times are
 * CLOCK_MONOTONIC, as the samples'. */
#ifndef PERCH_RECORD_RING_H
#define PERCH_RECORD_RING_H

#include <stdint.h>
#include <stdio.h>

struct profile;
struct record_output;

struct record_ring_opts {
	double ring_s;	 /* keep the last ring_s seconds (0: chunks) */
	double chunk_s;	 /* chunks of chunk_s seconds (0: a ring) */
	int trigger_max; /* triggered saves at most (0: no limit) */
	const struct record_output *outputs;
	int nr_outputs;
	int lines;		    /* --lines for the folded writer */
	uint64_t period_ns;	    /* the sampling period */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at the first sample */
	FILE *msgs;		    /* "perch: wrote ..." as files are written (NULL: none) */
};

struct record_ring_stats {
	uint64_t triggered; /* triggered windows asked for (written now or at the end) */
	uint64_t saves;	    /* ... of which written */
	uint64_t ignored;   /* triggers after --trigger-max saves */
	uint64_t chunks;    /* chunks written */
	uint64_t failed;    /* files that could not be written (message printed) */
	uint64_t held_max;  /* the most samples kept at once */
	uint64_t first_ns;  /* the first sample's time */
};

struct record_ring;

/* @p is the live profile (kept samples on; the ring drops them as it goes). */
struct record_ring *record_ring_new(const struct record_ring_opts *o, struct profile *p);
void record_ring_free(struct record_ring *r);

/* A sample taken at @time_ns was counted into the profile: write the windows now complete
 * and drop the samples no window needs. */
void record_ring_sample(struct record_ring *r, uint64_t time_ns);

/* Save the window of something that happened at @at_ns: from ring_s seconds before it to
 * @until_ns (at least @at_ns), written once a sample past @until_ns came (or at the end).
 * @why names the files ("stall", "signal"); @note heads the dump of every thread ("thread 12
 * (main) off-cpu for 512 ms"). A handle for record_ring_until(), or -1 when --trigger-max
 * saves were asked for already (counted as ignored). */
int record_ring_trigger(struct record_ring *r, const char *why, uint64_t at_ns, uint64_t until_ns,
			const char *note);
/* Move the end of a save not written yet (a stall still going, or over); at most ring_s
 * seconds after its trigger. */
void record_ring_until(struct record_ring *r, int handle, uint64_t until_ns);

/* Stalls found meanwhile, as stall_meta_format() text (stall_drain() hands it so): each
 * window gets those it overlaps as its meta "stalls". */
void record_ring_add_stalls(struct record_ring *r, const char *text);

/* Counter points gathered meanwhile (timeline_drain(): @key "counter:NAME", @text "T=V T=V
 * ..."): each window gets the points of its time as meta "counters" and "counter:NAME". */
void record_ring_add_points(struct record_ring *r, const char *key, const char *text);

/* Sampling ended at @end_ns: pending saves are written (cut there), then the last chunk, or
 * for a ring the last ring_s seconds to the -o files. 0, or -1 when a file failed. */
int record_ring_finish(struct record_ring *r, uint64_t end_ns);

const struct record_ring_stats *record_ring_stats(const struct record_ring *r);

/* The name a window's file takes: @path with @tag put before its format's ending @ext
 * ("out.trace.json", ".trace.json", ".0003" -> "out.0003.trace.json"); before the last '.'
 * of the file name when @path does not end in @ext (NULL), else at the end. Malloc'ed. */
char *record_ring_name(const char *path, const char *ext, const char *tag);

#endif
