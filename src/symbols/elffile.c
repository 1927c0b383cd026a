/* ELF files mapped read-only: identity, load segments and unwind-table locations.
 * libelf does the header parsing; every offset it gives is checked against the image. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/elfsection.h"
#include "perch/symbols/elfsym.h"

#define ELFFILE_MAX_PHDRS 256
#define ELFFILE_MAX_MDI	  (64u << 20) /* decompressed .gnu_debugdata limit */

/* A section looked up by elffile_section_data(). */
struct elffile_unpacked {
	char *name; /* as asked for */
	struct elfsection_buf buf;
	int err; /* the look-up failed with this: do not retry */
};

static int in_image(const struct elffile *ef, uint64_t off, uint64_t len)
{
	return off <= ef->size && len <= ef->size - off;
}

static void read_build_id(struct elffile *ef, const uint8_t *p, uint64_t size)
{
	uint64_t pos = 0;

	while (pos + 12 <= size) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, p + pos, 4);
		memcpy(&descsz, p + pos + 4, 4);
		memcpy(&type, p + pos + 8, 4);
		pos += 12;
		uint64_t name_end = pos + (((uint64_t)namesz + 3) & ~3ULL);
		uint64_t desc_end = name_end + (((uint64_t)descsz + 3) & ~3ULL);
		if (name_end > size || name_end + descsz > size)
			return;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    memcmp(p + pos, "GNU", 4) == 0 && descsz > 0 &&
		    descsz <= sizeof(ef->build_id)) {
			memcpy(ef->build_id, p + name_end, descsz);
			ef->build_id_len = descsz;
			return;
		}
		pos = desc_end;
	}
}

static int read_headers(struct elffile *ef)
{
	GElf_Ehdr eh;
	size_t phnum, shnum, shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &eh))
		return -ENOEXEC;
	ef->machine = eh.e_machine;
	ef->is_64 = gelf_getclass(ef->elf) == ELFCLASS64;
	ef->is_dyn = eh.e_type == ET_DYN;
	if (elf_getphdrnum(ef->elf, &phnum) != 0 || phnum > ELFFILE_MAX_PHDRS)
		return -ENOEXEC;

	ef->loads = xcalloc(phnum ? phnum : 1, sizeof(*ef->loads));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_LOAD) {
			struct elffile_load *l = &ef->loads[ef->nr_loads++];

			l->vaddr = ph.p_vaddr;
			l->memsz = ph.p_memsz;
			l->offset = ph.p_offset;
			l->filesz = in_image(ef, ph.p_offset, ph.p_filesz) ? ph.p_filesz : 0;
			l->align = ph.p_align;
			l->flags = ph.p_flags;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			ef->eh_frame_hdr_vaddr = ph.p_vaddr;
			ef->eh_frame_hdr_size = ph.p_memsz;
		} else if (ph.p_type == PT_NOTE && !ef->build_id_len &&
			   in_image(ef, ph.p_offset, ph.p_filesz)) {
			read_build_id(ef, ef->image + ph.p_offset, ph.p_filesz);
		}
	}

	if (elf_getshdrnum(ef->elf, &shnum) != 0 || elf_getshdrstrndx(ef->elf, &shstrndx) != 0)
		return 0; /* no usable section headers: fine for a loaded image */
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(ef->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type != SHT_NOBITS && !in_image(ef, sh.sh_offset, sh.sh_size))
			continue;
		if (!strcmp(name, ".eh_frame")) {
			ef->eh_frame_vaddr = sh.sh_addr;
			ef->eh_frame_size = sh.sh_size;
		} else if (!strcmp(name, ".debug_frame")) {
			ef->debug_frame_offset = sh.sh_offset;
			ef->debug_frame_size = sh.sh_size;
		} else if (!strcmp(name, ".symtab") && sh.sh_size) {
			ef->has_symtab = 1;
		} else if (!strcmp(name, ".debug_info") && sh.sh_size && sh.sh_type != SHT_NOBITS) {
			ef->has_debug_info = 1;
		} else if (sh.sh_type == SHT_NOTE && !ef->build_id_len) {
			read_build_id(ef, ef->image + sh.sh_offset, sh.sh_size);
		}
	}
	return 0;
}

static struct elffile *open_image(const void *image, size_t size, const char *name)
{
	struct elffile *ef = xcalloc(1, sizeof(*ef));
	int ret;

	elf_version(EV_CURRENT);
	ef->path = xstrdup(name);
	ef->image = image;
	ef->size = size;
	ef->elf = elf_memory((char *)image, size);
	ret = ef->elf ? read_headers(ef) : -ENOEXEC;
	if (ret < 0) {
		if (ef->elf)
			elf_end(ef->elf);
		free(ef->loads);
		free(ef->path);
		free(ef);
		errno = -ret;
		return NULL;
	}
	return ef;
}

struct elffile *elffile_open(const char *path)
{
	struct elffile *ef;
	struct stat st;
	void *image;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 16) {
		close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	image = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = errno;
	close(fd);
	if (image == MAP_FAILED) {
		errno = err;
		return NULL;
	}
	ef = open_image(image, (size_t)st.st_size, path);
	if (!ef) {
		err = errno;
		munmap(image, (size_t)st.st_size);
		errno = err;
		return NULL;
	}
	ef->owns_map_ = 1;
	return ef;
}

struct elffile *elffile_open_range(const char *path, uint64_t offset, uint64_t size,
				   const char *name)
{
	uint64_t pad = offset & 4095;
	struct elffile *ef;
	struct stat st;
	void *map;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || size < 16 ||
	    offset > (uint64_t)st.st_size || size > (uint64_t)st.st_size - offset) {
		close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	map = mmap(NULL, size + pad, PROT_READ, MAP_PRIVATE, fd, (off_t)(offset - pad));
	err = errno;
	close(fd);
	if (map == MAP_FAILED) {
		errno = err;
		return NULL;
	}
	ef = open_image((uint8_t *)map + pad, size, name);
	if (!ef) {
		err = errno;
		munmap(map, size + pad);
		errno = err;
		return NULL;
	}
	ef->owns_map_ = 1;
	ef->map_base_ = map;
	ef->map_len_ = size + pad;
	return ef;
}

struct elffile *elffile_open_memory(const void *image, size_t size, const char *name)
{
	if (size < 16) {
		errno = ENOEXEC;
		return NULL;
	}
	return open_image(image, size, name);
}

void elffile_free(struct elffile *ef)
{
	if (!ef)
		return;
	elf_end(ef->elf);
	for (size_t i = 0; i < ef->nr_unpacked_; i++) {
		free(ef->unpacked_[i].name);
		elfsection_buf_release(&ef->unpacked_[i].buf);
	}
	free(ef->unpacked_);
	elffile_free(ef->mdi_);
	free(ef->mdi_image_);
	if (ef->owns_map_ && ef->map_base_)
		munmap(ef->map_base_, ef->map_len_);
	else if (ef->owns_map_)
		munmap((void *)ef->image, ef->size);
	free(ef->loads);
	free(ef->path);
	free(ef);
}

int elffile_section(const struct elffile *ef, const char *name, struct elffile_section *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(ef->elf, &shstrndx) != 0)
		return -ENOENT;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(ef->elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name))
			continue;
		if (sh.sh_type != SHT_NOBITS && !in_image(ef, sh.sh_offset, sh.sh_size))
			return -ENOENT;
		out->name = n;
		out->type = sh.sh_type;
		out->flags = sh.sh_flags;
		out->vaddr = sh.sh_addr;
		out->offset = sh.sh_offset;
		out->size = sh.sh_size;
		out->data = sh.sh_type == SHT_NOBITS ? NULL : ef->image + sh.sh_offset;
		return 0;
	}
	return -ENOENT;
}

/* The memo of a decompressed section @name, a new one when there is none. */
static struct elffile_unpacked *unpacked_slot(struct elffile *ef, const char *name, int *fresh)
{
	for (size_t i = 0; i < ef->nr_unpacked_; i++) {
		if (!strcmp(ef->unpacked_[i].name, name)) {
			*fresh = 0;
			return &ef->unpacked_[i];
		}
	}
	ef->unpacked_ = xrealloc(ef->unpacked_, (ef->nr_unpacked_ + 1) * sizeof(*ef->unpacked_));
	memset(&ef->unpacked_[ef->nr_unpacked_], 0, sizeof(*ef->unpacked_));
	ef->unpacked_[ef->nr_unpacked_].name = xstrdup(name);
	*fresh = 1;
	return &ef->unpacked_[ef->nr_unpacked_++];
}

int elffile_section_data(const struct elffile *cef, const char *name, struct elffile_section *out)
{
	struct elffile *ef = (struct elffile *)cef; /* the memo is not part of the value */
	struct elffile_unpacked *u;
	int fresh, ret;

	ret = elffile_section(ef, name, out);
	if (ret == 0 && !(out->flags & SHF_COMPRESSED))
		return 0; /* stored plain: borrowed from the image */
	/* compressed, or only in the GNU ".zdebug_" form: decompressed once (elfsection.c) */
	u = unpacked_slot(ef, name, &fresh);
	if (fresh)
		u->err = elfsection_get(ef, name, ELFFILE_MAX_SECTION, &u->buf);
	if (u->err < 0)
		return u->err;
	if (ret < 0) {
		char z[128];

		snprintf(z, sizeof(z), ".zdebug_%s", name + 7); /* elfsection_get() found it */
		if (elffile_section(ef, z, out) < 0)
			memset(out, 0, sizeof(*out));
	}
	out->data = u->buf.data;
	out->size = u->buf.size;
	return 0;
}

struct elffile *elffile_minidebuginfo(const struct elffile *cef)
{
	struct elffile *ef = (struct elffile *)cef; /* the memo is not part of the value */
	struct elffile_section sec;
	size_t size;

	if (ef->mdi_state_)
		return ef->mdi_;
	ef->mdi_state_ = -1;
	if (elffile_section(ef, ".gnu_debugdata", &sec) < 0 || !sec.data ||
	    elfsym_xz_decode(sec.data, sec.size, ELFFILE_MAX_MDI, &ef->mdi_image_, &size) < 0)
		return NULL;
	ef->mdi_ = elffile_open_memory(ef->mdi_image_, size, ef->path);
	if (!ef->mdi_) {
		free(ef->mdi_image_);
		ef->mdi_image_ = NULL;
		return NULL;
	}
	ef->mdi_state_ = 1;
	return ef->mdi_;
}

const uint8_t *elffile_vaddr_ptr(const struct elffile *ef, uint64_t vaddr, size_t len)
{
	for (size_t i = 0; i < ef->nr_loads; i++) {
		const struct elffile_load *l = &ef->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr <= l->filesz &&
		    len <= l->filesz - (vaddr - l->vaddr))
			return ef->image + l->offset + (vaddr - l->vaddr);
	}
	return NULL;
}

/* The lowest file offset a mapping of @l can start at: p_offset rounded down to the largest
 * page size the segment allows (its p_align, at least 4 KiB, at most 64 KiB). */
static uint64_t load_window_start(const struct elffile_load *l)
{
	uint64_t page = 4096;

	while (page < 65536 && page * 2 <= l->align)
		page *= 2;
	return l->offset & ~(page - 1);
}

/* How well segment flags @flags fit a mapping with flags @pf: higher is better. */
static int load_score(uint32_t flags, uint32_t pf)
{
	int score = 0;

	if ((flags & PF_X) == (pf & PF_X))
		score += 8;
	if ((flags & PF_W) == (pf & PF_W))
		score += 4;
	else if (flags & PF_W)
		score += 2; /* RELRO: a writable segment made read-only after relocation */
	if ((flags & PF_R) == (pf & PF_R))
		score += 1;
	return score;
}

size_t elffile_load_candidates(const struct elffile *ef, uint64_t offset, uint32_t pf,
			       const struct elffile_load **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ef->nr_loads && n < max; i++) {
		const struct elffile_load *l = &ef->loads[i];
		size_t k;

		if (!l->filesz || offset < load_window_start(l) ||
		    (offset >= l->offset && offset - l->offset >= l->filesz))
			continue;
		/* insertion by score; equal scores keep file order */
		for (k = n; k > 0 && load_score(out[k - 1]->flags, pf) < load_score(l->flags, pf);
		     k--)
			out[k] = out[k - 1];
		out[k] = l;
		n++;
	}
	return n;
}

uint64_t elffile_load_bias(const struct elffile_load *l, uint64_t start, uint64_t offset)
{
	return start - offset + l->offset - l->vaddr;
}

const char *elffile_build_id_hex(const struct elffile *ef, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < ef->build_id_len; i++) {
		buf[2 * i] = hex[ef->build_id[i] >> 4];
		buf[2 * i + 1] = hex[ef->build_id[i] & 15];
	}
	buf[2 * i] = '\0';
	return buf;
}
