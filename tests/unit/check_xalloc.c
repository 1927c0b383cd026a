/* Large buffers and the short-lived heap (xalloc.h): what they promise, and, where the kernel
 * gives transparent huge pages on request, that the kernel took the advice (its own
 * "THPeligible" in /proc/self/smaps says so, not perch). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perch/base/xalloc.h"

#define HUGE ((size_t)2 << 20)

/* The kernel's THPeligible of the mapping holding @p: 1, 0, or -1 (no such line: an old kernel,
 * or an emulator whose addresses are not the host's). */
static int thp_eligible(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int v;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) /* a mapping's first line */
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && sscanf(line, "THPeligible: %d", &v) == 1) {
			ret = v;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Does this machine give huge pages on request at all? A mapping of our own, advised. */
static int thp_on_request(void)
{
	void *m = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;
	int ok;

	if (m == MAP_FAILED)
		return 0;
	a = ((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
	ok = !madvise((void *)a, HUGE, MADV_HUGEPAGE) && thp_eligible((void *)a) == 1;
	munmap(m, 2 * HUGE);
	return ok;
}

/* Is malloc glibc's own (not AddressSanitizer's, not valgrind's)? */
static int glibc_malloc(void)
{
	const char *pre = getenv("LD_PRELOAD");

#if defined(__SANITIZE_ADDRESS__)
	return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return 0;
#endif
#endif
	return !(pre && strstr(pre, "vgpreload"));
}

START_TEST(test_small_is_plain)
{
	size_t n = XMALLOC_LARGE_MIN - 1;
	uint8_t *p = xmalloc_large(n);

	memset(p, 0xab, n);
	ck_assert_uint_eq(p[n - 1], 0xab);
	free(p);
	free(xmalloc_large(0));
}
END_TEST

START_TEST(test_large_aligned_and_advised)
{
	size_t n = 5 * (HUGE / 2) + 17; /* 5 MiB and a bit: three huge pages */
	uint8_t *p = xmalloc_large(n);

	ck_assert_uint_eq((uintptr_t)p % HUGE, 0);
	memset(p, 0x5a, n);
	ck_assert_uint_eq(p[0], 0x5a);
	ck_assert_uint_eq(p[n - 1], 0x5a);
	if (thp_on_request()) {
		ck_assert_int_eq(thp_eligible(p), 1);
		ck_assert_int_eq(thp_eligible(p + n - 1), 1);
	}
	free(p);
	/* the smallest size that is rounded up */
	p = xmalloc_large(XMALLOC_LARGE_MIN);
	ck_assert_uint_eq((uintptr_t)p % HUGE, 0);
	memset(p, 1, XMALLOC_LARGE_MIN);
	free(p);
}
END_TEST

START_TEST(test_short_lived_heap)
{
	uint8_t *small[2048], *big;

	xalloc_short_lived(32u << 20);
	for (size_t i = 0; i < 2048; i++) {
		small[i] = xmalloc(1000 + i % 64);
		memset(small[i], (int)i, 1000 + i % 64);
	}
	/* large allocations still work, and are not handed back to the kernel when freed */
	big = xmalloc(4u << 20);
	memset(big, 7, 4u << 20);
	ck_assert_uint_eq(big[(4u << 20) - 1], 7);
	if (thp_on_request() && glibc_malloc()) {
		/* what is cut from the heap's top afterwards lies in huge pages (the first blocks
		 * may come from chunks freed before) */
		ck_assert_int_eq(thp_eligible(small[2047]), 1);
		ck_assert_int_eq(thp_eligible(big), 1);
	}
	free(big);
	for (size_t i = 0; i < 2048; i++) {
		ck_assert_uint_eq(small[i][999 + i % 64], (uint8_t)i);
		free(small[i]);
	}
}
END_TEST

Suite *xalloc_suite(void)
{
	Suite *s = suite_create("xalloc");
	TCase *tc = tcase_create("large");

	tcase_add_test(tc, test_small_is_plain);
	tcase_add_test(tc, test_large_aligned_and_advised);
	tcase_add_test(tc, test_short_lived_heap);
	suite_add_tcase(s, tc);
	return s;
}
