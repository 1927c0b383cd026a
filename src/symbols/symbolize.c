/* Address -> frames: DWARF through debuginfo.c when there is some, else (and for a missing
 * outer name) the ELF symbol tables of elfsym.c; separate debug files come from debugfile.c.
 * Modules are cached per build-id (per path without one), results per (module, address). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <demangle.h>
#undef ARRAY_SIZE /* libiberty.h's; perch/xalloc.h has its own */

#include "perch/base/log.h"
#include "perch/base/strarena.h"
#include "perch/base/xalloc.h"
#include "perch/symbols/cfi.h"
#include "perch/symbols/debugfile.h"
#include "perch/symbols/debuginfo.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/elfsym.h"
#include "perch/symbols/symbolize.h"
#include "perch/symbols/symcache.h"

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
	uint64_t entry; /* of the function holding @vaddr, when @has_entry */
	uint32_t mod;	/* 0: empty slot */
	uint32_t first;
	uint32_t n;
	uint8_t has_entry;
};

/* A cached call-site answer (symbolizer_call_site(): @kind 'S', @key the return pc;
 * symbolizer_tail_calls(): 'T', @key the entry), from DWARF or from the on-disk cache. */
struct callres {
	uint64_t key;
	uint32_t mod; /* 0: empty slot */
	char kind;
	int found;
	struct debuginfo_call call;	    /* 'S' */
	const struct debuginfo_call *calls; /* 'T': owned by the DWARF or by blocks */
	size_t n;
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

	struct callres *cres; /* open addressing */
	size_t nr_cres, cres_cap;
	void **blocks; /* call sites read from the on-disk cache, one allocation per line */
	size_t nr_blocks, alloc_blocks;
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
	/* "_Z": C++ (Itanium) and Rust's legacy mangling ("_ZN...17h<hash>E"; libiberty tries
	 * Rust first and drops the hash, as rustc-demangle's "{:#}" does); "_R": Rust v0 */
	if (!name || (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2)))
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
	for (size_t i = 0; i < s->nr_blocks; i++)
		free(s->blocks[i]);
	free(s->blocks);
	free(s->cres);
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
	if (!ef->has_symtab || !debugfile_has_dwarf(ef))
		dbg = debugfile_find(ef, s->sysroot, s->symfs);

	if (debugfile_has_dwarf(ef))
		m->di = debuginfo_open(ef->path);
	if (!m->di && dbg && debugfile_has_dwarf(dbg))
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
				 const struct sym_frame *f, int n, int has_entry, uint64_t entry)
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
	s->res[slot].has_entry = (uint8_t) !!has_entry;
	s->res[slot].entry = entry;
	s->nr_frames += (size_t)n;
	s->nr_res++;
	return &s->res[slot];
}

static struct symres *resolve(struct symbolizer *s, struct symmod *m, const struct elffile *ef,
			      uint64_t vaddr)
{
	struct sym_frame f[SYM_MAX_INLINE];
	const struct elfsym *sym = NULL;
	uint64_t entry = 0, dwarf_entry = 0;
	int n = 0, has_entry = 0;

	if (!m->loaded)
		module_load(s, m, ef);
	if (m->di) {
		n = debuginfo_lookup(m->di, vaddr, f, SYM_MAX_INLINE);
		if (n < 0 || n > SYM_MAX_INLINE)
			n = n < 0 ? 0 : SYM_MAX_INLINE;
		if (debuginfo_func_entry(m->di, vaddr, &dwarf_entry) == 0)
			has_entry = 1;
		entry = dwarf_entry;
	}
	for (int i = 0; i < n; i++) {
		/* intern first: display_name() keys on the address of a stable raw name */
		f[i].func = display_name(s, intern(s, f[i].func));
		f[i].file = intern(s, f[i].file);
	}
	if ((n == 0 || !f[n - 1].func || !has_entry) && m->syms)
		sym = elfsym_table_find(m->syms, vaddr);
	if ((n == 0 || !f[n - 1].func) && sym) {
		if (n == 0) {
			memset(&f[0], 0, sizeof(f[0]));
			n = 1;
		}
		f[n - 1].func = display_name(s, sym->name);
	}
	if (!has_entry && sym) {
		entry = sym->addr;
		has_entry = 1;
	}
	/* DWARF answers depend on the build-id alone: keep them for the next run */
	if (m->cache_path && n && f[n - 1].file &&
	    symcache_format(vaddr, f, n, dwarf_entry, &m->pending, &m->pending_len,
			    &m->pending_cap) < 0)
		log_debug("symbolize: %#llx not cached (unusual characters)",
			  (unsigned long long)vaddr);
	return result_add(s, m->id, vaddr, f, n, has_entry, entry);
}

static uint64_t callres_hash(uint32_t mod, char kind, uint64_t key)
{
	return hash_u64(key ^ ((uint64_t)mod << 40) ^ ((uint64_t)(unsigned char)kind << 56));
}

static struct callres *callres_find(struct symbolizer *s, uint32_t mod, char kind, uint64_t key,
				    size_t *slot)
{
	size_t i;

	*slot = 0;
	if (!s->cres_cap)
		return NULL;
	for (i = callres_hash(mod, kind, key) & (s->cres_cap - 1); s->cres[i].mod;
	     i = (i + 1) & (s->cres_cap - 1))
		if (s->cres[i].mod == mod && s->cres[i].kind == kind && s->cres[i].key == key)
			return &s->cres[i];
	*slot = i;
	return NULL;
}

/* Remember an answer; @calls must stay valid (DWARF, or a block). Returns its slot. */
static struct callres *callres_add(struct symbolizer *s, uint32_t mod, char kind, uint64_t key,
				   int found, const struct debuginfo_call *calls, size_t n)
{
	struct callres *r;
	size_t slot;

	if ((s->nr_cres + 1) * 2 > s->cres_cap) {
		struct callres *old = s->cres;
		size_t old_cap = s->cres_cap;

		s->cres_cap = old_cap ? old_cap * 2 : 1024;
		s->cres = xcalloc(s->cres_cap, sizeof(*s->cres));
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].mod) {
				callres_find(s, old[i].mod, old[i].kind, old[i].key, &slot);
				s->cres[slot] = old[i];
			}
		free(old);
	}
	if ((r = callres_find(s, mod, kind, key, &slot)))
		return r;
	r = &s->cres[slot];
	memset(r, 0, sizeof(*r));
	r->mod = mod;
	r->kind = kind;
	r->key = key;
	r->found = found;
	if ((kind == 'S' || kind == 'N') && found && n == 1)
		r->call = calls[0];
	else
		r->calls = calls;
	r->n = n;
	s->nr_cres++;
	return r;
}

struct cache_load {
	struct symbolizer *s;
	struct symmod *m;
};

static void cache_frames(void *arg, uint64_t vaddr, const struct sym_frame *f, int n,
			 uint64_t entry)
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
	result_add(cl->s, cl->m->id, vaddr, g, n, entry != 0, entry);
}

/* An S or T line: its call sites copied into one block the symbolizer owns. */
static void cache_calls(void *arg, char kind, uint64_t key, int found,
			const struct debuginfo_call *c, size_t n)
{
	struct cache_load *cl = arg;
	struct symbolizer *s = cl->s;
	struct debuginfo_call *copy = NULL;
	size_t slot, addrs = 0, i;
	uint64_t *a;

	if (callres_find(s, cl->m->id, kind, key, &slot))
		return;
	if (found && n) {
		for (i = 0; i < n; i++)
			addrs += c[i].nr_addrs;
		copy = xmalloc(n * sizeof(*copy) + addrs * sizeof(*a) + 1);
		a = (uint64_t *)(copy + n);
		for (i = 0; i < n; i++) {
			copy[i] = c[i];
			copy[i].name = intern(s, c[i].name);
			copy[i].addrs = c[i].nr_addrs ? a : NULL;
			if (c[i].nr_addrs)
				memcpy(a, c[i].addrs, c[i].nr_addrs * sizeof(*a));
			a += c[i].nr_addrs;
		}
		ALLOC_GROW(s->blocks, s->nr_blocks + 1, s->alloc_blocks);
		s->blocks[s->nr_blocks++] = copy;
	}
	callres_add(s, cl->m->id, kind, key, found, copy, found ? n : 0);
}

/* An N line: kept as a callres 'N' keyed by the interned name's address, pc = the address. */
static void cache_name(void *arg, const char *name, uint64_t addr)
{
	struct cache_load *cl = arg;
	struct debuginfo_call c = {.pc = addr};
	size_t slot;
	uint64_t key = (uintptr_t)intern(cl->s, name);

	if (!callres_find(cl->s, cl->m->id, 'N', key, &slot))
		callres_add(cl->s, cl->m->id, 'N', key, 1, &c, 1);
}

static const struct symcache_ops cache_ops = {
    .frames = cache_frames,
    .calls = cache_calls,
    .name = cache_name,
};

/* On the first lookup in a module with a build-id: what earlier runs found out. */
static void cache_load(struct symbolizer *s, struct symmod *m, const struct elffile *ef)
{
	char path[4096];
	struct cache_load cl = {s, m};
	int ret;

	m->cache_checked = 1;
	if (!ef->build_id_len ||
	    symcache_path(ef->build_id, ef->build_id_len, path, sizeof(path)) < 0)
		return;
	ret = symcache_read(path, &cache_ops, &cl);
	if (ret < 0 && ret != -ENOENT) {
		log_debug("symbolize: cache %s not used: %s", path, strerror(-ret));
		if (ret == -EFBIG || ret == -EINVAL)
			return; /* do not grow it */
	}
	m->cache_path = xstrdup(path);
}

/* The module record of @ef, its on-disk cache read. */
static struct symmod *module_cached(struct symbolizer *s, const struct elffile *ef)
{
	struct symmod *m = module_get(s, ef);

	if (!m->cache_checked)
		cache_load(s, m, ef);
	return m;
}

/* The module record of @ef with its tables read. */
static struct symmod *module_ready(struct symbolizer *s, const struct elffile *ef)
{
	struct symmod *m = module_cached(s, ef);

	if (!m->loaded)
		module_load(s, m, ef);
	return m;
}

int symbolizer_func_start(struct symbolizer *s, const struct elffile *ef, uint64_t vaddr,
			  const struct cfi_table *cfi, uint64_t *start)
{
	struct cfi_row row;
	struct symmod *m;
	uint64_t gap;

	if (!s || !ef)
		return -ENOENT;
	if (cfi && cfi_row_find(cfi, vaddr, &row) == 0 && row.fde_start <= vaddr &&
	    vaddr < row.fde_end) {
		*start = row.fde_start;
		return 0;
	}
	m = module_ready(s, ef);
	if (m->syms && (gap = elfsym_table_gap_start(m->syms, vaddr)) != 0) {
		*start = gap;
		return 0;
	}
	return -ENOENT;
}

/* A call-site answer of @kind for @key: from memory or the on-disk cache, else from the
 * module's DWARF (then kept, and appended to the cache). NULL when the module has no DWARF. */
static const struct callres *call_answer(struct symbolizer *s, const struct elffile *ef, char kind,
					 uint64_t key)
{
	struct symmod *m = module_cached(s, ef);
	const struct debuginfo_call *calls = NULL;
	const struct callres *r;
	struct debuginfo_call c;
	size_t slot, n = 0;
	int found;

	if ((r = callres_find(s, m->id, kind, key, &slot)))
		return r;
	if (!m->loaded)
		module_load(s, m, ef);
	if (!m->di)
		return NULL;
	if (kind == 'S') {
		found = debuginfo_call_site(m->di, key, &c) == 0;
		calls = &c;
		n = found;
	} else {
		found = debuginfo_tail_calls(m->di, key, &calls, &n) == 0;
	}
	if (m->cache_path &&
	    symcache_format_calls(kind, key, found, calls, found ? n : 0, &m->pending,
				  &m->pending_len, &m->pending_cap) < 0)
		log_debug("symbolize: %c %#llx not cached", kind, (unsigned long long)key);
	return callres_add(s, m->id, kind, key, found, found ? calls : NULL, found ? n : 0);
}

int symbolizer_call_site(struct symbolizer *s, const struct elffile *ef, uint64_t pc,
			 struct debuginfo_call *out)
{
	const struct callres *r = s && ef ? call_answer(s, ef, 'S', pc) : NULL;

	if (!r || !r->found)
		return -ENOENT;
	*out = r->call;
	return 0;
}

int symbolizer_tail_calls(struct symbolizer *s, const struct elffile *ef, uint64_t entry,
			  const struct debuginfo_call **calls, size_t *n)
{
	const struct callres *r = s && ef ? call_answer(s, ef, 'T', entry) : NULL;

	if (!r || !r->found)
		return -ENOENT;
	*calls = r->calls;
	*n = r->n;
	return 0;
}

int symbolizer_func_entry(struct symbolizer *s, const struct elffile *ef, uint64_t vaddr,
			  uint64_t *entry)
{
	const struct elfsym *sym;
	struct symmod *m;
	struct symres *r;
	size_t slot;
	uint64_t e;

	if (!s || !ef)
		return -ENOENT;
	m = module_cached(s, ef);
	r = result_find(s, m->id, vaddr, &slot);
	if (!r) {
		r = resolve(s, m, ef, vaddr); /* sets the entry from DWARF, else a symbol */
	} else if (!r->has_entry) {
		/* answered by the on-disk cache, whose line had no entry */
		if (!m->loaded)
			module_load(s, m, ef);
		if (m->di && debuginfo_func_entry(m->di, vaddr, &e) == 0) {
			r->entry = e;
			r->has_entry = 1;
		} else if (m->syms && (sym = elfsym_table_find(m->syms, vaddr))) {
			r->entry = sym->addr;
			r->has_entry = 1;
		}
	}
	if (!r->has_entry)
		return -ENOENT;
	*entry = r->entry;
	return 0;
}

int symbolizer_find_function(struct symbolizer *s, const struct elffile *ef, const char *name,
			     uint64_t *vaddr)
{
	struct debuginfo_call c = {0};
	const struct callres *r;
	const struct elfsym *sym;
	struct symmod *m;
	uint64_t key;
	size_t slot;

	if (!s || !ef || !name)
		return -ENOENT;
	m = module_cached(s, ef);
	key = (uintptr_t)intern(s, name); /* one address per string */
	r = callres_find(s, m->id, 'N', key, &slot);
	if (!r) {
		if (!m->loaded)
			module_load(s, m, ef);
		sym = m->syms ? elfsym_table_find_function(m->syms, name) : NULL;
		c.pc = sym ? sym->addr : 0;
		/* only what was found goes to disk: another run may have more symbols */
		if (sym && m->cache_path &&
		    symcache_format_name(name, c.pc, &m->pending, &m->pending_len,
					 &m->pending_cap) < 0)
			log_debug("symbolize: %s not cached", name);
		r = callres_add(s, m->id, 'N', key, sym != NULL, &c, 1);
	}
	if (!r->found)
		return -ENOENT;
	*vaddr = r->call.pc;
	return 0;
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
