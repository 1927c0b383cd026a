/* The JIT/dex debugger interface lists of ART and GDB: descriptor layouts detected from the
 * magic and the runtime library's ELF class (spec 1.2-1.4), and a consistent snapshot of a list
 * while the runtime keeps changing it (spec 1.6, protocol A). What the entries point at
 * (symfiles, dex files) is loaded by art-jit.c and art-dex.c. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/art/art.h"
#include "perch/base/xalloc.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

void art_layout_init(struct art_layout *l, unsigned int machine, int is_64, enum art_kind kind)
{
	memset(l, 0, sizeof(*l));
	l->machine = machine;
	l->is_64 = is_64;
	l->kind = kind;
	l->ptr = is_64 ? 8 : 4;
	/* descriptor: version, action_flag, relevant_entry, first_entry, then Android's fields */
	l->d_first = is_64 ? 16 : 12;
	l->d_magic = is_64 ? 24 : 16;
	l->d_seqlock = is_64 ? 44 : 36;
	l->d_timestamp = is_64 ? 48 : 40;
	l->desc_size = kind == ART_KIND_GDB ? (is_64 ? 24 : 16) : (is_64 ? 56 : 48);
	/* entry: next, prev, symfile_addr, symfile_size (u64: offset 12 on x86, 16 on ARM32 where
	 * a u64 is 8-byte aligned), then timestamp and seqlock */
	l->e_next = 0;
	l->e_prev = l->ptr;
	l->e_addr = 2 * l->ptr;
	if (is_64) {
		l->e_size = 24;
		l->e_timestamp = 32;
		l->e_seqlock = 40;
	} else if (machine == EM_386) {
		l->e_size = 12;
		l->e_timestamp = 20;
		l->e_seqlock = 28;
	} else {
		l->e_size = 16;
		l->e_timestamp = 24;
		l->e_seqlock = 32;
	}
	switch (kind) {
	case ART_KIND_GDB:
		l->entry_size = l->e_timestamp;
		break;
	case ART_KIND_ANDROID1:
		l->entry_size = l->e_timestamp + 8;
		break;
	case ART_KIND_ANDROID2:
		/* the public entry is padded to 8 bytes except on x86 (32 there) */
		l->entry_size = is_64 ? 48 : machine == EM_386 ? 32 : 40;
		break;
	}
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

/* Pointers read from the lists may carry an arm64 tag (TBI, MTE, HWASan): user-space addresses
 * never have a legitimate non-zero top byte. */
static uint64_t strip_tag(const struct art_layout *l, uint64_t p)
{
	return l->machine == EM_AARCH64 ? p & ((1ULL << 56) - 1) : p;
}

static uint64_t get_ptr(const struct art_layout *l, const uint8_t *p)
{
	return strip_tag(l, get_le(p, l->ptr));
}

int art_descriptor_read(const struct perch_mem *mem, uint64_t addr, unsigned int machine, int is_64,
			struct art_descriptor *d, struct art_layout *l)
{
	uint8_t buf[56];
	struct art_layout full;
	enum art_kind kind = ART_KIND_GDB;
	uint32_t want_entry;

	memset(d, 0, sizeof(*d));
	art_layout_init(&full, machine, is_64, ART_KIND_ANDROID2);
	memset(buf, 0, sizeof(buf));
	if (mem->read(mem->ctx, addr, buf, full.desc_size) < 0) {
		/* a GDB descriptor at the very end of a mapping: only its own fields */
		art_layout_init(&full, machine, is_64, ART_KIND_GDB);
		if (mem->read(mem->ctx, addr, buf, full.desc_size) < 0)
			return -EFAULT;
		memset(buf + full.desc_size, 0, sizeof(buf) - full.desc_size);
	} else {
		memcpy(d->magic, buf + full.d_magic, 8);
		if (!memcmp(d->magic, "Android1", 8))
			kind = ART_KIND_ANDROID1;
		else if (!memcmp(d->magic, "Android2", 8))
			kind = ART_KIND_ANDROID2;
	}
	d->version = (uint32_t)get_le(buf, 4);
	d->action = (uint32_t)get_le(buf + 4, 4);
	d->relevant = get_le(buf + 8, full.ptr);
	d->first = strip_tag(&full, get_le(buf + full.d_first, full.ptr));
	if (kind != ART_KIND_GDB) {
		d->flags = (uint32_t)get_le(buf + full.d_magic + 8, 4);
		d->sizeof_descriptor = (uint32_t)get_le(buf + full.d_magic + 12, 4);
		d->sizeof_entry = (uint32_t)get_le(buf + full.d_magic + 16, 4);
		d->seqlock = (uint32_t)get_le(buf + full.d_seqlock, 4);
		d->timestamp = get_le(buf + full.d_timestamp, 8);
	}
	art_layout_init(l, machine, is_64, kind);
	if (d->version != 1)
		return -EPROTO;
	if (kind == ART_KIND_GDB)
		return 0;
	/* a magic with sizes of another ABI means perch would read the wrong offsets (simpleperf's
	 * version of this check never fails: an operator-precedence slip) */
	want_entry = (uint32_t)l->entry_size;
	if (d->sizeof_descriptor != l->desc_size || d->sizeof_entry != want_entry)
		return -EINVAL;
	return 0;
}

int art_entry_check(const struct perch_mem *mem, const struct art_layout *l,
		    const struct art_entry *e)
{
	uint8_t b[4];

	if (l->kind != ART_KIND_ANDROID2)
		return 0;
	if (mem->read(mem->ctx, e->addr + l->e_seqlock, b, 4) < 0)
		return -EFAULT;
	return (uint32_t)get_le(b, 4) == e->seqlock ? 0 : -ESTALE;
}

static int read_entry(const struct perch_mem *mem, const struct art_layout *l, uint64_t addr,
		      struct art_entry *e)
{
	uint8_t b[48];

	if (mem->read(mem->ctx, addr, b, l->entry_size) < 0)
		return -EFAULT;
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	e->next = get_ptr(l, b + l->e_next);
	e->prev = get_ptr(l, b + l->e_prev);
	e->symfile_addr = get_ptr(l, b + l->e_addr);
	e->symfile_size = get_le(b + l->e_size, 8);
	if (l->kind != ART_KIND_GDB)
		e->timestamp = get_le(b + l->e_timestamp, 8);
	if (l->kind == ART_KIND_ANDROID2)
		e->seqlock = (uint32_t)get_le(b + l->e_seqlock, 4);
	return 0;
}

/* Read the link at @link (the head field or an entry's next field) atomically with respect to
 * the target's entry seqlocks: pointer, its seqlock, pointer, its seqlock again; both pairs
 * equal and the seqlock even. 0, -EAGAIN (a race), -EFAULT. */
static int read_link(const struct perch_mem *mem, const struct art_layout *l, uint64_t link,
		     uint64_t *p, uint32_t *seq)
{
	uint8_t b[8];
	uint64_t p1, p2;
	uint32_t s1 = 0, s2 = 0;

	if (mem->read(mem->ctx, link, b, l->ptr) < 0)
		return -EFAULT;
	p1 = get_ptr(l, b);
	if (p1 && l->kind == ART_KIND_ANDROID2) {
		if (mem->read(mem->ctx, p1 + l->e_seqlock, b, 4) < 0)
			return -EAGAIN; /* freed and unmapped under us */
		s1 = (uint32_t)get_le(b, 4);
	}
	if (mem->read(mem->ctx, link, b, l->ptr) < 0)
		return -EFAULT;
	p2 = get_ptr(l, b);
	if (p2 && l->kind == ART_KIND_ANDROID2) {
		if (mem->read(mem->ctx, p2 + l->e_seqlock, b, 4) < 0)
			return -EAGAIN;
		s2 = (uint32_t)get_le(b, 4);
	}
	if (p1 != p2 || s1 != s2 || (s1 & 1))
		return -EAGAIN;
	*p = p1;
	*seq = s1;
	return 0;
}

/* The set of entries seen: a small open-addressing hash of (addr, seqlock). */
struct uid_set {
	uint64_t *keys; /* addr ^ seqlock << 1 | 1 (never 0) */
	size_t cap, nr;
};

static uint64_t uid_key(uint64_t addr, uint32_t seq)
{
	return (addr ^ ((uint64_t)seq << 40) ^ ((uint64_t)seq >> 3)) | 1;
}

static int uid_add(struct uid_set *s, uint64_t addr, uint32_t seq)
{
	uint64_t k = uid_key(addr, seq);
	size_t i;

	if ((s->nr + 1) * 2 > s->cap) {
		struct uid_set n = {.cap = s->cap ? s->cap * 2 : 64};

		n.keys = xcalloc(n.cap, sizeof(*n.keys));
		for (i = 0; i < s->cap; i++) {
			size_t j;

			if (!s->keys[i])
				continue;
			for (j = (s->keys[i] * 0x9e3779b97f4a7c15ULL) >> 20; n.keys[j % n.cap]; j++)
				;
			n.keys[j % n.cap] = s->keys[i];
			n.nr++;
		}
		free(s->keys);
		*s = n;
	}
	for (i = (k * 0x9e3779b97f4a7c15ULL) >> 20; s->keys[i % s->cap]; i++)
		if (s->keys[i % s->cap] == k)
			return 0; /* (two live entries with one 64-bit key: negligible) */
	s->keys[i % s->cap] = k;
	s->nr++;
	return 1;
}

/* Android2: passes from the head until one adds nothing (repacking inserts at the head while
 * older entries are unlinked). 0, -EAGAIN, -EFAULT, -E2BIG. */
static int walk_seqlocked(const struct perch_mem *mem, uint64_t desc_addr,
			  const struct art_layout *l, struct art_entry **out, size_t *nr,
			  size_t *alloc)
{
	struct uid_set seen = {0};
	int ret = 0;

	for (int pass = 0; pass < ART_MAX_HEAD_PASSES; pass++) {
		uint64_t p;
		uint32_t seq;
		size_t added = 0;

		ret = read_link(mem, l, desc_addr + l->d_first, &p, &seq);
		while (ret == 0 && p) {
			struct art_entry e;

			if (!uid_add(&seen, p, seq))
				break; /* the rest of the list is known */
			if (seen.nr > ART_MAX_ENTRIES) {
				ret = -E2BIG;
				break;
			}
			if (read_entry(mem, l, p, &e) < 0 || e.seqlock != seq) {
				ret = -EAGAIN;
				break;
			}
			/* the next link, then this entry once more: it may have been deleted and
			 * recycled between reading it and reading its next field */
			ret = read_link(mem, l, p + l->e_next, &e.next, &seq);
			if (ret == 0 && art_entry_check(mem, l, &e) < 0)
				ret = -EAGAIN;
			if (ret < 0)
				break;
			if (e.symfile_addr && e.symfile_size) {
				ALLOC_GROW(*out, *nr + 1, *alloc);
				(*out)[(*nr)++] = e;
			}
			added++;
			p = e.next;
		}
		if (ret < 0 || !added)
			break;
	}
	free(seen.keys);
	return ret == -EFAULT ? -EAGAIN : ret;
}

/* Android1 and GDB: no entry seqlocks; the global seqlock (Android1) must be even and the
 * descriptor unchanged around the walk, and prev links must agree (a list under change). */
static int walk_plain(const struct perch_mem *mem, uint64_t desc_addr, const struct art_layout *l,
		      const struct art_descriptor *d, struct art_entry **out, size_t *nr,
		      size_t *alloc)
{
	struct uid_set seen = {0};
	struct art_descriptor d2;
	struct art_layout l2;
	uint64_t p = d->first, prev = 0;
	int ret = 0;

	if (l->kind == ART_KIND_ANDROID1 && (d->seqlock & 1))
		return -EAGAIN;
	while (p) {
		struct art_entry e;

		if (!uid_add(&seen, p, 0)) {
			ret = -ELOOP;
			break;
		}
		if (seen.nr > ART_MAX_ENTRIES) {
			ret = -E2BIG;
			break;
		}
		if (read_entry(mem, l, p, &e) < 0 || e.prev != prev) {
			ret = -EAGAIN;
			break;
		}
		if (e.symfile_addr && e.symfile_size) {
			ALLOC_GROW(*out, *nr + 1, *alloc);
			(*out)[(*nr)++] = e;
		}
		prev = p;
		p = e.next;
	}
	free(seen.keys);
	if (ret == -ELOOP) {
		/* a cycle in a list that did not change meanwhile is a broken list */
		if (art_descriptor_read(mem, desc_addr, l->machine, l->is_64, &d2, &l2) == 0 &&
		    d2.first == d->first && d2.seqlock == d->seqlock && d2.action == d->action &&
		    d2.relevant == d->relevant && d2.timestamp == d->timestamp)
			return -ELOOP;
		return -EAGAIN;
	}
	if (ret < 0)
		return ret;
	if (art_descriptor_read(mem, desc_addr, l->machine, l->is_64, &d2, &l2) < 0)
		return -EAGAIN;
	if (d2.first != d->first || d2.seqlock != d->seqlock || d2.action != d->action ||
	    d2.relevant != d->relevant || d2.timestamp != d->timestamp)
		return -EAGAIN;
	return 0;
}

int art_list_snapshot(const struct perch_mem *mem, uint64_t desc_addr, const struct art_layout *l,
		      struct art_entry **out, size_t *nr)
{
	size_t alloc = 0;
	int ret = -EAGAIN;

	*out = NULL;
	*nr = 0;
	for (int tries = 0; tries < ART_MAX_RACE_RETRIES && ret == -EAGAIN; tries++) {
		struct art_descriptor d;
		struct art_layout dl;

		*nr = 0;
		ret = art_descriptor_read(mem, desc_addr, l->machine, l->is_64, &d, &dl);
		if (ret == -EFAULT) {
			ret = -EAGAIN; /* the caller read it a moment ago: a torn read, retry */
			continue;
		}
		if (ret < 0)
			break;
		if (dl.kind != l->kind) {
			/* a torn read, or the magic appeared: the caller re-reads the descriptor */
			ret = -EAGAIN;
			continue;
		}
		if (l->kind == ART_KIND_ANDROID2)
			ret = walk_seqlocked(mem, desc_addr, l, out, nr, &alloc);
		else
			ret = walk_plain(mem, desc_addr, l, &d, out, nr, &alloc);
	}
	if (!*out)
		*out = xmalloc(sizeof(**out));
	if (ret < 0)
		*nr = 0;
	return ret;
}
