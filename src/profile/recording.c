/* The recording file (format in include/perch/profile/recording.h): a writer that streams what is
 * new in the profile as zlib-compressed, checksummed chunks, and a reader that rebuilds a profile
 * from them, checking every size, count and id. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "perch/base/log.h"
#include "perch/base/strbuf.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"

#define HEADER_SIZE	  16
#define CHUNK_HEADER	  16
#define CHUNK_TARGET	  (1u << 20) /* start a new chunk once this many raw bytes wait */
#define MAX_META_KEYS	  8192	     /* profile meta lookups are linear: keep them cheap */
#define MAX_WEIGHT	  (1u << 24)
#define DEFLATE_MAX_RATIO 1032 /* deflate cannot expand a stored byte further than this */

enum rec_type {
	REC_STRING = 1,
	REC_LOCATION,
	REC_STACK,
	REC_THREAD,
	REC_SAMPLE,
	REC_META,
	REC_META_ADD,
	REC_END,
	REC_PROCESS, /* version 2 */
};

static void put_le16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void put_varint(struct strbuf *sb, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	strbuf_add(sb, b, n);
}

int recording_is_path(const char *path)
{
	size_t n = strlen(path);

	return n > 6 && !strcmp(path + n - 6, ".perch");
}

/* writer */

struct written_meta {
	char *value; /* as last written */
	size_t len;
};

struct recording_writer {
	int fd;
	FILE *f; /* instead of @fd: out_recording_write() */
	int err; /* first error (negative errno); nothing is written after it */
	uint64_t bytes, seq;
	uint64_t last_flush_ns;
	size_t strs, locs, stacks; /* how many of each the file has */
	uint32_t *thread_name;	   /* name string id written per thread */
	size_t threads, threads_alloc;
	uint32_t *proc_name; /* name string id written per process */
	size_t procs, procs_alloc;
	struct written_meta *meta; /* per profile meta index */
	size_t meta_nr, meta_alloc;
	uint64_t total_samples;
	uint64_t prev_time; /* time of the previous sample record of this chunk */
	struct strbuf raw, body;
	uint8_t *zbuf;
	size_t zbuf_alloc;
};

static int write_all(struct recording_writer *w, const void *data, size_t len)
{
	const uint8_t *b = data;

	if (w->f) {
		if (fwrite(data, 1, len, w->f) != len)
			return errno ? -errno : -EIO;
		w->bytes += len;
		return 0;
	}
	while (len) {
		ssize_t n = write(w->fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -(n < 0 ? errno : EIO);
		b += n;
		len -= (size_t)n;
		w->bytes += (uint64_t)n;
	}
	return 0;
}

/* Compress the pending records into one chunk and write it. */
static void emit_chunk(struct recording_writer *w)
{
	uLongf stored;
	uint8_t hdr[CHUNK_HEADER];
	int ret;

	if (!w->raw.len || w->err) {
		strbuf_reset(&w->raw);
		w->prev_time = 0;
		return;
	}
	stored = compressBound(w->raw.len);
	ALLOC_GROW(w->zbuf, stored, w->zbuf_alloc);
	if (compress2(w->zbuf, &stored, (const Bytef *)w->raw.buf, w->raw.len, 1) != Z_OK) {
		w->err = -EIO;
		goto out;
	}
	put_le32(hdr, (uint32_t)stored);
	put_le32(hdr + 4, (uint32_t)w->raw.len);
	put_le32(hdr + 8, (uint32_t)crc32(0, w->zbuf, (uInt)stored));
	put_le32(hdr + 12, (uint32_t)w->seq++);
	ret = write_all(w, hdr, sizeof(hdr));
	if (!ret)
		ret = write_all(w, w->zbuf, stored);
	if (ret)
		w->err = ret;
out:
	strbuf_reset(&w->raw);
	w->prev_time = 0;
}

/* Append the record of @type whose body is in w->body. */
static void add_record(struct recording_writer *w, int type)
{
	if (w->body.len > RECORDING_MAX_CHUNK - 32) {
		/* cannot be read back in one chunk: a meta value this big is a bug upstream */
		log_warn(0, "recording: record of %zu bytes left out", w->body.len);
		strbuf_reset(&w->body);
		return;
	}
	if (w->raw.len + w->body.len + 16 > RECORDING_MAX_CHUNK)
		emit_chunk(w);
	strbuf_addch(&w->raw, type);
	put_varint(&w->raw, w->body.len);
	strbuf_add(&w->raw, w->body.buf, w->body.len);
	strbuf_reset(&w->body);
	if (w->raw.len >= CHUNK_TARGET)
		emit_chunk(w);
}

static int write_header(struct recording_writer *w)
{
	uint8_t hdr[HEADER_SIZE];

	memcpy(hdr, RECORDING_MAGIC, 8);
	put_le16(hdr + 8, RECORDING_VERSION);
	put_le16(hdr + 10, HEADER_SIZE);
	put_le32(hdr + 12, 0);
	return write_all(w, hdr, sizeof(hdr));
}

struct recording_writer *recording_create(const char *path)
{
	struct recording_writer *w;
	int fd, ret;

	/* not O_EXCL + rename like output_open(): the file must be readable under its own name
	 * while it grows; O_NOFOLLOW still refuses a planted symlink */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return NULL;
	w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	strbuf_init(&w->raw, 0);
	strbuf_init(&w->body, 0);
	ret = write_header(w);
	if (ret) {
		close(fd);
		strbuf_release(&w->raw);
		strbuf_release(&w->body);
		free(w);
		errno = -ret;
		return NULL;
	}
	return w;
}

uint64_t recording_bytes(const struct recording_writer *w)
{
	return w->bytes;
}

static void write_strings(struct recording_writer *w, const struct profile *p)
{
	const char *s;

	/* string 0 ("") is implicit in every profile, but written too: ids stay plain */
	while ((s = profile_str(p, (uint32_t)w->strs))) {
		strbuf_addstr(&w->body, s);
		add_record(w, REC_STRING);
		w->strs++;
	}
}

static void write_locations(struct recording_writer *w, const struct profile *p)
{
	size_t nr = profile_nr_locations(p);

	for (; w->locs < nr; w->locs++) {
		const struct profile_location *l = profile_location(p, (uint32_t)w->locs);
		size_t n;
		const uint32_t *fr = profile_location_frames(p, (uint32_t)w->locs, &n);

		if (n > RECORDING_MAX_FRAMES)
			n = RECORDING_MAX_FRAMES;
		put_varint(&w->body, l->module);
		put_varint(&w->body, l->addr);
		put_varint(&w->body, n);
		for (size_t i = 0; i < n; i++) {
			const struct profile_frame *f = profile_frame(p, fr[i]);

			put_varint(&w->body, f->name);
			put_varint(&w->body, f->file);
			put_varint(&w->body, f->line);
			put_varint(&w->body, f->module);
			strbuf_addch(&w->body, f->kind);
			strbuf_addch(&w->body, (char)(f->inlined | f->tailcall << 1));
		}
		add_record(w, REC_LOCATION);
	}
}

static void write_stacks(struct recording_writer *w, const struct profile *p)
{
	size_t nr = profile_nr_stacks(p);

	for (; w->stacks < nr; w->stacks++) {
		size_t n;
		const uint32_t *locs = profile_stack(p, (uint32_t)w->stacks, &n);

		/* perch's stacks are at most --max-frames (<= 4000) frames plus their tail-call,
		 * Java and pseudo frames: cut (at the root end) only when those pass 4096, since a
		 * reader would refuse a longer one */
		if (n > RECORDING_MAX_STACK)
			n = RECORDING_MAX_STACK;
		put_varint(&w->body, n);
		for (size_t i = 0; i < n; i++)
			put_varint(&w->body, locs[i]);
		add_record(w, REC_STACK);
	}
}

static void write_thread(struct recording_writer *w, const struct profile *p, size_t i)
{
	const struct profile_thread *t = profile_thread_get(p, (uint32_t)i);

	put_varint(&w->body, i);
	put_varint(&w->body, (uint32_t)t->tid);
	put_varint(&w->body, t->name);
	put_varint(&w->body, (uint32_t)t->pid);
	add_record(w, REC_THREAD);
	w->thread_name[i] = t->name;
}

static void write_process(struct recording_writer *w, const struct profile *p, size_t i)
{
	const struct profile_process *pr = profile_process_get(p, (uint32_t)i);

	put_varint(&w->body, (uint32_t)pr->pid);
	put_varint(&w->body, pr->name);
	add_record(w, REC_PROCESS);
	w->proc_name[i] = pr->name;
}

/* New and renamed processes (their names change at exec). */
static void write_processes(struct recording_writer *w, const struct profile *p)
{
	size_t nr = profile_nr_processes(p), i;

	for (i = 0; i < w->procs; i++)
		if (profile_process_get(p, (uint32_t)i)->name != w->proc_name[i])
			write_process(w, p, i);
	ALLOC_GROW(w->proc_name, nr, w->procs_alloc);
	for (; w->procs < nr; w->procs++)
		write_process(w, p, w->procs);
}

static void write_threads(struct recording_writer *w, const struct profile *p)
{
	size_t nr = profile_nr_threads(p), i;

	/* renamed threads first, then the new ones, in index order */
	for (i = 0; i < w->threads; i++)
		if (profile_thread_get(p, (uint32_t)i)->name != w->thread_name[i])
			write_thread(w, p, i);
	ALLOC_GROW(w->thread_name, nr, w->threads_alloc);
	for (; w->threads < nr; w->threads++)
		write_thread(w, p, w->threads);
}

static void write_samples(struct recording_writer *w, const struct profile *p)
{
	size_t n;
	const struct profile_sample *s = profile_samples(p, &n);

	for (size_t i = 0; i < n; i++) {
		int64_t d = (int64_t)(s[i].time_ns - w->prev_time);

		put_varint(&w->body, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
		put_varint(&w->body, s[i].thread);
		put_varint(&w->body, s[i].stack);
		strbuf_addch(&w->body, (unsigned char)s[i].state);
		put_varint(&w->body, s[i].weight ? s[i].weight : 1);
		add_record(w, REC_SAMPLE);
		/* after add_record(): a new chunk starts its deltas from 0 */
		w->prev_time = s[i].time_ns;
		w->total_samples++;
	}
}

static void write_meta(struct recording_writer *w, const struct profile *p)
{
	size_t nr = profile_nr_meta(p);
	const char *key, *value;

	if (nr > w->meta_nr) {
		ALLOC_GROW(w->meta, nr, w->meta_alloc);
		memset(w->meta + w->meta_nr, 0, (nr - w->meta_nr) * sizeof(*w->meta));
		w->meta_nr = nr;
	}
	for (size_t i = 0; (key = profile_meta_at(p, i, &value)); i++) {
		struct written_meta *m = &w->meta[i];
		size_t len = strlen(value), klen = strlen(key);
		int append;

		if (m->value && m->len == len && !memcmp(m->value, value, len))
			continue;
		/* a timeline that only grew: write what is new */
		append = m->value && len > m->len && !memcmp(m->value, value, m->len);
		put_varint(&w->body, klen);
		strbuf_add(&w->body, key, klen);
		strbuf_add(&w->body, value + (append ? m->len : 0), len - (append ? m->len : 0));
		add_record(w, append ? REC_META_ADD : REC_META);
		free(m->value);
		m->value = xstrdup(value);
		m->len = len;
	}
}

void recording_meta_add(struct recording_writer *w, const char *key, const char *suffix)
{
	size_t klen = strlen(key);

	if (w->err || !*suffix)
		return;
	put_varint(&w->body, klen);
	strbuf_add(&w->body, key, klen);
	strbuf_addstr(&w->body, suffix);
	add_record(w, REC_META_ADD);
}

static int flush_all(struct recording_writer *w, const struct profile *p)
{
	if (w->err)
		return w->err;
	/* definitions before their users: a chunk never names an id of a later chunk */
	write_strings(w, p);
	write_locations(w, p);
	write_stacks(w, p);
	write_processes(w, p);
	write_threads(w, p);
	write_samples(w, p);
	write_meta(w, p);
	emit_chunk(w);
	return w->err;
}

int recording_flush(struct recording_writer *w, struct profile *p)
{
	int ret = flush_all(w, p);

	profile_drop_samples(p);
	return ret;
}

int recording_maybe_flush(struct recording_writer *w, struct profile *p, uint64_t now_ns)
{
	size_t n;

	profile_samples(p, &n);
	if (!w->last_flush_ns)
		w->last_flush_ns = now_ns;
	if (now_ns - w->last_flush_ns < RECORDING_FLUSH_NS && n < RECORDING_FLUSH_SAMPLES)
		return 0;
	w->last_flush_ns = now_ns;
	return recording_flush(w, p);
}

static int finish(struct recording_writer *w, const struct profile *p)
{
	int ret;

	if (p)
		flush_all(w, p);
	put_varint(&w->body, w->total_samples);
	add_record(w, REC_END);
	emit_chunk(w);
	ret = w->err;
	if (w->f) {
		if (!ret && fflush(w->f))
			ret = errno ? -errno : -EIO;
	} else {
		if (!ret && fsync(w->fd))
			ret = -errno;
		if (close(w->fd) && !ret)
			ret = -errno;
	}
	for (size_t i = 0; i < w->meta_nr; i++)
		free(w->meta[i].value);
	free(w->meta);
	free(w->thread_name);
	free(w->proc_name);
	free(w->zbuf);
	strbuf_release(&w->raw);
	strbuf_release(&w->body);
	free(w);
	return ret;
}

int recording_close(struct recording_writer *w, struct profile *p)
{
	int ret = finish(w, p);

	if (p)
		profile_drop_samples(p);
	return ret;
}

int out_recording_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct recording_writer *w = xcalloc(1, sizeof(*w));
	int ret;

	(void)o;
	w->f = f;
	w->fd = -1;
	strbuf_init(&w->raw, 0);
	strbuf_init(&w->body, 0);
	errno = 0;
	w->err = write_header(w);
	ret = finish(w, p);
	if (!ret && ferror(f))
		ret = -EIO;
	return ret;
}

/* reader */

struct pending_meta {
	char *key;
	struct strbuf value;
};

struct reader {
	struct profile *p;
	struct recording_info *info;
	uint32_t *strs, *locs, *stacks, *threads; /* file id -> profile id */
	size_t nr_strs, nr_locs, nr_stacks, nr_threads;
	size_t alloc_strs, alloc_locs, alloc_stacks, alloc_threads;
	struct pending_meta *meta; /* applied to the profile at the end */
	size_t nr_meta, alloc_meta;
	struct u64map meta_idx;
	uint32_t stack_buf[RECORDING_MAX_STACK];
	struct profile_frame frame_buf[RECORDING_MAX_FRAMES];
	uint64_t prev_time;
	int ended;
};

/* A cursor over one record body. */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t get_varint(struct cur *c)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		if (shift == 63 && b > 1) {
			c->bad = 1;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static uint8_t get_u8(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

/* A string id of the file mapped to the profile's, or -1. */
static int64_t str_id(struct reader *r, struct cur *c)
{
	uint64_t v = get_varint(c);

	if (c->bad || v >= r->nr_strs) {
		c->bad = 1;
		return -1;
	}
	return r->strs[v];
}

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->info->error, sizeof(r->info->error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int rd_string(struct reader *r, struct cur *c)
{
	char *s = xstrndup((const char *)c->p, (size_t)(c->end - c->p));

	ALLOC_GROW(r->strs, r->nr_strs + 1, r->alloc_strs);
	r->strs[r->nr_strs++] = profile_intern_str(r->p, s);
	free(s);
	return 0;
}

static int rd_location(struct reader *r, struct cur *c)
{
	int64_t module = str_id(r, c);
	uint64_t addr = get_varint(c), n = get_varint(c);

	if (c->bad || n > RECORDING_MAX_FRAMES)
		return fail(r, "bad location record");
	memset(r->frame_buf, 0, sizeof(r->frame_buf));
	for (uint64_t i = 0; i < n; i++) {
		struct profile_frame *f = &r->frame_buf[i];
		int64_t name = str_id(r, c), file = str_id(r, c);
		uint64_t line = get_varint(c);
		int64_t fmod = str_id(r, c);
		uint8_t kind = get_u8(c), inl = get_u8(c);

		if (c->bad || line > UINT32_MAX || kind > PROFILE_FRAME_AOT || inl > 3)
			return fail(r, "bad frame in location record");
		f->name = (uint32_t)name;
		f->file = (uint32_t)file;
		f->line = (uint32_t)line;
		f->module = (uint32_t)fmod;
		f->kind = kind;
		f->inlined = inl & 1;
		f->tailcall = inl >> 1;
	}
	ALLOC_GROW(r->locs, r->nr_locs + 1, r->alloc_locs);
	r->locs[r->nr_locs++] =
	    profile_intern_location(r->p, (uint32_t)module, addr, r->frame_buf, (size_t)n);
	return 0;
}

static int rd_stack(struct reader *r, struct cur *c)
{
	uint64_t n = get_varint(c);

	if (c->bad || n > RECORDING_MAX_STACK)
		return fail(r, "bad stack record");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t l = get_varint(c);

		if (c->bad || l >= r->nr_locs)
			return fail(r, "stack record names an unknown location");
		r->stack_buf[i] = r->locs[l];
	}
	ALLOC_GROW(r->stacks, r->nr_stacks + 1, r->alloc_stacks);
	r->stacks[r->nr_stacks++] = profile_intern_stack(r->p, r->stack_buf, (size_t)n);
	return 0;
}

static int rd_thread(struct reader *r, struct cur *c)
{
	uint64_t idx = get_varint(c), tid = get_varint(c);
	int64_t name = str_id(r, c);
	uint64_t pid = r->info->version >= 2 ? get_varint(c) : 0; /* version 1: no process */
	uint32_t t;

	if (c->bad || idx > r->nr_threads || tid > INT32_MAX || pid > INT32_MAX)
		return fail(r, "bad thread record");
	t = profile_thread_in(r->p, (pid_t)pid, (pid_t)tid, NULL);
	/* an empty name does not rename (the profile's "unknown") */
	if (name > 0)
		profile_thread_in(r->p, (pid_t)pid, (pid_t)tid, profile_str(r->p, (uint32_t)name));
	if (idx == r->nr_threads) {
		ALLOC_GROW(r->threads, r->nr_threads + 1, r->alloc_threads);
		r->threads[r->nr_threads++] = t;
	} else if (r->threads[idx] != t) {
		return fail(r, "thread record changes the tid of thread %llu",
			    (unsigned long long)idx);
	}
	return 0;
}

static int rd_process(struct reader *r, struct cur *c)
{
	uint64_t pid = get_varint(c);
	int64_t name = str_id(r, c);

	if (c->bad || !pid || pid > INT32_MAX)
		return fail(r, "bad process record");
	if (profile_process_find(r->p, (pid_t)pid) == UINT32_MAX &&
	    profile_nr_processes(r->p) >= RECORDING_MAX_PROCESSES)
		return fail(r, "more than %d processes", RECORDING_MAX_PROCESSES);
	profile_process(r->p, (pid_t)pid, name > 0 ? profile_str(r->p, (uint32_t)name) : NULL);
	return 0;
}

static int rd_sample(struct reader *r, struct cur *c)
{
	uint64_t zz = get_varint(c), thread = get_varint(c), stack = get_varint(c);
	uint8_t state = get_u8(c);
	uint64_t weight = get_varint(c);
	uint64_t delta = (zz >> 1) ^ (0 - (zz & 1));

	if (c->bad || thread >= r->nr_threads || stack >= r->nr_stacks || !weight ||
	    weight > MAX_WEIGHT)
		return fail(r, "bad sample record");
	r->prev_time += delta; /* unsigned: wraps, never undefined */
	profile_add_weighted(r->p, r->threads[thread], r->stacks[stack], r->prev_time, (char)state,
			     (uint32_t)weight);
	r->info->samples++;
	return 0;
}

static struct pending_meta *meta_slot(struct reader *r, const char *key)
{
	uint64_t h = u64map_hash_str(key);
	size_t slot;
	uint32_t i = u64map_find(&r->meta_idx, h, &slot);

	if (i != UINT32_MAX) {
		if (!strcmp(r->meta[i].key, key))
			return &r->meta[i];
		/* a hash collision: rare enough for a linear search */
		for (i = 0; i < r->nr_meta; i++)
			if (!strcmp(r->meta[i].key, key))
				return &r->meta[i];
	}
	if (r->nr_meta >= MAX_META_KEYS)
		return NULL;
	ALLOC_GROW(r->meta, r->nr_meta + 1, r->alloc_meta);
	r->meta[r->nr_meta].key = xstrdup(key);
	strbuf_init(&r->meta[r->nr_meta].value, 0);
	if (i == UINT32_MAX)
		u64map_set(&r->meta_idx, slot, h, (uint32_t)r->nr_meta);
	return &r->meta[r->nr_meta++];
}

static int rd_meta(struct reader *r, struct cur *c, int append)
{
	uint64_t klen = get_varint(c);
	struct pending_meta *m;
	char *key;

	if (c->bad || klen == 0 || klen > (uint64_t)(c->end - c->p) || memchr(c->p, 0, klen))
		return fail(r, "bad meta record");
	key = xstrndup((const char *)c->p, klen);
	c->p += klen;
	m = meta_slot(r, key);
	free(key);
	if (!m)
		return fail(r, "more than %d meta keys", MAX_META_KEYS);
	if (!append)
		strbuf_reset(&m->value);
	/* a NUL would end the C string the profile keeps: drop what follows it */
	strbuf_add(&m->value, c->p, strnlen((const char *)c->p, (size_t)(c->end - c->p)));
	return 0;
}

static int rd_end(struct reader *r, struct cur *c)
{
	uint64_t total = get_varint(c);

	if (c->bad)
		return fail(r, "bad end record");
	if (total != r->info->samples)
		return fail(r, "end record counts %llu samples, the file has %llu",
			    (unsigned long long)total, (unsigned long long)r->info->samples);
	r->ended = 1;
	return 0;
}

/* Apply the records of one inflated chunk. On error, the records before the bad one stay. */
static int rd_records(struct reader *r, const uint8_t *raw, size_t len)
{
	const uint8_t *p = raw, *end = raw + len;
	int ret = 0;

	r->prev_time = 0;
	while (p < end && !ret) {
		struct cur c = {p, end, 0};
		uint8_t type = get_u8(&c);
		uint64_t blen = get_varint(&c);

		if (c.bad || blen > (uint64_t)(end - c.p))
			return fail(r, "record overruns its chunk");
		c.end = c.p + blen;
		p = c.end;
		if (r->ended)
			return fail(r, "records after the end record");
		switch (type) {
		case REC_STRING:
			ret = rd_string(r, &c);
			break;
		case REC_LOCATION:
			ret = rd_location(r, &c);
			break;
		case REC_STACK:
			ret = rd_stack(r, &c);
			break;
		case REC_THREAD:
			ret = rd_thread(r, &c);
			break;
		case REC_PROCESS:
			if (r->info->version >= 2)
				ret = rd_process(r, &c);
			break;
		case REC_SAMPLE:
			ret = rd_sample(r, &c);
			break;
		case REC_META:
		case REC_META_ADD:
			ret = rd_meta(r, &c, type == REC_META_ADD);
			break;
		case REC_END:
			ret = rd_end(r, &c);
			break;
		default:
			break; /* a later minor version's record: skip */
		}
	}
	return ret;
}

static int inflate_chunk(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)in_len;
	zs.next_out = out;
	zs.avail_out = (uInt)out_len;
	ret = inflate(&zs, Z_FINISH);
	/* exactly raw_len bytes, the whole stored payload used */
	if (ret != Z_STREAM_END || zs.avail_out || zs.avail_in)
		ret = -EBADMSG;
	else
		ret = 0;
	inflateEnd(&zs);
	return ret;
}

static void reader_release(struct reader *r)
{
	free(r->strs);
	free(r->locs);
	free(r->stacks);
	free(r->threads);
	for (size_t i = 0; i < r->nr_meta; i++) {
		free(r->meta[i].key);
		strbuf_release(&r->meta[i].value);
	}
	free(r->meta);
	u64map_release(&r->meta_idx);
}

int recording_read_mem(const uint8_t *data, size_t size, struct profile **out,
		       struct recording_info *info)
{
	struct reader *r;
	size_t off;
	uint8_t *raw = NULL;
	unsigned int hsize;

	memset(info, 0, sizeof(*info));
	*out = NULL;
	if (size < HEADER_SIZE || memcmp(data, RECORDING_MAGIC, 8)) {
		snprintf(info->error, sizeof(info->error), "not a perch recording (no %s header)",
			 RECORDING_MAGIC);
		return -EINVAL;
	}
	info->version = (unsigned int)data[8] | (unsigned int)data[9] << 8;
	hsize = (unsigned int)data[10] | (unsigned int)data[11] << 8;
	if (info->version > RECORDING_VERSION) {
		snprintf(info->error, sizeof(info->error),
			 "recording format version %u is newer than this perch reads (%u)",
			 info->version, RECORDING_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (info->version == 0 || hsize < HEADER_SIZE || hsize > size) {
		snprintf(info->error, sizeof(info->error), "bad recording header");
		return -EINVAL;
	}
	r = xcalloc(1, sizeof(*r));
	r->info = info;
	r->p = profile_new();
	profile_keep_samples(r->p, 1);
	for (off = hsize; off < size;) {
		uint32_t stored, raw_len, crc, seq;
		int ret;

		if (size - off < CHUNK_HEADER) {
			snprintf(info->error, sizeof(info->error), "torn chunk header");
			break;
		}
		stored = get_le32(data + off);
		raw_len = get_le32(data + off + 4);
		crc = get_le32(data + off + 8);
		seq = get_le32(data + off + 12);
		if (seq != info->chunks || stored > RECORDING_MAX_CHUNK ||
		    raw_len > RECORDING_MAX_CHUNK || !stored || !raw_len ||
		    raw_len > (uint64_t)stored * DEFLATE_MAX_RATIO) {
			snprintf(info->error, sizeof(info->error), "bad chunk header");
			break;
		}
		if (size - off - CHUNK_HEADER < stored) {
			snprintf(info->error, sizeof(info->error), "torn chunk");
			break;
		}
		if (crc32(0, data + off + CHUNK_HEADER, stored) != crc) {
			snprintf(info->error, sizeof(info->error), "chunk checksum mismatch");
			break;
		}
		raw = xrealloc(raw, raw_len ? raw_len : 1);
		if (inflate_chunk(data + off + CHUNK_HEADER, stored, raw, raw_len) < 0) {
			snprintf(info->error, sizeof(info->error), "chunk does not inflate");
			break;
		}
		ret = rd_records(r, raw, raw_len);
		if (ret < 0) {
			/* the records before the bad one were applied: keep them */
			info->chunks++;
			break;
		}
		off += CHUNK_HEADER + stored;
		info->chunks++;
	}
	free(raw);
	info->complete = r->ended && off >= size;
	if (!info->complete)
		info->bad_offset = off; /* also the end of a file cut between two chunks */
	if (r->ended && off < size && !info->error[0])
		snprintf(info->error, sizeof(info->error), "data after the end record");
	if (!info->complete && !info->error[0])
		snprintf(info->error, sizeof(info->error), "no end record (recording cut short)");
	if (!info->chunks) {
		reader_release(r);
		profile_free(r->p);
		free(r);
		return -EINVAL;
	}
	for (size_t i = 0; i < r->nr_meta; i++)
		profile_set_meta(r->p, r->meta[i].key, r->meta[i].value.buf);
	*out = r->p;
	reader_release(r);
	free(r);
	return 0;
}

int recording_read(const char *path, struct profile **out, struct recording_info *info)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd, ret;

	memset(info, 0, sizeof(*info));
	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = fstat(fd, &st) ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (ret) {
		if (ret == -EINVAL)
			snprintf(info->error, sizeof(info->error), "not a regular file");
		close(fd);
		return ret;
	}
	/* read, not mmap: a recording still being written may grow or be truncated under us */
	buf = xmalloc(st.st_size ? (size_t)st.st_size : 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			free(buf);
			close(fd);
			return ret;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	ret = recording_read_mem(buf, got, out, info);
	free(buf);
	return ret;
}
