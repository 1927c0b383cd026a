/* More writers (formats.md sections 2-4, and the flame graph): pprof, speedscope,
 * Chrome trace JSON and a self-contained interactive SVG flame graph. Each one only reads the
 * profile, is deterministic (no clock, no environment: the same profile gives the same bytes)
 * and returns 0 or -errno (a write error on @f, -EIO when zlib fails).
 *
 * Profile meta keys they read (all optional, decimal unless said otherwise):
 *   "pid"            target process id (labels, Chrome pid, names)
 *   "comm"           target process name (Chrome process_name, titles)
 *   "period_ns"      sampling period; 10000000 (10 ms) when unset or invalid
 *   "start_time_ns"  CLOCK_REALTIME at the start, Unix epoch ns (pprof time_nanos)
 *   "duration_ns"    recording length (pprof duration_nanos; else derived from the samples)
 *   "build_id:PATH"  hex GNU build-id of the module PATH (pprof Mapping.build_id)
 *   "counters"       space-separated counter names N, each with a key "counter:N" whose value
 *                    is space-separated "TIME_NS=VALUE" pairs (CLOCK_MONOTONIC ns, a number);
 *                    malformed pairs are skipped (Chrome "C" events) */
#ifndef PERCH_WRITERS_H
#define PERCH_WRITERS_H

#include <stdint.h>
#include <stdio.h>

#include "perch/output.h"

struct profile;

#define OUT_DEFAULT_PERIOD_NS 10000000ULL

/* The sampling period of @p in ns: meta "period_ns" or OUT_DEFAULT_PERIOD_NS. */
uint64_t out_period_ns(const struct profile *p);

/* gzipped pprof profile.proto (formats.md 2): sample types samples/count and
 * wall/nanoseconds (count x period), one Mapping per module (filename = path; memory range =
 * the ELF vaddrs seen, since the profile has no load addresses), one Location per profile
 * location (address = its ELF vaddr) with one Line per frame innermost first, one Function
 * per (name, file). Samples aggregated per (thread, stack[, state]), leaf first, with labels
 * thread_id (num), thread_name (str), pid (num, when known) and state (str, when the kept
 * samples have one). An empty stack is the pseudo location "[no stack]". */
int out_pprof_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* speedscope JSON (formats.md 3): an "all threads" sampled profile first, then one per thread
 * (ordered by tid), unit nanoseconds, stacks root first, consecutive identical samples
 * merged; shared frames with file and line. Time ordered when samples were kept, else the
 * aggregated counts (weight = count x period). */
int out_speedscope_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* Chrome trace event JSON in object form (formats.md 4, example A): process_name and
 * thread_name metadata, per-thread nested "X" slices built from consecutive kept samples
 * (a frame continues while the frames below it do and the next sample comes within 2
 * periods), counter ("C") events from the meta. ts/dur in µs from the earliest time seen.
 * Without kept samples there is no time line: only the metadata and counters. */
int out_chrome_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* Chrome trace JSON with stackFrames + samples (formats.md 4.5, example B) for
 * chrome://tracing and speedscope; kept samples only. A separate file: speedscope would drop
 * the slices of out_chrome_write() if both were in one. */
int out_chrome_samples_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* One self-contained interactive SVG flame graph: frames merged into a tree rooted at "all",
 * then a frame per thread, children sorted by name, width by samples; colours by frame kind;
 * inline JavaScript (no network) for click-to-zoom, search with highlight (Ctrl-F or the
 * "Search" button; "Matched: N%") and details on hover. Frames narrower than 0.1 px at the
 * full 1200 px width are left out. */
int out_flamegraph_write(const struct profile *p, const struct output_opts *o, FILE *f);

#endif
