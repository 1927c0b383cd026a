/* perf map files: incremental parse of "START SIZE name" lines, newest entry wins. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perch/base/log.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-task.h"
#include "perch/symbols/perfmap.h"

#define PERFMAP_SCAN_BACK 64 /* entries looked at below an address for a covering one */

struct pm_entry {
	uint64_t start, size;
	uint32_t seq;  /* line number: a later line wins */
	uint32_t name; /* offset in names */
};

/* One read of the file: every line written before @time_ns is in it or an earlier one. */
struct pm_batch {
	uint64_t time_ns;
	uint32_t end_seq; /* lines [previous end_seq, end_seq) came from it */
};

struct perfmap {
	char *path[2];
	struct pm_entry *e;
	size_t nr, alloc;
	size_t nr_sorted; /* e[0..nr_sorted) is sorted by start; the rest is new */
	char *names;
	size_t names_len, names_alloc;
	uint64_t consumed; /* bytes of the file parsed (complete lines) */
	uint64_t checked_ns;
	struct pm_batch *batch;
	size_t nr_batch, alloc_batch;
	struct perfmap_sym out;
	int which; /* index of the path that opened, -1 none yet */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct perfmap *perfmap_new_empty(void)
{
	struct perfmap *pm = xcalloc(1, sizeof(*pm));

	pm->which = -1;
	return pm;
}

struct perfmap *perfmap_new(pid_t pid)
{
	struct perfmap *pm = perfmap_new_empty();
	struct proc_status st;
	/* the JIT names the file with its pid as it knows it: inside a PID namespace (a
	 * container, unshare -p) that is not perch's number for it */
	pid_t own = proc_status_read(pid, 0, &st) == 0 ? st.ns_pid : pid;

	pm->path[0] = xasprintf("/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)own);
	pm->path[1] = xasprintf("/tmp/perf-%d.map", (int)pid);
	return pm;
}

void perfmap_free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->path[0]);
	free(pm->path[1]);
	free(pm->e);
	free(pm->batch);
	free(pm->names);
	free(pm);
}

static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits >= 16)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static void add_line(struct perfmap *pm, const char *s, const char *end)
{
	struct pm_entry e;
	size_t len;

	if (pm->nr >= PERFMAP_MAX_ENTRIES || end - s > PERFMAP_MAX_LINE)
		return;
	if (parse_hex(&s, end, &e.start) < 0 || s >= end || *s != ' ')
		return;
	s++;
	if (parse_hex(&s, end, &e.size) < 0 || s >= end || *s != ' ' || !e.size ||
	    e.start + e.size < e.start)
		return;
	s++;
	while (end > s && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	len = (size_t)(end - s);
	if (!len)
		return;
	e.seq = (uint32_t)pm->nr;
	e.name = (uint32_t)pm->names_len;
	ALLOC_GROW(pm->names, pm->names_len + len + 1, pm->names_alloc);
	for (size_t i = 0; i < len; i++) /* names go into text outputs: no control bytes */
		pm->names[pm->names_len + i] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
	pm->names[pm->names_len + len] = '\0';
	pm->names_len += len + 1;
	ALLOC_GROW(pm->e, pm->nr + 1, pm->alloc);
	pm->e[pm->nr++] = e;
}

/* Close the batch of lines added since the last one, as read at @time_ns. With none, the last
 * batch holds all lines written before @time_ns: it is moved to that time. */
static void end_batch(struct perfmap *pm, uint64_t time_ns)
{
	size_t end = pm->nr_batch ? pm->batch[pm->nr_batch - 1].end_seq : 0;

	if (pm->nr == end) {
		if (pm->nr_batch)
			pm->batch[pm->nr_batch - 1].time_ns = time_ns;
		return;
	}
	ALLOC_GROW(pm->batch, pm->nr_batch + 1, pm->alloc_batch);
	pm->batch[pm->nr_batch++] = (struct pm_batch){time_ns, (uint32_t)pm->nr};
}

size_t perfmap_add_text(struct perfmap *pm, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		add_line(pm, p, nl);
		p = nl + 1;
	}
	return (size_t)(p - text);
}

size_t perfmap_add_text_at(struct perfmap *pm, const char *text, size_t len, uint64_t time_ns)
{
	size_t used = perfmap_add_text(pm, text, len);

	end_batch(pm, time_ns);
	return used;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Read what was appended to the file since last time (at most every PERFMAP_RECHECK_NS
 * unless @force). */
static void refresh(struct perfmap *pm, int force)
{
	uint64_t now = now_ns();
	struct stat st;
	char *buf;
	ssize_t got;
	size_t want;
	int fd = -1;

	if (!pm->path[0] || (!force && pm->checked_ns && now - pm->checked_ns < PERFMAP_RECHECK_NS))
		return;
	pm->checked_ns = now;
	for (int i = 0; i < 2 && fd < 0; i++) {
		if (pm->which >= 0 && pm->which != i)
			continue;
		fd = open(pm->path[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0)
			pm->which = i;
	}
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size <= pm->consumed ||
	    pm->consumed >= PERFMAP_MAX_FILE) {
		close(fd);
		end_batch(pm, now);
		return;
	}
	want = (size_t)((uint64_t)st.st_size - pm->consumed);
	if (want > PERFMAP_MAX_FILE - pm->consumed)
		want = (size_t)(PERFMAP_MAX_FILE - pm->consumed);
	buf = xmalloc(want);
	got = pread(fd, buf, want, (off_t)pm->consumed);
	close(fd);
	if (got > 0)
		pm->consumed += perfmap_add_text(pm, buf, (size_t)got);
	free(buf);
	end_batch(pm, now); /* @now was taken before the read: all written by then is in */
}

/* Lines after this one were written after @time_ns: the end of the first batch read at or
 * after it (all lines when no read was that late yet). */
static uint32_t seq_limit(const struct perfmap *pm, uint64_t time_ns)
{
	size_t lo = 0, hi = pm->nr_batch;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->batch[mid].time_ns < time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pm->nr_batch ? pm->batch[lo].end_seq : UINT32_MAX;
}

static const struct perfmap_sym *lookup(struct perfmap *pm, uint64_t addr, uint64_t time_ns)
{
	const struct pm_entry *best = NULL;
	uint32_t limit = seq_limit(pm, time_ns);
	size_t lo = 0, hi;

	if (pm->nr_sorted != pm->nr && pm->nr) {
		qsort(pm->e, pm->nr, sizeof(*pm->e), entry_cmp);
		pm->nr_sorted = pm->nr;
	}
	hi = pm->nr;
	while (lo < hi) { /* first entry starting after @addr */
		size_t mid = lo + (hi - lo) / 2;

		if (pm->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i-- > 0 && k < PERFMAP_SCAN_BACK; k++) {
		const struct pm_entry *e = &pm->e[i];

		if (addr - e->start < e->size && e->seq < limit && (!best || e->seq > best->seq))
			best = e;
	}
	if (!best)
		return NULL;
	pm->out = (struct perfmap_sym){best->start, best->size, pm->names + best->name};
	return &pm->out;
}

const struct perfmap_sym *perfmap_find_at(struct perfmap *pm, uint64_t addr, uint64_t time_ns)
{
	const struct perfmap_sym *sym;

	refresh(pm, 0);
	sym = lookup(pm, addr, time_ns);
	/* code made just before @time_ns, since the last read: read once more (once per
	 * snapshot time, so garbage addresses cannot make it read constantly) */
	if (!sym && pm->checked_ns < time_ns && time_ns != UINT64_MAX) {
		refresh(pm, 1);
		sym = lookup(pm, addr, time_ns);
	}
	return sym;
}

const struct perfmap_sym *perfmap_find(struct perfmap *pm, uint64_t addr)
{
	return perfmap_find_at(pm, addr, UINT64_MAX);
}
