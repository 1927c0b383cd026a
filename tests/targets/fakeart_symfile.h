/* In-memory ELF "symfiles" the way ART's JIT writes them (docs/design/android-art.md 1.8): no
 * program headers, .text SHT_NOBITS at the absolute code address, one STT_FUNC STB_GLOBAL symbol
 * per method, .debug_frame with one CIE at offset 0 (version 1 "zR" with an absptr|udata8/udata4
 * FDE encoding, or version 4 with address/segment size) and FDEs whose CIE pointer is 0 and which
 * carry a 0 augmentation-length byte in both versions; packed files cover several methods,
 * compressed ones wrap a packed file in an xz .gnu_debugdata section. Used by tests/targets/fakeart
 * (the writer) and tests/unit/check_art.c (fixtures); header-only so both can include it. */
#ifndef FAKEART_SYMFILE_H
#define FAKEART_SYMFILE_H

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sf_method {
	const char *name;
	uint64_t addr, size;
	/* CFA program after the CIE's: x86-64 code "sub rsp,8 ... add rsp,8; ret" (i386: "sub
	 * esp,12 ... add esp,12; ret", the stack 16-byte aligned at the call either way) gets
	 * advance(@grow_at) def_cfa_offset(16) advance(@shrink_at - @grow_at) def_cfa_offset(8/4);
	 * aarch64 code "str x30,[sp,#-16]! ... ldr x30,[sp],#16; ret" gets advance(@grow_at)
	 * def_cfa_offset(16) offset(x30, cfa-16) advance(@shrink_at - @grow_at) def_cfa_offset(0)
	 * restore(x30); @has_fde 0 for no FDE at all (a P-era frameless leaf) */
	uint32_t grow_at, shrink_at;
	int has_fde;
};

struct sf_buf {
	uint8_t *p;
	size_t len, cap;
};

static void sf_put(struct sf_buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	if (data)
		memcpy(b->p + b->len, data, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

static void sf_le(struct sf_buf *b, uint64_t v, size_t n)
{
	uint8_t x[8];

	for (size_t i = 0; i < n; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	sf_put(b, x, n);
}

static void sf_u8(struct sf_buf *b, uint8_t v)
{
	sf_put(b, &v, 1);
}

static void sf_set_le(struct sf_buf *b, size_t at, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b->p[at + i] = (uint8_t)(v >> (8 * i));
}

static void sf_align(struct sf_buf *b, size_t a, uint8_t fill)
{
	while (b->len % a)
		sf_put(b, &fill, 1);
}

/* .debug_frame for @n methods of an x86-64 (@is_64), i386 or aarch64 (@machine EM_AARCH64)
 * target, CIE @cie_version 1 or 4. */
static void sf_debug_frame(struct sf_buf *b, const struct sf_method *m, size_t n, int is_64,
			   unsigned int machine, int cie_version)
{
	int a64 = machine == EM_AARCH64;
	size_t asz = is_64 ? 8 : 4, start;
	uint8_t sp = a64 ? 31 : is_64 ? 7 : 4, ra = a64 ? 30 : is_64 ? 16 : 8;
	/* the CFA's offset from sp at entry: the pushed return address on x86, none on aarch64 */
	uint8_t base = a64 ? 0 : (uint8_t)asz;

	/* CIE: CFA = sp + base; the return address at CFA - asz (x86, data alignment -4) or in
	 * x30 (aarch64: no rule, the register keeps it) */
	start = b->len;
	sf_le(b, 0, 4);
	sf_le(b, 0xffffffffu, 4);
	sf_u8(b, (uint8_t)cie_version);
	if (cie_version == 4) {
		sf_u8(b, 0);		/* augmentation "" */
		sf_u8(b, (uint8_t)asz); /* address_size */
		sf_u8(b, 0);		/* segment_size */
	} else {
		sf_put(b, "zR", 3);
	}
	sf_u8(b, 1);	/* code alignment */
	sf_u8(b, 0x7c); /* data alignment -4 */
	sf_u8(b, ra);	/* return address column (a byte in version 1, ULEB in 4) */
	if (cie_version != 4) {
		sf_u8(b, 1);		       /* augmentation data length */
		sf_u8(b, is_64 ? 0x04 : 0x03); /* DW_EH_PE_absptr | udata8 / udata4 */
	}
	sf_u8(b, 0x0c); /* DW_CFA_def_cfa sp, base */
	sf_u8(b, sp);
	sf_u8(b, base);
	if (!a64) {
		sf_u8(b, (uint8_t)(0x80 | ra)); /* DW_CFA_offset ra, cfa - asz */
		sf_u8(b, (uint8_t)(asz / 4));
	}
	sf_align(b, asz, 0);
	sf_set_le(b, start, b->len - start - 4, 4);
	for (size_t i = 0; i < n; i++) {
		if (!m[i].has_fde)
			continue;
		start = b->len;
		sf_le(b, 0, 4);
		sf_le(b, 0, 4); /* CIE pointer: offset 0 of .debug_frame */
		sf_le(b, m[i].addr, asz);
		sf_le(b, m[i].size, asz);
		sf_u8(b, 0); /* augmentation length ("zR"), a DW_CFA_nop for version 4 */
		if (m[i].grow_at) {
			sf_u8(b, (uint8_t)(0x40 | m[i].grow_at)); /* advance_loc */
			sf_u8(b, 0x0e);				  /* def_cfa_offset */
			sf_u8(b, 16);
			if (a64) {
				sf_u8(b, 0x80 | 30); /* DW_CFA_offset x30, cfa - 16 */
				sf_u8(b, 4);
			}
			sf_u8(b, (uint8_t)(0x40 | (m[i].shrink_at - m[i].grow_at)));
			sf_u8(b, 0x0e);
			sf_u8(b, base);
			if (a64)
				sf_u8(b, 0xc0 | 30); /* DW_CFA_restore x30 */
		}
		sf_align(b, asz, 0);
		sf_set_le(b, start, b->len - start - 4, 4);
	}
}

struct sf_section {
	const char *name;
	uint32_t type, link, info;
	uint64_t flags, addr, size, entsize, align;
	const uint8_t *data; /* NULL for NOBITS */
};

/* An ELF file with no program headers and the sections @s (index 0 is added). */
static void sf_elf(struct sf_buf *b, const struct sf_section *s, size_t ns, int is_64,
		   unsigned int machine)
{
	struct sf_buf shstr = {0};
	size_t ehsize = is_64 ? 64 : 52, shentsize = is_64 ? 64 : 40, asz = is_64 ? 8 : 4;
	size_t off[16], name[16], shoff;

	sf_u8(&shstr, 0);
	for (size_t i = 0; i < ns; i++) {
		name[i] = shstr.len;
		sf_put(&shstr, s[i].name, strlen(s[i].name) + 1);
	}
	name[ns] = shstr.len;
	sf_put(&shstr, ".shstrtab", 10);
	b->len = 0;
	sf_put(b, NULL, ehsize);
	for (size_t i = 0; i < ns; i++) {
		sf_align(b, s[i].align ? s[i].align : 1, 0);
		off[i] = b->len;
		if (s[i].data)
			sf_put(b, s[i].data, s[i].size);
	}
	off[ns] = b->len;
	sf_put(b, shstr.p, shstr.len);
	sf_align(b, 8, 0);
	shoff = b->len;
	sf_put(b, NULL, shentsize); /* SHN_UNDEF */
	for (size_t i = 0; i <= ns; i++) {
		const struct sf_section x =
		    i < ns ? s[i] : (struct sf_section){".shstrtab", SHT_STRTAB, 0, 0, 0,
							0,	     shstr.len,	 0, 1, shstr.p};

		sf_le(b, name[i], 4);
		sf_le(b, x.type, 4);
		sf_le(b, x.flags, asz);
		sf_le(b, x.addr, asz);
		sf_le(b, off[i], asz);
		sf_le(b, x.size, asz);
		sf_le(b, x.link, 4);
		sf_le(b, x.info, 4);
		sf_le(b, x.align ? x.align : 1, asz);
		sf_le(b, x.entsize, asz);
	}
	/* the header */
	memcpy(b->p, ELFMAG, SELFMAG);
	b->p[EI_CLASS] = is_64 ? ELFCLASS64 : ELFCLASS32;
	b->p[EI_DATA] = ELFDATA2LSB;
	b->p[EI_VERSION] = EV_CURRENT;
	b->p[EI_OSABI] = ELFOSABI_LINUX;
	sf_set_le(b, 16, ET_DYN, 2);
	sf_set_le(b, 18, machine, 2);
	sf_set_le(b, 20, EV_CURRENT, 4);
	if (is_64) {
		sf_set_le(b, 40, shoff, 8);
		sf_set_le(b, 52, ehsize, 2);
		sf_set_le(b, 58, shentsize, 2);
		sf_set_le(b, 60, ns + 2, 2);
		sf_set_le(b, 62, ns + 1, 2);
	} else {
		sf_set_le(b, 32, shoff, 4);
		sf_set_le(b, 40, ehsize, 2);
		sf_set_le(b, 46, shentsize, 2);
		sf_set_le(b, 48, ns + 2, 2);
		sf_set_le(b, 50, ns + 1, 2);
	}
	free(shstr.p);
}

/* A single (@n == 1) or packed symfile for @m into @out (malloc'ed, caller frees). */
static void sf_build(struct sf_buf *out, const struct sf_method *m, size_t n, int is_64,
		     unsigned int machine, int cie_version)
{
	struct sf_buf str = {0}, sym = {0}, dbg = {0};
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t symsz = is_64 ? 24 : 16;

	sf_u8(&str, 0);
	sf_put(&sym, NULL, symsz);
	for (size_t i = 0; i < n; i++) {
		size_t nm = str.len;

		sf_put(&str, m[i].name, strlen(m[i].name) + 1);
		sf_le(&sym, nm, 4);
		if (is_64) {
			sf_u8(&sym, (uint8_t)(STB_GLOBAL << 4 | STT_FUNC));
			sf_u8(&sym, 0);
			sf_le(&sym, 1, 2); /* .text */
			sf_le(&sym, m[i].addr, 8);
			sf_le(&sym, m[i].size, 8);
		} else {
			sf_le(&sym, m[i].addr, 4);
			sf_le(&sym, m[i].size, 4);
			sf_u8(&sym, (uint8_t)(STB_GLOBAL << 4 | STT_FUNC));
			sf_u8(&sym, 0);
			sf_le(&sym, 1, 2);
		}
		if (m[i].addr < lo)
			lo = m[i].addr;
		if (m[i].addr + m[i].size > hi)
			hi = m[i].addr + m[i].size;
	}
	sf_debug_frame(&dbg, m, n, is_64, machine, cie_version);
	struct sf_section s[] = {
	    {".text", SHT_NOBITS, 0, 0, SHF_ALLOC | SHF_EXECINSTR, lo, hi - lo, 0, 16, NULL},
	    {".strtab", SHT_STRTAB, 0, 0, 0, 0, str.len, 0, 1, str.p},
	    {".symtab", SHT_SYMTAB, 2, 1, 0, 0, sym.len, symsz, is_64 ? 8 : 4, sym.p},
	    {".debug_frame", SHT_PROGBITS, 0, 0, 0, 0, dbg.len, 0, is_64 ? 8 : 4, dbg.p},
	};
	sf_elf(out, s, 4, is_64, machine);
	free(str.p);
	free(sym.p);
	free(dbg.p);
}

/* All of @len bytes through a pipe, in (@wr 0) or out: the protocol of fakeart32 and its xz
 * helper (fakeart_xz.c). 0, or -1 at EOF or on an error. Inline: the 64-bit fakeart has no
 * helper and does not call it. */
static inline int sf_pipe_io(int fd, void *buf, size_t len, int wr)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The compressed form: an outer ELF with .text NOBITS over the range and .gnu_debugdata = xz of
 * the packed file @inner (level 1, as ART). 0, or -1 when liblzma fails. Not for i386: the build
 * host has no i386 liblzma, so fakeart32 has this done by fakeart32-xz (fakeart_xz.c), a host
 * program it talks to through pipes. */
#if !defined(__i386__)
#include <lzma.h>

static int sf_compress(struct sf_buf *out, const struct sf_buf *inner, uint64_t lo, uint64_t hi,
		       int is_64, unsigned int machine)
{
	size_t cap = lzma_stream_buffer_bound(inner->len), len = 0;
	uint8_t *xz = malloc(cap);

	if (!xz || lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, inner->p, inner->len, xz,
					   &len, cap) != LZMA_OK) {
		free(xz);
		return -1;
	}
	struct sf_section s[] = {
	    {".text", SHT_NOBITS, 0, 0, SHF_ALLOC | SHF_EXECINSTR, lo, hi - lo, 0, 16, NULL},
	    {".gnu_debugdata", SHT_PROGBITS, 0, 0, 0, 0, len, 0, 1, xz},
	};
	sf_elf(out, s, 2, is_64, machine);
	free(xz);
	return 0;
}
#endif

#endif
