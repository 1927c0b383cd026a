/* The JIT list: snapshots of `__jit_debug_descriptor` (art-list.c), the symfiles of its entries
 * copied and parsed once per entry generation, and pc -> JIT method lookups that respect time
 * (spec 1.5-1.6, pitfalls 7.2-7.3): a sample is named only by an entry registered before it and
 * still present when it was taken, the newest one when several hold the pc. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/art/art.h"
#include "perch/art/dex.h"
#include "perch/base/log.h"
#include "perch/base/xalloc.h"

#define ART_MAX_RETIRED 512 /* entries kept after they left the list */

struct jit_ent {
	struct art_entry e;
	struct art_symfile *sf; /* NULL: the symfile could not be used (counted in stats.bad) */
	uint64_t first_seen;	/* now_ns of the first snapshot that had the entry */
	uint64_t last_seen;	/* now_ns of the last snapshot that had the entry */
	int live;		/* in the last snapshot */
};

/* One symbol of one entry, for the sorted index. */
struct jit_idx {
	uint64_t start, end;
	uint32_t ent, sym;
};

struct art_jit {
	struct perch_mem mem;
	uint64_t desc;
	unsigned int machine;
	int is_64;
	struct art_layout l;
	int snapped; /* a snapshot succeeded; last_* describe it */
	uint32_t last_seqlock, last_action;
	uint64_t last_timestamp, last_first, last_relevant;
	struct jit_ent *ents;
	size_t nr, alloc;
	struct jit_idx *idx;
	size_t nr_idx, alloc_idx;
	uint64_t max_len; /* longest symbol: bounds the backward scan of a lookup */
	struct art_jit_stats st;
	char name[256]; /* the last name art_jit_find() gave */
};

struct art_jit *art_jit_new(const struct perch_mem *mem, uint64_t desc_addr, unsigned int machine,
			    int is_64)
{
	struct art_jit *j = xcalloc(1, sizeof(*j));

	j->mem = *mem;
	j->desc = desc_addr;
	j->machine = machine;
	j->is_64 = is_64;
	art_layout_init(&j->l, machine, is_64, ART_KIND_GDB);
	return j;
}

void art_jit_free(struct art_jit *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nr; i++)
		art_symfile_free(j->ents[i].sf);
	free(j->ents);
	free(j->idx);
	free(j);
}

const struct art_jit_stats *art_jit_stats(const struct art_jit *j)
{
	return &j->st;
}

enum art_kind art_jit_kind(const struct art_jit *j)
{
	return j->l.kind;
}

static int same_entry(const struct art_entry *a, const struct art_entry *b)
{
	return a->addr == b->addr && a->seqlock == b->seqlock && a->timestamp == b->timestamp &&
	       a->symfile_addr == b->symfile_addr && a->symfile_size == b->symfile_size;
}

/* The cached entry @e is (NULL: a new one). The GDB layout has no timestamp or seqlock: an
 * entry recycled at the same address for a symfile at the same address and of the same size
 * looks identical, so there the symfile bytes are compared too. */
static struct jit_ent *find_cached(struct art_jit *j, const struct art_entry *e)
{
	uint8_t *buf = NULL;
	struct jit_ent *found = NULL;

	for (size_t i = 0; i < j->nr && !found; i++) {
		struct jit_ent *x = &j->ents[i];

		if (!same_entry(&x->e, e))
			continue;
		if (j->l.kind != ART_KIND_GDB || !x->sf) {
			found = x;
			break;
		}
		if (!buf) {
			buf = xmalloc((size_t)e->symfile_size);
			if (j->mem.read(j->mem.ctx, e->symfile_addr, buf, (size_t)e->symfile_size) <
			    0)
				break;
		}
		if (art_symfile_equal(x->sf, buf, (size_t)e->symfile_size))
			found = x;
	}
	free(buf);
	return found;
}

/* Copy and parse the symfile of @e. 0 (with *@sf, NULL for an unusable symfile), -ESTALE when
 * the entry changed while it was copied (its memory may have been freed mid-copy: not cached,
 * the next snapshot decides). */
static int load_symfile(struct art_jit *j, const struct art_entry *e, struct art_symfile **sf)
{
	uint8_t *buf;
	int ret;

	*sf = NULL;
	if (e->symfile_size > ART_MAX_SYMFILE || e->symfile_size < 4)
		return 0;
	buf = xmalloc((size_t)e->symfile_size);
	ret = j->mem.read(j->mem.ctx, e->symfile_addr, buf, (size_t)e->symfile_size);
	if (art_entry_check(&j->mem, &j->l, e) < 0) {
		free(buf);
		return -ESTALE;
	}
	if (ret == 0)
		*sf = art_symfile_new(buf, (size_t)e->symfile_size, j->machine, j->is_64);
	free(buf);
	return 0;
}

static int idx_cmp(const void *a, const void *b)
{
	const struct jit_idx *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ent < y->ent ? -1 : x->ent > y->ent;
}

static void rebuild_index(struct art_jit *j)
{
	j->nr_idx = 0;
	j->max_len = 0;
	for (size_t i = 0; i < j->nr; i++) {
		const struct art_symfile *sf = j->ents[i].sf;

		for (size_t k = 0; sf && k < art_symfile_count(sf); k++) {
			const struct art_jit_sym *s = art_symfile_get(sf, k);

			ALLOC_GROW(j->idx, j->nr_idx + 1, j->alloc_idx);
			j->idx[j->nr_idx++] =
			    (struct jit_idx){s->start, s->end, (uint32_t)i, (uint32_t)k};
			if (s->end - s->start > j->max_len)
				j->max_len = s->end - s->start;
		}
	}
	if (j->nr_idx)
		qsort(j->idx, j->nr_idx, sizeof(*j->idx), idx_cmp);
}

/* Drop entries that left the list long ago (or too many of them), oldest first. */
static void prune(struct art_jit *j, uint64_t now_ns)
{
	size_t retired = 0, w = 0;

	for (size_t i = 0; i < j->nr; i++)
		retired += !j->ents[i].live;
	for (size_t i = 0; i < j->nr; i++) {
		struct jit_ent *x = &j->ents[i];
		int drop = !x->live &&
			   (now_ns - x->last_seen > ART_RETIRED_NS || retired > ART_MAX_RETIRED);

		if (drop) {
			art_symfile_free(x->sf);
			retired--;
			continue;
		}
		j->ents[w++] = *x;
	}
	j->nr = w;
	j->st.retired = retired;
}

int art_jit_update(struct art_jit *j, uint64_t now_ns, int force)
{
	struct art_descriptor d;
	struct art_layout l;
	struct art_entry *list;
	size_t nr, first_new;
	int ret;

	ret = art_descriptor_read(&j->mem, j->desc, j->machine, j->is_64, &d, &l);
	if (ret < 0)
		return ret;
	/* (the GDB layout's descriptor can look unchanged after a change: an entry recycled at
	 * the head again; its list is walked every time) */
	if (j->snapped && l.kind == j->l.kind && l.kind != ART_KIND_GDB && !force &&
	    d.seqlock == j->last_seqlock && d.timestamp == j->last_timestamp &&
	    d.first == j->last_first && d.action == j->last_action &&
	    d.relevant == j->last_relevant) {
		/* nothing was removed since the snapshot: its entries were all there at @now_ns */
		for (size_t i = 0; i < j->nr; i++)
			if (j->ents[i].live)
				j->ents[i].last_seen = now_ns;
		return 0;
	}
	if (l.kind != j->l.kind) {
		/* first sight, or the runtime initialised its magic: nothing cached is valid */
		for (size_t i = 0; i < j->nr; i++)
			art_symfile_free(j->ents[i].sf);
		j->nr = 0;
		j->l = l;
	}
	ret = art_list_snapshot(&j->mem, j->desc, &j->l, &list, &nr);
	if (ret < 0) {
		free(list);
		if (ret == -EAGAIN)
			j->st.races++;
		return ret;
	}
	for (size_t i = 0; i < j->nr; i++)
		j->ents[i].live = 0;
	first_new = j->nr;
	for (size_t i = 0; i < nr; i++) {
		struct jit_ent *x = find_cached(j, &list[i]);
		struct art_symfile *sf;

		if (x) {
			x->live = 1;
			x->last_seen = now_ns;
			continue;
		}
		if (load_symfile(j, &list[i], &sf) < 0)
			continue; /* deleted while copying: the next snapshot has its successor */
		if (!sf)
			j->st.bad++;
		ALLOC_GROW(j->ents, j->nr + 1, j->alloc);
		j->ents[j->nr++] = (struct jit_ent){list[i], sf, now_ns, now_ns, 1};
	}
	free(list);
	if (j->l.kind != ART_KIND_ANDROID2 && j->nr > first_new) {
		/* no entry seqlocks: the copies are good only if the list did not change */
		struct art_descriptor d2;

		if (art_descriptor_read(&j->mem, j->desc, j->machine, j->is_64, &d2, &l) < 0 ||
		    d2.seqlock != d.seqlock || d2.first != d.first || d2.timestamp != d.timestamp ||
		    d2.relevant != d.relevant || d2.action != d.action) {
			for (size_t i = first_new; i < j->nr; i++)
				art_symfile_free(j->ents[i].sf);
			j->nr = first_new;
			j->st.races++;
			return -EAGAIN;
		}
	}
	prune(j, now_ns);
	rebuild_index(j);
	j->snapped = 1;
	j->last_seqlock = d.seqlock;
	j->last_timestamp = d.timestamp;
	j->last_first = d.first;
	j->last_action = d.action;
	j->last_relevant = d.relevant;
	j->st.snapshots++;
	j->st.entries = 0;
	for (size_t i = 0; i < j->nr; i++)
		j->st.entries += j->ents[i].live && j->ents[i].sf;
	return 1;
}

/* When @x was registered at the latest: its timestamp; the GDB layout has none, so the first
 * look that saw it (a sample before that may have run other code at the same address). */
static uint64_t registered(const struct art_jit *j, const struct jit_ent *x)
{
	return j->l.kind == ART_KIND_GDB ? x->first_seen : x->e.timestamp;
}

/* Could entry @x have described the code at time @t? Only if it was registered before @t and
 * was seen in the list at or after @t: an entry in the last snapshot may have been removed
 * (and its code replaced) since, so a sample newer than every look at the list gets no name
 * rather than a stale one (art_jit_update() after the sample fixes that). */
static int valid_at(const struct art_jit *j, const struct jit_ent *x, uint64_t t)
{
	if (!t)
		return x->live;
	/* registered after the sample: the pc ran other code then */
	if (registered(j, x) > t)
		return 0;
	return t <= x->last_seen;
}

int art_jit_find(struct art_jit *j, uint64_t pc, uint64_t time_ns, struct art_jit_sym *out,
		 const struct cfi_table **cfi)
{
	const struct jit_ent *best = NULL;
	const struct art_jit_sym *best_sym = NULL;
	size_t lo = 0, hi = j->nr_idx;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->idx[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0; i--) {
		const struct jit_idx *x = &j->idx[i - 1];
		const struct jit_ent *e = &j->ents[x->ent];

		if (pc - x->start >= j->max_len)
			break;
		if (pc >= x->end || !valid_at(j, e, time_ns))
			continue;
		/* newest registration wins */
		if (!best || registered(j, e) > registered(j, best) ||
		    (registered(j, e) == registered(j, best) && e->live && !best->live)) {
			best = e;
			best_sym = art_symfile_get(e->sf, x->sym);
		}
	}
	if (!best)
		return -ENOENT;
	*out = *best_sym;
	/* one name per Java method, whether it ran compiled or interpreted */
	out->name = dex_java_name(best_sym->name, j->name, sizeof(j->name));
	if (cfi)
		*cfi = art_symfile_cfi(best->sf);
	return 0;
}
