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
