/* Growable NUL-terminated strings (git's strbuf, reduced).
 * Invariant: buf is never NULL after strbuf_init(); buf[len] == '\0'; len < alloc or alloc == 0
 * (then buf points to a static empty string). */
#ifndef PERCH_STRBUF_H
#define PERCH_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

#define STRBUF_INIT                                                                                \
	{                                                                                          \
		0, 0, strbuf_empty_                                                                \
	}
extern char strbuf_empty_[];

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
/* Give the buffer to the caller (free() it); @sb is re-initialised. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_setlen(struct strbuf *sb, size_t len);

#endif
