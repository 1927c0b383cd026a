/* Android frame timings: the ---PROFILEDATA--- blocks of `dumpsys gfxinfo PKG framestats`
 * (Android's "Testing display performance" page; the column names are hwui's FrameInfoNames,
 * frameworks/base/libs/hwui/FrameInfo.cpp), merged into a profile as the meta key "frames".
 * Parsing, de-duplication of repeated dumps, slow/frozen classification and the summary of the
 * main thread's stacks during slow frames. Reads no device and no clock: perch-adb polls the
 * dumps, `perch report --frames FILE` merges them.
 *
 * One block (each row ends in a comma; Android 13+ header shown, older ones lack
 * FrameTimelineVsyncId/FrameDeadline/FrameInterval/... and have OldestInputEvent and
 * NewestInputEvent instead of InputEventId):
 *
 *   ---PROFILEDATA---
 *   Flags,FrameTimelineVsyncId,IntendedVsync,Vsync,InputEventId,HandleInputStart,...,
 *   FrameCompleted,DequeueBufferDuration,QueueBufferDuration,GpuCompleted,...,
 *   0,1234,10158314881426,10158314881426,0,10158315693363,...,10158321770654,...,
 *   ---PROFILEDATA---
 *
 * Columns are found by name, so any Android version's order works; Flags, IntendedVsync, Vsync
 * and FrameCompleted are required (a block without one is an error naming it), FrameInterval
 * (the vsync period, Android 13+) is used when there. Times are CLOCK_MONOTONIC ns of the
 * device (hwui's systemTime(SYSTEM_TIME_MONOTONIC)), the clock of perch's samples too, so no
 * conversion is needed when perch runs on that device. As the documentation says, a row whose
 * Flags is not 0 (window layout changed, skipped frame, ...) is left out, counted apart. A
 * frame's duration is FrameCompleted - IntendedVsync. */
#ifndef PERCH_FRAMESTATS_H
#define PERCH_FRAMESTATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;

#define FRAMESTATS_FROZEN_NS	     700000000ULL /* Sentry's and Android vitals' frozen frame */
#define FRAMESTATS_DEFAULT_PERIOD_NS 16666667ULL  /* 60 Hz, when nothing says otherwise */
#define FRAMESTATS_RING		     120 /* frames hwui keeps per window (the dump's rows) */

struct framestats_frame {
	uint64_t start_ns;  /* IntendedVsync */
	uint64_t end_ns;    /* FrameCompleted (> start_ns) */
	uint64_t budget_ns; /* the vsync period: FrameInterval, else the estimate; 0 unknown */
};

enum framestats_class {
	FRAMESTATS_OK = 0,
	FRAMESTATS_SLOW,   /* longer than its budget, up to FRAMESTATS_FROZEN_NS */
	FRAMESTATS_FROZEN, /* longer than FRAMESTATS_FROZEN_NS (not also counted as slow) */
};

struct framestats {
	struct framestats_frame *v; /* sorted by start, then end; no duplicates */
	size_t n, alloc;
	uint64_t blocks;	     /* PROFILEDATA blocks read */
	struct framestats_frame *fv; /* rows left out for a non-zero Flags (distinct) */
	size_t flagged, falloc;
	uint64_t incomplete; /* rows left out: no FrameCompleted after IntendedVsync */
	uint64_t gaps;	     /* full blocks that did not reach back to the frames already
			      * seen: frames may be missing between two polls */
	char error[200];     /* why parsing failed */
};

void framestats_init(struct framestats *fs);
void framestats_release(struct framestats *fs);

/* Add every PROFILEDATA block of @text (one dump or several concatenated, other dumpsys text
 * around them is ignored) to @fs. A row already in @fs (same IntendedVsync and FrameCompleted:
 * repeated polls of the ring) is not added again. 0; -EINVAL when a block lacks a required
 * column or a row is malformed (fs->error names the column or line); -ENOENT when @text has
 * no block at all. */
int framestats_parse(struct framestats *fs, const char *text);
/* framestats_parse() of the file @path; -errno of reading it as well. */
int framestats_load(struct framestats *fs, const char *path);
/* Give every frame without a FrameInterval a budget: @period_ns when non-zero, else the vsync
 * period estimated from the frames (the smallest gap between consecutive IntendedVsync of at
 * least 4 ms, i.e. up to 250 Hz), else FRAMESTATS_DEFAULT_PERIOD_NS. */
void framestats_fill_budget(struct framestats *fs, uint64_t period_ns);

enum framestats_class framestats_classify(const struct framestats_frame *f);

/* Meta text form (profile meta "frames"), one frame per line, CLOCK_MONOTONIC ns:
 *   START_NS END_NS BUDGET_NS
 *   4061234000000 4061251000000 16666667
 * Malloc'ed ("" for none). */
char *framestats_meta_format(const struct framestats_frame *v, size_t n);
/* Parse that text into a malloc'ed array sorted by start (*@v, count returned; *@v NULL when
 * 0). Lines that do not fit (END <= START) are skipped. */
size_t framestats_meta_parse(const char *text, struct framestats_frame **v);

/* Set @p's meta "frames" from @fs (merged with frames already there; when @p has kept samples,
 * only the frames that overlap their time span) and "frame_counts" ("FRAMES SLOW FROZEN
 * FLAGGED GAPS"). */
void framestats_store(const struct framestats *fs, struct profile *p);

/* The summary: "frames: N (S slow over their budget, F frozen over 700 ms), the slowest:"
 * then up to @max slow or frozen frames, longest first, each with the main thread's (tid =
 * meta "pid", else the first thread) most frequent stacks in the frame's interval from @p's
 * kept samples ("main <- draw <- jank 12 samples"). Times relative to @base_ns. Lines start
 * with @prefix. */
void framestats_print_summary(const struct profile *p, size_t max, uint64_t base_ns,
			      const char *prefix, FILE *f);

#endif
