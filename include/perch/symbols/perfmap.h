/* /tmp/perf-PID.map files: the symbol maps JIT compilers write for perf (Node
 * --perf-basic-prof, JVM perf-map agents, LuaJIT, .NET DOTNET_PerfMapEnabled). One line per
 * code blob, "START SIZE name" with START and SIZE in hex (an optional 0x), appended as code
 * is generated; a later line for the same address wins (code memory is reused). The file is
 * written by the target: hostile input, read within limits. */
#ifndef PERCH_PERFMAP_H
#define PERCH_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_MAX_ENTRIES (1u << 21)	 /* lines kept; later ones are ignored */
#define PERFMAP_MAX_LINE    4096	 /* longer lines are skipped */
#define PERFMAP_MAX_FILE    (512u << 20) /* bytes read from one file */

struct perfmap_sym {
	uint64_t start, size;
	const char *name; /* owned by the map */
};

struct perfmap;

/* The map of process @pid: /proc/PID/root/tmp/perf-PID.map, else /tmp/perf-PID.map. Nothing is
 * read until the first perfmap_find(). */
struct perfmap *perfmap_new(pid_t pid);
/* A map over lines given by perfmap_add_text() only (tests, fuzzing). */
struct perfmap *perfmap_new_empty(void);
void perfmap_free(struct perfmap *pm);

/* Parse @len bytes of map text; only complete lines are used: returns the number of bytes
 * consumed (up to the last newline). Malformed lines are skipped. */
size_t perfmap_add_text(struct perfmap *pm, const char *text, size_t len);

/* The same, as one read of the file at @time_ns (CLOCK_MONOTONIC): lines added by a later
 * call are newer than that time (tests). */
size_t perfmap_add_text_at(struct perfmap *pm, const char *text, size_t len, uint64_t time_ns);

/* The symbol covering @addr: the newest line whose [start, start + size) holds it. Re-reads
 * the file first when it grew (checked at most every PERFMAP_RECHECK_NS). Borrowed until the
 * next call; NULL when nothing covers @addr or there is no file. */
const struct perfmap_sym *perfmap_find(struct perfmap *pm, uint64_t addr);
/* The symbol covering @addr at @time_ns (CLOCK_MONOTONIC), when a snapshot saw it: the newest
 * line that may have been written by then. Lines read only after a read made at or after
 * @time_ns were written later (the JIT reused that memory since, for other code) and are not
 * used. When nothing covers @addr and the file was last read before @time_ns, it is read again
 * at once (code made in between). */
const struct perfmap_sym *perfmap_find_at(struct perfmap *pm, uint64_t addr, uint64_t time_ns);

#define PERFMAP_RECHECK_NS 50000000ULL

#endif
