/* Dex files: method and line for a dex pc (docs/design/android-art.md 2.3, 2.4).
 *
 * Three layouts share one reader; they differ only in where offsets count from and in the code
 * item header:
 *   standard dex <= 040: every offset relative to the dex header;
 *   standard dex 041:    every offset relative to the container (several dex files, each with
 *                        a 0x78-byte header naming its own position in the container);
 *   compact dex:         id tables relative to the header, everything else (strings, class
 *                        data, code, debug info) relative to the data section at header +
 *                        data_off; code items are 4 bytes with an optional pre-header before
 *                        them, and debug info offsets sit in a per-method offset table.
 * The bytes are either a copy (dex_open) or read from a source as needed (dex_open_source: a
 * dex file in a target, where a vdex's shared data section or a container may be much larger
 * than what one lookup touches). All reads go through get(), in_range() and cursors, which
 * bounds-check against the buffer and load what is missing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perch/art/dex.h"
#include "perch/base/log.h"
#include "perch/base/xalloc.h"

#define DEX_HEADER_SIZE	    0x70u
#define DEX_HEADER_SIZE_V41 0x78u
#define CDEX_HEADER_SIZE    0x88u
#define DEX_ENDIAN_CONSTANT 0x12345678u
#define DEX_NO_INDEX	    0xffffffffu
#define DEX_MAX_PARTS	    256	 /* dex files in one 041 container */
#define DEX_MAX_STRING	    4096 /* bytes of one name looked at */
#define DEX_MAX_PARAMS	    255	 /* a Java method has at most 255 parameter slots */

/* Debug info opcodes (dex_file.h DBG_*) */
enum {
	DBG_END_SEQUENCE = 0x00,
	DBG_ADVANCE_PC = 0x01,
	DBG_ADVANCE_LINE = 0x02,
	DBG_START_LOCAL = 0x03,
	DBG_START_LOCAL_EXTENDED = 0x04,
	DBG_END_LOCAL = 0x05,
	DBG_RESTART_LOCAL = 0x06,
	DBG_SET_PROLOGUE_END = 0x07,
	DBG_SET_EPILOGUE_BEGIN = 0x08,
	DBG_SET_FILE = 0x09,
	DBG_FIRST_SPECIAL = 0x0a,
	DBG_LINE_BASE = -4,
	DBG_LINE_RANGE = 15,
};

/* One dex inside the buffer (one for standard and compact dex, several in a 041 container). */
struct dex_part {
	uint64_t hdr;	    /* buffer offset of the header */
	uint64_t ids_base;  /* what the id-table offsets count from */
	uint64_t data_base; /* what every other offset counts from */
	int compact;
	int container; /* 041 */
	uint32_t string_ids_size, string_ids_off;
	uint32_t type_ids_size, type_ids_off;
	uint32_t proto_ids_size, proto_ids_off;
	uint32_t method_ids_size, method_ids_off;
	uint32_t class_defs_size, class_defs_off;
	/* compact dex debug-info offset table */
	uint32_t dbg_pos, dbg_table_off, dbg_base;
};

struct dex_meth {
	uint64_t insns; /* buffer offset of the first instruction */
	uint32_t insns_bytes;
	uint32_t method_idx;
	uint32_t class_def;
	uint32_t debug_off; /* relative to the part's data base; 0: none */
	uint16_t part;
};

struct dex_file {
	uint8_t *buf; /* @size bytes: a copy, or an mmap reservation filled on demand */
	size_t size;
	struct dex_source src;
	uint8_t *chunk; /* lazily read: per DEX_CHUNK, 0 not read, 1 read, 2 unreadable */
	uint64_t bytes_read;
	struct dex_part *parts;
	size_t nr_parts;
	struct dex_meth *meths;
	size_t nr_meths, alloc_meths;
	int indexed;
};

/* A cursor over the buffer for LEB128 streams; @err set on any overrun or unreadable byte.
 * [p, lim) is known to be loaded, [p, end) is the rest of the buffer. */
struct cursor {
	struct dex_file *d;
	const uint8_t *p, *lim, *end;
	int err;
};

/* Make [@at, @at + @len) of the buffer (inside it) present. 0, or -1 when unreadable. */
static int load(struct dex_file *d, uint64_t at, uint64_t len)
{
	if (!d->chunk || !len)
		return 0;
	for (uint64_t c = at / DEX_CHUNK; c <= (at + len - 1) / DEX_CHUNK; c++) {
		uint64_t off = c * DEX_CHUNK,
			 n = d->size - off < DEX_CHUNK ? d->size - off : DEX_CHUNK;

		if (d->chunk[c] == 1)
			continue;
		if (d->chunk[c] == 2 || d->src.read(d->src.ctx, off, d->buf + off, n) < 0) {
			d->chunk[c] = 2;
			return -1;
		}
		d->chunk[c] = 1;
		d->bytes_read += n;
	}
	return 0;
}

static int in_range(const struct dex_file *d, uint64_t base, uint64_t off, uint64_t len)
{
	uint64_t at = base + off;

	return at >= base && at <= d->size && len <= d->size - at;
}

static const uint8_t *get(struct dex_file *d, uint64_t base, uint64_t off, uint64_t len)
{
	if (!in_range(d, base, off, len) || load(d, base + off, len) < 0)
		return NULL;
	return d->buf + base + off;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int cursor_at(struct dex_file *d, uint64_t base, uint64_t off, struct cursor *c)
{
	const uint8_t *p = get(d, base, off, 1);

	if (!p)
		return -1;
	c->d = d;
	c->p = p;
	c->lim = p + 1;
	c->end = d->buf + d->size;
	c->err = 0;
	return 0;
}

/* The next byte; 0 with @err set past the end or at an unreadable byte. */
static uint8_t next_byte(struct cursor *c)
{
	if (c->p >= c->lim) {
		uint64_t at = (uint64_t)(c->p - c->d->buf), n;

		if (c->p >= c->end) {
			c->err = 1;
			return 0;
		}
		n = DEX_CHUNK - at % DEX_CHUNK;
		if (n > c->d->size - at)
			n = c->d->size - at;
		if (load(c->d, at, n) < 0) {
			c->err = 1;
			return 0;
		}
		c->lim = c->p + n;
	}
	return *c->p++;
}

static uint32_t uleb(struct cursor *c)
{
	uint32_t v = 0;

	for (int shift = 0; shift < 35 && !c->err; shift += 7) {
		uint8_t b = next_byte(c);

		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return c->err ? 0 : v;
	}
	c->err = 1; /* more than 5 bytes: not a 32-bit LEB128 */
	return 0;
}

static int32_t sleb(struct cursor *c)
{
	uint32_t v = 0;
	int shift = 0;
	uint8_t b;

	do {
		if (shift >= 35) {
			c->err = 1;
			return 0;
		}
		b = next_byte(c);
		if (c->err)
			return 0;
		v |= (uint32_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 32 && (b & 0x40))
		v |= ~0u << shift;
	return (int32_t)v;
}

/* ---- header ---- */

static int version_of(const uint8_t *magic)
{
	if (memcmp(magic, "dex\n", 4) || magic[7] != 0 || magic[4] < '0' || magic[4] > '9' ||
	    magic[5] < '0' || magic[5] > '9' || magic[6] < '0' || magic[6] > '9')
		return -1;
	return (magic[4] - '0') * 100 + (magic[5] - '0') * 10 + (magic[6] - '0');
}

static int is_cdex(const uint8_t *magic)
{
	return !memcmp(magic, "cdex001", 8);
}

/* Fill @pt from the header at buffer offset @hdr. */
static int parse_header(struct dex_file *d, uint64_t hdr, struct dex_part *pt)
{
	const uint8_t *h = get(d, hdr, 0, DEX_HEADER_SIZE);
	uint32_t header_size, data_off;
	int ver;

	if (!h)
		return log_debug("dex: header at %#llx truncated", (unsigned long long)hdr), -1;
	memset(pt, 0, sizeof(*pt));
	pt->hdr = hdr;
	pt->ids_base = hdr;
	pt->data_base = hdr;
	header_size = le32(h + 36);
	if (le32(h + 40) != DEX_ENDIAN_CONSTANT)
		return log_debug("dex: bad endian tag %#x", le32(h + 40)), -1;
	if (is_cdex(h)) {
		if (header_size < CDEX_HEADER_SIZE || !(h = get(d, hdr, 0, CDEX_HEADER_SIZE)))
			return log_debug("dex: compact dex header truncated"), -1;
		pt->compact = 1;
		data_off = le32(h + 108);
		if (!in_range(d, hdr, data_off, 0))
			return log_debug("dex: cdex data_off %#x outside the file", data_off), -1;
		pt->data_base = hdr + data_off;
		pt->dbg_pos = le32(h + 116);
		pt->dbg_table_off = le32(h + 120);
		pt->dbg_base = le32(h + 124);
	} else {
		ver = version_of(h);
		if (ver < 35 || ver == 36 || ver > 41)
			return log_debug("dex: unknown magic/version %.3s", h + 4), -1;
		if (header_size >= DEX_HEADER_SIZE_V41 && ver >= 41) {
			/* container: offsets count from the container's start */
			if (!(h = get(d, hdr, 0, DEX_HEADER_SIZE_V41)))
				return log_debug("dex: 041 header truncated"), -1;
			if (le32(h + 116) != hdr)
				return log_debug("dex: 041 header_offset %#x, expected %#llx",
						 le32(h + 116), (unsigned long long)hdr),
				       -1;
			pt->container = 1;
			pt->ids_base = 0;
			pt->data_base = 0;
		} else if (header_size != DEX_HEADER_SIZE) {
			return log_debug("dex: header_size %#x", header_size), -1;
		}
	}
	pt->string_ids_size = le32(h + 56);
	pt->string_ids_off = le32(h + 60);
	pt->type_ids_size = le32(h + 64);
	pt->type_ids_off = le32(h + 68);
	pt->proto_ids_size = le32(h + 72);
	pt->proto_ids_off = le32(h + 76);
	pt->method_ids_size = le32(h + 88);
	pt->method_ids_off = le32(h + 92);
	pt->class_defs_size = le32(h + 96);
	pt->class_defs_off = le32(h + 100);
	/* every table must lie inside the buffer: later reads then index them without surprises
	 * (checked, not read: a lazily read file loads them when a lookup needs them) */
	if (!in_range(d, pt->ids_base, pt->string_ids_off, (uint64_t)pt->string_ids_size * 4) ||
	    !in_range(d, pt->ids_base, pt->type_ids_off, (uint64_t)pt->type_ids_size * 4) ||
	    !in_range(d, pt->ids_base, pt->proto_ids_off, (uint64_t)pt->proto_ids_size * 12) ||
	    !in_range(d, pt->ids_base, pt->method_ids_off, (uint64_t)pt->method_ids_size * 8) ||
	    !in_range(d, pt->ids_base, pt->class_defs_off, (uint64_t)pt->class_defs_size * 32))
		return log_debug("dex: an id table lies outside the file"), -1;
	return 0;
}

int dex_header_info(const uint8_t *h, size_t avail, struct dex_header_info *out)
{
	uint64_t file_size;
	int ver;

	memset(out, 0, sizeof(*out));
	if (avail < DEX_HEADER_SIZE || le32(h + 40) != DEX_ENDIAN_CONSTANT)
		return -EINVAL;
	file_size = le32(h + 32);
	out->size = file_size;
	out->code_end = file_size;
	if (is_cdex(h)) {
		/* compact_dex_file.h, CompactDexWriter::Write: data_size is the end of the part
		 * of the (shared) data section this dex may use; the code items it owns come
		 * first in [owned_data_begin, owned_data_end) and are never deduplicated */
		uint64_t data_off = le32(h + 108), data_end = data_off + le32(h + 104);
		uint32_t owned_begin, owned_end;

		if (avail < CDEX_HEADER_SIZE || le32(h + 36) < CDEX_HEADER_SIZE)
			return -EINVAL;
		out->kind = DEX_KIND_COMPACT;
		if (data_end > out->size)
			out->size = data_end;
		owned_begin = le32(h + 128);
		owned_end = le32(h + 132);
		out->code_start = data_off;
		out->code_end = data_end;
		if (owned_begin < owned_end && data_off + owned_end <= data_end) {
			out->code_start = data_off + owned_begin;
			out->code_end = data_off + owned_end;
		}
	} else {
		ver = version_of(h);
		if (ver < 35 || ver == 36 || ver > 41)
			return -EINVAL;
		out->kind = DEX_KIND_STANDARD;
		if (ver >= 41 && le32(h + 36) >= DEX_HEADER_SIZE_V41) {
			/* dex_file.cc GetDataRange: every offset counts from header -
			 * header_offset, and may point anywhere up to the container's end */
			if (avail < DEX_HEADER_SIZE_V41 || le32(h + 116) > le32(h + 112) ||
			    file_size > le32(h + 112) - le32(h + 116))
				return -EINVAL;
			out->kind = DEX_KIND_CONTAINER;
			out->back = le32(h + 116);
			out->size = le32(h + 112);
			out->code_end = out->size;
		}
	}
	return out->size >= DEX_HEADER_SIZE && out->size <= DEX_MAX_SIZE ? 0 : -EINVAL;
}

int dex_span(const uint8_t *h, size_t avail, uint64_t *back, uint64_t *size)
{
	struct dex_header_info info;
	int ret = dex_header_info(h, avail, &info);

	*back = info.back;
	*size = info.size;
	return ret;
}

/* Index the headers of @d (one, or each dex of a 041 container). */
static int open_parts(struct dex_file *d)
{
	size_t alloc = 0;
	uint64_t hdr = 0, end = d->size;

	for (;;) {
		struct dex_part pt;
		uint32_t file_size;

		if (parse_header(d, hdr, &pt) < 0)
			return -EINVAL;
		ALLOC_GROW(d->parts, d->nr_parts + 1, alloc);
		d->parts[d->nr_parts++] = pt;
		if (!pt.container)
			return 0;
		/* 041: the next dex follows this one until the container ends (the headers
		 * parse_header() read are loaded) */
		if (hdr == 0) {
			end = le32(d->buf + 112);
			if (end > d->size)
				break;
		}
		file_size = le32(d->buf + hdr + 32);
		if (file_size < DEX_HEADER_SIZE_V41 || hdr + file_size > end)
			break;
		hdr += file_size;
		if (hdr + DEX_HEADER_SIZE_V41 > end)
			return 0;
		if (d->nr_parts >= DEX_MAX_PARTS)
			break;
	}
	log_debug("dex: malformed 041 container");
	return -EINVAL;
}

int dex_open(const uint8_t *data, size_t size, struct dex_file **out)
{
	struct dex_file *d;

	*out = NULL;
	if (size < DEX_HEADER_SIZE || size > DEX_MAX_SIZE)
		return log_debug("dex: size %zu out of range", size), -EINVAL;
	d = xcalloc(1, sizeof(*d));
	d->buf = xmalloc(size);
	memcpy(d->buf, data, size);
	d->size = size;
	d->bytes_read = size;
	if (open_parts(d) < 0) {
		dex_close(d);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

int dex_open_source(const struct dex_source *src, uint64_t size, struct dex_file **out)
{
	struct dex_file *d;
	void *map;

	*out = NULL;
	if (size < DEX_HEADER_SIZE || size > DEX_MAX_SIZE)
		return log_debug("dex: size %llu out of range", (unsigned long long)size), -EINVAL;
	/* address space only: untouched pages of an anonymous private mapping take no memory */
	map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	d = xcalloc(1, sizeof(*d));
	d->buf = map;
	d->size = (size_t)size;
	d->src = *src;
	d->chunk = xcalloc((size_t)((size + DEX_CHUNK - 1) / DEX_CHUNK), 1);
	if (open_parts(d) < 0) {
		dex_close(d);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

uint64_t dex_bytes_read(const struct dex_file *d)
{
	return d->bytes_read;
}

void dex_close(struct dex_file *d)
{
	if (!d)
		return;
	free(d->meths);
	free(d->parts);
	if (d->chunk)
		munmap(d->buf, d->size);
	else
		free(d->buf);
	free(d->chunk);
	free(d);
}

/* ---- ids and names ---- */

/* The MUTF-8 bytes of string @idx (NUL-terminated inside the buffer), or NULL. */
static const char *string_at(struct dex_file *d, const struct dex_part *pt, uint32_t idx)
{
	const uint8_t *id;
	struct cursor c;
	uint64_t at, len;

	if (idx >= pt->string_ids_size)
		return NULL;
	id = get(d, pt->ids_base, pt->string_ids_off + (uint64_t)idx * 4, 4);
	if (!id || cursor_at(d, pt->data_base, le32(id), &c) < 0)
		return NULL;
	uleb(&c); /* utf16_size */
	if (c.err || c.p >= c.end)
		return NULL;
	/* the name must end within what the pretty printer may read (twice DEX_MAX_STRING) */
	at = (uint64_t)(c.p - d->buf);
	len = d->size - at < 2 * DEX_MAX_STRING ? d->size - at : 2 * DEX_MAX_STRING;
	if (load(d, at, len) < 0 || !memchr(c.p, 0, len))
		return NULL;
	return (const char *)c.p;
}

static const char *type_descriptor(struct dex_file *d, const struct dex_part *pt, uint32_t type_idx)
{
	const uint8_t *id;

	if (type_idx >= pt->type_ids_size)
		return NULL;
	id = get(d, pt->ids_base, pt->type_ids_off + (uint64_t)type_idx * 4, 4);
	return id ? string_at(d, pt, le32(id)) : NULL;
}

/* A bounded appender: output is cut, never overrun. */
struct outbuf {
	char *p;
	size_t size, len;
};

static void out_ch(struct outbuf *o, char ch)
{
	/* names end up in text formats (folded, JSON): no control bytes */
	if ((unsigned char)ch < 0x20 || ch == 0x7f)
		ch = '?';
	if (o->len + 1 < o->size)
		o->p[o->len++] = ch;
	o->p[o->len < o->size ? o->len : o->size - 1] = '\0';
}

static void out_str(struct outbuf *o, const char *s)
{
	for (size_t i = 0; s[i] && i < DEX_MAX_STRING; i++)
		out_ch(o, s[i]);
}

/* ART's AppendPrettyDescriptor: "[Ljava/lang/String;" -> "java.lang.String[]". */
static void out_pretty_type(struct outbuf *o, const char *desc)
{
	static const char *const prim[][2] = {
	    {"B", "byte"}, {"C", "char"},  {"D", "double"},  {"F", "float"}, {"I", "int"},
	    {"J", "long"}, {"S", "short"}, {"Z", "boolean"}, {"V", "void"},
	};
	size_t dims = 0, i;

	if (!desc) {
		out_str(o, "?");
		return;
	}
	while (desc[dims] == '[' && dims < DEX_MAX_STRING)
		dims++;
	desc += dims;
	if (desc[0] == 'L') {
		for (i = 1; desc[i] && desc[i] != ';' && i < DEX_MAX_STRING; i++)
			out_ch(o, desc[i] == '/' ? '.' : desc[i]);
	} else if (desc[0] && !desc[1]) {
		for (i = 0; i < ARRAY_SIZE(prim); i++)
			if (desc[0] == prim[i][0][0])
				break;
		out_str(o, i < ARRAY_SIZE(prim) ? prim[i][1] : desc);
	} else {
		out_str(o, desc);
	}
	for (i = 0; i < dims; i++)
		out_str(o, "[]");
}

/* ART's PrettyMethod(idx, with_signature=true) of method @idx, "<ret> pkg.Class.m(<params>)"
 * (what JIT and AOT symbols hold with full debug info), then dex_java_name() of it: dex frames
 * are named by the same function as compiled ones. The parameters go to @sig, "(<params>)". */
static void method_name(struct dex_file *d, const struct dex_part *pt, uint32_t idx, char *buf,
			size_t size, char *sig, size_t sig_size)
{
	char full[1024];
	struct outbuf o = {full, sizeof(full), 0};
	const uint8_t *mid = get(d, pt->ids_base, pt->method_ids_off + (uint64_t)idx * 8, 8);
	const uint8_t *proto, *list;
	const char *name;
	uint32_t n;

	full[0] = '\0';
	sig[0] = '\0';
	if (!mid || idx >= pt->method_ids_size) {
		snprintf(buf, size, "?");
		return;
	}
	proto = le16(mid + 2) < pt->proto_ids_size
		    ? get(d, pt->ids_base, pt->proto_ids_off + (uint64_t)le16(mid + 2) * 12, 12)
		    : NULL;
	out_pretty_type(&o, proto ? type_descriptor(d, pt, le16(proto + 4)) : NULL);
	out_ch(&o, ' ');
	out_pretty_type(&o, type_descriptor(d, pt, le16(mid)));
	out_ch(&o, '.');
	name = string_at(d, pt, le32(mid + 4));
	out_str(&o, name ? name : "?");
	out_ch(&o, '(');
	if (proto && le32(proto + 8)) {
		list = get(d, pt->data_base, le32(proto + 8), 4);
		n = list ? le32(list) : 0;
		if (n > DEX_MAX_PARAMS || !get(d, pt->data_base, le32(proto + 8) + 4ULL, n * 2ULL))
			n = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (i)
				out_str(&o, ", ");
			out_pretty_type(&o, type_descriptor(d, pt, le16(list + 4 + 2 * i)));
		}
	}
	out_ch(&o, ')');
	dex_java_name(full, buf, size);
	snprintf(sig, sig_size, "%s", strchr(full, '(') ? strchr(full, '(') : "");
}

/* Is [@s, @s + @n) "pkg.Class.method": a dot, not at either end, no space and no C++ "::"? */
static int is_java_qualified(const char *s, size_t n)
{
	const char *dot = memrchr(s, '.', n);

	if (!n || !dot || dot == s || dot == s + n - 1 || s[0] == '.')
		return 0;
	return !memchr(s, ' ', n) && !memchr(s, ':', n);
}

const char *dex_java_name(const char *art_name, char *out, size_t size)
{
	static const char deduped[] = "[DEDUPED] ";
	const char *s = art_name, *sp;
	size_t pre = 0, paren;
	struct outbuf o = {out, size, 0};

	if (!size)
		return out;
	out[0] = '\0';
	if (!strncmp(s, deduped, sizeof(deduped) - 1))
		pre = sizeof(deduped) - 1;
	s += pre;
	/* "[<ret> ]pkg.Class.m[(<params>)]": the part before the parameters, after the return
	 * type (types have no spaces in ART's pretty form) */
	paren = strcspn(s, "(");
	sp = memrchr(s, ' ', paren);
	if (sp && memchr(s, ' ', (size_t)(sp - s)))
		sp = NULL; /* more than one word before the parameters: not ART's form */
	else if (sp)
		s = sp + 1, paren -= (size_t)(s - (art_name + pre));
	if ((!sp && s[paren] == '\0' && !pre) || !is_java_qualified(s, paren)) {
		out_str(&o, art_name); /* already the form, or not a Java method */
		return out;
	}
	for (size_t i = 0; i < pre; i++)
		out_ch(&o, art_name[i]);
	for (size_t i = 0; i < paren && i < DEX_MAX_STRING; i++)
		out_ch(&o, s[i]);
	return out;
}

/* ---- the method index ---- */

/* Compact dex: debug info offset of method @idx from the CompactOffsetTable (16 methods per
 * block: a big-endian u16 bitmap of which have one, then ULEB deltas from debug_info_base). */
static uint32_t cdex_debug_off(struct dex_file *d, const struct dex_part *pt, uint32_t idx)
{
	uint64_t tbase = pt->data_base + pt->dbg_pos;
	const uint8_t *slot, *blk;
	uint32_t off, bitmap, bit = idx % 16, count;
	struct cursor c;

	if (!pt->dbg_pos && !pt->dbg_table_off)
		return 0;
	slot = get(d, tbase, pt->dbg_table_off + (uint64_t)(idx / 16) * 4, 4);
	if (!slot || !(blk = get(d, tbase, le32(slot), 2)))
		return 0;
	bitmap = (uint32_t)blk[0] << 8 | blk[1];
	if (!(bitmap & (1u << bit)))
		return 0;
	count = (uint32_t)__builtin_popcount(bitmap & ((2u << bit) - 1));
	if (cursor_at(d, tbase, le32(slot) + 2ULL, &c) < 0)
		return 0;
	off = pt->dbg_base;
	while (count--)
		off += uleb(&c);
	return c.err ? 0 : off;
}

/* Add method @idx of class def @cdef whose code item is at @code_off (data-relative). */
static void add_method(struct dex_file *d, uint16_t part, uint32_t cdef, uint32_t idx,
		       uint32_t code_off)
{
	const struct dex_part *pt = &d->parts[part];
	struct dex_meth m = {.method_idx = idx, .class_def = cdef, .part = part};
	const uint8_t *ci;
	uint32_t insns;

	if (d->nr_meths >= DEX_MAX_METHODS)
		return;
	if (!pt->compact) {
		ci = get(d, pt->data_base, code_off, 16);
		if (!ci)
			return;
		insns = le32(ci + 12);
		m.debug_off = le32(ci + 8);
		m.insns = pt->data_base + code_off + 16;
	} else {
		uint16_t flags;

		ci = get(d, pt->data_base, code_off, 4);
		if (!ci)
			return;
		flags = le16(ci + 2);
		insns = flags >> 5;
		if (flags & 0x10) { /* insns count extension: two u16 before the item */
			const uint8_t *pre =
			    code_off >= 4 ? get(d, pt->data_base, code_off - 4ULL, 4) : NULL;
			if (!pre)
				return;
			insns += le16(pre + 2) + ((uint32_t)le16(pre) << 16);
		}
		m.debug_off = cdex_debug_off(d, pt, idx);
		m.insns = pt->data_base + code_off + 4;
	}
	if (!insns || insns > UINT32_MAX / 2 || !in_range(d, m.insns, 0, insns * 2ULL))
		return;
	m.insns_bytes = insns * 2;
	ALLOC_GROW(d->meths, d->nr_meths + 1, d->alloc_meths);
	d->meths[d->nr_meths++] = m;
}

static void index_class(struct dex_file *d, uint16_t part, uint32_t cdef)
{
	const struct dex_part *pt = &d->parts[part];
	const uint8_t *cd = get(d, pt->ids_base, pt->class_defs_off + (uint64_t)cdef * 32, 32);
	uint32_t sizes[4], idx;
	struct cursor c;

	if (!cd || !le32(cd + 24) || cursor_at(d, pt->data_base, le32(cd + 24), &c) < 0)
		return;
	for (int i = 0; i < 4; i++)
		sizes[i] = uleb(&c);
	/* each entry takes at least 2 (fields) or 3 (methods) bytes: bound the counts */
	for (int i = 0; i < 2; i++)
		for (uint32_t k = 0; k < sizes[i] && !c.err; k++) {
			uleb(&c);
			uleb(&c);
		}
	for (int i = 2; i < 4 && !c.err; i++) {
		idx = 0;
		for (uint32_t k = 0; k < sizes[i] && !c.err; k++) {
			uint32_t diff = uleb(&c), code_off;

			uleb(&c); /* access flags */
			code_off = uleb(&c);
			idx = k ? idx + diff : diff;
			if (c.err || idx >= pt->method_ids_size)
				return;
			if (code_off)
				add_method(d, part, cdef, idx, code_off);
		}
	}
}

static int meth_cmp(const void *a, const void *b)
{
	const struct dex_meth *x = a, *y = b;

	if (x->insns != y->insns)
		return x->insns < y->insns ? -1 : 1;
	return x->method_idx < y->method_idx ? -1 : x->method_idx > y->method_idx;
}

static void build_index(struct dex_file *d)
{
	size_t j = 0;

	if (d->indexed)
		return;
	d->indexed = 1;
	for (size_t p = 0; p < d->nr_parts; p++)
		for (uint32_t i = 0; i < d->parts[p].class_defs_size; i++)
			index_class(d, (uint16_t)p, i);
	if (d->nr_meths)
		qsort(d->meths, d->nr_meths, sizeof(*d->meths), meth_cmp);
	/* one code item shared by several methods: the first (lowest index) names it */
	for (size_t i = 0; i < d->nr_meths; i++)
		if (!j || d->meths[i].insns != d->meths[j - 1].insns)
			d->meths[j++] = d->meths[i];
	d->nr_meths = j;
}

/* ---- line programs ---- */

/* Run the line program of @m (ART's DecodeDebugPositionInfo). Every emitted row goes to @rows
 * (up to @max); *@line gets the line of @target (code units): the last row at or before it.
 * Returns the number of rows, or -1 for a program that runs off the buffer. */
static int line_program(struct dex_file *d, const struct dex_meth *m, uint32_t target,
			uint32_t *line, struct dex_position *rows, size_t max)
{
	const struct dex_part *pt = &d->parts[m->part];
	uint32_t addr = 0, ln, nparams;
	int n = 0, found = 0;
	struct cursor c;

	*line = 0;
	if (!m->debug_off || cursor_at(d, pt->data_base, m->debug_off, &c) < 0)
		return 0;
	ln = uleb(&c);
	nparams = uleb(&c);
	for (uint32_t i = 0; i < nparams && !c.err; i++)
		uleb(&c);
	while (!c.err && n < (int)DEX_MAX_POSITIONS) {
		uint8_t op = next_byte(&c);

		if (c.err)
			return -1;
		switch (op) {
		case DBG_END_SEQUENCE:
			return n;
		case DBG_ADVANCE_PC:
			addr += uleb(&c);
			break;
		case DBG_ADVANCE_LINE:
			ln += (uint32_t)sleb(&c);
			break;
		case DBG_START_LOCAL:
			uleb(&c);
			uleb(&c);
			uleb(&c);
			break;
		case DBG_START_LOCAL_EXTENDED:
			uleb(&c);
			uleb(&c);
			uleb(&c);
			uleb(&c);
			break;
		case DBG_END_LOCAL:
		case DBG_RESTART_LOCAL:
		case DBG_SET_FILE:
			uleb(&c);
			break;
		case DBG_SET_PROLOGUE_END:
		case DBG_SET_EPILOGUE_BEGIN:
			break;
		default: {
			int adj = op - DBG_FIRST_SPECIAL;

			addr += (uint32_t)(adj / DBG_LINE_RANGE);
			ln += (uint32_t)(DBG_LINE_BASE + adj % DBG_LINE_RANGE);
			if (addr > target)
				found = 1;
			if (!found)
				*line = ln;
			if ((size_t)n < max)
				rows[n] = (struct dex_position){addr, ln};
			n++;
			if (found && !rows)
				return n;
		}
		}
	}
	return c.err ? -1 : n;
}

static void fill(struct dex_file *d, const struct dex_meth *m, uint32_t target,
		 struct dex_method *out)
{
	const struct dex_part *pt = &d->parts[m->part];
	const uint8_t *cd =
	    get(d, pt->ids_base, pt->class_defs_off + (uint64_t)m->class_def * 32, 32);
	const char *src =
	    cd && le32(cd + 16) != DEX_NO_INDEX ? string_at(d, pt, le32(cd + 16)) : NULL;
	struct outbuf o = {out->file, sizeof(out->file), 0};

	method_name(d, pt, m->method_idx, out->name, sizeof(out->name), out->signature,
		    sizeof(out->signature));
	out->file[0] = '\0';
	if (src)
		out_str(&o, src);
	out->code_offset = (uint32_t)m->insns;
	if (line_program(d, m, target, &out->line, NULL, 0) < 0)
		out->line = 0;
}

int dex_lookup(struct dex_file *d, uint64_t offset, struct dex_method *out)
{
	size_t lo = 0, hi;
	const struct dex_meth *m;

	build_index(d);
	hi = d->nr_meths;
	while (lo < hi) { /* first method starting after @offset */
		size_t mid = lo + (hi - lo) / 2;

		if (d->meths[mid].insns <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	m = &d->meths[lo - 1];
	if (offset - m->insns >= m->insns_bytes)
		return -ENOENT;
	fill(d, m, (uint32_t)((offset - m->insns) / 2), out);
	return 0;
}

size_t dex_method_count(struct dex_file *d)
{
	build_index(d);
	return d->nr_meths;
}

int dex_method_get(struct dex_file *d, size_t i, struct dex_method *out, uint32_t *insns_bytes)
{
	build_index(d);
	if (i >= d->nr_meths)
		return -ENOENT;
	fill(d, &d->meths[i], 0, out);
	if (insns_bytes)
		*insns_bytes = d->meths[i].insns_bytes;
	return 0;
}

int dex_method_positions(struct dex_file *d, uint32_t code_offset, struct dex_position *out,
			 size_t max)
{
	uint32_t line;
	int n;

	build_index(d);
	for (size_t i = 0; i < d->nr_meths; i++) {
		if (d->meths[i].insns != code_offset)
			continue;
		n = line_program(d, &d->meths[i], UINT32_MAX, &line, out, max);
		return n < 0 ? 0 : n;
	}
	return -ENOENT;
}
