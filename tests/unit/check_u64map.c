/* Unit tests for the u64 -> u32 map: find/set round trips through growth, extreme keys. */
#include <check.h>
#include <stdint.h>

#include "perch/base/u64map.h"

START_TEST(test_roundtrip_through_growth)
{
	struct u64map m = U64MAP_INIT;
	size_t slot;

	/* structured keys (parent << 32 | child) as the text writer uses, past many resizes */
	for (uint32_t i = 0; i < 20000; i++) {
		uint64_t key = ((uint64_t)(i % 97) << 32) | i;

		ck_assert_uint_eq(u64map_find(&m, key, &slot), UINT32_MAX);
		u64map_set(&m, slot, key, i);
	}
	ck_assert_uint_eq(m.nr, 20000);
	ck_assert(2 * m.nr <= m.mask + 1);
	for (uint32_t i = 0; i < 20000; i++)
		ck_assert_uint_eq(u64map_find(&m, ((uint64_t)(i % 97) << 32) | i, &slot), i);
	ck_assert_uint_eq(u64map_find(&m, 1ULL << 40, &slot), UINT32_MAX);
	u64map_release(&m);
	ck_assert_ptr_null(m.keys);
}
END_TEST

START_TEST(test_extreme_keys)
{
	struct u64map m = U64MAP_INIT;
	uint64_t keys[] = {0, 1, UINT64_MAX - 1, 1ULL << 63};
	size_t slot;

	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(u64map_find(&m, keys[i], &slot), UINT32_MAX);
		u64map_set(&m, slot, keys[i], i + 100);
	}
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_uint_eq(u64map_find(&m, keys[i], &slot), i + 100);
	u64map_release(&m);
}
END_TEST

START_TEST(test_hash_str)
{
	/* FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c; the top bit is cleared */
	ck_assert_uint_eq(u64map_hash_str("a"), 0xaf63dc4c8601ec8cULL & ~0ULL >> 1);
	ck_assert_uint_ne(u64map_hash_str("ab"), u64map_hash_str("ba"));
	ck_assert_uint_lt(u64map_hash_str(""), 1ULL << 63);
}
END_TEST

Suite *u64map_suite(void)
{
	Suite *s = suite_create("u64map");
	TCase *tc = tcase_create("map");

	tcase_add_test(tc, test_roundtrip_through_growth);
	tcase_add_test(tc, test_extreme_keys);
	tcase_add_test(tc, test_hash_str);
	suite_add_tcase(s, tc);
	return s;
}
