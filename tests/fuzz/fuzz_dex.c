/* libFuzzer harness for the dex parser: open, look up every even offset, read line tables;
 * the same bytes again through a lazy source whose chunks fail to read where the input says
 * (a target's memory that is partly unmapped); the header decision; the naming function. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "perch/art/dex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct src {
	const uint8_t *p;
	size_t size;
};

/* chunk k is unreadable when bit k % 8 of the input's last byte is set */
static int src_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct src *s = ctx;

	if (off > s->size || len > s->size - off)
		__builtin_trap(); /* dex.c must stay inside the span it was given */
	if (s->size && (s->p[s->size - 1] >> (off / DEX_CHUNK % 8) & 1))
		return -14;
	memcpy(buf, s->p + off, len);
	return 0;
}

static void query(struct dex_file *d, size_t size)
{
	struct dex_position rows[16];
	struct dex_method m;

	for (uint64_t off = 0; off < size; off += 2)
		if (dex_lookup(d, off, &m) == 0)
			dex_method_positions(d, m.code_offset, rows, 16);
	for (size_t i = 0; i < dex_method_count(d); i++)
		dex_method_get(d, i, &m, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dex_header_info info;
	struct src s = {data, size};
	struct dex_source src = {src_read, &s};
	struct dex_file *d;
	uint64_t back, span;
	char name[64], text[256];

	dex_span(data, size, &back, &span);
	dex_header_info(data, size, &info);
	memcpy(text, data, size < sizeof(text) - 1 ? size : sizeof(text) - 1);
	text[size < sizeof(text) - 1 ? size : sizeof(text) - 1] = '\0';
	dex_java_name(text, name, sizeof(name));
	if (dex_open(data, size, &d) == 0) {
		query(d, size);
		dex_close(d);
	}
	if (dex_open_source(&src, size, &d) == 0) {
		query(d, size);
		dex_close(d);
	}
	return 0;
}
