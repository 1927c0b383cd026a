/* String arena; see include/perch/base/strarena.h. */
#include <stdlib.h>
#include <string.h>

#include "perch/base/strarena.h"
#include "perch/base/xalloc.h"

#define STRARENA_CHUNK (64 * 1024)

struct strarena_chunk {
	struct strarena_chunk *next;
	size_t used, size;
	char data[];
};

void strarena_init(struct strarena *a)
{
	a->chunks = NULL;
}

void strarena_release(struct strarena *a)
{
	while (a->chunks) {
		struct strarena_chunk *next = a->chunks->next;

		free(a->chunks);
		a->chunks = next;
	}
}

char *strarena_strndup(struct strarena *a, const char *s, size_t len)
{
	struct strarena_chunk *c = a->chunks;
	char *p;

	/* a string longer than a chunk gets a chunk of its own */
	if (!c || c->size - c->used < len + 1) {
		size_t sz = len + 1 > STRARENA_CHUNK ? len + 1 : STRARENA_CHUNK;

		c = xmalloc(sizeof(*c) + sz);
		c->size = sz;
		c->used = 0;
		c->next = a->chunks;
		a->chunks = c;
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

char *strarena_strdup(struct strarena *a, const char *s)
{
	return strarena_strndup(a, s, strlen(s));
}
