/* ELF symbol tables: raw parsing of .symtab/.dynsym (both classes, both byte orders) into a
 * sorted address -> function table, and MiniDebugInfo (.gnu_debugdata, xz) through liblzma. */
#include <elf.h>
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/strarena.h"
#include "perch/base/xalloc.h"
#include "perch/symbols/elfsym.h"

#define ELFSYM_MAX_EXEC_SECTIONS 1024
#define ELFSYM_SCAN_BACK	 64 /* symbols looked at below an address for a covering FUNC */

struct elfsym_table {
	struct elfsym *syms;
	size_t nr, alloc;
	uint32_t *by_name; /* indexes into syms sorted by name, built by the first lookup */
	struct strarena names;
	int sorted;
};

/* A raw ELF image and the header fields we need. */
struct elfimg {
	const uint8_t *p;
	size_t size;
	int is_64;
	int swap; /* file byte order differs from ours */
	uint64_t shoff;
	uint32_t shnum, shentsize;
};

/* Section header, class-independent. */
struct rawshdr {
	uint32_t type, link;
	uint64_t flags, addr, offset, size, entsize;
};

struct exec_range {
	uint64_t start, end;
};

static int host_is_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static uint16_t rd16(const struct elfimg *e, uint64_t off)
{
	uint16_t v;

	memcpy(&v, e->p + off, sizeof(v));
	return e->swap ? __builtin_bswap16(v) : v;
}

static uint32_t rd32(const struct elfimg *e, uint64_t off)
{
	uint32_t v;

	memcpy(&v, e->p + off, sizeof(v));
	return e->swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct elfimg *e, uint64_t off)
{
	uint64_t v;

	memcpy(&v, e->p + off, sizeof(v));
	return e->swap ? __builtin_bswap64(v) : v;
}

static int in_image(const struct elfimg *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

static int read_shdr(const struct elfimg *e, uint32_t i, struct rawshdr *sh)
{
	uint64_t off = e->shoff + (uint64_t)i * e->shentsize;

	if (i >= e->shnum)
		return -ENOEXEC;
	/* the whole table was bounds-checked in parse_ehdr() */
	sh->type = rd32(e, off + 4);
	if (e->is_64) {
		sh->flags = rd64(e, off + 8);
		sh->addr = rd64(e, off + 16);
		sh->offset = rd64(e, off + 24);
		sh->size = rd64(e, off + 32);
		sh->link = rd32(e, off + 40);
		sh->entsize = rd64(e, off + 56);
	} else {
		sh->flags = rd32(e, off + 8);
		sh->addr = rd32(e, off + 12);
		sh->offset = rd32(e, off + 16);
		sh->size = rd32(e, off + 20);
		sh->link = rd32(e, off + 24);
		sh->entsize = rd32(e, off + 36);
	}
	return 0;
}

static int parse_ehdr(struct elfimg *e, const uint8_t *image, size_t size)
{
	size_t ehsize, min_shent;

	memset(e, 0, sizeof(*e));
	e->p = image;
	e->size = size;
	if (size < EI_NIDENT || memcmp(image, ELFMAG, SELFMAG))
		return -ENOEXEC;
	if (image[EI_CLASS] != ELFCLASS32 && image[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	if (image[EI_DATA] != ELFDATA2LSB && image[EI_DATA] != ELFDATA2MSB)
		return -ENOEXEC;
	e->is_64 = image[EI_CLASS] == ELFCLASS64;
	e->swap = (image[EI_DATA] == ELFDATA2MSB) != host_is_big_endian();
	ehsize = e->is_64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	min_shent = e->is_64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (size < ehsize)
		return -ENOEXEC;
	if (e->is_64) {
		e->shoff = rd64(e, offsetof(Elf64_Ehdr, e_shoff));
		e->shentsize = rd16(e, offsetof(Elf64_Ehdr, e_shentsize));
		e->shnum = rd16(e, offsetof(Elf64_Ehdr, e_shnum));
	} else {
		e->shoff = rd32(e, offsetof(Elf32_Ehdr, e_shoff));
		e->shentsize = rd16(e, offsetof(Elf32_Ehdr, e_shentsize));
		e->shnum = rd16(e, offsetof(Elf32_Ehdr, e_shnum));
	}
	if (!e->shoff)
		return -ENOENT; /* no section headers: no symbol tables */
	if (e->shentsize < min_shent || !in_image(e, e->shoff, min_shent))
		return -ENOEXEC;
	if (e->shnum == 0) { /* >= SHN_LORESERVE sections: the count is in section 0's sh_size */
		uint64_t n = e->is_64 ? rd64(e, e->shoff + 32) : rd32(e, e->shoff + 20);

		if (n > e->size / e->shentsize)
			return -ENOEXEC;
		e->shnum = (uint32_t)n;
	}
	if (!in_image(e, e->shoff, (uint64_t)e->shnum * e->shentsize))
		return -ENOEXEC;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct exec_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Executable allocated sections, sorted. Returns the count; *@out malloc'ed. */
static size_t collect_exec(const struct elfimg *e, struct exec_range **out)
{
	struct exec_range *r = NULL;
	size_t nr = 0, alloc = 0;

	for (uint32_t i = 1; i < e->shnum && nr < ELFSYM_MAX_EXEC_SECTIONS; i++) {
		struct rawshdr sh;

		if (read_shdr(e, i, &sh) < 0)
			break;
		if ((sh.flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    !sh.size || sh.addr + sh.size < sh.addr)
			continue;
		ALLOC_GROW(r, nr + 1, alloc);
		r[nr].start = sh.addr;
		r[nr].end = sh.addr + sh.size;
		nr++;
	}
	if (nr)
		qsort(r, nr, sizeof(*r), cmp_range);
	*out = r;
	return nr;
}

/* End of the executable section holding @addr, or 0. */
static uint64_t exec_end(const struct exec_range *r, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < r[lo - 1].end)
		return r[lo - 1].end;
	return 0;
}

/* aarch64/arm mapping symbols: "$x", "$d", "$a", "$t", optionally followed by ".<anything>" */
static int is_mapping_symbol(const char *name)
{
	return name[0] == '$' && name[1] && strchr("adtx", name[1]) &&
	       (name[2] == '\0' || name[2] == '.');
}

/* The SHT_GNU_versym section of the symbol table at section index @symtab (.gnu.version:
 * one 16-bit version index per symbol, bit 15 set for a hidden, non-default version), or
 * NULL; *@nr gets its entry count. */
static uint64_t versym_of(const struct elfimg *e, uint32_t symtab, uint64_t *nr)
{
	for (uint32_t i = 1; i < e->shnum; i++) {
		struct rawshdr sh;

		if (read_shdr(e, i, &sh) < 0)
			break;
		if (sh.type == SHT_GNU_versym && sh.link == symtab &&
		    in_image(e, sh.offset, sh.size)) {
			*nr = sh.size / 2;
			return sh.offset;
		}
	}
	*nr = 0;
	return 0;
}

static int load_one(struct elfsym_table *t, const struct elfimg *e, const struct rawshdr *sh,
		    uint32_t index, const struct exec_range *ex, size_t nr_ex)
{
	uint64_t nr_versym = 0,
		 versym = sh->type == SHT_DYNSYM ? versym_of(e, index, &nr_versym) : 0;
	size_t symsz = e->is_64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	struct rawshdr str;
	uint64_t count;
	int added = 0;

	if (sh->entsize < symsz || !in_image(e, sh->offset, sh->size)) {
		log_debug("elfsym: bad symbol table entsize or bounds");
		return 0;
	}
	if (read_shdr(e, sh->link, &str) < 0 || str.type != SHT_STRTAB ||
	    !in_image(e, str.offset, str.size) || !str.size) {
		log_debug("elfsym: bad string table link %u", sh->link);
		return 0;
	}
	count = sh->size / sh->entsize;
	if (count > ELFSYM_MAX_SYMBOLS) {
		log_debug("elfsym: %llu symbols, reading the first %u", (unsigned long long)count,
			  ELFSYM_MAX_SYMBOLS);
		count = ELFSYM_MAX_SYMBOLS;
	}
	const char *strtab = (const char *)e->p + str.offset;

	for (uint64_t i = 1; i < count; i++) {
		uint64_t off = sh->offset + i * sh->entsize;
		uint32_t st_name;
		uint8_t info;
		uint16_t shndx;
		uint64_t value, size, end;
		const char *name, *at, *nul;
		size_t len;

		st_name = rd32(e, off);
		if (e->is_64) {
			info = e->p[off + 4];
			shndx = rd16(e, off + 6);
			value = rd64(e, off + 8);
			size = rd64(e, off + 16);
		} else {
			value = rd32(e, off + 4);
			size = rd32(e, off + 8);
			info = e->p[off + 12];
			shndx = rd16(e, off + 14);
		}
		uint8_t type = ELF64_ST_TYPE(info);

		if (type == STT_GNU_IFUNC)
			type = STT_FUNC;
		if ((type != STT_FUNC && type != STT_NOTYPE) || shndx == SHN_UNDEF || !value)
			continue;
		if (st_name == 0 || st_name >= str.size)
			continue;
		name = strtab + st_name;
		nul = memchr(name, '\0', str.size - st_name);
		if (!nul)
			continue;
		at = memchr(name, '@', (size_t)(nul - name));
		len = (size_t)((at ? at : nul) - name);
		if (!len || is_mapping_symbol(name))
			continue;
		end = exec_end(ex, nr_ex, value);
		if (!end) {
			/* A sized FUNC outside any known executable section (e.g. section headers
			 * that lie): trust its size. NOTYPE there is data, not code. */
			if (type != STT_FUNC || !size || value + size < value)
				continue;
			end = value + size;
		}
		ALLOC_GROW(t->syms, t->nr + 1, t->alloc);
		struct elfsym *s = &t->syms[t->nr++];

		s->addr = value;
		s->size = size;
		s->sec_end = end;
		s->name = strarena_strndup(&t->names, name, len);
		s->type = type;
		s->bind = ELF64_ST_BIND(info);
		/* "name@VER" (not "@@") in .symtab, the hidden bit in .gnu.version for .dynsym */
		s->hidden = at ? at[1] != '@'
			       : versym && i < nr_versym && (rd16(e, versym + 2 * i) & 0x8000);
		added++;
	}
	return added;
}

struct elfsym_table *elfsym_table_new(void)
{
	return xcalloc(1, sizeof(struct elfsym_table));
}

void elfsym_table_free(struct elfsym_table *t)
{
	if (!t)
		return;
	strarena_release(&t->names);
	free(t->syms);
	free(t->by_name);
	free(t);
}

int elfsym_table_load(struct elfsym_table *t, const uint8_t *image, size_t size, unsigned int which)
{
	struct exec_range *ex = NULL;
	struct elfimg e;
	size_t nr_ex;
	int ret, found = 0, added = 0;

	ret = parse_ehdr(&e, image, size);
	if (ret < 0)
		return ret;
	nr_ex = collect_exec(&e, &ex);
	for (uint32_t i = 1; i < e.shnum; i++) {
		struct rawshdr sh;

		if (read_shdr(&e, i, &sh) < 0)
			break;
		if (!((sh.type == SHT_SYMTAB && (which & ELFSYM_SYMTAB)) ||
		      (sh.type == SHT_DYNSYM && (which & ELFSYM_DYNSYM))))
			continue;
		found = 1;
		added += load_one(t, &e, &sh, i, ex, nr_ex);
	}
	free(ex);
	t->sorted = 0;
	return found ? added : -ENOENT;
}

int elfsym_xz_decode(const uint8_t *in, size_t size, size_t limit, uint8_t **out, size_t *out_size)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	uint8_t *buf = NULL;
	size_t alloc = 0, cap = limit + 1; /* one byte more tells "too big" from "exactly limit" */
	lzma_ret lr;
	int ret;

	*out = NULL;
	*out_size = 0;
	if (lzma_stream_decoder(&strm, 256u << 20, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = size;
	for (;;) {
		if (strm.avail_out == 0) {
			size_t used = alloc;

			if (alloc >= cap) {
				ret = -E2BIG;
				goto out;
			}
			alloc = alloc ? alloc * 2 : (size * 4 > 4096 ? size * 4 : 4096);
			if (alloc > cap)
				alloc = cap;
			buf = xrealloc(buf, alloc);
			strm.next_out = buf + used;
			strm.avail_out = alloc - used;
		}
		lr = lzma_code(&strm, LZMA_FINISH);
		if (lr == LZMA_STREAM_END)
			break;
		if (lr == LZMA_OK)
			continue;
		ret = lr == LZMA_MEM_ERROR	  ? -ENOMEM
		      : lr == LZMA_MEMLIMIT_ERROR ? -E2BIG
						  : -EBADMSG;
		goto out;
	}
	if (strm.total_out > limit) {
		ret = -E2BIG;
		goto out;
	}
	*out = buf;
	*out_size = strm.total_out;
	buf = NULL;
	ret = 0;
out:
	lzma_end(&strm);
	free(buf);
	return ret;
}

int elfsym_table_load_xz(struct elfsym_table *t, const uint8_t *xz, size_t size)
{
	uint8_t *img;
	size_t img_size;
	int ret;

	ret = elfsym_xz_decode(xz, size, ELFSYM_MAX_XZ_SIZE, &img, &img_size);
	if (ret < 0)
		return ret;
	ret = elfsym_table_load(t, img, img_size, ELFSYM_SYMTAB);
	free(img);
	return ret;
}

/* Address order; at one address the best name first: FUNC, sized, global, then by name. */
static int cmp_sym(const void *a, const void *b)
{
	const struct elfsym *x = a, *y = b;
	int bx, by;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->type != y->type)
		return x->type == STT_FUNC ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	bx = x->bind == STB_GLOBAL ? 0 : x->bind == STB_WEAK ? 1 : 2;
	by = y->bind == STB_GLOBAL ? 0 : y->bind == STB_WEAK ? 1 : 2;
	if (bx != by)
		return bx - by;
	return strcmp(x->name, y->name);
}

void elfsym_table_finish(struct elfsym_table *t)
{
	size_t i, n = 0;

	if (t->nr)
		qsort(t->syms, t->nr, sizeof(*t->syms), cmp_sym);
	for (i = 0; i < t->nr; i++) {
		if (n && t->syms[n - 1].addr == t->syms[i].addr &&
		    !strcmp(t->syms[n - 1].name, t->syms[i].name)) {
			t->syms[n - 1].hidden &= t->syms[i].hidden;
			continue;
		}
		t->syms[n++] = t->syms[i];
	}
	t->nr = n;
	t->sorted = 1;
}

/* First index of the run of symbols at the address of syms[i]. */
static size_t group_start(const struct elfsym_table *t, size_t i)
{
	while (i > 0 && t->syms[i - 1].addr == t->syms[i].addr)
		i--;
	return i;
}

static int covers(const struct elfsym *s, uint64_t addr)
{
	return s->size && addr - s->addr < s->size && addr < s->sec_end;
}

const struct elfsym *elfsym_table_find(const struct elfsym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr, i, g;

	if (!t->sorted) {
		log_debug("elfsym: table used before elfsym_table_finish()");
		return NULL;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* the nearest FUNC whose size covers @addr */
	for (i = lo, g = 0; i > 0 && g < ELFSYM_SCAN_BACK; i--, g++) {
		if (covers(&t->syms[i - 1], addr)) {
			for (size_t j = group_start(t, i - 1); j < i; j++)
				if (covers(&t->syms[j], addr))
					return &t->syms[j];
		}
	}
	/* else the nearest symbol below, inside its section, when its extent is unknown (size
	 * 0: an assembler label). Past the end of a sized one the address belongs to a function
	 * the table does not list (a local one stripped away): naming it after its neighbour
	 * would be wrong, so it stays unnamed (module+offset). */
	i = group_start(t, lo - 1);
	if (addr >= t->syms[i].sec_end)
		return NULL;
	for (g = i; g < lo; g++)
		if (!t->syms[g].size)
			return &t->syms[g];
	return NULL;
}

uint64_t elfsym_table_gap_start(const struct elfsym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr, i, g;
	uint64_t start = 0;

	if (!t->sorted || elfsym_table_find(t, addr))
		return 0; /* named */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, g = 0; i > 0 && g < ELFSYM_SCAN_BACK; i--, g++) {
		const struct elfsym *s = &t->syms[i - 1];

		if (s->size && addr < s->sec_end && s->addr + s->size > start &&
		    s->addr + s->size <= addr)
			start = s->addr + s->size;
	}
	return start;
}

static int cmp_by_name(const void *a, const void *b, void *arg)
{
	const struct elfsym *syms = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(syms[x].name, syms[y].name);

	return c ? c : (x > y) - (x < y);
}

/* How gdb's lookup_minimal_symbol() ranks symbols of one name: an external (global or weak)
 * one first, then a file-local one; a non-default version ("name@VER") never matches. */
static int name_rank(const struct elfsym *s)
{
	if (s->hidden || s->type != STT_FUNC)
		return 0;
	return s->bind == STB_LOCAL ? 1 : 2;
}

const struct elfsym *elfsym_table_find_function(struct elfsym_table *t, const char *name)
{
	const struct elfsym *best = NULL;
	size_t lo = 0, hi;

	if (!t->sorted || !name)
		return NULL;
	if (!t->by_name && t->nr) { /* built on the first lookup by name */
		t->by_name = xcalloc(t->nr, sizeof(*t->by_name));
		for (size_t i = 0; i < t->nr; i++)
			t->by_name[i] = (uint32_t)i;
		qsort_r(t->by_name, t->nr, sizeof(*t->by_name), cmp_by_name, t->syms);
	}
	hi = t->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->syms[t->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < t->nr && !strcmp(t->syms[t->by_name[lo]].name, name); lo++) {
		const struct elfsym *s = &t->syms[t->by_name[lo]];

		if (name_rank(s) > (best ? name_rank(best) : 0))
			best = s;
	}
	return best;
}

const struct elfsym *elfsym_table_find_name(const struct elfsym_table *t, const char *name)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->syms[i].name, name))
			return &t->syms[i];
	return NULL;
}

size_t elfsym_table_count(const struct elfsym_table *t)
{
	return t->nr;
}

const struct elfsym *elfsym_table_get(const struct elfsym_table *t, size_t i)
{
	return i < t->nr ? &t->syms[i] : NULL;
}
