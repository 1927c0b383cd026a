/* Which modules and threads of BASE and NEW are the same (see diff.h, Pairing): the main
 * executable whatever its name, libraries without their version suffix, the main thread with
 * the main thread, numbered threads as one pool, processes by role, and --map by hand. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff-int.h"
#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/profile/profile.h"

/* @name as the other side calls it: BASE's OLD of a --map OLD=NEW is NEW; *@mapped says so. */
static const char *map_name(const struct diff *d, int side, const char *name, int *mapped)
{
	*mapped = 0;
	if (side != DIFF_BASE || !name)
		return name;
	for (size_t i = 0; i < d->o.nr_map; i++)
		if (!strcmp(d->map[i].old, name)) {
			*mapped = 1;
			return d->map[i].new;
		}
	return name;
}

/* @s with every run of digits as one '#' ("worker-12" -> "worker-#") into @sb. */
static void add_numbers_as_hash(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9') {
			while (s[1] >= '0' && s[1] <= '9')
				s++;
			strbuf_addch(sb, '#');
		} else {
			strbuf_addch(sb, *s);
		}
	}
}

/* The module mapped lowest ("load:PATH" meta "start=0x..."): the first that /proc/PID/maps
 * lists, the main executable in a recording that did not note it. NULL when none. */
static const char *lowest_module(const struct profile *p)
{
	const char *key, *value, *best = NULL;
	uint64_t best_start = UINT64_MAX;

	for (size_t i = 0; (key = profile_meta_at(p, i, &value)); i++) {
		const char *st = strncmp(key, "load:", 5) ? NULL : strstr(value, "start=0x");
		uint64_t start;

		if (st && sscanf(st + 8, "%" SCNx64, &start) == 1 && start < best_start) {
			best_start = start;
			best = key + 5;
		}
	}
	return best;
}

void pair_rep_init(struct diff *d, struct rep *rp)
{
	char key[64];
	const char *exe;

	rp->pid = (pid_t)profile_meta_u64(rp->p, "pid");
	snprintf(key, sizeof(key), "exe:%d", (int)rp->pid);
	exe = rp->pid ? profile_meta(rp->p, key) : NULL;
	if (!exe || !*exe)
		exe = lowest_module(rp->p);
	rp->exe = exe ? strarena_strdup(&d->arena, exe) : NULL;
}

/* The pairing key of module @path (base name @base) of side @side into @sb; how it pairs. */
static const char *module_key(const struct diff *d, const struct rep *rp, const char *path,
			      const char *base, struct strbuf *sb)
{
	int mapped;
	const char *name = map_name(d, rp->side, base, &mapped), *so;
	const char *new_exe = d->s[DIFF_NEW].rep[0].exe;

	if (mapped && new_exe && !strcmp(path_base(new_exe), name)) {
		strbuf_addstr(sb, "\001exe"); /* mapped to NEW's main executable */
		return "--map";
	}
	if (!mapped && rp->exe && !strcmp(path, rp->exe)) {
		strbuf_addstr(sb, "\001exe");
		return "main executable";
	}
	so = strstr(name, ".so.");
	strbuf_addch(sb, 'M');
	strbuf_add(sb, name, so ? (size_t)(so + 3 - name) : strlen(name));
	return mapped ? "--map" : so ? "soname stem" : "name";
}

uint32_t pair_module(struct diff *d, struct rep *rp, uint32_t mod, const char **base)
{
	const char *path = profile_str(rp->p, mod), *how;
	struct strbuf key = STRBUF_INIT;
	struct diff_module *m;
	size_t slot;
	uint32_t id;
	int added;

	*base = path_base(path);
	if (!*path)
		return NO_ID;
	id = u64map_find(&rp->mod_of, mod, &slot);
	if (id != NO_ID)
		return id;
	how = module_key(d, rp, path, *base, &key);
	id = diff_intern(&d->mod_keys, &d->arena, key.buf, &added);
	strbuf_release(&key);
	u64map_set(&rp->mod_of, slot, mod, id);
	if (added) {
		ALLOC_GROW(d->mods, id + 1, d->alloc_mods);
		memset(&d->mods[id], 0, sizeof(d->mods[id]));
		d->mods[id].how = how;
	}
	m = &d->mods[id];
	if (!m->name[rp->side])
		m->name[rp->side] = strarena_strdup(&d->arena, *base);
	if (!strcmp(m->how, "name"))
		m->how = how; /* the stronger reason of the two sides */
	return id;
}

/* The name of thread @th's process (its own, else the recording's "comm"), "" unknown. */
static const char *process_name(const struct profile *p, const struct profile_thread *th)
{
	const char *name = th->pid ? profile_process_name(p, th->pid) : NULL;

	if (!name || !*name)
		name = profile_meta(p, "comm");
	return name ? name : "";
}

/* The group key of thread @th into @key, its label into @label; how it pairs. */
static const char *thread_key(const struct diff *d, const struct rep *rp,
			      const struct profile_thread *th, struct strbuf *key,
			      struct strbuf *label)
{
	const struct profile *p = rp->p;
	const char *comm = process_name(p, th), *tname = profile_str(p, th->name), *name;
	pid_t pid = th->pid ? th->pid : rp->pid;
	int mapped, mapped_proc, other_proc = th->pid && rp->pid && th->pid != rp->pid;
	size_t at;

	tname = *tname ? tname : "[unknown]";
	comm = map_name(d, rp->side, comm, &mapped_proc);
	if (other_proc) {
		/* a process of its own: paired by role, its name without numbers */
		strbuf_addch(key, 'P');
		add_numbers_as_hash(key, comm);
	} else {
		strbuf_addch(key, '\001'); /* the recorded process, whatever its name */
	}
	strbuf_addch(key, 0x1f);
	strbuf_addf(label, "%s%s", comm, *comm ? "/" : "");
	if (pid && th->tid == pid) {
		strbuf_addstr(key, "\001main");
		strbuf_addstr(label, tname);
		return "main thread";
	}
	name = map_name(d, rp->side, tname, &mapped);
	strbuf_addch(key, 'T');
	at = key->len;
	add_numbers_as_hash(key, name);
	strbuf_addstr(label, key->buf + at);
	if (mapped || mapped_proc)
		return "--map";
	return strcmp(key->buf + at, name) ? "numbers as #" : "name";
}

/* A new group @g labelled @label. */
static void group_new(struct diff *d, uint32_t g, const char *label, const char *how)
{
	ALLOC_GROW(d->groups, g + 1, d->alloc_groups);
	ALLOC_GROW(d->group_node, g + 1, d->alloc_gnode);
	ALLOC_GROW(d->gbatch, (g + 1) * 2 * DIFF_BATCHES, d->alloc_gbatch);
	ALLOC_GROW(d->gnb, (g + 1) * 2, d->alloc_gnb);
	ALLOC_GROW(d->grank, (g + 1) * 2, d->alloc_grank);
	ALLOC_GROW(d->grep, (g + 1) * 2 * NR_REP, d->alloc_grep);
	memset(&d->groups[g], 0, sizeof(d->groups[g]));
	memset(d->gbatch + (size_t)g * 2 * DIFF_BATCHES, 0, 2 * DIFF_BATCHES * sizeof(*d->gbatch));
	memset(d->grep + (size_t)g * 2 * NR_REP, 0, 2 * NR_REP * sizeof(*d->grep));
	d->gnb[2 * g] = d->gnb[2 * g + 1] = 0;
	d->grank[2 * g] = d->grank[2 * g + 1] = 0;
	d->groups[g].label = strarena_strdup(&d->arena, label);
	d->groups[g].how = how;
	d->group_node[g] = diff_node_new(d, 0, NO_ID, d->groups[g].label, DIFF_NODE_THREAD, g);
	d->nr_groups++;
}

uint32_t pair_thread(struct diff *d, struct rep *rp, uint32_t t)
{
	const struct profile_thread *th = profile_thread_get(rp->p, t);
	struct strbuf key = STRBUF_INIT, label = STRBUF_INIT, name = STRBUF_INIT;
	const char *how = "all threads", *tname = profile_str(rp->p, th->name);
	struct diff_group *gr;
	uint32_t g;
	int added;

	if (d->o.merge_threads)
		strbuf_addstr(&label, "all threads");
	else
		how = thread_key(d, rp, th, &key, &label);
	g = diff_intern(&d->group_keys, &d->arena, key.buf, &added);
	if (added)
		group_new(d, g, label.buf, how);
	gr = &d->groups[g];
	gr->threads[rp->side]++;
	if (!gr->name[rp->side]) {
		const char *comm = process_name(rp->p, th);

		strbuf_addf(&name, "%s%s%s", comm, *comm ? "/" : "", *tname ? tname : "[unknown]");
		gr->name[rp->side] = strarena_strdup(&d->arena, name.buf);
	}
	if (!strcmp(gr->how, "name"))
		gr->how = how;
	strbuf_release(&key);
	strbuf_release(&label);
	strbuf_release(&name);
	return g;
}

void pair_count(struct diff *d)
{
	for (size_t i = 0; i < d->nr_fns; i++) {
		const struct diff_fn *fn = &d->fns[i];
		const struct diff_group *g = &d->groups[fn->group];
		uint32_t mod = d->ki[d->fn_key[i]].mod;

		for (int s = 0; s < 2; s++) {
			if (mod != NO_ID)
				d->mods[mod].samples[s] += fn->self.x[s];
			if (g->samples[0] && g->samples[1] &&
			    (mod == NO_ID || (d->mods[mod].name[0] && d->mods[mod].name[1])))
				d->s[s].compared += fn->self.x[s];
		}
	}
}
