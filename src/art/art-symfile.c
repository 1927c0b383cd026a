/* The in-memory ELF files ART's JIT registers (spec 1.8): no program headers, .text NOBITS at
 * the absolute code address, function symbols and .debug_frame (CIE version 1 "zR" or 4), one
 * method or a packed group, optionally wrapped in an xz-compressed .gnu_debugdata. Also the
 * data-symbol lookup that locates the descriptors in libart.so. Section headers are read by hand
 * with every offset checked; symbols come from elfsym.c, CFI from cfi.c. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/art/art.h"
#include "perch/base/xalloc.h"
#include "perch/symbols/cfi.h"
#include "perch/symbols/elfsym.h"

#ifndef EM_ARM
#define EM_ARM 40
#endif
#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

#define ART_MAX_SECTIONS 4096

struct raw_elf {
	const uint8_t *p;
	size_t size;
	int is_64;
	unsigned int machine;
	uint64_t shoff;
	uint32_t shnum, shentsize, shstrndx;
};

struct raw_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link;
};

static uint64_t le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

static int in_bounds(const struct raw_elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

static int raw_open(struct raw_elf *e, const uint8_t *p, size_t size)
{
	memset(e, 0, sizeof(*e));
	e->p = p;
	e->size = size;
	if (size < 52 || memcmp(p, ELFMAG, SELFMAG) || p[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	if (p[EI_CLASS] == ELFCLASS64) {
		if (size < 64)
			return -ENOEXEC;
		e->is_64 = 1;
		e->shoff = le(p + 40, 8);
		e->shentsize = (uint32_t)le(p + 58, 2);
		e->shnum = (uint32_t)le(p + 60, 2);
		e->shstrndx = (uint32_t)le(p + 62, 2);
	} else if (p[EI_CLASS] == ELFCLASS32) {
		e->shoff = le(p + 32, 4);
		e->shentsize = (uint32_t)le(p + 46, 2);
		e->shnum = (uint32_t)le(p + 48, 2);
		e->shstrndx = (uint32_t)le(p + 50, 2);
	} else {
		return -ENOEXEC;
	}
	e->machine = (unsigned int)le(p + 18, 2);
	if (e->shentsize < (e->is_64 ? 64u : 40u) || !e->shnum || e->shnum > ART_MAX_SECTIONS ||
	    !in_bounds(e, e->shoff, (uint64_t)e->shnum * e->shentsize))
		return -ENOEXEC;
	return 0;
}

static void raw_shdr(const struct raw_elf *e, uint32_t i, struct raw_shdr *s)
{
	const uint8_t *p = e->p + e->shoff + (uint64_t)i * e->shentsize;

	s->name = (uint32_t)le(p, 4);
	s->type = (uint32_t)le(p + 4, 4);
	if (e->is_64) {
		s->flags = le(p + 8, 8);
		s->addr = le(p + 16, 8);
		s->offset = le(p + 24, 8);
		s->size = le(p + 32, 8);
		s->link = (uint32_t)le(p + 40, 4);
	} else {
		s->flags = le(p + 8, 4);
		s->addr = le(p + 12, 4);
		s->offset = le(p + 16, 4);
		s->size = le(p + 20, 4);
		s->link = (uint32_t)le(p + 24, 4);
	}
}

/* The bytes of section @name (not NOBITS, inside the image). 0, -ENOENT. */
static int raw_section(const struct raw_elf *e, const char *name, struct raw_shdr *out)
{
	struct raw_shdr str;
	size_t nlen = strlen(name);

	if (e->shstrndx >= e->shnum)
		return -ENOENT;
	raw_shdr(e, e->shstrndx, &str);
	if (!in_bounds(e, str.offset, str.size))
		return -ENOENT;
	for (uint32_t i = 1; i < e->shnum; i++) {
		raw_shdr(e, i, out);
		if (out->name >= str.size || str.size - out->name < nlen + 1 ||
		    memcmp(e->p + str.offset + out->name, name, nlen + 1))
			continue;
		if (out->type == SHT_NOBITS || !in_bounds(e, out->offset, out->size))
			return -ENOENT;
		return 0;
	}
	return -ENOENT;
}

/* ---- symfiles ---- */

struct art_symfile {
	uint8_t *image; /* our copy */
	size_t size;
	uint8_t *inner;		  /* decompressed .gnu_debugdata, or NULL */
	struct elfsym_table *tab; /* owns the names */
	struct art_jit_sym *syms; /* sorted by start */
	size_t nr, alloc;
	struct cfi_table *cfi;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct art_jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static struct cfi_table *raw_cfi(const struct raw_elf *e)
{
	struct raw_shdr dbg, eh;
	int has_dbg = raw_section(e, ".debug_frame", &dbg) == 0 && dbg.size;
	int has_eh = raw_section(e, ".eh_frame", &eh) == 0 && eh.size;

	if (!has_dbg && !has_eh)
		return NULL;
	return cfi_table_new_raw(has_eh ? e->p + eh.offset : NULL, has_eh ? eh.size : 0,
				 has_eh ? eh.addr : 0, has_dbg ? e->p + dbg.offset : NULL,
				 has_dbg ? dbg.size : 0, e->machine, e->is_64);
}

struct art_symfile *art_symfile_new(const uint8_t *data, size_t size, unsigned int machine,
				    int is_64)
{
	struct art_symfile *s;
	struct raw_elf outer, inner;
	struct raw_shdr gd;
	size_t inner_size = 0;
	int err = ENOEXEC;

	if (raw_open(&outer, data, size) < 0 || outer.is_64 != !!is_64 ||
	    outer.machine != machine) {
		errno = ENOEXEC;
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->image = xmalloc(size);
	s->size = size;
	memcpy(s->image, data, size);
	outer.p = s->image;
	s->tab = elfsym_table_new();
	elfsym_table_load(s->tab, s->image, size, ELFSYM_SYMTAB);
	s->cfi = raw_cfi(&outer);
	if (raw_section(&outer, ".gnu_debugdata", &gd) == 0) {
		int ret = elfsym_xz_decode(s->image + gd.offset, gd.size, ART_MAX_SYMFILE,
					   &s->inner, &inner_size);

		if (ret < 0 || raw_open(&inner, s->inner, inner_size) < 0 ||
		    inner.is_64 != outer.is_64 || inner.machine != machine) {
			err = ret == -E2BIG || ret == -EBADMSG ? EBADMSG : ENOEXEC;
			goto fail;
		}
		/* lookups: the outer file first, then the inner one (its load bias is ignored:
		 * JIT addresses are absolute) */
		elfsym_table_load(s->tab, s->inner, inner_size, ELFSYM_SYMTAB);
		if (!s->cfi)
			s->cfi = raw_cfi(&inner);
	}
	elfsym_table_finish(s->tab);
	for (size_t i = 0; i < elfsym_table_count(s->tab); i++) {
		const struct elfsym *es = elfsym_table_get(s->tab, i);
		uint64_t start = es->addr;

		/* only sized functions; "$android.symtab.sorted", "$dexfile", "$t" are markers */
		if (es->type != STT_FUNC || !es->size || es->name[0] == '$')
			continue;
		if (machine == EM_ARM)
			start &= ~1ULL; /* Thumb2 */
		if (start + es->size < start)
			continue;
		ALLOC_GROW(s->syms, s->nr + 1, s->alloc);
		s->syms[s->nr++] = (struct art_jit_sym){start, start + es->size, es->name};
	}
	if (!s->nr) {
		err = ENOENT;
		goto fail;
	}
	qsort(s->syms, s->nr, sizeof(*s->syms), sym_cmp);
	return s;
fail:
	art_symfile_free(s);
	errno = err;
	return NULL;
}

void art_symfile_free(struct art_symfile *s)
{
	if (!s)
		return;
	cfi_table_free(s->cfi);
	elfsym_table_free(s->tab);
	free(s->syms);
	free(s->inner);
	free(s->image);
	free(s);
}

size_t art_symfile_count(const struct art_symfile *s)
{
	return s->nr;
}

const struct art_jit_sym *art_symfile_get(const struct art_symfile *s, size_t i)
{
	return i < s->nr ? &s->syms[i] : NULL;
}

const struct art_jit_sym *art_symfile_find(const struct art_symfile *s, uint64_t pc)
{
	size_t lo = 0, hi = s->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->syms[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* symbols of one symfile do not overlap, but a hostile one may: look back a little */
	for (size_t i = lo, tries = 0; i > 0 && tries < 8; i--, tries++)
		if (pc < s->syms[i - 1].end)
			return &s->syms[i - 1];
	return NULL;
}

const struct cfi_table *art_symfile_cfi(const struct art_symfile *s)
{
	return s->cfi;
}

int art_symfile_equal(const struct art_symfile *s, const uint8_t *data, size_t size)
{
	return s->size == size && !memcmp(s->image, data, size);
}

/* ---- descriptor symbols in the runtime library ---- */

int art_elf_data_symbol(const uint8_t *image, size_t size, const char *name, uint64_t *vaddr,
			uint64_t *sym_size, uint64_t *file_off)
{
	static const uint32_t order[] = {SHT_DYNSYM, SHT_SYMTAB};
	struct raw_elf e;
	size_t nlen = strlen(name);

	if (raw_open(&e, image, size) < 0)
		return -ENOEXEC;
	for (size_t k = 0; k < 2; k++) {
		for (uint32_t i = 1; i < e.shnum; i++) {
			struct raw_shdr sh, str;
			size_t symsz = e.is_64 ? 24 : 16;

			raw_shdr(&e, i, &sh);
			if (sh.type != order[k] || !in_bounds(&e, sh.offset, sh.size) ||
			    sh.link >= e.shnum)
				continue;
			raw_shdr(&e, sh.link, &str);
			if (str.type != SHT_STRTAB || !in_bounds(&e, str.offset, str.size))
				continue;
			/* a symbol named @name needs "@name\0" in its string table: most files
			 * have none, and one search of the strings is cheaper than a walk of the
			 * symbols (every module of every dump is asked) */
			if (!memmem(e.p + str.offset, (size_t)str.size, name, nlen + 1))
				continue;
			for (uint64_t off = sh.offset + symsz; off + symsz <= sh.offset + sh.size;
			     off += symsz) {
				const uint8_t *p = e.p + off;
				uint32_t st_name = (uint32_t)le(p, 4);
				uint16_t shndx = (uint16_t)le(p + (e.is_64 ? 6 : 14), 2);
				uint64_t value = le(p + (e.is_64 ? 8 : 4), e.is_64 ? 8 : 4);
				uint64_t ssize = le(p + (e.is_64 ? 16 : 8), e.is_64 ? 8 : 4);
				struct raw_shdr sec;

				if (st_name >= str.size || str.size - st_name < nlen + 1 ||
				    memcmp(e.p + str.offset + st_name, name, nlen + 1))
					continue;
				if (shndx == SHN_UNDEF || shndx >= e.shnum)
					continue;
				raw_shdr(&e, shndx, &sec);
				*vaddr = value;
				*sym_size = ssize;
				/* arm64: the symbol value may carry a tag in its top byte */
				if (e.machine == EM_AARCH64)
					value &= (1ULL << 56) - 1;
				if (sec.type == SHT_NOBITS || value < sec.addr ||
				    value - sec.addr >= sec.size)
					*file_off = UINT64_MAX; /* .bss: only the vaddr is known */
				else
					*file_off = value - sec.addr + sec.offset;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* DW_OP_const4u "DEX1" (0x31584544), DW_OP_drop: the start of ART's DEX PC expression (spec 3.1,
 * ART runtime/interpreter/cfi_asm_support.h CFI_DEFINE_DEX_PC_WITH_OFFSET). */
static const uint8_t dex_pc_marker[] = {0x0c, 0x44, 0x45, 0x58, 0x31, 0x13};

static int section_has_marker(const struct raw_elf *e, const char *name)
{
	struct raw_shdr sh;

	return raw_section(e, name, &sh) == 0 &&
	       memmem(e->p + sh.offset, (size_t)sh.size, dex_pc_marker, sizeof(dex_pc_marker));
}

unsigned int art_elf_flags(const uint8_t *image, size_t size)
{
	unsigned int flags = ART_MOD_CHECKED;
	uint64_t vaddr, ssize, off;
	struct raw_elf e;

	if (raw_open(&e, image, size) < 0)
		return flags;
	if (art_elf_data_symbol(image, size, "__dex_debug_descriptor", &vaddr, &ssize, &off) == 0 ||
	    section_has_marker(&e, ".eh_frame") || section_has_marker(&e, ".debug_frame"))
		flags |= ART_MOD_RUNTIME;
	if (art_elf_data_symbol(image, size, "__jit_debug_descriptor", &vaddr, &ssize, &off) == 0)
		flags |= ART_MOD_JIT;
	return flags;
}
