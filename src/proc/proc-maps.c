/* /proc/PID/maps parser: a strict line parser into a sorted, non-overlapping table.
 * Pure text handling; reading the file is proc_read_file()'s job. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/textscan.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "perch/proc/proc-task.h"

/* More mappings than vm.max_map_count allows by default (65530), with a wide margin. */
#define PROC_MAPS_MAX_LINES (1u << 22)

static const char deleted_suffix[] = " (deleted)";

/* The table and the one buffer that holds every path (never reallocated, so the
 * proc_map.path pointers into it stay valid). */
struct maps_table {
	struct proc_maps pub;
	char *paths;
};

int proc_maps_parse_line(const char *line, const char *eol, struct proc_map *m, const char **path,
			 size_t *plen)
{
	static const char prot_chars[4][2] = {{'r', '-'}, {'w', '-'}, {'x', '-'}, {'p', 's'}};
	const char *p = line;
	uint64_t major, minor;
	int i;

	memset(m, 0, sizeof(*m));
	if (textscan_x64(&p, eol, 16, &m->start) || textscan_expect(&p, eol, "-") ||
	    textscan_x64(&p, eol, 16, &m->end) || textscan_expect(&p, eol, " "))
		return -EINVAL;
	if (m->start >= m->end)
		return -EINVAL;
	for (i = 0; i < 4; i++, p++) {
		if (p >= eol)
			return -EINVAL;
		if (*p == prot_chars[i][0])
			m->prot |= i == 3 ? 0 : 1u << i;
		else if (*p == prot_chars[i][1])
			m->prot |= i == 3 ? PROC_MAPS_PROT_SHARED : 0;
		else
			return -EINVAL;
	}
	if (textscan_expect(&p, eol, " ") || textscan_x64(&p, eol, 16, &m->offset) ||
	    textscan_expect(&p, eol, " ") || textscan_x64(&p, eol, 8, &major) ||
	    textscan_expect(&p, eol, ":") || textscan_x64(&p, eol, 8, &minor) ||
	    textscan_expect(&p, eol, " ") || textscan_u64(&p, eol, &m->inode))
		return -EINVAL;
	m->dev_major = (uint32_t)major;
	m->dev_minor = (uint32_t)minor;
	/* the kernel pads with spaces to a column before the path; an anonymous mapping
	 * may end with the padding or directly after the inode */
	if (!textscan_skip_spaces(&p, eol) && p < eol)
		return -EINVAL;
	*path = p;
	*plen = (size_t)(eol - p);
	if (*plen >= sizeof(deleted_suffix) - 1 &&
	    !memcmp(eol - (sizeof(deleted_suffix) - 1), deleted_suffix,
		    sizeof(deleted_suffix) - 1)) {
		m->deleted = 1;
		*plen -= sizeof(deleted_suffix) - 1;
	}
	return 0;
}

/* One line, [@line, @eol). The path is copied to *@arena (NUL-terminated) and *@arena
 * advanced. 0 or -EINVAL. */
static int parse_line(const char *line, const char *eol, struct proc_map *m, char **arena)
{
	const char *path;
	size_t len;

	if (proc_maps_parse_line(line, eol, m, &path, &len))
		return -EINVAL;
	memcpy(*arena, path, len);
	(*arena)[len] = '\0';
	m->path = *arena;
	*arena += len + 1;
	return 0;
}

struct proc_maps *proc_maps_parse(const char *text, size_t *bad_lines)
{
	size_t textlen = strlen(text), alloc = 0, bad = 0, lines = 0;
	struct maps_table *t = xcalloc(1, sizeof(*t));
	struct proc_maps *m = &t->pub;
	const char *pos = text, *line, *eol;
	char *arena;

	/* every path is at most its line's length and takes that line's '\n' for its NUL
	 * (+1 for a last line without '\n'): the arena never needs to grow */
	t->paths = arena = xmalloc(textlen + 1);
	while (lines < PROC_MAPS_MAX_LINES && (line = textscan_line(&pos, &eol))) {
		struct proc_map cur;
		char *mark = arena;

		lines++;
		if (eol == line)
			continue; /* blank line (e.g. the end of a file) */
		if (parse_line(line, eol, &cur, &arena)) {
			bad++;
			arena = mark;
			continue;
		}
		/* keep the invariant: sorted by start, no overlap. The kernel never emits
		 * such lines; a file edited by hand or torn by a concurrent change might */
		if (m->nr && cur.start < m->maps[m->nr - 1].end) {
			bad++;
			arena = mark;
			continue;
		}
		ALLOC_GROW(m->maps, m->nr + 1, alloc);
		m->maps[m->nr++] = cur;
	}
	if (*pos)
		bad++; /* lines beyond the limit count as one bad line */
	if (bad_lines)
		*bad_lines = bad;
	return m;
}

struct proc_maps *proc_maps_load_file(const char *path)
{
	struct proc_maps *m;
	char *text;

	text = proc_read_file(path, NULL);
	if (!text)
		return NULL;
	m = proc_maps_parse(text, NULL);
	free(text);
	return m;
}

struct proc_maps *proc_maps_load(pid_t pid)
{
	struct proc_maps *m;
	char path[64], *live;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	m = proc_maps_load_file(path);
	/* a process has mappings: none means a zombie leader, read through a live thread */
	if (m && !m->nr && (live = proc_live_task_path(pid, "maps"))) {
		proc_maps_free(m);
		m = proc_maps_load_file(live);
		free(live);
	}
	return m;
}

void proc_maps_free(struct proc_maps *m)
{
	struct maps_table *t;

	if (!m)
		return;
	t = (struct maps_table *)((char *)m - offsetof(struct maps_table, pub));
	free(t->paths);
	free(m->maps);
	free(t);
}

const struct proc_map *proc_maps_find(const struct proc_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr;

	/* find the first map with start > addr; the candidate is the one before it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->maps[lo - 1].end)
		return NULL;
	return &m->maps[lo - 1];
}

/* Memory a stack can be in: private, writable, without a file behind it */
static int stack_memory(const struct proc_map *pm)
{
	return (pm->prot & (PROC_MAPS_PROT_WRITE | PROC_MAPS_PROT_SHARED)) ==
		   PROC_MAPS_PROT_WRITE &&
	       !pm->inode && (!pm->path[0] || pm->path[0] == '[');
}

uint64_t proc_maps_stack_end(const struct proc_maps *m, uint64_t sp)
{
	const struct proc_map *pm = proc_maps_find(m, sp);
	const struct proc_map *last = m->maps + m->nr;

	if (!pm || !stack_memory(pm))
		return 0;
	while (pm + 1 < last && pm[1].start == pm->end && stack_memory(pm + 1))
		pm++;
	return pm->end;
}

const char *proc_map_basename(const struct proc_map *map)
{
	const char *slash;

	if (map->path[0] == '[')
		return map->path; /* "[vdso]", "[anon:dalvik-/data/...]" */
	slash = strrchr(map->path, '/');
	if (!slash || !slash[1])
		return map->path;
	return slash + 1;
}
