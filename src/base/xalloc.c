/* Allocation wrappers that die on out-of-memory. */
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perch/base/log.h"
#include "perch/base/xalloc.h"

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", nmemb, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		die("out of memory allocating %zu bytes", n);
	return q;
}

/* Page faults are what filling a fresh buffer costs most: on this project's paravirtualized
 * VM about 30 us each (8 MB written page by page: 50 ms; as huge pages: under 1 ms). */
#define HUGE_PAGE ((size_t)2 << 20)

void *xmalloc_large(size_t n)
{
	size_t len;
	void *p;

	if (n < XMALLOC_LARGE_MIN || n > SIZE_MAX - HUGE_PAGE)
		return xmalloc(n);
	len = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (posix_memalign(&p, HUGE_PAGE, len))
		die("out of memory allocating %zu bytes", n);
	(void)madvise(p, len, MADV_HUGEPAGE); /* a hint: without THP it fails, harmlessly */
	return p;
}

/* what lies below the first huge page of the heap's top, held so that nothing is cut from it */
static void *short_lived_filler;

void xalloc_short_lived(size_t bytes)
{
	uintptr_t from, to;
	size_t below;
	char *p;

	if (bytes > INT_MAX / 2)
		bytes = INT_MAX / 2;
	/* the block below, once freed, is the heap's top: what later allocations are cut from */
	mallopt(M_MMAP_THRESHOLD, (int)(2 * bytes));
	mallopt(M_TRIM_THRESHOLD, (int)(2 * bytes));
	p = malloc(bytes);
	if (!p)
		return;
	from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	to = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
	below = (size_t)(from - (uintptr_t)p);
	if (to > from)
		(void)madvise((void *)from, to - from, MADV_HUGEPAGE);
	free(p);
	/* the same place again, up to the first huge page: never written, so never backed */
	if (to > from && !short_lived_filler && below > 64)
		short_lived_filler = malloc(below);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		die("out of memory formatting a string");
	va_end(ap);
	return p;
}
