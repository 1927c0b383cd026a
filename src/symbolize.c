/* Address -> frames: DWARF through debuginfo.c when there is some, else (and for a missing
 * outer name) the ELF symbol tables of elfsym.c; separate debug files come from debugfile.c.
 * Modules are cached per build-id (per path without one), results per (module, address). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <demangle.h>
#undef ARRAY_SIZE /* libiberty.h's; perch/xalloc.h has its own */

#include "perch/debugfile.h"
#include "perch/debuginfo.h"
#include "perch/elffile.h"
#include "perch/elfsym.h"
#include "perch/log.h"
#include "perch/strarena.h"
#include "perch/symbolize.h"
#include "perch/symcache.h"
#include "perch/xalloc.h"

/* Everything known about one ELF file, loaded on the first lookup that misses. */
struct symmod {
	uint8_t *key; /* 'B' + build-id, or 'P' + path */
	size_t key_len;
	uint64_t hash;
	uint32_t id; /* index + 1 in symbolizer.mods */
	int loaded;
	struct elfsym_table *syms; /* NULL when the file has none */
	struct debuginfo *di;	   /* NULL without DWARF */
	/* the on-disk cache (symcache.h): checked once, then its path or NULL when off, and
	 * the lines of new DWARF results not yet appended */
	int cache_checked;
	char *cache_path;
	char *pending;
	size_t pending_len, pending_cap;
};

/* Cached answer for (mod, vaddr): frames[first .. first + n). */
struct symres {
	uint64_t vaddr;
	uint32_t mod; /* 0: empty slot */
	uint32_t first;
	uint32_t n;
};

/* Demangled/interned names by the address of the raw name (stable: owned by a table or di). */
struct namemap_ent {
	const char *raw;
	const char *name;
};

struct symbolizer {
	char *sysroot, *symfs;

	struct symmod **mods;
	size_t nr_mods, alloc_mods;
	uint32_t *mod_slots; /* open addressing: mod id or 0 */
	size_t mod_cap;

	struct symres *res;
	size_t nr_res, res_cap;
	struct sym_frame *frames;
	size_t nr_frames, alloc_frames;

	const char **strs; /* interned strings, open addressing */
	size_t nr_strs, strs_cap;
	struct namemap_ent *names;
	size_t nr_names, names_cap;
	struct strarena arena;
	int nr_loaded; /* modules whose symbol tables or DWARF were read */
};

static uint64_t hash_bytes(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33; /* murmur3's finaliser */
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* One copy of every string handed out, owned by the symbolizer. */
static const char *intern(struct symbolizer *s, const char *str)
{
	size_t i;

	if (!str)
		return NULL;
	if ((s->nr_strs + 1) * 2 > s->strs_cap) {
		size_t cap = s->strs_cap ? s->strs_cap * 2 : 1024;
		const char **n = xcalloc(cap, sizeof(*n));

		for (i = 0; i < s->strs_cap; i++) {
			const char *old = s->strs[i];
			size_t j;

			if (!old)
				continue;
			for (j = hash_bytes(old, strlen(old)) & (cap - 1); n[j];
			     j = (j + 1) & (cap - 1))
				;
			n[j] = old;
		}
		free(s->strs);
		s->strs = n;
		s->strs_cap = cap;
	}
	for (i = hash_bytes(str, strlen(str)) & (s->strs_cap - 1); s->strs[i];
	     i = (i + 1) & (s->strs_cap - 1))
		if (!strcmp(s->strs[i], str))
			return s->strs[i];
	s->strs[i] = strarena_strdup(&s->arena, str);
	s->nr_strs++;
	return s->strs[i];
}

char *symbolize_demangle(const char *name)
{
	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

/* The interned display name of raw symbol name @raw (demangled when mangled). @raw must stay
 * at its address for the symbolizer's lifetime (names of a module's table or DWARF). */
static const char *display_name(struct symbolizer *s, const char *raw)
{
	size_t i;

	if (!raw)
		return NULL;
	if ((s->nr_names + 1) * 2 > s->names_cap) {
		size_t cap = s->names_cap ? s->names_cap * 2 : 1024;
		struct namemap_ent *n = xcalloc(cap, sizeof(*n));

		for (i = 0; i < s->names_cap; i++) {
			size_t j;

			if (!s->names[i].raw)
				continue;
			j = hash_u64((uintptr_t)s->names[i].raw) & (cap - 1);
			while (n[j].raw)
				j = (j + 1) & (cap - 1);
			n[j] = s->names[i];
		}
		free(s->names);
		s->names = n;
		s->names_cap = cap;
	}
	for (i = hash_u64((uintptr_t)raw) & (s->names_cap - 1); s->names[i].raw;
	     i = (i + 1) & (s->names_cap - 1))
		if (s->names[i].raw == raw)
			return s->names[i].name;

	char *dm = symbolize_demangle(raw);

	s->names[i].raw = raw;
	s->names[i].name = intern(s, dm ? dm : raw);
	s->nr_names++;
	free(dm);
	return s->names[i].name;
}

struct symbolizer *symbolizer_new(const char *sysroot, const char *symfs)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->sysroot = sysroot ? xstrdup(sysroot) : NULL;
	s->symfs = symfs ? xstrdup(symfs) : NULL;
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_mods; i++) {
		struct symmod *m = s->mods[i];

		if (m->cache_path && m->pending_len) {
			int ret = symcache_append(m->cache_path, m->pending, m->pending_len);

			if (ret < 0)
				log_debug("symbolize: cannot add to %s: %s", m->cache_path,
					  strerror(-ret));
		}
		free(m->cache_path);
		free(m->pending);
		elfsym_table_free(s->mods[i]->syms);
		debuginfo_free(s->mods[i]->di);
		free(s->mods[i]->key);
		free(s->mods[i]);
	}
	strarena_release(&s->arena);
	free(s->mods);
	free(s->mod_slots);
	free(s->res);
	free(s->frames);
	free(s->strs);
	free(s->names);
	free(s->sysroot);
	free(s->symfs);
	free(s);
}

static void mod_slots_insert(uint32_t *slots, size_t cap, const struct symmod *m)
{
	size_t i = m->hash & (cap - 1);

	while (slots[i])
		i = (i + 1) & (cap - 1);
	slots[i] = m->id;
}

/* The module record of @ef, created (not loaded) on first sight. No allocation on a hit. */
static struct symmod *module_get(struct symbolizer *s, const struct elffile *ef)
{
	/* key: kind byte ('B' build-id, 'P' path) followed by the identity bytes */
	char kind = ef->build_id_len ? 'B' : 'P';
	const uint8_t *id = ef->build_id_len ? ef->build_id : (const uint8_t *)ef->path;
	size_t id_len = ef->build_id_len ? ef->build_id_len : strlen(ef->path), i;
	uint64_t h = hash_bytes(id, id_len) ^ (uint64_t)kind;
	struct symmod *m;

	if (s->mod_cap) {
		for (i = h & (s->mod_cap - 1); s->mod_slots[i]; i = (i + 1) & (s->mod_cap - 1)) {
			m = s->mods[s->mod_slots[i] - 1];
			if (m->hash == h && m->key_len == id_len + 1 &&
			    m->key[0] == (uint8_t)kind && !memcmp(m->key + 1, id, id_len))
				return m;
		}
	}

	m = xcalloc(1, sizeof(*m));
	m->key = xmalloc(id_len + 1);
	m->key[0] = (uint8_t)kind;
	memcpy(m->key + 1, id, id_len);
	m->key_len = id_len + 1;
	m->hash = h;
	ALLOC_GROW(s->mods, s->nr_mods + 1, s->alloc_mods);
	s->mods[s->nr_mods++] = m;
	m->id = (uint32_t)s->nr_mods;
	if (s->nr_mods * 2 > s->mod_cap) {
		size_t cap = s->mod_cap ? s->mod_cap * 2 : 64;

		free(s->mod_slots);
		s->mod_slots = xcalloc(cap, sizeof(*s->mod_slots));
		s->mod_cap = cap;
		for (i = 0; i < s->nr_mods; i++)
			mod_slots_insert(s->mod_slots, cap, s->mods[i]);
	} else {
		mod_slots_insert(s->mod_slots, s->mod_cap, m);
	}
	return m;
}

/* Read what names addresses of @ef: its own tables, its separate debug file, MiniDebugInfo. */
static void module_load(struct symbolizer *s, struct symmod *m, const struct elffile *ef)
{
	struct elfsym_table *t = elfsym_table_new();
	struct elffile *dbg = NULL, *mdi;
	struct elffile_section sec;
	int ret;

	m->loaded = 1;
	s->nr_loaded++;
	if (!ef->has_symtab || !ef->has_debug_info)
		dbg = debugfile_find(ef, s->sysroot, s->symfs);

	if (ef->has_debug_info)
		m->di = debuginfo_open(ef->path);
	if (!m->di && dbg && dbg->has_debug_info)
		m->di = debuginfo_open(dbg->path);

	if (ef->has_symtab) {
		elfsym_table_load(t, ef->image, ef->size, ELFSYM_SYMTAB);
	} else if (dbg && dbg->has_symtab) {
		elfsym_table_load(t, dbg->image, dbg->size, ELFSYM_SYMTAB);
	} else if ((mdi = elffile_minidebuginfo(ef))) {
		/* decompressed once for the unwinder (its .debug_frame) and the names */
		ret = elfsym_table_load(t, mdi->image, mdi->size, ELFSYM_SYMTAB);
		if (ret < 0)
			log_debug("symbolize: %s: unusable .gnu_debugdata (%s)", ef->path,
				  strerror(-ret));
	} else if (elffile_section(ef, ".gnu_debugdata", &sec) == 0) {
		log_debug("symbolize: %s: unusable .gnu_debugdata", ef->path);
	}
	elfsym_table_load(t, ef->image, ef->size, ELFSYM_DYNSYM);
	elfsym_table_finish(t);
	if (elfsym_table_count(t))
		m->syms = t;
	else
		elfsym_table_free(t);
	elffile_free(dbg);
}

static struct symres *result_find(struct symbolizer *s, uint32_t mod, uint64_t vaddr, size_t *slot)
{
	size_t i;

	if (!s->res_cap) {
		*slot = 0;
		return NULL;
	}
	for (i = hash_u64(vaddr ^ ((uint64_t)mod << 40)) & (s->res_cap - 1); s->res[i].mod;
	     i = (i + 1) & (s->res_cap - 1))
		if (s->res[i].mod == mod && s->res[i].vaddr == vaddr)
			return &s->res[i];
	*slot = i;
	return NULL;
}

static struct symres *result_add(struct symbolizer *s, uint32_t mod, uint64_t vaddr,
				 const struct sym_frame *f, int n)
{
	size_t slot;

	if ((s->nr_res + 1) * 2 > s->res_cap) {
		size_t cap = s->res_cap ? s->res_cap * 2 : 4096;
		struct symres *old = s->res;
		size_t old_cap = s->res_cap;

		s->res = xcalloc(cap, sizeof(*s->res));
		s->res_cap = cap;
		for (size_t i = 0; i < old_cap; i++) {
			if (!old[i].mod)
				continue;
			result_find(s, old[i].mod, old[i].vaddr, &slot);
			s->res[slot] = old[i];
		}
		free(old);
	}
	result_find(s, mod, vaddr, &slot);
	if (n) {
		ALLOC_GROW(s->frames, s->nr_frames + (size_t)n, s->alloc_frames);
		memcpy(s->frames + s->nr_frames, f, (size_t)n * sizeof(*f));
	}
	s->res[slot].mod = mod;
	s->res[slot].vaddr = vaddr;
	s->res[slot].first = (uint32_t)s->nr_frames;
	s->res[slot].n = (uint32_t)n;
	s->nr_frames += (size_t)n;
	s->nr_res++;
	return &s->res[slot];
}

static struct symres *resolve(struct symbolizer *s, struct symmod *m, const struct elffile *ef,
			      uint64_t vaddr)
{
	struct sym_frame f[SYM_MAX_INLINE];
	const struct elfsym *sym;
	int n = 0;

	if (!m->loaded)
		module_load(s, m, ef);
	if (m->di) {
		n = debuginfo_lookup(m->di, vaddr, f, SYM_MAX_INLINE);
		if (n < 0 || n > SYM_MAX_INLINE)
			n = n < 0 ? 0 : SYM_MAX_INLINE;
	}
	for (int i = 0; i < n; i++) {
		/* intern first: display_name() keys on the address of a stable raw name */
		f[i].func = display_name(s, intern(s, f[i].func));
		f[i].file = intern(s, f[i].file);
	}
	if ((n == 0 || !f[n - 1].func) && m->syms && (sym = elfsym_table_find(m->syms, vaddr))) {
		if (n == 0) {
			memset(&f[0], 0, sizeof(f[0]));
			n = 1;
		}
		f[n - 1].func = display_name(s, sym->name);
	}
	/* DWARF answers depend on the build-id alone: keep them for the next run */
	if (m->cache_path && n && f[n - 1].file &&
	    symcache_format(vaddr, f, n, &m->pending, &m->pending_len, &m->pending_cap) < 0)
		log_debug("symbolize: %#llx not cached (unusual characters)",
			  (unsigned long long)vaddr);
	return result_add(s, m->id, vaddr, f, n);
}

struct cache_load {
	struct symbolizer *s;
	struct symmod *m;
};

static void cache_entry(void *arg, uint64_t vaddr, const struct sym_frame *f, int n)
{
	struct cache_load *cl = arg;
	struct sym_frame g[SYM_MAX_INLINE];
	size_t slot;

	if (result_find(cl->s, cl->m->id, vaddr, &slot))
		return;
	for (int i = 0; i < n; i++) {
		g[i] = f[i];
		g[i].func = intern(cl->s, f[i].func);
		g[i].file = intern(cl->s, f[i].file);
	}
	result_add(cl->s, cl->m->id, vaddr, g, n);
}

/* On the first lookup in a module with a build-id: what earlier runs found out. */
static void cache_load(struct symbolizer *s, struct symmod *m, const struct elffile *ef)
{
	char path[4096];
	struct cache_load cl = { s, m };
	int ret;

	m->cache_checked = 1;
	if (!ef->build_id_len || symcache_path(ef->build_id, ef->build_id_len, path,
					       sizeof(path)) < 0)
		return;
	ret = symcache_read(path, cache_entry, &cl);
	if (ret < 0 && ret != -ENOENT) {
		log_debug("symbolize: cache %s not used: %s", path, strerror(-ret));
		if (ret == -EFBIG || ret == -EINVAL)
			return; /* do not grow it */
	}
	m->cache_path = xstrdup(path);
}

int symbolizer_modules_loaded(const struct symbolizer *s)
{
	return s->nr_loaded;
}

int symbolizer_lookup(struct symbolizer *s, const struct elffile *ef, uint64_t vaddr,
		      struct sym_frame *out, int max)
{
	struct symmod *m;
	struct symres *r;
	size_t slot;
	int n;

	if (!s || !ef || !out || max <= 0)
		return 0;
	m = module_get(s, ef);
	if (!m->cache_checked)
		cache_load(s, m, ef);
	r = result_find(s, m->id, vaddr, &slot);
	if (!r)
		r = resolve(s, m, ef, vaddr);
	n = r->n < (uint32_t)max ? (int)r->n : max;
	if (n)
		memcpy(out, s->frames + r->first, (size_t)n * sizeof(*out));
	return n;
}
