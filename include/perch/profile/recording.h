/* perch's recording file (`perch record -o run.perch`): the whole profile, streamed to disk in
 * checksummed chunks while sampling, read back by `perch report` / `perch annotate`.
 *
 * Format, version 2 (all integers little endian; version 1 files are still read):
 *
 *   file    := header chunk*
 *   header  := "PERCHREC" u16 major (2) u16 header_size (16) u32 flags (0)
 *   chunk   := u32 stored_len u32 raw_len u32 crc32 u32 seq  payload[stored_len]
 *              payload is a zlib stream that inflates to exactly raw_len bytes (<= 64 MiB);
 *              crc32 is zlib's CRC-32 of the stored payload; seq counts chunks from 0.
 *   raw     := record*
 *   record  := u8 type  varint body_len  body[body_len]
 *
 * varint is unsigned LEB128 (at most 10 bytes), svarint its zigzag form, str is varint length
 * + bytes. Ids are implicit: the n-th STRING (LOCATION, STACK) record of the file has id n.
 *
 *   1 STRING    bytes (the rest of the body)              string n (id 0 is always "")
 *   2 LOCATION  varint module_str  varint addr  varint nr_frames
 *               nr_frames x (varint name_str  varint file_str  varint line  varint module_str
 *                            u8 kind  u8 flags)           innermost frame first; flags
 *               bit 0: inlined, bit 1: a tail-call frame (readers older than tail-call frames
 *               refuse bit 1)
 *               addr is the ELF vaddr inside the module (the build-id of the module is the
 *               meta "build_id:PATH", so the frame is "build-id + offset" plus resolved names)
 *   3 STACK     varint n  n x varint location_id          leaf first
 *   4 THREAD    varint index  varint tid  varint name_str  varint pid
 *               index == threads so far: a new thread; smaller: the thread was renamed.
 *               pid is its process (version 2; absent in version 1, where every thread is
 *               of the one process of meta "pid"); a thread is (pid, tid)
 *   5 SAMPLE    svarint time_delta_ns  varint thread_index  varint stack_id  u8 state
 *               varint weight                            time is CLOCK_MONOTONIC; the delta is
 *               from the previous sample of the same chunk (0 for the first)
 *   6 META      str key  bytes value (rest of the body)   sets a profile meta key
 *   7 META_ADD  str key  bytes suffix                     appends to a meta value (timelines
 *               that grow during the recording are not rewritten every chunk)
 *   8 END       varint total_samples                      clean end of the recording
 *   9 PROCESS   varint pid  varint name_str               (version 2) a process, or its new
 *               name (after exec); a recording may hold several (followed children)
 *
 * Unknown record types are skipped (a later minor addition); a file with a higher major
 * version is refused. Modules: for every module a location names, the meta keys
 * "build_id:PATH" (hex GNU build-id) and "load:PATH" ("start=0x.. bias=0x.. machine=N", the
 * first mapping perch saw) describe it; every other meta key ("pid", "comm", "counters",
 * "counter:NAME", "stalls", ...) round-trips as it is.
 *
 * A recording cut short (perch killed, disk full) ends in a torn chunk: the reader keeps every
 * complete chunk before it and says so (recording_info.complete == 0). */
#ifndef PERCH_RECORDING_H
#define PERCH_RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct output_opts;
struct profile;

#define RECORDING_MAGIC		"PERCHREC"
#define RECORDING_VERSION	2
#define RECORDING_MAX_CHUNK	(64u << 20)   /* raw and stored bytes of one chunk */
#define RECORDING_FLUSH_NS	1000000000ULL /* write a chunk at least every second */
#define RECORDING_FLUSH_SAMPLES 8192	      /* ... or every this many kept samples */
#define RECORDING_MAX_FRAMES	64	      /* frames of one location */
#define RECORDING_MAX_STACK	4096	      /* locations of one stack */
#define RECORDING_MAX_PROCESSES (1 << 20)     /* processes of one recording (reader limit) */

/* Writing. */
struct recording_writer;

/* Create (or truncate) @path and write the header. The file is written in place, not through
 * a temporary name: a recording cut short must be readable under the name the user gave.
 * NULL with errno set. */
struct recording_writer *recording_create(const char *path);
/* Write everything new in @p since the last flush (strings, locations, stacks, threads, meta,
 * kept samples) as chunks, then drop @p's kept samples (profile_drop_samples). 0 or -errno;
 * after an error the writer stays failed and writes nothing more. */
int recording_flush(struct recording_writer *w, struct profile *p);
/* recording_flush() when RECORDING_FLUSH_NS passed since the last one (@now_ns, any clock
 * that only moves forward) or RECORDING_FLUSH_SAMPLES samples are waiting; else 0. */
int recording_maybe_flush(struct recording_writer *w, struct profile *p, uint64_t now_ns);
/* Append @suffix to meta @key in the file (a META_ADD record in the next chunk), for a value
 * kept by no profile: a timeline streamed to disk (timeline_drain()). The key must not be a
 * meta key of the profile flushed (that one would be set again, not appended to). */
void recording_meta_add(struct recording_writer *w, const char *key, const char *suffix);
/* Final flush (none when @p is NULL), the END record, fsync and close; frees @w. 0 or -errno
 * (the first error seen while recording, if any). */
int recording_close(struct recording_writer *w, struct profile *p);
/* Bytes written so far. */
uint64_t recording_bytes(const struct recording_writer *w);
/* The whole of @p as a recording on @f, in one go (the output table's "perch" format, e.g.
 * `perch report --tid 12 -o part.perch`). 0 or -errno. */
int out_recording_write(const struct profile *p, const struct output_opts *o, FILE *f);

/* Reading. */
struct recording_info {
	unsigned int version;
	uint64_t chunks;     /* complete chunks read */
	uint64_t samples;    /* sample records read (one record may weigh several samples:
			      * profile_total_samples() counts those) */
	int complete;	     /* the END record was there */
	uint64_t bad_offset; /* where reading stopped (the file's end when it was cut between two
			      * chunks); 0 when complete */
	char error[256];     /* why it stopped early, or why it failed; "" otherwise */
};

/* Read a recording from memory into a new profile (samples kept, in file order). Returns 0 and
 * sets *@out; a recording cut short or damaged after a complete chunk still returns 0 with
 * info->complete == 0 and info->error saying where it stopped. -EINVAL for something that is
 * not a perch recording (or not even one complete chunk), -EPROTONOSUPPORT for a newer major
 * version; info->error says which. Every size, count and id is checked: hostile input gives an
 * error, never a crash or unbounded memory (at most about 8x the inflated size). */
int recording_read_mem(const uint8_t *data, size_t size, struct profile **out,
		       struct recording_info *info);
/* The same for the file @path (-errno of open/read as well). */
int recording_read(const char *path, struct profile **out, struct recording_info *info);

/* Is @path's ending ".perch"? */
int recording_is_path(const char *path);

#endif
