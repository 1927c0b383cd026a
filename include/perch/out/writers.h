/* More writers (docs/design/formats.md sections 2-4, and the flame graph): pprof,
 * speedscope, Chrome trace JSON and a self-contained interactive SVG flame graph. Each one only
 * reads the profile, is deterministic (no clock, no environment: the same profile gives the same
 * bytes) and returns 0 or -errno (a write error on @f, -EIO when zlib fails).
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
 *                    malformed pairs are skipped (Chrome "C" events); perch record's
 *                    names are listed in include/perch/proc/timeline.h (timeline_store)
 *   "stalls"         one line per stall of the watched thread (include/perch/proc/stall.h):
 *                    "START_NS DURATION_NS TID STACK KIND CUT REASON", CLOCK_MONOTONIC ns,
 *                    STACK a stack id of this profile or "-", KIND off-cpu|running, CUT 0|1
 *                    (began before or outlived the recording), REASON the rest of the line
 *                    ("[sleep nanosleep]", "state D", "running"); malformed lines are
 *                    skipped (Chrome "X" slices on "stalls of THREAD" tracks)
 *   "stall_thread", "stall_ms"  the watched tid and the threshold (informational)
 *   "frames"         Android frames, "START_NS END_NS BUDGET_NS" lines (include/perch/
 *                    framestats.h): Chrome "X" slices on "frames" tracks, Sentry
 *                    slow_frame_renders / frozen_frame_renders / screen_frame_rates, marks
 *                    in the report page; "frame_counts" their counts (framestats_store) */
#ifndef PERCH_WRITERS_H
#define PERCH_WRITERS_H

#include <stdint.h>
#include <stdio.h>

#include "perch/out/output.h"

struct profile;

#define OUT_DEFAULT_PERIOD_NS 10000000ULL

/* The sampling period of @p in ns: meta "period_ns" or OUT_DEFAULT_PERIOD_NS. */
uint64_t out_period_ns(const struct profile *p);

/* gzipped pprof profile.proto (docs/design/formats.md 2): sample types samples/count and
 * wall/nanoseconds (count x period), one Mapping per module (filename = path; memory range =
 * the ELF vaddrs seen, since the profile has no load addresses), one Location per profile
 * location (address = its ELF vaddr) with one Line per frame innermost first, one Function
 * per (name, file). Samples aggregated per (thread, stack[, state]), leaf first, with labels
 * thread_id (num), thread_name (str), pid (num, when known) and state (str, when the kept
 * samples have one). An empty stack is the pseudo location "[no stack]". */
int out_pprof_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* speedscope JSON (docs/design/formats.md 3): an "all threads" sampled profile first, then one
 * per thread (ordered by tid), unit nanoseconds, stacks root first, consecutive identical samples
 * merged; shared frames with file and line. Time ordered when samples were kept, else the
 * aggregated counts (weight = count x period). */
int out_speedscope_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* Chrome trace event JSON in object form (docs/design/formats.md 4, example A): process_name and
 * thread_name metadata, per-thread nested "X" slices built from consecutive kept samples
 * (a frame continues while the frames below it do and the next sample comes within 2
 * periods), counter ("C") events from the meta, stalls (meta "stalls") as "X" slices on
 * tracks of their own (tid 0x40000000 + lane; overlapping stalls in separate lanes). ts/dur in µs
 * from the earliest time seen. Without kept samples there is no time line: only the metadata and
 * counters. */
int out_chrome_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* Chrome trace JSON with stackFrames + samples (docs/design/formats.md 4.5, example B) for
 * chrome://tracing and speedscope; kept samples only. A separate file: speedscope would drop
 * the slices of out_chrome_write() if both were in one. */
int out_chrome_samples_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* One self-contained interactive SVG flame graph: frames merged into a tree rooted at "all",
 * then a frame per thread, children sorted by name, width by samples; colours by frame kind;
 * inline JavaScript (no network) for click-to-zoom, search with highlight (Ctrl-F or the
 * "Search" button; "Matched: N%") and details on hover. Frames narrower than 0.1 px at the
 * full 1200 px width are left out. */
int out_flamegraph_write(const struct profile *p, const struct output_opts *o, FILE *f);
/* The same flame graph inline in a self-contained HTML page (no network). */
int out_flamegraph_html_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* The report page (src/out/out-html.c, issue 20): one self-contained HTML page (no network) with
 * the summary, a thread timeline by state, CPU and memory charts, flame graph / icicle /
 * left-heavy views, top functions and callers/callees, every view filtered by a time range;
 * the profile goes in as a compressed data block the page decodes. Kept samples give the
 * time line; without them the aggregated counts are all at one time. */
int out_report_html_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* Sentry, Android ART method trace and text call tree writers (docs/design/formats.md 5 and 6,
 * issue 6). More meta keys they read (all optional):
 *   "profiler_id"          32 lowercase hex digits: Sentry profiler_id, so that several files
 *                          of one session link up; else derived from pid, comm and start time
 *   "sentry_release"       Sentry release; else "<comm>@unknown"
 *   "sentry_environment"   Sentry environment; else "production"
 *   "sentry_platform"      Sentry platform; else "rust" (docs/design/formats.md 5.6: Sentry
 *                          has no value for C/C++; "rust" is the native back-end platform)
 * Counters read by the Sentry writer, the first one listed in "counters" of each row:
 *   cpu_usage (percent)             "cpu_usage", "cpu_percent"
 *   memory_footprint (byte)         "memory_footprint", "pss_bytes", "rss_bytes"
 *   memory_native_footprint (byte)  "memory_native_footprint", "native_heap_bytes" */

/* Sentry v2 profile chunk JSON (docs/design/formats.md 5.2): frames (function, filename, lineno,
 * package, in_app, platform; managed "pkg.Class.method(args)" names split into module and
 * function), stacks leaf first, one sample per kept sample (thread_id a string, timestamp in Unix
 * epoch seconds with µs precision: meta start_time_ns stands for the earliest sample or counter
 * point, later ones add their CLOCK_MONOTONIC distance to it), thread_metadata, measurements from
 * the counters above, and debug_meta images of type "symbolic" for native modules with a
 * "build_id:PATH" meta. The profile has ELF vaddrs, not load addresses, so images are laid out at
 * synthetic, non-overlapping image_addr values (image_vmaddr 0): a frame's instruction_addr -
 * image_addr is its ELF vaddr (right for shared libraries and PIE executables, whose first PT_LOAD
 * is at 0). A nameless frame with an image has no "function" (Sentry symbolicates the address);
 * without one it is "module+0xaddr". in_app: native frames outside /usr/lib*, /lib*, /usr/libexec,
 * /system, /apex, /vendor and "[...]" pseudo modules. Without kept samples, each thread's
 * aggregated counts are laid out one period apart from the first counter point (or 0). chunk_id and
 * a missing profiler_id are hashes of the profile (deterministic). One chunk whatever its length:
 * Relay rejects chunks longer than 66 s, use out_sentry_envelope_write() for those. */
int out_sentry_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* A Sentry envelope (docs/design/formats.md 5.1): a header line, then one "profile_chunk" item
 * per 60 s of samples, each chunk on one line as out_sentry_write() makes it, all with one
 * profiler_id; items carry "length". Counter points go to the chunk their time falls in. */
int out_sentry_envelope_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* Android ART method trace, non-streaming (docs/design/formats.md 6.3): version 2, clock=wall
 * (perch has no per-sample thread CPU time, and version 3 needs both clocks), 10-byte records built
 * by diffing consecutive kept samples of a thread (exits innermost first, then enters outermost
 * first), all frames left when the thread is not seen for more than 2 periods and at its end (its
 * last sample + one period, which also gives elapsed-time-usec). Start time = the earliest sample
 * (µs, CLOCK_MONOTONIC). Methods: one per (kind, module, function): native frames as class = module
 * file name, signature "()V"; managed names split into class, method and "(args)". Thread ids are
 * the tid when it is in 1..65535, else the smallest free id, with " (tid N)" added to the name.
 * Text is sanitised (no tab, newline or control character; valid UTF-8). Records stop, and
 * data-file-overflow=true is written, where the 32-bit µs delta would wrap (71 minutes). Without
 * kept samples the aggregated counts are laid out one period apart per thread. */
int out_arttrace_write(const struct profile *p, const struct output_opts *o, FILE *f);

#define OUT_TEXT_DEFAULT_MIN_PERCENT 0.5

struct out_text_opts {
	double min_percent; /* leave out nodes under this % of their tree; < 0: the default */
	int merged;	    /* one tree for all threads instead of one per thread */
};

/* A call tree like `perf report --stdio --children`: per node the total (samples with the
 * node on their path) and self (samples ending in it) share of the tree, and the samples;
 * one tree per thread (threads by samples, then tid), or one merged tree; children by total
 * descending, then name; nodes under OUT_TEXT_DEFAULT_MIN_PERCENT of the tree left out (the
 * count of left-out nodes is printed). A node is a function "name (module)"; inlined frames
 * are nodes marked "[inlined]". Then per thread (or merged) the table of out_top_write().
 * Names: control characters become '_', invalid UTF-8 U+FFFD. 0 or -errno. */
int out_text_write(const struct profile *p, const struct output_opts *o, FILE *f);
/* The same with explicit options (@to NULL: the defaults). */
int out_text_write_opts(const struct profile *p, const struct output_opts *o,
			const struct out_text_opts *to, FILE *f);

/* Diffs of two profiles (diff.h, `perch report --diff BASE NEW`). */
struct diff;
typedef int out_diff_write_fn(const struct diff *d, const struct output_opts *o, FILE *f);

/* Text: per thread group (NEW's busiest first), the functions whose total or self share
 * changed most: BASE %, NEW %, change in points, its noise margin and '*' beyond noise. Every
 * change beyond noise is listed, then the largest others up to o->top (default 20). */
int out_diff_text_write(const struct diff *d, const struct output_opts *o, FILE *f);
/* Folded stacks in the two-column form of FlameGraph's difffolded.pl, which flamegraph.pl
 * draws as a differential flame graph: "group;root;...;leaf BASE NEW" per call path, the
 * root frame the thread group ("process/thread", no tid), lines in byte order. BASE is
 * scaled to NEW's sample count of the group (difffolded.pl -n, per thread group; rounded),
 * so the colours show the change in share. Paths with both 0 are left out. */
int out_folded_diff_write(const struct diff *d, const struct output_opts *o, FILE *f);
/* The flame graph of out_flamegraph_write() drawn on NEW's shape (widths: NEW's samples;
 * thread groups instead of threads), each frame coloured by the change of its path's share
 * of the group's samples: red grew, blue shrank, strong colours beyond noise, pale within;
 * details on hover give both shares and the margin. Below it, the call paths of BASE that
 * are not in NEW (vanished), largest first. */
int out_flamegraph_diff_write(const struct diff *d, const struct output_opts *o, FILE *f);
/* The same inline in a self-contained HTML page. */
int out_flamegraph_diff_html_write(const struct diff *d, const struct output_opts *o, FILE *f);
/* The diff writer for output format @format ("text", "folded", "svg", "html"), or NULL. */
out_diff_write_fn *out_diff_writer(const char *format);

/* Split a managed frame name "pkg.Class.method(args)" (or "pkg.Class.method"): *@dot is the
 * offset of the '.' before the method, *@paren that of the '(' (strlen when none). -EINVAL
 * when there is no class part or the name is not of that shape. */
int out_managed_split(const char *name, size_t *dot, size_t *paren);

#endif
