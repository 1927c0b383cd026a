/* u64 -> u32 hash map; see include/perch/base/u64map.h. */
#include <stdlib.h>
#include <string.h>

#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"

#define U64MAP_MIN 64

/* splitmix64's finalizer: spreads sequential and structured keys over the table */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void grow(struct u64map *m)
{
	size_t cap = m->keys ? 2 * (m->mask + 1) : U64MAP_MIN, omask = m->mask, i;
	uint64_t *ok = m->keys;
	uint32_t *ov = m->vals;

	m->keys = xcalloc(cap, sizeof(*m->keys));
	m->vals = xcalloc(cap, sizeof(*m->vals));
	m->mask = cap - 1;
	for (size_t j = 0; ok && j <= omask; j++) {
		if (!ok[j])
			continue;
		for (i = mix64(ok[j]) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
			;
		m->keys[i] = ok[j];
		m->vals[i] = ov[j];
	}
	free(ok);
	free(ov);
}

uint32_t u64map_find(struct u64map *m, uint64_t key, size_t *slot)
{
	size_t i;

	if (!m->keys || 2 * (m->nr + 1) > m->mask + 1)
		grow(m);
	for (i = mix64(key + 1) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
		if (m->keys[i] == key + 1)
			return m->vals[i];
	*slot = i;
	return UINT32_MAX;
}

void u64map_set(struct u64map *m, size_t slot, uint64_t key, uint32_t val)
{
	m->keys[slot] = key + 1;
	m->vals[slot] = val;
	m->nr++;
}

void u64map_release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

uint64_t u64map_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h & ~0ULL >> 1;
}
