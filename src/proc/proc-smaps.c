/* /proc/PID/smaps and smaps_rollup parser: header lines like /proc/PID/maps, then "Key: N kB"
 * fields summed per mapping. Pure text handling; reading the file is proc_read_file()'s job. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/textscan.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-smaps.h"
#include "perch/proc/proc-task.h"

/* More mappings than vm.max_map_count allows by default (65530), with a wide margin. */
#define PROC_SMAPS_MAX_MAPS (1u << 22)

/* The field lines perch reads, and where each goes. */
static const struct smaps_field {
	const char *key;
	uint8_t klen;
	uint8_t off; /* offset in struct proc_smaps_usage */
	uint32_t bit;
} smaps_fields[] = {
#define F(k, m, b)                                                                                 \
	{                                                                                          \
		k, sizeof(k) - 1, offsetof(struct proc_smaps_usage, m), PROC_SMAPS_HAS_##b         \
	}
    F("Size", size, SIZE),
    F("Rss", rss, RSS),
    F("Pss", pss, PSS),
    F("Pss_Dirty", pss_dirty, PSS_DIRTY),
    F("Pss_Anon", pss_anon, PSS_ANON),
    F("Pss_File", pss_file, PSS_FILE),
    F("Pss_Shmem", pss_shmem, PSS_SHMEM),
    F("Shared_Clean", shared_clean, SHARED_CLEAN),
    F("Shared_Dirty", shared_dirty, SHARED_DIRTY),
    F("Private_Clean", private_clean, PRIVATE_CLEAN),
    F("Private_Dirty", private_dirty, PRIVATE_DIRTY),
    F("Referenced", referenced, REFERENCED),
    F("Anonymous", anonymous, ANONYMOUS),
    F("LazyFree", lazyfree, LAZYFREE),
    F("AnonHugePages", anon_huge, ANON_HUGE),
    F("Swap", swap, SWAP),
    F("SwapPss", swap_pss, SWAP_PSS),
    F("Locked", locked, LOCKED),
#undef F
};

/* The table and the one buffer that holds every path. */
struct smaps_table {
	struct proc_smaps pub;
	char *paths;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void proc_smaps_usage_add(struct proc_smaps_usage *a, const struct proc_smaps_usage *b)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(smaps_fields); i++) {
		uint64_t *pa = (uint64_t *)((char *)a + smaps_fields[i].off);
		const uint64_t *pb = (const uint64_t *)((const char *)b + smaps_fields[i].off);

		*pa = sat_add(*pa, *pb);
	}
}

uint64_t proc_smaps_uss(const struct proc_smaps_usage *u)
{
	return sat_add(u->private_clean, u->private_dirty);
}

/* Does [@line, @eol) start like a header ("<hex>-")? Field keys such as "AnonHugePages:"
 * start with hex letters too, so the '-' decides. */
static int looks_like_header(const char *line, const char *eol)
{
	const char *p = line;
	uint64_t v;

	return !textscan_x64(&p, eol, 16, &v) && p < eol && *p == '-';
}

/* A field line into @u / @has. 0 (also for well-formed lines perch ignores) or -EINVAL. */
static int parse_field(const char *line, const char *eol, struct proc_smaps_usage *u, uint32_t *has)
{
	const char *p = line, *colon;
	size_t klen, i;
	uint64_t v;

	while (p < eol && ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			   (*p >= '0' && *p <= '9') || *p == '_'))
		p++;
	if (p == line || p >= eol || *p != ':')
		return -EINVAL;
	colon = p;
	klen = (size_t)(colon - line);
	for (i = 0; i < ARRAY_SIZE(smaps_fields); i++)
		if (smaps_fields[i].klen == klen && smaps_fields[i].key[0] == line[0] &&
		    !memcmp(smaps_fields[i].key, line, klen))
			break;
	if (i == ARRAY_SIZE(smaps_fields))
		return 0; /* VmFlags:, THPeligible:, Name:, a field of a newer kernel ... */
	p = colon + 1;
	textscan_skip_spaces(&p, eol);
	if (textscan_u64(&p, eol, &v) || eol - p != 3 || memcmp(p, " kB", 3))
		return -EINVAL;
	*(uint64_t *)((char *)u + smaps_fields[i].off) = v;
	*has |= smaps_fields[i].bit;
	return 0;
}

struct proc_smaps *proc_smaps_parse(const char *text)
{
	size_t textlen = strlen(text), alloc = 0, off_alloc = 0, used = 0, i;
	struct smaps_table *t = xcalloc(1, sizeof(*t));
	struct proc_smaps *s = &t->pub;
	struct proc_smap *cur = NULL;
	const char *pos = text, *line, *eol;
	size_t *path_off = NULL;

	/* paths go to one arena at offsets (the arena shrinks at the end, then the pointers are
	 * set); no path is longer than its line, so textlen + 1 always suffices */
	t->paths = xmalloc(textlen + 1);
	while ((line = textscan_line(&pos, &eol))) {
		struct proc_map m;
		const char *path;
		size_t plen;

		if (eol == line)
			continue;
		if (eol - line > PROC_SMAPS_MAX_LINE) {
			s->bad_lines++;
			if (looks_like_header(line, eol))
				cur = NULL; /* its fields must not land on the previous mapping */
			continue;
		}
		if (!looks_like_header(line, eol)) {
			if (!cur || parse_field(line, eol, &cur->u, &s->has))
				s->bad_lines++;
			continue;
		}
		cur = NULL;
		if (proc_maps_parse_line(line, eol, &m, &path, &plen) ||
		    s->nr >= PROC_SMAPS_MAX_MAPS ||
		    (s->nr && m.start < s->maps[s->nr - 1].map.end)) {
			s->bad_lines++;
			continue;
		}
		ALLOC_GROW(s->maps, s->nr + 1, alloc);
		ALLOC_GROW(path_off, s->nr + 1, off_alloc);
		memcpy(t->paths + used, path, plen);
		t->paths[used + plen] = '\0';
		path_off[s->nr] = used;
		used += plen + 1;
		cur = &s->maps[s->nr++];
		memset(cur, 0, sizeof(*cur));
		cur->map = m;
	}
	t->paths = xrealloc(t->paths, used ? used : 1);
	for (i = 0; i < s->nr; i++) {
		s->maps[i].map.path = t->paths + path_off[i];
		proc_smaps_usage_add(&s->total, &s->maps[i].u);
	}
	free(path_off);
	return s;
}

struct proc_smaps *proc_smaps_load_file(const char *path)
{
	struct proc_smaps *s;
	char *text;

	text = proc_read_file(path, NULL);
	if (!text)
		return NULL;
	s = proc_smaps_parse(text);
	free(text);
	return s;
}

struct proc_smaps *proc_smaps_load(pid_t pid)
{
	struct proc_smaps *s;
	char path[64], *live;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	s = proc_smaps_load_file(path);
	/* none: a zombie leader (proc_live_task_path()) */
	if (s && !s->nr && (live = proc_live_task_path(pid, "smaps"))) {
		proc_smaps_free(s);
		s = proc_smaps_load_file(live);
		free(live);
	}
	return s;
}

void proc_smaps_free(struct proc_smaps *s)
{
	struct smaps_table *t;

	if (!s)
		return;
	t = (struct smaps_table *)((char *)s - offsetof(struct smaps_table, pub));
	free(t->paths);
	free(s->maps);
	free(t);
}

int proc_smaps_rollup_parse(const char *text, struct proc_smaps_rollup *out)
{
	const char *pos = text, *line, *eol;
	int have_header = 0;

	memset(out, 0, sizeof(*out));
	while ((line = textscan_line(&pos, &eol))) {
		if (eol == line)
			continue;
		if (eol - line > PROC_SMAPS_MAX_LINE) {
			out->bad_lines++;
			continue;
		}
		if (looks_like_header(line, eol)) {
			struct proc_map m;
			const char *path;
			size_t plen;

			/* one header only: a second one would mean this is not a rollup */
			if (have_header || proc_maps_parse_line(line, eol, &m, &path, &plen)) {
				out->bad_lines++;
				continue;
			}
			have_header = 1;
			out->start = m.start;
			out->end = m.end;
			continue;
		}
		if (!have_header || parse_field(line, eol, &out->u, &out->has))
			out->bad_lines++;
	}
	return have_header && out->has ? 0 : -EINVAL;
}

int proc_smaps_rollup_load_file(const char *path, struct proc_smaps_rollup *out)
{
	char *text;
	int ret;

	text = proc_read_file(path, NULL);
	if (!text)
		return -errno;
	ret = proc_smaps_rollup_parse(text, out);
	free(text);
	return ret;
}

int proc_smaps_rollup_load(pid_t pid, struct proc_smaps_rollup *out)
{
	char path[64], *live;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	ret = proc_smaps_rollup_load_file(path, out);
	/* ESRCH, or no mapping: a zombie leader (proc_live_task_path()) */
	if ((ret == -ESRCH || ret == -EINVAL) &&
	    (live = proc_live_task_path(pid, "smaps_rollup"))) {
		ret = proc_smaps_rollup_load_file(live, out);
		free(live);
	}
	return ret;
}
