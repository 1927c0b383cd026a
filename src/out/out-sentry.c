/* Sentry writers (docs/design/formats.md section 5): a v2 profile chunk, and an envelope of chunks
 * of at most 60 s. Symbolication stays local; debug images are only a hint for Sentry's own. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/writers.h"
#include "perch/proc/framestats.h"
#include "perch/profile/profile.h"

#define SENTRY_CHUNK_NS	   60000000000ULL /* envelope chunk length (Relay allows 66 s) */
#define SENTRY_IMAGE_BASE  0x10000ULL	  /* first synthetic image_addr */
#define SENTRY_IMAGE_ALIGN 0x10000ULL
#define SENTRY_MAX_VADDR   (1ULL << 48) /* larger ELF vaddrs get no image */

/* One sample of the chunk time line. */
struct ssample {
	uint64_t t; /* CLOCK_MONOTONIC ns */
	uint32_t thread, stack;
};

/* A synthetic load address per module with a known build-id. */
struct simage {
	uint32_t module; /* string id */
	uint64_t addr, size;
	char debug_id[37];
};

/* One point of a counter series. */
struct spoint {
	uint64_t t;
	double v;
};

struct smeasure {
	const char *name, *unit;
	struct spoint *v;
	size_t nr, alloc;
};

struct sentry {
	const struct profile *p;
	struct ssample *s; /* time order */
	size_t nr, alloc;
	uint64_t base_mono, base_real; /* base_mono stands for base_real (epoch ns) */
	char profiler_id[33];
	struct simage *img;
	size_t nr_img, alloc_img;
	uint32_t *img_of_module; /* by position in mod_ids: image index + 1, 0 = none */
	uint32_t *mod_ids;	 /* sorted module string ids */
	size_t nr_mod_ids, alloc_mod_ids;
	struct smeasure meas[6]; /* measure_map's, then the frame measurements */
	int pretty;		 /* one member per line; else one line (envelope items) */
	/* per chunk */
	uint32_t *loc_frame; /* location -> first Sentry frame index, UINT32_MAX = none yet */
	uint32_t *stack_idx; /* profile stack -> Sentry stack index, UINT32_MAX = none yet */
	uint32_t nr_frames, nr_stacks;
};

static const struct {
	const char *name, *unit;
	const char *counters[4];
} measure_map[] = {
    {"cpu_usage", "percent", {"cpu_usage", "cpu_percent", NULL}},
    {"memory_footprint", "byte", {"memory_footprint", "pss_bytes", "rss_bytes", NULL}},
    {"memory_native_footprint", "byte", {"memory_native_footprint", "native_heap_bytes", NULL}},
};

int out_managed_split(const char *name, size_t *dot, size_t *paren)
{
	size_t i, p, d = SIZE_MAX;

	if (!name)
		return -EINVAL;
	p = strcspn(name, "(");
	for (i = 0; i < p; i++) {
		if (name[i] == '.')
			d = i;
		else if (name[i] == ' ' || name[i] == '<' || name[i] == ':')
			return -EINVAL; /* "ns::f", "void f", "f<T>": not Java */
	}
	if (d == SIZE_MAX || !d || d + 1 == p)
		return -EINVAL;
	if (name[p] && name[strlen(name) - 1] != ')')
		return -EINVAL;
	*dot = d;
	*paren = p;
	return 0;
}

/* 64-bit FNV-1a, mixed: the source of the deterministic ids. */
static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

/* 32 lowercase hex digits shaped like a UUID4 without dashes, from @seed. */
static void make_id(char out[33], const char *seed)
{
	uint64_t a = hash_str(0xcbf29ce484222325ULL, seed);
	uint64_t b = hash_str(a ^ 0x9e3779b97f4a7c15ULL, seed);

	snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, a, b);
	out[12] = '4';		   /* version 4 */
	out[16] = "89ab"[b >> 62]; /* RFC 4122 variant */
}

static int valid_id(const char *s)
{
	size_t i;

	for (i = 0; s && i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s && !s[32];
}

/* Epoch seconds with µs precision, from integer ns (no float rounding). */
static void add_ts(struct strbuf *sb, const struct sentry *c, uint64_t mono)
{
	uint64_t ns = c->base_real + (mono >= c->base_mono ? mono - c->base_mono : 0);
	uint64_t us = ns / 1000 + (ns % 1000 >= 500);

	strbuf_addf(sb, "%" PRIu64 ".%06u", us / 1000000, (unsigned int)(us % 1000000));
}

static int cmp_ssample(const void *a, const void *b)
{
	const struct ssample *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return (x->stack > y->stack) - (x->stack < y->stack);
}

struct synth {
	struct sentry *c;
	uint64_t *next; /* per thread: next synthetic time */
	uint64_t period;
};

static void synth_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct synth *sy = arg;
	uint64_t k;

	if (thread >= profile_nr_threads(sy->c->p))
		return;
	for (k = 0; k < count && k < 10000000; k++) { /* a bound on memory for absurd counts */
		ALLOC_GROW(sy->c->s, sy->c->nr + 1, sy->c->alloc);
		sy->c->s[sy->c->nr++] = (struct ssample){sy->next[thread], thread, stack};
		sy->next[thread] += sy->period;
	}
}

/* The time line: kept samples, else the counts laid out one period apart per thread from the
 * first counter point (or 0). Needs the measurements loaded. */
static void gather(struct sentry *c)
{
	size_t n, i, nr_threads = profile_nr_threads(c->p), nr_stacks = profile_nr_stacks(c->p);
	const struct profile_sample *ks = profile_samples(c->p, &n);

	if (n) {
		for (i = 0; i < n; i++) {
			if (ks[i].thread >= nr_threads || ks[i].stack >= nr_stacks)
				continue;
			ALLOC_GROW(c->s, c->nr + 1, c->alloc);
			c->s[c->nr++] = (struct ssample){ks[i].time_ns, ks[i].thread, ks[i].stack};
		}
	} else {
		struct synth sy = {c, xcalloc(nr_threads + 1, sizeof(uint64_t)),
				   out_period_ns(c->p)};
		uint64_t start = UINT64_MAX;

		/* no time line: start where the counters start, so they line up */
		for (i = 0; i < ARRAY_SIZE(c->meas); i++)
			if (c->meas[i].nr && c->meas[i].v[0].t < start)
				start = c->meas[i].v[0].t;
		for (i = 0; i < nr_threads; i++)
			sy.next[i] = start == UINT64_MAX ? 0 : start;
		profile_foreach_count(c->p, synth_count, &sy);
		free(sy.next);
	}
	if (c->nr)
		qsort(c->s, c->nr, sizeof(*c->s), cmp_ssample);
}

/* Parse "counter:@name" ("T=V T=V ..."), skipping malformed pairs. */
static void parse_counter(const struct profile *p, const char *name, struct smeasure *m)
{
	char *key = xasprintf("counter:%s", name);
	const char *s = profile_meta(p, key);

	free(key);
	while (s && *s) {
		unsigned long long t;
		const char *vs;
		char *end;
		double v;

		s += strspn(s, " \t");
		if (!*s)
			break;
		errno = 0;
		if (*s < '0' || *s > '9')
			goto skip;
		t = strtoull(s, &end, 10);
		if (errno || *end != '=')
			goto skip;
		vs = end + 1;
		v = strtod(vs, &end);
		if (errno || end == vs || (*end && *end != ' ' && *end != '\t') || !isfinite(v))
			goto skip;
		ALLOC_GROW(m->v, m->nr + 1, m->alloc);
		m->v[m->nr++] = (struct spoint){t, v};
		s = end;
		continue;
	skip:
		s += strcspn(s, " \t");
	}
}

/* Is @name a word of the space-separated @list? */
static int listed(const char *list, const char *name)
{
	size_t len = strlen(name);

	while (list && *list) {
		size_t w;

		list += strspn(list, " \t");
		w = strcspn(list, " \t");
		if (w == len && !memcmp(list, name, len))
			return 1;
		list += w;
	}
	return 0;
}

static int cmp_spoint(const void *a, const void *b)
{
	const struct spoint *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

/* Android frames (meta "frames", framestats.h) as the frame measurements of formats.md 5.5
 * (sentry-java's ProfileMeasurement names): slow_frame_renders and frozen_frame_renders (each
 * frame's duration in ns at its end; a frozen frame is not also slow) and screen_frame_rates (the
 * refresh rate in Hz, at the first frame and whenever it changes). */
static void frames_load(struct sentry *c, struct smeasure *m)
{
	struct framestats_frame *v;
	size_t n = framestats_meta_parse(profile_meta(c->p, "frames"), &v);
	uint64_t budget = 0;

	m[0].name = "slow_frame_renders";
	m[1].name = "frozen_frame_renders";
	m[2].name = "screen_frame_rates";
	m[0].unit = m[1].unit = "nanosecond";
	m[2].unit = "hz";
	for (size_t i = 0; i < n; i++) {
		enum framestats_class k = framestats_classify(&v[i]);
		struct smeasure *to = k == FRAMESTATS_SLOW ? &m[0] : &m[1];

		if (v[i].budget_ns && v[i].budget_ns != budget) {
			budget = v[i].budget_ns;
			ALLOC_GROW(m[2].v, m[2].nr + 1, m[2].alloc);
			m[2].v[m[2].nr++] = (struct spoint){v[i].end_ns, 1e9 / (double)budget};
		}
		if (k == FRAMESTATS_OK)
			continue;
		ALLOC_GROW(to->v, to->nr + 1, to->alloc);
		to->v[to->nr++] =
		    (struct spoint){v[i].end_ns, (double)(v[i].end_ns - v[i].start_ns)};
	}
	for (int i = 0; i < 3; i++)
		if (m[i].nr)
			qsort(m[i].v, m[i].nr, sizeof(*m[i].v), cmp_spoint);
	free(v);
}

static void measurements_load(struct sentry *c)
{
	const char *list = profile_meta(c->p, "counters");
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(measure_map); i++) {
		struct smeasure *m = &c->meas[i];

		m->name = measure_map[i].name;
		m->unit = measure_map[i].unit;
		for (j = 0; measure_map[i].counters[j] && !m->nr; j++)
			if (listed(list, measure_map[i].counters[j]))
				parse_counter(c->p, measure_map[i].counters[j], m);
		if (m->nr)
			qsort(m->v, m->nr, sizeof(*m->v), cmp_spoint);
	}
	frames_load(c, &c->meas[ARRAY_SIZE(measure_map)]);
}

/* Hex build-id -> Sentry debug_id (first 16 bytes as a little-endian GUID, zero-padded).
 * -EINVAL when @hex is not an even number of hex digits (at least 2). */
static int debug_id(const char *hex, char out[37])
{
	unsigned char b[16] = {0};
	size_t len = hex ? strlen(hex) : 0, i;

	if (!len || len % 2 || len > 256)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		int d = hex[i] >= '0' && hex[i] <= '9'	 ? hex[i] - '0'
			: hex[i] >= 'a' && hex[i] <= 'f' ? hex[i] - 'a' + 10
			: hex[i] >= 'A' && hex[i] <= 'F' ? hex[i] - 'A' + 10
							 : -1;

		if (d < 0)
			return -EINVAL;
		if (i / 2 < 16)
			b[i / 2] |= (unsigned char)(i % 2 ? d : d << 4);
	}
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	return 0;
}

/* The position of string id @module in mod_ids, or SIZE_MAX. */
static size_t mod_pos(const struct sentry *c, uint32_t module)
{
	size_t lo = 0, hi = c->nr_mod_ids;

	while (lo < hi) { /* mod_ids sorted */
		size_t mid = (lo + hi) / 2;

		if (c->mod_ids[mid] == module)
			return mid;
		if (c->mod_ids[mid] < module)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* Image index + 1 of string id @module, 0 when it has none. */
static uint32_t image_of(const struct sentry *c, uint32_t module)
{
	size_t pos = mod_pos(c, module);

	return pos == SIZE_MAX ? 0 : c->img_of_module[pos];
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Images: native modules with a valid build-id, in location order, laid out one after the
 * other; their size covers ELF vaddr 0 up to the highest vaddr seen. */
static void images_load(struct sentry *c)
{
	size_t nr = profile_nr_locations(c->p), i, j, k;
	uint64_t next = SENTRY_IMAGE_BASE;
	unsigned char *tried;

	for (i = 0; i < nr; i++) {
		const struct profile_location *l = profile_location(c->p, (uint32_t)i);

		if (!l || !l->module)
			continue;
		ALLOC_GROW(c->mod_ids, c->nr_mod_ids + 1, c->alloc_mod_ids);
		c->mod_ids[c->nr_mod_ids++] = l->module;
	}
	if (c->nr_mod_ids)
		qsort(c->mod_ids, c->nr_mod_ids, sizeof(*c->mod_ids), cmp_u32);
	for (i = 0, j = 0; i < c->nr_mod_ids; i++)
		if (!j || c->mod_ids[j - 1] != c->mod_ids[i])
			c->mod_ids[j++] = c->mod_ids[i];
	c->nr_mod_ids = j;
	c->img_of_module = xcalloc(j + 1, sizeof(*c->img_of_module));
	tried = xcalloc(j + 1, 1);
	for (i = 0; i < nr; i++) {
		const struct profile_location *l = profile_location(c->p, (uint32_t)i);
		struct simage im = {0};
		const char *path;
		char *key;
		int ret;

		if (!l || !l->module || tried[mod_pos(c, l->module)]++)
			continue;
		path = profile_str(c->p, l->module);
		key = xasprintf("build_id:%s", path ? path : "");
		ret = debug_id(profile_meta(c->p, key), im.debug_id);
		free(key);
		if (ret)
			continue;
		im.module = l->module;
		for (k = i; k < nr; k++) {
			const struct profile_location *o = profile_location(c->p, (uint32_t)k);

			if (o && o->module == l->module && o->addr + 1 > im.size)
				im.size = o->addr + 1;
		}
		if (im.size > SENTRY_MAX_VADDR)
			continue;
		im.size = (im.size + 0xfff) & ~0xfffULL;
		im.addr = next;
		next = (next + im.size + SENTRY_IMAGE_ALIGN) & ~(SENTRY_IMAGE_ALIGN - 1);
		ALLOC_GROW(c->img, c->nr_img + 1, c->alloc_img);
		c->img[c->nr_img++] = im;
		c->img_of_module[mod_pos(c, l->module)] = (uint32_t)c->nr_img;
	}
	free(tried);
}

static int cmp_tid(const void *x, const void *y, void *arg)
{
	pid_t a = profile_thread_get(arg, *(const uint32_t *)x)->tid;
	pid_t b = profile_thread_get(arg, *(const uint32_t *)y)->tid;

	return (a > b) - (a < b);
}

static void add_kv(struct strbuf *sb, const char *sep, const char *key, const char *val)
{
	strbuf_addf(sb, "%s\"%s\": ", sep, key);
	json_add_str(sb, val);
}

/* A line break and @depth levels of indentation, in pretty mode only. */
static void nl(struct strbuf *sb, const struct sentry *c, int depth)
{
	if (c->pretty)
		strbuf_addf(sb, "\n%*s", 2 * depth, "");
}

static int in_app(const char *module)
{
	static const char *const sys[] = {
	    "/usr/lib/",     "/usr/lib32/", "/usr/lib64/", "/lib/",    "/lib32/", "/lib64/",
	    "/usr/libexec/", "/system/",    "/apex/",	   "/vendor/", "["};
	size_t i;

	if (!module || !*module)
		return 0;
	for (i = 0; i < ARRAY_SIZE(sys); i++)
		if (!strncmp(module, sys[i], strlen(sys[i])))
			return 0;
	return 1;
}

/* The Frame objects of location @loc (innermost first) into @sb. */
static void add_frames(struct sentry *c, struct strbuf *sb, uint32_t loc)
{
	const struct profile_location *l = profile_location(c->p, loc);
	size_t n, i;
	const uint32_t *fr = profile_location_frames(c->p, loc, &n);
	uint32_t img = l ? image_of(c, l->module) : 0;

	for (i = 0; i < (n ? n : 1); i++) {
		const struct profile_frame *f = n ? profile_frame(c->p, fr[i]) : NULL;
		const char *name = f ? profile_str(c->p, f->name) : NULL;
		const char *file = f ? profile_str(c->p, f->file) : NULL;
		uint32_t mod = f && f->module ? f->module : l ? l->module : 0;
		const char *mpath = profile_str(c->p, mod);
		uint8_t kind = f ? f->kind : PROFILE_FRAME_NATIVE;
		int managed = kind == PROFILE_FRAME_JIT || kind == PROFILE_FRAME_INTERP ||
			      kind == PROFILE_FRAME_AOT;
		size_t dot, paren;

		const char *sep = "";
		char *label = NULL;

		if (c->nr_frames++)
			strbuf_addch(sb, ',');
		nl(sb, c, 2);
		strbuf_addch(sb, '{');
		if (managed && name && !out_managed_split(name, &dot, &paren)) {
			label = xstrndup(name + dot + 1, paren - dot - 1);
			add_kv(sb, "", "function", label);
			free(label);
			label = xstrndup(name, dot);
			add_kv(sb, ", ", "module", label);
			sep = ", ";
		} else if (name && *name) {
			add_kv(sb, "", "function", name);
			sep = ", ";
		} else if (!img) { /* with an image, Sentry can symbolicate the address */
			if (l && l->module)
				label = xasprintf("[%s+0x%" PRIx64 "]", path_base(mpath), l->addr);
			else if (l && kind != PROFILE_FRAME_PSEUDO)
				label = xasprintf("0x%" PRIx64, l->addr);
			add_kv(sb, "", "function", label ? label : "[unknown]");
			sep = ", ";
		}
		free(label);
		if (file && *file) {
			add_kv(sb, sep, "filename", file);
			if (f->line)
				strbuf_addf(sb, ", \"lineno\": %" PRIu32, f->line);
			sep = ", ";
		}
		if (mpath && *mpath) {
			add_kv(sb, sep, "package", mpath);
			sep = ", ";
		}
		if (img) {
			strbuf_addf(sb, "%s\"instruction_addr\": \"0x%" PRIx64 "\"", sep,
				    c->img[img - 1].addr + l->addr);
			sep = ", ";
		}
		if (kind == PROFILE_FRAME_NATIVE || kind == PROFILE_FRAME_KERNEL)
			strbuf_addf(sb, "%s\"in_app\": %s, \"platform\": \"native\"", sep,
				    kind == PROFILE_FRAME_NATIVE && in_app(mpath) ? "true"
										  : "false");
		else if (kind == PROFILE_FRAME_INTERP || kind == PROFILE_FRAME_AOT)
			strbuf_addf(sb, "%s\"platform\": \"java\"", sep);
		strbuf_addch(sb, '}');
	}
}

/* The Sentry stack index of profile stack @stack: frames and the stack are added when new. */
static uint32_t stack_index(struct sentry *c, struct strbuf *frames, struct strbuf *stacks,
			    uint32_t stack)
{
	size_t n, i, k, nf;
	const uint32_t *locs;

	if (c->stack_idx[stack] != UINT32_MAX)
		return c->stack_idx[stack];
	locs = profile_stack(c->p, stack, &n);
	for (i = 0; i < n; i++) {
		if (c->loc_frame[locs[i]] != UINT32_MAX)
			continue;
		c->loc_frame[locs[i]] = c->nr_frames;
		add_frames(c, frames, locs[i]);
	}
	if (c->nr_stacks)
		strbuf_addch(stacks, ',');
	nl(stacks, c, 2);
	strbuf_addch(stacks, '[');
	for (i = 0, k = 0; i < n; i++) { /* leaf first, as the profile keeps them */
		profile_location_frames(c->p, locs[i], &nf);
		for (size_t j = 0; j < (nf ? nf : 1); j++)
			strbuf_addf(stacks, "%s%" PRIu32, k++ ? ", " : "",
				    c->loc_frame[locs[i]] + (uint32_t)j);
	}
	strbuf_addch(stacks, ']');
	c->stack_idx[stack] = c->nr_stacks;
	return c->nr_stacks++;
}

/* The thread_metadata of the threads marked in @seen_thread, by tid (JSON keys in a stable
 * order), into @tmeta. */
static void chunk_threads(struct sentry *c, const unsigned char *seen_thread, struct strbuf *tmeta)
{
	size_t nr_threads = profile_nr_threads(c->p), i, nr_tids = 0;
	uint32_t *tids = xmalloc((nr_threads + 1) * sizeof(*tids));

	for (i = 0; i < nr_threads; i++)
		if (seen_thread[i])
			tids[nr_tids++] = (uint32_t)i;
	qsort_r(tids, nr_tids, sizeof(*tids), cmp_tid, (void *)c->p);
	for (i = 0; i < nr_tids; i++) {
		const struct profile_thread *t = profile_thread_get(c->p, tids[i]);
		const char *v = profile_str(c->p, t->name);

		if (i)
			strbuf_addch(tmeta, ',');
		nl(tmeta, c, 2);
		strbuf_addf(tmeta, "\"%d\": {", (int)t->tid);
		if (v && *v)
			add_kv(tmeta, "", "name", v);
		strbuf_addch(tmeta, '}');
	}
	free(tids);
}

/* The chunk's identity: version, ids, platform, release, environment, client_sdk. */
static void chunk_header(struct sentry *c, const char *chunk_id, struct strbuf *out)
{
	const char *comm = profile_meta(c->p, "comm"), *v;
	struct strbuf tmp = STRBUF_INIT;

	strbuf_addch(out, '{');
	nl(out, c, 1);
	strbuf_addf(out, "\"version\": \"2\",");
	nl(out, c, 1);
	strbuf_addf(out, "\"chunk_id\": \"%s\", \"profiler_id\": \"%s\",", chunk_id,
		    c->profiler_id);
	nl(out, c, 1);
	v = profile_meta(c->p, "sentry_platform");
	add_kv(out, "", "platform", v && *v ? v : "rust");
	v = profile_meta(c->p, "sentry_release");
	if (!v || !*v) {
		/* a release name may not contain '/' or whitespace */
		for (v = comm && *comm ? comm : "perch"; *v; v++)
			strbuf_addch(&tmp, *v == '/' || *v == ' ' || *v == '\t' ? '_' : *v);
		strbuf_addstr(&tmp, "@unknown");
		v = tmp.buf;
	}
	add_kv(out, ", ", "release", v);
	v = profile_meta(c->p, "sentry_environment");
	add_kv(out, ", ", "environment", v && *v ? v : "production");
	strbuf_addch(out, ',');
	nl(out, c, 1);
	strbuf_addstr(out, "\"client_sdk\": {\"name\": \"perch\", \"version\": \"0.1\"}");
	strbuf_release(&tmp);
}

/* debug_meta: the images marked in @used_img. */
static void chunk_images(struct sentry *c, const unsigned char *used_img, struct strbuf *out)
{
	int first = 1;

	for (size_t i = 0; i < c->nr_img; i++) {
		const struct simage *im = &c->img[i];

		if (!used_img[i])
			continue;
		strbuf_addch(out, ',');
		if (first) {
			nl(out, c, 1);
			strbuf_addstr(out, "\"debug_meta\": {\"images\": [");
		}
		nl(out, c, 2);
		strbuf_addstr(out, "{\"type\": \"symbolic\", ");
		add_kv(out, "", "code_file", profile_str(c->p, im->module));
		strbuf_addf(out,
			    ", \"debug_id\": \"%s\", \"image_addr\": \"0x%" PRIx64
			    "\", \"image_vmaddr\": \"0x0\", \"image_size\": %" PRIu64 "}",
			    im->debug_id, im->addr, im->size);
		first = 0;
	}
	if (!first) {
		nl(out, c, 1);
		strbuf_addstr(out, "]}");
	}
}

/* measurements of the chunk of samples [@from, @to): a counter point belongs to the chunk its
 * time falls in; the first and the last chunk take the points before and after the samples. */
static void chunk_measurements(struct sentry *c, size_t from, size_t to, struct strbuf *out)
{
	uint64_t lo = from ? c->s[from].t : 0, hi = to < c->nr ? c->s[to].t : UINT64_MAX;
	struct strbuf tmp = STRBUF_INIT;
	int first = 1;

	for (size_t i = 0; i < ARRAY_SIZE(c->meas); i++) {
		const struct smeasure *m = &c->meas[i];

		strbuf_reset(&tmp);
		for (size_t j = 0; j < m->nr; j++) {
			if (m->v[j].t < lo || m->v[j].t >= hi)
				continue;
			strbuf_addstr(&tmp, tmp.len ? ", {\"timestamp\": " : "{\"timestamp\": ");
			add_ts(&tmp, c, m->v[j].t);
			strbuf_addf(&tmp, ", \"value\": %.15g}", m->v[j].v);
		}
		if (!tmp.len)
			continue;
		strbuf_addch(out, ',');
		if (first) {
			nl(out, c, 1);
			strbuf_addstr(out, "\"measurements\": {");
		}
		nl(out, c, 2);
		strbuf_addf(out, "\"%s\": {\"unit\": \"%s\", \"values\": [%s]}", m->name, m->unit,
			    tmp.buf);
		first = 0;
	}
	if (!first) {
		nl(out, c, 1);
		strbuf_addch(out, '}');
	}
	strbuf_release(&tmp);
}

/* One chunk of samples [@from, @to) (time order) into @out. */
static void chunk(struct sentry *c, size_t from, size_t to, const char *chunk_id,
		  struct strbuf *out)
{
	struct strbuf frames = STRBUF_INIT, stacks = STRBUF_INIT, samples = STRBUF_INIT;
	struct strbuf tmeta = STRBUF_INIT;
	size_t nr_threads = profile_nr_threads(c->p), nr_locs = profile_nr_locations(c->p);
	size_t nr_stacks = profile_nr_stacks(c->p), i;
	unsigned char *seen_thread = xcalloc(nr_threads + 1, 1), *used_img;

	c->loc_frame = xmalloc((nr_locs + 1) * sizeof(*c->loc_frame));
	memset(c->loc_frame, 0xff, (nr_locs + 1) * sizeof(*c->loc_frame));
	c->stack_idx = xmalloc((nr_stacks + 1) * sizeof(*c->stack_idx));
	memset(c->stack_idx, 0xff, (nr_stacks + 1) * sizeof(*c->stack_idx));
	c->nr_frames = c->nr_stacks = 0;
	used_img = xcalloc(c->nr_img + 1, 1);

	for (i = from; i < to; i++) {
		const struct profile_thread *t = profile_thread_get(c->p, c->s[i].thread);
		uint32_t si = stack_index(c, &frames, &stacks, c->s[i].stack);

		if (i > from)
			strbuf_addch(&samples, ',');
		nl(&samples, c, 2);
		strbuf_addstr(&samples, "{\"timestamp\": ");
		add_ts(&samples, c, c->s[i].t);
		strbuf_addf(&samples, ", \"stack_id\": %" PRIu32 ", \"thread_id\": \"%d\"}", si,
			    (int)t->tid);
		seen_thread[c->s[i].thread] = 1;
	}
	for (i = 0; i < nr_locs; i++) {
		const struct profile_location *l = profile_location(c->p, (uint32_t)i);
		uint32_t img = l && c->loc_frame[i] != UINT32_MAX ? image_of(c, l->module) : 0;

		if (img)
			used_img[img - 1] = 1;
	}
	chunk_threads(c, seen_thread, &tmeta);

	chunk_header(c, chunk_id, out);
	chunk_images(c, used_img, out);
	chunk_measurements(c, from, to, out);
	strbuf_addch(out, ',');
	nl(out, c, 1);
	strbuf_addstr(out, "\"profile\": {");
	nl(out, c, 1);
	strbuf_addf(out, "\"frames\": [%s", frames.buf);
	nl(out, c, 1);
	strbuf_addstr(out, "],");
	nl(out, c, 1);
	strbuf_addf(out, "\"stacks\": [%s", stacks.buf);
	nl(out, c, 1);
	strbuf_addstr(out, "],");
	nl(out, c, 1);
	strbuf_addf(out, "\"samples\": [%s", samples.buf);
	nl(out, c, 1);
	strbuf_addstr(out, "],");
	nl(out, c, 1);
	strbuf_addf(out, "\"thread_metadata\": {%s", tmeta.buf);
	nl(out, c, 1);
	strbuf_addstr(out, "}}");
	nl(out, c, 0);
	strbuf_addch(out, '}');
	nl(out, c, 0);
	strbuf_release(&frames);
	strbuf_release(&stacks);
	strbuf_release(&samples);
	strbuf_release(&tmeta);
	free(seen_thread);
	free(used_img);
	free(c->loc_frame);
	free(c->stack_idx);
	c->loc_frame = c->stack_idx = NULL;
}

static void sentry_init(struct sentry *c, const struct profile *p)
{
	const char *pid = profile_meta(p, "pid"), *comm = profile_meta(p, "comm");
	const char *given = profile_meta(p, "profiler_id");
	size_t i, j;
	char *seed;

	memset(c, 0, sizeof(*c));
	c->p = p;
	measurements_load(c);
	gather(c);
	images_load(c);
	c->base_mono = c->nr ? c->s[0].t : UINT64_MAX;
	for (i = 0; i < ARRAY_SIZE(c->meas); i++)
		for (j = 0; j < c->meas[i].nr; j++)
			if (c->meas[i].v[j].t < c->base_mono)
				c->base_mono = c->meas[i].v[j].t;
	if (c->base_mono == UINT64_MAX)
		c->base_mono = 0;
	c->base_real = profile_meta_u64(p, "start_time_ns");
	if (valid_id(given)) {
		memcpy(c->profiler_id, given, 33);
	} else {
		seed = xasprintf("profiler\n%s\n%s\n%" PRIu64 "\n%" PRIu64, pid ? pid : "",
				 comm ? comm : "", c->base_real, c->base_mono);
		make_id(c->profiler_id, seed);
		free(seed);
	}
}

static void sentry_release(struct sentry *c)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c->meas); i++)
		free(c->meas[i].v);
	free(c->s);
	free(c->img);
	free(c->img_of_module);
	free(c->mod_ids);
}

/* The id of chunk @no: from the profiler id and the chunk's first sample. */
static void chunk_id(const struct sentry *c, size_t no, size_t from, char out[33])
{
	char *seed = xasprintf("chunk\n%s\n%zu\n%" PRIu64, c->profiler_id, no,
			       from < c->nr ? c->s[from].t : 0);

	make_id(out, seed);
	free(seed);
}

static int finish(FILE *f, const struct strbuf *sb)
{
	errno = 0;
	if (fwrite(sb->buf, 1, sb->len, f) != sb->len || fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

int out_sentry_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct sentry c;
	struct strbuf sb = STRBUF_INIT;
	char id[33];
	int ret;

	(void)o;
	sentry_init(&c, p);
	chunk_id(&c, 0, 0, id);
	c.pretty = 1;
	chunk(&c, 0, c.nr, id, &sb);
	ret = finish(f, &sb);
	strbuf_release(&sb);
	sentry_release(&c);
	return ret;
}

int out_sentry_envelope_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct sentry c;
	struct strbuf sb = STRBUF_INIT, item = STRBUF_INIT;
	const char *platform = profile_meta(p, "sentry_platform");
	size_t from = 0, to, no = 0;
	char id[33], *seed;
	int ret;

	(void)o;
	sentry_init(&c, p);
	seed = xasprintf("event\n%s", c.profiler_id);
	make_id(id, seed);
	free(seed);
	strbuf_addf(&sb, "{\"event_id\": \"%s\"}\n", id);
	do {
		for (to = from; to < c.nr && c.s[to].t - c.s[from].t < SENTRY_CHUNK_NS; to++)
			;
		chunk_id(&c, no++, from, id);
		chunk(&c, from, to, id, &item);
		strbuf_addstr(&sb, "{\"type\": \"profile_chunk\", ");
		add_kv(&sb, "", "platform", platform && *platform ? platform : "rust");
		strbuf_addf(&sb, ", \"length\": %zu}\n%s\n", item.len, item.buf);
		strbuf_reset(&item);
		from = to;
	} while (from < c.nr);
	ret = finish(f, &sb);
	strbuf_release(&sb);
	strbuf_release(&item);
	sentry_release(&c);
	return ret;
}
