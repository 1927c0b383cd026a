/* Allocation that dies on out-of-memory (a CLI has nothing better to do). */
#ifndef PERCH_XALLOC_H
#define PERCH_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* @n bytes for a large buffer written through once (a decompressed section, compressed bytes
 * read whole), freed with free() like the others. From XMALLOC_LARGE_MIN on it is aligned to
 * 2 MiB, rounded up to it and advised as transparent huge pages: where the kernel gives them
 * on request (transparent_hugepage "madvise", the usual default), filling it takes a page fault
 * per 2 MiB instead of one per 4 KiB. Elsewhere it is a plain allocation. */
#define XMALLOC_LARGE_MIN (512u << 10)
void *xmalloc_large(size_t n);

/* For a short-lived command that builds much in memory at once (perch dump): the heap's next
 * @bytes are advised as transparent huge pages, and from then on large allocations come from
 * the heap and what is freed stays with the process until it exits. A cold dump of a process
 * using glibc took 2,100 page faults fewer for the same work. */
void xalloc_short_lived(size_t bytes);

/* Grow array @x (of @nr used elements, @alloc allocated) to hold at least @want elements. */
#define ALLOC_GROW(x, want, alloc)                                                                 \
	do {                                                                                       \
		if ((size_t)(want) > (size_t)(alloc)) {                                            \
			size_t alloc_grow_n_ = (alloc) ? (size_t)(alloc)*2 : 16;                   \
			if (alloc_grow_n_ < (size_t)(want))                                        \
				alloc_grow_n_ = (size_t)(want);                                    \
			(x) = xrealloc((x), alloc_grow_n_ * sizeof(*(x)));                         \
			(alloc) = alloc_grow_n_;                                                   \
		}                                                                                  \
	} while (0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
