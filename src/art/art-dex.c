/* The dex list (`__dex_debug_descriptor`, spec 2.1-2.2): snapshots of the registered dex files,
 * and dex pc -> method + line.
 *
 * An entry's range is not where its code is. Compact dex in a vdex keeps its code in a data
 * section shared by all the vdex's dex files, after them: Android 10/11 registered only the
 * header's file_size (the code lies outside the entry), Android 12-14 register up to the end
 * of the data section (one pc is then inside many entries). A dex 041 container registers each
 * of its dex files, whose offsets all count from the container's start. So the header of every
 * entry is read first (once, 0x88 bytes) and says where the dex's code lies (dex.h
 * dex_header_info: for compact dex the part of the shared section it owns); only the dex whose
 * code holds the pc is opened, and it is read lazily, chunk by chunk, straight from the
 * target (dex_open_source), never copied whole. The parts of one container share one opened
 * file. Records live as long as their entry is in the list. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/art/art.h"
#include "perch/art/dex.h"
#include "perch/base/log.h"
#include "perch/base/xalloc.h"

#define ART_DEX_HEADER 0x88 /* the largest header (compact dex) */

/* The bytes one dex (or container) needs, opened on first use; the dex source's context. */
struct dex_open {
	struct art_dex *owner;
	uint64_t start, span;
	struct dex_file *df;
	int failed; /* could not be opened (or went stale): do not retry */
	int used;   /* referenced by a record of the current snapshot */
};

/* One registered dex file, as its header describes it. */
struct dex_rec {
	struct art_entry e; /* as in the last snapshot */
	int state;	    /* 0: header not read yet, 1: usable, -1: not a dex perch reads */
	uint64_t code_lo, code_hi; /* where its method code lies (absolute) */
	struct dex_open *op;
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
	struct dex_rec *recs; /* one per entry of the last snapshot, in list order */
	size_t nr, alloc;
	struct dex_open **opens;
	size_t nr_opens, alloc_opens;
	size_t last_hit; /* record of the last successful lookup */
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

static void open_free(struct dex_open *op)
{
	if (op) {
		dex_close(op->df);
		free(op);
	}
}

void art_dex_free(struct art_dex *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nr_opens; i++)
		open_free(d->opens[i]);
	free(d->opens);
	free(d->recs);
	free(d);
}

size_t art_dex_count(const struct art_dex *d)
{
	return d->nr;
}

/* Replace the records by those of @list: records of entries still there keep what was learnt
 * (header, opened file); opened files no record uses any more are closed. */
static void adopt(struct art_dex *d, const struct art_entry *list, size_t nr)
{
	struct dex_rec *recs = xcalloc(nr ? nr : 1, sizeof(*recs));
	size_t w = 0;

	for (size_t i = 0; i < d->nr_opens; i++)
		d->opens[i]->used = 0;
	for (size_t i = 0; i < nr; i++) {
		recs[i].e = list[i];
		for (size_t k = 0; k < d->nr; k++) {
			const struct art_entry *o = &d->recs[k].e;

			if (o->addr == list[i].addr && o->seqlock == list[i].seqlock &&
			    o->symfile_addr == list[i].symfile_addr &&
			    o->symfile_size == list[i].symfile_size) {
				recs[i] = d->recs[k];
				recs[i].e = list[i];
				break;
			}
		}
		if (recs[i].op)
			recs[i].op->used = 1;
	}
	for (size_t i = 0; i < d->nr_opens; i++) {
		if (d->opens[i]->used)
			d->opens[w++] = d->opens[i];
		else
			open_free(d->opens[i]);
	}
	d->nr_opens = w;
	free(d->recs);
	d->recs = recs;
	d->nr = d->alloc = nr;
	d->last_hit = 0;
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
	adopt(d, list, nr);
	free(list);
	d->snapped = 1;
	d->last_seqlock = desc.seqlock;
	d->last_timestamp = desc.timestamp;
	d->last_first = desc.first;
	return 1;
}

static int open_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct dex_open *op = ctx;

	return op->owner->mem.read(op->owner->mem.ctx, op->start + off, buf, len);
}

static struct dex_open *open_get(struct art_dex *d, uint64_t start, uint64_t span)
{
	struct dex_open *op;

	for (size_t i = 0; i < d->nr_opens; i++)
		if (d->opens[i]->start == start && d->opens[i]->span == span)
			return d->opens[i];
	op = xcalloc(1, sizeof(*op));
	op->owner = d;
	op->start = start;
	op->span = span;
	op->used = 1;
	ALLOC_GROW(d->opens, d->nr_opens + 1, d->alloc_opens);
	d->opens[d->nr_opens++] = op;
	return op;
}

/* Read the header of @r's dex and learn where its code and its bytes are. */
static void read_header(struct art_dex *d, struct dex_rec *r)
{
	uint8_t h[ART_DEX_HEADER];
	struct dex_header_info info;
	size_t n = sizeof(h);
	uint64_t start;

	r->state = -1;
	/* a standard dex at the very end of a mapping may be shorter than a compact header */
	if (d->mem.read(d->mem.ctx, r->e.symfile_addr, h, n) < 0) {
		n = 0x78;
		if (d->mem.read(d->mem.ctx, r->e.symfile_addr, h, n) < 0)
			return;
	}
	if (dex_header_info(h, n, &info) < 0 || info.back > r->e.symfile_addr) {
		log_debug("art: no dex header at 0x%llx", (unsigned long long)r->e.symfile_addr);
		return;
	}
	start = r->e.symfile_addr - info.back;
	if (start + info.size < start)
		return;
	r->code_lo = start + info.code_start;
	r->code_hi = start + info.code_end;
	r->op = open_get(d, start, info.size);
	r->state = 1;
}

/* Look @pc up in @r's dex, opening it on first use. 0 or -ENOENT. */
static int rec_lookup(struct art_dex *d, struct dex_rec *r, uint64_t pc, struct dex_method *out)
{
	struct dex_open *op = r->op;
	uint64_t before;
	int ret;

	if (op->failed)
		return -ENOENT;
	if (!op->df) {
		struct dex_source src = {open_read, op};

		if (dex_open_source(&src, op->span, &op->df) < 0) {
			log_debug("art: dex file at 0x%llx (%llu bytes) is not usable",
				  (unsigned long long)op->start, (unsigned long long)op->span);
			op->failed = 1;
			return -ENOENT;
		}
	}
	before = dex_bytes_read(op->df);
	ret = dex_lookup(op->df, pc - op->start, out);
	/* bytes read while the entry was deleted may belong to whatever reused the memory */
	if (dex_bytes_read(op->df) != before && art_entry_check(&d->mem, &d->l, &r->e) < 0) {
		dex_close(op->df);
		op->df = NULL;
		op->failed = 1;
		return -ENOENT;
	}
	return ret;
}

static int holds(const struct dex_rec *r, uint64_t pc)
{
	return r->state == 1 && pc >= r->code_lo && pc < r->code_hi;
}

int art_dex_lookup(struct art_dex *d, uint64_t dex_pc, struct dex_method *out)
{
	size_t tried = SIZE_MAX;

	/* the dex that named the last pc usually names this one */
	if (d->last_hit < d->nr && holds(&d->recs[d->last_hit], dex_pc)) {
		if (rec_lookup(d, &d->recs[d->last_hit], dex_pc, out) == 0)
			return 0;
		tried = d->last_hit;
	}
	for (size_t i = 0; i < d->nr; i++) {
		struct dex_rec *r = &d->recs[i];

		if (r->state == 0)
			read_header(d, r);
		if (i == tried || !holds(r, dex_pc))
			continue;
		if (rec_lookup(d, r, dex_pc, out) == 0) {
			d->last_hit = i;
			return 0;
		}
	}
	return -ENOENT;
}
