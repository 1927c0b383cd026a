/* A hash map from a 64-bit key to a 32-bit value, for writers that index what they emit
 * (open addressing, linear probing; grows at half full). Keys may be any value except
 * UINT64_MAX. Find-then-set: u64map_find() says where a missing key goes, u64map_set() puts
 * it there, with no other call on the map in between. */
#ifndef PERCH_U64MAP_H
#define PERCH_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys; /* key + 1; 0 is a free slot */
	uint32_t *vals;
	size_t mask, nr;
};

#define U64MAP_INIT                                                                                \
	{                                                                                          \
		NULL, NULL, 0, 0                                                                   \
	}

/* The value of @key, or UINT32_MAX with *@slot set to where to insert it. */
uint32_t u64map_find(struct u64map *m, uint64_t key, size_t *slot);
void u64map_set(struct u64map *m, size_t slot, uint64_t key, uint32_t val);
void u64map_release(struct u64map *m);

/* 64-bit FNV-1a of a string, with the top bit clear (a valid key). */
uint64_t u64map_hash_str(const char *s);

#endif
