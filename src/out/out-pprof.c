/* pprof writer (docs/design/formats.md section 2): profile.proto encoded by hand (varints and
 * length-delimited fields, in field-number order), gzipped with zlib. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perch/base/strbuf.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/writers.h"
#include "perch/profile/profile.h"

/* wire types */
#define PB_VARINT 0
#define PB_LEN	  2

uint64_t out_period_ns(const struct profile *p)
{
	uint64_t v = profile_meta_u64(p, "period_ns");

	return v ? v : OUT_DEFAULT_PERIOD_NS;
}

static void pb_varint(struct strbuf *sb, uint64_t v)
{
	while (v >= 0x80) {
		strbuf_addch(sb, (int)(0x80 | (v & 0x7f)));
		v >>= 7;
	}
	strbuf_addch(sb, (int)v);
}

static void pb_key(struct strbuf *sb, unsigned int field, unsigned int wt)
{
	pb_varint(sb, (uint64_t)field << 3 | wt);
}

/* A varint field; zero is the proto3 default and is left out. */
static void pb_uint(struct strbuf *sb, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(sb, field, PB_VARINT);
	pb_varint(sb, v);
}

static void pb_bytes(struct strbuf *sb, unsigned int field, const void *data, size_t len)
{
	pb_key(sb, field, PB_LEN);
	pb_varint(sb, len);
	strbuf_add(sb, data, len);
}

/* A nested message, then @msg is emptied for reuse. */
static void pb_msg(struct strbuf *sb, unsigned int field, struct strbuf *msg)
{
	pb_bytes(sb, field, msg->buf, msg->len);
	strbuf_reset(msg);
}

struct pprof {
	const struct profile *p;
	/* string_table: texts, and a map from the hash of a text to the first index with it */
	char **strs;
	size_t nr_strs, alloc_strs;
	struct u64map str_map; /* FNV-1a hash -> first index (collisions: chain below) */
	uint32_t *str_next;    /* next index with the same hash, UINT32_MAX = none */
	size_t alloc_next;
	struct u64map func_map; /* (name idx, file idx) -> function id */
	uint32_t nr_funcs;
	struct strbuf functions;
	struct strbuf tmp, tmp2;
};

/* Index of @s in the string table (added when new). Invalid UTF-8 (protobuf strings must be
 * UTF-8) becomes U+FFFD and control characters '_'. */
static uint32_t str_idx(struct pprof *pp, const char *raw)
{
	struct strbuf clean = STRBUF_INIT;
	uint32_t idx;
	size_t slot;
	uint64_t h;

	for (; raw && *raw;) {
		size_t n;
		uint32_t cp = json_utf8_next(raw, &n);

		raw += n;
		json_add_utf8(&clean, cp < 0x20 || cp == 0x7f ? '_' : cp);
	}
	h = u64map_hash_str(clean.buf);
	idx = u64map_find(&pp->str_map, h, &slot);
	if (idx == UINT32_MAX) {
		u64map_set(&pp->str_map, slot, h, (uint32_t)pp->nr_strs);
	} else {
		for (;; idx = pp->str_next[idx]) {
			if (!strcmp(pp->strs[idx], clean.buf)) {
				strbuf_release(&clean);
				return idx;
			}
			if (pp->str_next[idx] == UINT32_MAX)
				break;
		}
		pp->str_next[idx] = (uint32_t)pp->nr_strs;
	}
	ALLOC_GROW(pp->strs, pp->nr_strs + 1, pp->alloc_strs);
	ALLOC_GROW(pp->str_next, pp->nr_strs + 1, pp->alloc_next);
	pp->str_next[pp->nr_strs] = UINT32_MAX;
	pp->strs[pp->nr_strs] = strbuf_detach(&clean, NULL);
	return (uint32_t)pp->nr_strs++;
}

/* The frame kind in a Function name: the suffixes of the folded writer (out-folded.c), "_[j]"
 * for compiled managed code (JIT or AOT) and "_[0]" for interpreted code. profile.proto has no
 * field for it, and a suffix rather than a prefix keeps names sorting and matching (-focus,
 * -show) by the method as in the other outputs, so one grep finds a frame in every format; the
 * Mapping ("[jit]", "[dex]", the oat file) tells JIT from AOT. Native names (kernel ones
 * included: their Mapping says so) get none. */
static const char *kind_suffix(uint8_t kind, int tailcall)
{
	/* a tail-call frame (profile.h) is "_[t]" before that, as in folded output */
	if (kind == PROFILE_FRAME_JIT || kind == PROFILE_FRAME_AOT)
		return tailcall ? "_[t]_[j]" : "_[j]";
	if (kind == PROFILE_FRAME_INTERP)
		return tailcall ? "_[t]_[0]" : "_[0]";
	return tailcall ? "_[t]" : NULL;
}

/* The Function id of (@name + the suffix of @kind, @file), appending a Function message when
 * new; its system_name is @name without the suffix. */
static uint32_t func_id(struct pprof *pp, const char *name, uint8_t kind, int tailcall,
			const char *file)
{
	const char *suffix = kind_suffix(kind, tailcall);
	uint32_t sys = str_idx(pp, name && *name ? name : "[unknown]"), n = sys;
	uint32_t fl = str_idx(pp, file ? file : "");
	uint64_t key;
	uint32_t id;
	size_t slot;

	if (suffix) {
		char *full = xasprintf("%s%s", pp->strs[sys], suffix);

		n = str_idx(pp, full);
		free(full);
	}
	key = (uint64_t)n << 32 | fl;
	id = u64map_find(&pp->func_map, key, &slot);
	if (id != UINT32_MAX)
		return id;
	id = ++pp->nr_funcs;
	u64map_set(&pp->func_map, slot, key, id);
	pb_uint(&pp->tmp, 1, id);
	pb_uint(&pp->tmp, 2, n);
	pb_uint(&pp->tmp, 3, sys); /* system_name: perch keeps only one (demangled) name */
	pb_uint(&pp->tmp, 4, fl);
	pb_msg(&pp->functions, 5, &pp->tmp);
	return id;
}

struct pp_sample {
	uint32_t thread, stack;
	char state;
	uint64_t count;
};

struct pp_samples {
	struct pp_sample *v;
	size_t nr, alloc;
};

static void collect_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct pp_samples *ss = arg;

	ALLOC_GROW(ss->v, ss->nr + 1, ss->alloc);
	ss->v[ss->nr++] = (struct pp_sample){.thread = thread, .stack = stack, .count = count};
}

static int cmp_sample(const void *a, const void *b)
{
	const struct pp_sample *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (x->state > y->state) - (x->state < y->state);
}

/* Aggregated samples, ascending (thread, stack, state). The state is known only from kept
 * samples, and only when they are all of them. */
static void gather_samples(const struct profile *p, struct pp_samples *ss)
{
	size_t n, i, j;
	const struct profile_sample *s = profile_samples(p, &n);

	if (!n || n != profile_total_samples(p)) {
		profile_foreach_count(p, collect_count, ss);
		return;
	}
	ss->v = xcalloc(n, sizeof(*ss->v));
	ss->alloc = n;
	for (i = 0; i < n; i++)
		ss->v[i] = (struct pp_sample){s[i].thread, s[i].stack, s[i].state, 1};
	qsort(ss->v, n, sizeof(*ss->v), cmp_sample);
	for (i = 0, j = 0; i < n; i++) {
		if (j && !cmp_sample(&ss->v[j - 1], &ss->v[i]))
			ss->v[j - 1].count++;
		else
			ss->v[j++] = ss->v[i];
	}
	ss->nr = j;
}

static int gzip_out(const struct strbuf *raw, FILE *f)
{
	unsigned char out[16384];
	z_stream zs;
	int zret, ret = 0;

	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: a gzip wrapper; zlib writes mtime 0 and no name: reproducible bytes */
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -EIO;
	zs.next_in = (unsigned char *)raw->buf;
	zs.avail_in = (uInt)raw->len;
	do {
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		zret = deflate(&zs, Z_FINISH);
		if (zret == Z_STREAM_ERROR) {
			ret = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - zs.avail_out, f) != sizeof(out) - zs.avail_out) {
			ret = errno ? -errno : -EIO;
			break;
		}
	} while (zret != Z_STREAM_END);
	deflateEnd(&zs);
	return ret;
}

static const char *thread_label(const struct profile *p, const struct profile_thread *t)
{
	const char *name = t ? profile_str(p, t->name) : NULL;

	return name && *name ? name : "[unknown]";
}

/* Encode the whole uncompressed Profile message into @out. */
/* Mappings (field 3 of the Profile, into @out): one per module, in order of first use by a
 * location; each location's mapping id into @loc_mapping (0: none). */
static void encode_mappings(struct pprof *pp, uint32_t *loc_mapping, struct strbuf *out)
{
	const struct profile *p = pp->p;
	uint32_t *map_module = NULL, nr_mappings = 0;
	uint64_t *map_lo = NULL, *map_hi = NULL;
	size_t nr_locs = profile_nr_locations(p), i, j, n, map_alloc = 0, alloc_lo = 0,
	       alloc_hi = 0;

	for (i = 0; i < nr_locs; i++) {
		const struct profile_location *l = profile_location(p, (uint32_t)i);

		if (!l || !l->module)
			continue;
		for (j = 0; j < nr_mappings && map_module[j] != l->module; j++)
			;
		if (j == nr_mappings) {
			ALLOC_GROW(map_module, nr_mappings + 1, map_alloc);
			ALLOC_GROW(map_lo, nr_mappings + 1, alloc_lo);
			ALLOC_GROW(map_hi, nr_mappings + 1, alloc_hi);
			map_module[j] = l->module;
			map_lo[j] = l->addr;
			map_hi[j] = l->addr;
			nr_mappings++;
		}
		if (l->addr < map_lo[j])
			map_lo[j] = l->addr;
		if (l->addr > map_hi[j])
			map_hi[j] = l->addr;
		loc_mapping[i] = (uint32_t)j + 1;
	}
	for (j = 0; j < nr_mappings; j++) {
		const char *path = profile_str(p, map_module[j]);
		char *key = xasprintf("build_id:%s", path ? path : "");
		const char *bid = profile_meta(p, key);
		int has_files = 0, has_lines = 0, has_inline = 0, has_funcs = 0;

		free(key);
		for (i = 0; i < nr_locs; i++) {
			const uint32_t *fr;

			if (loc_mapping[i] != j + 1)
				continue;
			fr = profile_location_frames(p, (uint32_t)i, &n);
			has_inline |= n > 1;
			has_funcs |= n > 0;
			for (size_t k = 0; k < n; k++) {
				const struct profile_frame *f = profile_frame(p, fr[k]);

				has_files |= f && f->file;
				has_lines |= f && f->line;
			}
		}
		pb_uint(&pp->tmp, 1, j + 1);
		pb_uint(&pp->tmp, 2, map_lo[j]);
		/* exclusive end; ~0 cannot be reached by a real ELF vaddr */
		pb_uint(&pp->tmp, 3, map_hi[j] + 1 ? map_hi[j] + 1 : map_hi[j]);
		pb_uint(&pp->tmp, 5, str_idx(pp, path));
		if (bid && *bid)
			pb_uint(&pp->tmp, 6, str_idx(pp, bid));
		pb_uint(&pp->tmp, 7, has_funcs);
		pb_uint(&pp->tmp, 8, has_files);
		pb_uint(&pp->tmp, 9, has_lines);
		pb_uint(&pp->tmp, 10, has_inline);
		pb_msg(out, 3, &pp->tmp);
	}
	free(map_module);
	free(map_lo);
	free(map_hi);
}

/* Locations (field 4, into @out): id = profile location id + 1; lines innermost first like
 * the profile. */
static void encode_locations(struct pprof *pp, const uint32_t *loc_mapping, struct strbuf *out)
{
	const struct profile *p = pp->p;
	size_t nr_locs = profile_nr_locations(p), i, j, n;

	for (i = 0; i < nr_locs; i++) {
		const struct profile_location *l = profile_location(p, (uint32_t)i);
		const uint32_t *fr = profile_location_frames(p, (uint32_t)i, &n);

		pb_uint(&pp->tmp2, 1, i + 1);
		pb_uint(&pp->tmp2, 2, loc_mapping[i]);
		pb_uint(&pp->tmp2, 3, l ? l->addr : 0);
		for (j = 0; j < n; j++) {
			const struct profile_frame *f = profile_frame(p, fr[j]);
			uint32_t fid;

			if (!f)
				continue;
			fid = func_id(pp, profile_str(p, f->name), f->kind, f->tailcall,
				      profile_str(p, f->file));
			pb_uint(&pp->tmp, 1, fid);
			pb_uint(&pp->tmp, 2, f->line);
			pb_msg(&pp->tmp2, 4, &pp->tmp);
		}
		pb_msg(out, 4, &pp->tmp2);
	}
}

/* The string-table indexes of the sample labels' keys. */
struct pp_keys {
	uint32_t tid, tname, pid, state, pname;
};

/* One label {key, str} or {key, num} of a sample, into pp->tmp2. */
static void label_str(struct pprof *pp, uint32_t key, const char *str)
{
	pb_uint(&pp->tmp, 1, key);
	pb_uint(&pp->tmp, 2, str_idx(pp, str));
	pb_msg(&pp->tmp2, 3, &pp->tmp);
}

static void label_num(struct pprof *pp, uint32_t key, uint64_t num)
{
	pb_uint(&pp->tmp, 1, key);
	pb_key(&pp->tmp, 3, PB_VARINT);
	pb_varint(&pp->tmp, num);
	pb_msg(&pp->tmp2, 3, &pp->tmp);
}

/* Samples (field 2, into @samples), one per thread, stack and state with its labels; the
 * pseudo location of empty stacks, when one is needed, goes into @locations. */
static void encode_samples(struct pprof *pp, const struct pp_keys *k, struct strbuf *samples,
			   struct strbuf *locations)
{
	const struct profile *p = pp->p;
	uint64_t period = out_period_ns(p), pid = profile_meta_u64(p, "pid");
	size_t nr_locs = profile_nr_locations(p), i, j, n;
	int multi = profile_multi_process(p);
	struct pp_samples ss = {0};
	uint32_t noloc_id = 0;

	gather_samples(p, &ss);
	for (i = 0; i < ss.nr; i++) {
		const struct pp_sample *s = &ss.v[i];
		const struct profile_thread *th = profile_thread_get(p, s->thread);
		const uint32_t *locs = profile_stack(p, s->stack, &n);

		if (!n && !noloc_id) {
			/* an empty stack still counts: one pseudo location to hold it */
			noloc_id = (uint32_t)nr_locs + 1;
			pb_uint(&pp->tmp, 1,
				func_id(pp, "[no stack]", PROFILE_FRAME_PSEUDO, 0, ""));
			pb_uint(&pp->tmp2, 1, noloc_id);
			pb_msg(&pp->tmp2, 4, &pp->tmp);
			pb_msg(locations, 4, &pp->tmp2);
		}
		/* packed location ids, leaf first as stored */
		for (j = 0; j < n; j++)
			pb_varint(&pp->tmp, (uint64_t)locs[j] + 1);
		if (!n)
			pb_varint(&pp->tmp, noloc_id);
		pb_msg(&pp->tmp2, 1, &pp->tmp);
		pb_varint(&pp->tmp, s->count);
		pb_varint(&pp->tmp, s->count * period);
		pb_msg(&pp->tmp2, 2, &pp->tmp);
		label_num(pp, k->tid, th ? (uint64_t)(uint32_t)th->tid : 0);
		label_str(pp, k->tname, thread_label(p, th));
		/* the thread's own process in a recording of several */
		if ((th && th->pid) || pid) {
			pb_uint(&pp->tmp, 1, k->pid);
			pb_uint(&pp->tmp, 3, th && th->pid ? (uint64_t)(uint32_t)th->pid : pid);
			pb_msg(&pp->tmp2, 3, &pp->tmp);
		}
		if (multi && th && th->pid) {
			const char *pname = profile_process_name(p, th->pid);

			label_str(pp, k->pname, pname && *pname ? pname : "[unknown]");
		}
		if (s->state) {
			char st[2] = {s->state, 0};

			label_str(pp, k->state, st);
		}
		pb_msg(samples, 2, &pp->tmp2);
	}
	free(ss.v);
}

/* The profile's duration: its meta, else the span of its kept samples. */
static uint64_t duration_ns(const struct profile *p, uint64_t period)
{
	uint64_t t = profile_meta_u64(p, "duration_ns");
	size_t n;

	if (!t) {
		const struct profile_sample *ks = profile_samples(p, &n);

		if (n && ks[n - 1].time_ns >= ks[0].time_ns)
			t = ks[n - 1].time_ns - ks[0].time_ns + period;
	}
	return t;
}

static void encode(const struct profile *p, struct strbuf *out)
{
	struct pprof pp = {.p = p};
	struct strbuf samples = STRBUF_INIT, mappings = STRBUF_INIT, locations = STRBUF_INIT;
	struct pp_keys k = {0};
	uint64_t period = out_period_ns(p);
	size_t nr_locs = profile_nr_locations(p), i;
	uint32_t s_samples, s_count, s_wall, s_ns, *loc_mapping;

	strbuf_init(&pp.functions, 0);
	strbuf_init(&pp.tmp, 0);
	strbuf_init(&pp.tmp2, 0);
	str_idx(&pp, ""); /* string_table[0] must be "" */
	s_samples = str_idx(&pp, "samples");
	s_count = str_idx(&pp, "count");
	s_wall = str_idx(&pp, "wall");
	s_ns = str_idx(&pp, "nanoseconds");
	k.tid = str_idx(&pp, "thread_id");
	k.tname = str_idx(&pp, "thread_name");
	k.pid = str_idx(&pp, "pid");
	k.state = str_idx(&pp, "state");
	if (profile_multi_process(p))
		k.pname = str_idx(&pp, "process_name");

	loc_mapping = xcalloc(nr_locs ? nr_locs : 1, sizeof(*loc_mapping));
	encode_mappings(&pp, loc_mapping, &mappings);
	encode_locations(&pp, loc_mapping, &locations);
	encode_samples(&pp, &k, &samples, &locations);

	/* the Profile, fields in number order */
	pb_uint(&pp.tmp, 1, s_samples);
	pb_uint(&pp.tmp, 2, s_count);
	pb_msg(out, 1, &pp.tmp);
	pb_uint(&pp.tmp, 1, s_wall);
	pb_uint(&pp.tmp, 2, s_ns);
	pb_msg(out, 1, &pp.tmp);
	strbuf_add(out, samples.buf, samples.len);
	strbuf_add(out, mappings.buf, mappings.len);
	strbuf_add(out, locations.buf, locations.len);
	strbuf_add(out, pp.functions.buf, pp.functions.len);
	for (i = 0; i < pp.nr_strs; i++)
		pb_bytes(out, 6, pp.strs[i], strlen(pp.strs[i]));
	pb_uint(out, 9, profile_meta_u64(p, "start_time_ns"));
	pb_uint(out, 10, duration_ns(p, period));
	pb_uint(&pp.tmp, 1, s_wall);
	pb_uint(&pp.tmp, 2, s_ns);
	pb_msg(out, 11, &pp.tmp);
	pb_uint(out, 12, period);
	pb_uint(out, 14, s_wall);

	for (i = 0; i < pp.nr_strs; i++)
		free(pp.strs[i]);
	free(pp.strs);
	free(pp.str_next);
	u64map_release(&pp.str_map);
	u64map_release(&pp.func_map);
	free(loc_mapping);
	strbuf_release(&samples);
	strbuf_release(&mappings);
	strbuf_release(&locations);
	strbuf_release(&pp.functions);
	strbuf_release(&pp.tmp);
	strbuf_release(&pp.tmp2);
}

int out_pprof_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct strbuf raw = STRBUF_INIT;
	int ret;

	(void)o;
	encode(p, &raw);
	errno = 0;
	ret = gzip_out(&raw, f);
	strbuf_release(&raw);
	if (!ret && fflush(f))
		ret = -errno;
	else if (!ret && ferror(f))
		ret = -EIO;
	return ret;
}
