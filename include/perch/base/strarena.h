/* A string arena: NUL-terminated copies that live until strarena_release(), packed into 64 KiB
 * chunks (one malloc per chunk, not per string; the copies never move). */
#ifndef PERCH_STRARENA_H
#define PERCH_STRARENA_H

#include <stddef.h>

struct strarena_chunk;

/* All zero (as from xcalloc()) is an empty arena, the same as strarena_init(). */
struct strarena {
	struct strarena_chunk *chunks; /* newest first */
};

void strarena_init(struct strarena *a);
/* Free every copy; @a is empty (re-initialised) afterwards. */
void strarena_release(struct strarena *a);
/* A copy of @len bytes at @s plus a NUL. Owned by @a; valid until strarena_release(). */
char *strarena_strndup(struct strarena *a, const char *s, size_t len);
/* The same for a NUL-terminated @s. */
char *strarena_strdup(struct strarena *a, const char *s);

#endif
