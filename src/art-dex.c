/* The dex list (`__dex_debug_descriptor`, spec 2.1-2.2): snapshots of the registered dex files,
 * and dex pc -> method + line. A dex file's bytes are copied out of the target the first time a
 * dex pc lands in it and parsed by dex.c; the parsed file is cached by (address, size), which
 * outlives entry generations (dex files are registered again, e.g. by another class loader). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/art.h"
#include "perch/dex.h"
#include "perch/log.h"
#include "perch/xalloc.h"

#define ART_MAX_DEX_FILES 4096 /* opened dex files kept */

struct dex_cache {
	uint64_t addr, size;
	struct dex_file *df; /* NULL: the bytes could not be read or parsed */
};

struct art_dex {
	struct perch_mem mem;
	uint64_t desc;
	unsigned int machine;
	int is_64;
	struct art_layout l;
	int snapped;
	uint32_t last_seqlock;
	uint64_t last_timestamp, last_first;
	struct art_entry *ents; /* the last snapshot */
	size_t nr;
	struct dex_cache *cache;
	size_t nr_cache, alloc_cache;
};

struct art_dex *art_dex_new(const struct perch_mem *mem, uint64_t desc_addr, unsigned int machine,
			    int is_64)
{
	struct art_dex *d = xcalloc(1, sizeof(*d));

	d->mem = *mem;
	d->desc = desc_addr;
	d->machine = machine;
	d->is_64 = is_64;
	art_layout_init(&d->l, machine, is_64, ART_KIND_GDB);
	return d;
}

void art_dex_free(struct art_dex *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nr_cache; i++)
		dex_close(d->cache[i].df);
	free(d->cache);
	free(d->ents);
	free(d);
}

size_t art_dex_count(const struct art_dex *d)
{
	return d->nr;
}

int art_dex_update(struct art_dex *d, uint64_t now_ns, int force)
{
	struct art_descriptor desc;
	struct art_layout l;
	struct art_entry *list;
	size_t nr;
	int ret;

	(void)now_ns;
	ret = art_descriptor_read(&d->mem, d->desc, d->machine, d->is_64, &desc, &l);
	if (ret < 0)
		return ret;
	if (d->snapped && l.kind == d->l.kind && !force && desc.seqlock == d->last_seqlock &&
	    desc.timestamp == d->last_timestamp && desc.first == d->last_first)
		return 0;
	d->l = l;
	ret = art_list_snapshot(&d->mem, d->desc, &d->l, &list, &nr);
	if (ret < 0) {
		free(list);
		return ret;
	}
	free(d->ents);
	d->ents = list;
	d->nr = nr;
	d->snapped = 1;
	d->last_seqlock = desc.seqlock;
	d->last_timestamp = desc.timestamp;
	d->last_first = desc.first;
	return 1;
}

/* The parsed dex file of entry @e, opened on first use. NULL when unusable. */
static struct dex_file *open_dex(struct art_dex *d, const struct art_entry *e)
{
	struct dex_cache *c;
	uint8_t *buf;
	int ok;

	for (size_t i = 0; i < d->nr_cache; i++)
		if (d->cache[i].addr == e->symfile_addr && d->cache[i].size == e->symfile_size)
			return d->cache[i].df;
	if (d->nr_cache >= ART_MAX_DEX_FILES)
		return NULL;
	if (e->symfile_size < 0x70 || e->symfile_size > ART_MAX_DEX)
		buf = NULL;
	else
		buf = xmalloc((size_t)e->symfile_size);
	ok = buf && d->mem.read(d->mem.ctx, e->symfile_addr, buf, (size_t)e->symfile_size) == 0;
	/* an entry deleted while we copied: its dex file may be unmapped or reused; do not cache */
	if (buf && art_entry_check(&d->mem, &d->l, e) < 0) {
		free(buf);
		return NULL;
	}
	ALLOC_GROW(d->cache, d->nr_cache + 1, d->alloc_cache);
	c = &d->cache[d->nr_cache++];
	c->addr = e->symfile_addr;
	c->size = e->symfile_size;
	c->df = NULL;
	if (ok && (!memcmp(buf, "dex\n", 4) || !memcmp(buf, "cdex", 4)) &&
	    dex_open(buf, (size_t)e->symfile_size, &c->df) < 0) {
		log_debug("art: dex file at 0x%llx (%llu bytes) is not usable",
			  (unsigned long long)e->symfile_addr, (unsigned long long)e->symfile_size);
		c->df = NULL;
	}
	free(buf);
	return c->df;
}

int art_dex_lookup(struct art_dex *d, uint64_t dex_pc, struct dex_method *out)
{
	/* several entries may hold the pc (shared data of compact dex): try each */
	for (size_t i = 0; i < d->nr; i++) {
		const struct art_entry *e = &d->ents[i];
		struct dex_file *df;

		if (dex_pc < e->symfile_addr || dex_pc - e->symfile_addr >= e->symfile_size)
			continue;
		df = open_dex(d, e);
		if (df && dex_lookup(df, dex_pc - e->symfile_addr, out) == 0)
			return 0;
	}
	return -ENOENT;
}
