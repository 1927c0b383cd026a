/* The sections of a file's DWARF as libdwarf sees them through perch's object access
 * (Dwarf_Obj_Access_Interface): read on demand, decompressed (SHF_COMPRESSED, .zdebug_) as far
 * as a reader needs, and list and abbreviation sections checked before libdwarf parses them. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/ehframe.h"
#include "debuginfo-int.h"

/* Is every attribute form in .debug_abbrev one DWARF 2-5 or GNU defines? libdwarf 20210528
 * gets stuck skipping DIEs whose abbreviation names a form it does not know (a fuzzed file
 * kept dwarf_siblingof_b busy for minutes), and no compiler emits such forms. */
static int abbrev_forms_known(const uint8_t *p, size_t size)
{
	struct ehframe_cursor c = {.base = p, .end = size};

	while (c.pos < c.end && !c.bad) {
		if (!ehframe_read_uleb(&c))
			continue;	/* code 0: the end of one CU's table */
		ehframe_read_uleb(&c);	/* the tag */
		ehframe_read_le(&c, 1); /* has children */
		while (!c.bad) {
			uint64_t at = ehframe_read_uleb(&c), form = ehframe_read_uleb(&c);

			if (!at && !form)
				break;
			if (!((form >= 0x01 && form <= 0x2c && form != 0x02) ||
			      (form >= 0x1f01 && form <= 0x1f02) ||
			      (form >= 0x1f20 && form <= 0x1f21)))
				return 0;
			if (form == 0x21) /* DW_FORM_implicit_const: its value follows */
				ehframe_read_sleb(&c);
		}
	}
	return !c.bad;
}

/* Header of each unit in .debug_rnglists / .debug_loclists (DWARF 5 section 7.28/7.29):
 * "unit_length(4|12) version(2)=5 address_size(1) segment_selector_size(1) offset_entry_count(4)"
 * libdwarf 20210528 loads both sections with the first CU header, and a malformed unit header
 * there makes it use freed memory and free it twice (internal_load_rnglists_contexts() goes on
 * after its error path; fixed in later releases). So perch checks these headers first. */
static int lists_section_sane(const uint8_t *p, size_t size)
{
	size_t off = 0;

	while (off < size) {
		uint64_t len;
		size_t hdr = 4;

		if (size - off < 4)
			return 0;
		len = (uint64_t)p[off] | (uint64_t)p[off + 1] << 8 | (uint64_t)p[off + 2] << 16 |
		      (uint64_t)p[off + 3] << 24;
		if (len == 0xffffffffu) {
			int i;

			if (size - off < 12)
				return 0;
			for (len = 0, i = 7; i >= 0; i--)
				len = len << 8 | p[off + 4 + i];
			hdr = 12;
		} else if (len >= 0xfffffff0u) {
			return 0;
		}
		if (len < 8 || len > size - off - hdr)
			return 0;
		if (p[off + hdr] != 5 || p[off + hdr + 1] != 0)
			return 0; /* version */
		if (p[off + hdr + 2] != 2 && p[off + hdr + 2] != 4 && p[off + hdr + 2] != 8)
			return 0; /* address size */
		off += hdr + (size_t)len;
	}
	return 1;
}

/* How libdwarf sees a section perch must not show it (a second copy of a DWARF section, one
 * perch cannot read or decompress): a name libdwarf ignores. */
#define DI_HIDDEN ".perch.hidden"
static int is_dwarf_name(const char *name)
{
	return !strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8);
}

/* The index of the section libdwarf sees as @name, or -1. */
long di_sec_find(const struct debuginfo *di, const char *name)
{
	for (size_t i = 0; i < di->nr_secs; i++)
		if (!strcmp(di->secs[i].name, name))
			return (long)i;
	return -1;
}

/* Is @s decompressed only as far as readers need? .debug_info and .debug_line hold units read
 * by offset (di_info_ensure, di_line_ensure): glibc's are 10 MB and a dump needs a few units. */
static int sec_streamed(const struct debuginfo *di, const struct di_sec *s)
{
	return !di->dwo && s->comp != ELFSECTION_PLAIN &&
	       (!strcmp(s->name, ".debug_info") || !strcmp(s->name, ".debug_line"));
}

/* Read section @i once, decompressed (a streamed one only as far as sec_ensure() asked).
 * 0 or -errno; afterwards secs[i].data points to secs[i].size bytes. */
int di_sec_load(struct debuginfo *di, size_t i)
{
	struct di_sec *s = &di->secs[i];
	uint8_t *raw, *out = NULL;
	size_t out_size = 0;
	int ret;

	if (s->state)
		return s->state > 0 ? 0 : -ENOEXEC;
	s->state = -1;
	raw = xmalloc_large(s->raw_size + 1);
	if (pread(di->fd, raw, s->raw_size, (off_t)s->offset) != (ssize_t)s->raw_size) {
		free(raw);
		return -EIO;
	}
	if (s->comp == ELFSECTION_PLAIN) {
		s->data = raw;
	} else if (sec_streamed(di, s)) {
		ret = elfsection_stream_new(raw, s->raw_size, s->flags, s->elf_name, di->is_64,
					    di->big, DI_MAX_SECTION, &s->stream);
		if (ret < 0)
			return ret;
		if (elfsection_stream_size(s->stream) != s->size)
			return -EBADMSG;
		s->data = elfsection_stream_data(s->stream);
	} else {
		ret = elfsection_decompress(raw, s->raw_size, s->flags, s->elf_name, di->is_64,
					    di->big, DI_MAX_SECTION, &out, &out_size);
		free(raw);
		if (ret < 0 || out_size != s->size) {
			free(out);
			return ret < 0 ? ret : -EBADMSG;
		}
		s->data = out;
	}
	s->state = 1;
	return 0;
}

/* Section @i loaded and decompressed up to @upto bytes at least. 0 or -errno. */
static int sec_ensure(struct debuginfo *di, size_t i, uint64_t upto)
{
	int ret = di_sec_load(di, i);

	if (ret < 0 || !di->secs[i].stream)
		return ret;
	return elfsection_stream_ensure(di->secs[i].stream,
					upto > SIZE_MAX ? SIZE_MAX : (size_t)upto);
}

/* The end of the unit (a .debug_info unit or a line table: "unit_length(4|12) ...") that
 * starts at @at in section @i, decompressing as far as that. 0 or -errno; a length that
 * does not fit ends at the end of the section. */
static int sec_unit_end(struct debuginfo *di, size_t i, uint64_t at, uint64_t *end)
{
	const struct di_sec *s = &di->secs[i];
	uint64_t len;
	int ret = sec_ensure(di, i, at + 12);

	*end = s->size;
	if (ret < 0 || at >= s->size || s->size - at < 4)
		return ret;
	len = di_read_uint(s->data + at, 4, di->big);
	if (len == 0xffffffffu && s->size - at >= 12) {
		len = di_read_uint(s->data + at + 4, 8, di->big);
		if (len <= s->size - at - 12)
			*end = at + 12 + len;
	} else if (len < 0xfffffff0u && len <= s->size - at - 4) {
		*end = at + 4 + len;
	}
	return sec_ensure(di, i, *end);
}

/* .debug_info decompressed up to the end of the unit holding offset @off (and all before it:
 * a DIE libdwarf has no unit for yet makes it walk the unit headers from the start). 0 or
 * -errno; nothing to do for a section stored plain. */
int di_info_ensure(struct debuginfo *di, uint64_t off)
{
	long i = di_sec_find(di, ".debug_info");
	uint64_t end;
	int ret;

	if (i < 0 || di->dwo || di->secs[i].comp == ELFSECTION_PLAIN)
		return 0;
	while (di->info_walk <= off && di->info_walk < di->secs[i].size) {
		ret = sec_unit_end(di, (size_t)i, di->info_walk, &end);
		if (ret < 0)
			return ret;
		di->info_walk = end;
	}
	return 0;
}

/* .debug_line decompressed up to the end of the line table at @off. 0 or -errno. */
int di_line_ensure(struct debuginfo *di, uint64_t off)
{
	long i = di_sec_find(di, ".debug_line");
	uint64_t end;

	if (i < 0 || di->dwo || di->secs[i].comp == ELFSECTION_PLAIN)
		return 0;
	return sec_unit_end(di, (size_t)i, off, &end);
}

/* The whole of section @name decompressed. 0, -ENOENT or -errno. */
int di_sec_all(struct debuginfo *di, const char *name)
{
	long i = di_sec_find(di, name);

	return i < 0 ? -ENOENT : sec_ensure(di, (size_t)i, di->secs[i].size);
}

/* Is section @name one perch checks before libdwarf reads it (sec_check)? */
static int sec_is_list(const char *name)
{
	return !strncmp(name, ".debug_rnglists", 15) || !strncmp(name, ".debug_loclists", 15);
}

/* A DWARF 5 list section is checked when it is first loaded (libdwarf 20210528 trusts its
 * offsets): glibc's .debug_loclists is 3 MB and perch reads no location list, so it is
 * inflated only if libdwarf asks. 0, or -ENOEXEC. */
static int sec_check(struct debuginfo *di, size_t i)
{
	struct di_sec *s = &di->secs[i];

	if (!sec_is_list(s->name) || s->checked)
		return s->checked < 0 ? -ENOEXEC : 0;
	s->checked = -1;
	if (di_sec_load(di, i) < 0 || !lists_section_sane(s->data, (size_t)s->size))
		return -ENOEXEC;
	s->checked = 1;
	return 0;
}

/* The contents of the section libdwarf sees as @name, all of it: 0 with *@data and *@size
 * set, -ENOENT when there is none, or di_sec_load()'s error. */
int di_sec_get(struct debuginfo *di, const char *name, const uint8_t **data, size_t *size)
{
	long i = di_sec_find(di, name);
	int ret;

	if (i < 0)
		return -ENOENT;
	ret = sec_ensure(di, (size_t)i, di->secs[i].size);
	if (!ret)
		ret = sec_check(di, (size_t)i);
	if (ret < 0)
		return ret;
	*data = di->secs[i].data;
	*size = (size_t)di->secs[i].size;
	return 0;
}

/* Record section @shdr (named @name) as libdwarf will see it: a DWARF section under its
 * ".debug_*" name and its uncompressed size, or hidden. */
static void sec_add(struct debuginfo *di, const GElf_Shdr *shdr, const char *name,
		    uint64_t file_size)
{
	struct di_sec s = {
	    .type = shdr->sh_type,
	    .flags = shdr->sh_flags,
	    .addr = shdr->sh_addr,
	    .offset = shdr->sh_offset,
	    .raw_size = shdr->sh_size,
	    .size = shdr->sh_size,
	    .link = shdr->sh_link,
	    .info = shdr->sh_info,
	    .entsize = shdr->sh_entsize,
	};
	struct elfsection_info info;
	uint8_t hdr[24];
	size_t want = shdr->sh_size < sizeof(hdr) ? (size_t)shdr->sh_size : sizeof(hdr);

	s.elf_name = xstrdup(name);
	if (!is_dwarf_name(name)) {
		s.name = xstrdup(name);
		/* libdwarf may load it too (relocations, symbols): one the file cannot hold
		 * fails to load instead */
		if (shdr->sh_type == SHT_NOBITS || shdr->sh_offset > file_size ||
		    shdr->sh_size > file_size - shdr->sh_offset || shdr->sh_size > SIZE_MAX - 1)
			s.state = -1;
	} else {
		/* a DWARF section: libdwarf reads it through di_sec_load() only, so check it here
		 */
		s.name = name[1] == 'z' ? xasprintf(".%s", name + 2) : xstrdup(name);
		if (!strcmp(s.name, ".debug_loclists") || !strcmp(s.name, ".debug_loc") ||
		    !strcmp(s.name, ".debug_loclists.dwo") || !strcmp(s.name, ".debug_loc.dwo")) {
			/* perch reads no location list, and libdwarf 20210528 would inflate and
			 * parse every header of .debug_loclists (glibc's: 3 MB) as soon as it
			 * loads .debug_info */
			free(s.name);
			s.name = xstrdup(DI_HIDDEN);
		} else if (shdr->sh_type == SHT_NOBITS || shdr->sh_offset > file_size ||
			   shdr->sh_size > file_size - shdr->sh_offset ||
			   shdr->sh_size > SIZE_MAX - 1 || di_sec_find(di, s.name) >= 0 ||
			   pread(di->fd, hdr, want, (off_t)shdr->sh_offset) != (ssize_t)want ||
			   elfsection_probe(hdr, want, shdr->sh_flags, name, di->is_64, di->big,
					    &info) < 0 ||
			   info.size > DI_MAX_SECTION) {
			free(s.name);
			s.name = xstrdup(DI_HIDDEN);
		} else if (info.comp != ELFSECTION_PLAIN) {
			s.comp = info.comp;
			s.size = info.size;
		}
	}
	di->secs[di->nr_secs++] = s;
}

/* The section table, through libelf: every section in ELF order (libdwarf asks by index). */
int di_sections_read(struct debuginfo *di)
{
	size_t shnum = 0, shstrndx, i;
	struct stat st;
	const char *ident;
	Elf *elf;
	int ret = 0;

	if (elf_version(EV_CURRENT) == EV_NONE || fstat(di->fd, &st) < 0)
		return -ENOEXEC;
	elf = elf_begin(di->fd, ELF_C_READ, NULL); /* read(), not mmap: no SIGBUS */
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) ||
	    elf_getshdrnum(elf, &shnum) || !(ident = elf_getident(elf, NULL))) {
		ret = -ENOEXEC;
		goto out;
	}
	di->is_64 = gelf_getclass(elf) == ELFCLASS64;
	di->big = ident[EI_DATA] == ELFDATA2MSB;
	if (shnum > DI_MAX_SECTIONS) /* libdwarf numbers sections with a Dwarf_Half */
		shnum = DI_MAX_SECTIONS;
	di->secs = xcalloc(shnum ? shnum : 1, sizeof(*di->secs));
	for (i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr shdr;
		const char *name = NULL;

		if (!scn || !gelf_getshdr(scn, &shdr)) {
			memset(&shdr, 0, sizeof(shdr));
			shdr.sh_type = SHT_NULL;
		} else if (i) {
			name = elf_strptr(elf, shstrndx, shdr.sh_name);
		}
		sec_add(di, &shdr, name ? name : "", (uint64_t)st.st_size);
	}
out:
	elf_end(elf);
	return ret;
}

/* libdwarf's object access (libdwarf.h, "libdwarf Object File Interface"): perch hands it the
 * sections, decompressed. libdwarf 20210528 inflates zlib sections itself but knows no zstd,
 * and its own ELF reader loads sections perch has not checked (see debuginfo_open). */
static int obj_section_info(void *obj, Dwarf_Half i, Dwarf_Obj_Access_Section *out, int *err)
{
	struct debuginfo *di = obj;
	const struct di_sec *s;

	if (i >= di->nr_secs) {
		*err = DW_DLE_SECTION_INDEX_BAD;
		return DW_DLV_NO_ENTRY;
	}
	s = &di->secs[i];
	memset(out, 0, sizeof(*out));
	out->addr = s->addr;
	out->type = s->comp != ELFSECTION_PLAIN ? SHT_PROGBITS : s->type;
	out->size = s->size;
	out->name = s->name;
	out->link = s->link;
	out->info = s->info;
	out->entrysize = s->entsize;
	return DW_DLV_OK;
}

static Dwarf_Endianness obj_byte_order(void *obj)
{
	return ((struct debuginfo *)obj)->big ? DW_OBJECT_MSB : DW_OBJECT_LSB;
}

static Dwarf_Small obj_addr_size(void *obj)
{
	return ((struct debuginfo *)obj)->is_64 ? 8 : 4;
}

static Dwarf_Unsigned obj_section_count(void *obj)
{
	return ((struct debuginfo *)obj)->nr_secs;
}

static int obj_load_section(void *obj, Dwarf_Half i, Dwarf_Small **data, int *err)
{
	struct debuginfo *di = obj;

	if (i >= di->nr_secs || !strcmp(di->secs[i].name, DI_HIDDEN)) {
		*err = DW_DLE_SECTION_INDEX_BAD;
		return DW_DLV_NO_ENTRY;
	}
	if (di->secs[i].type == SHT_NOBITS || !di->secs[i].size)
		return DW_DLV_NO_ENTRY;
	if (di_sec_load(di, i) < 0 || sec_check(di, i) < 0) {
		*err = DW_DLE_ELF_SECTION_ERROR;
		return DW_DLV_ERROR;
	}
	*data = di->secs[i].data;
	return DW_DLV_OK;
}

/* libdwarf reads the sections through these (di_sections_read() fills di->secs). */
const Dwarf_Obj_Access_Methods di_obj_methods = {
    .get_section_info = obj_section_info,
    .get_byte_order = obj_byte_order,
    .get_length_size = obj_addr_size,
    .get_pointer_size = obj_addr_size,
    .get_section_count = obj_section_count,
    .load_section = obj_load_section,
    .relocate_a_section = NULL, /* executables, libraries and .dwo files need none */
};

/* What perch checks before libdwarf reads a byte: the size of .debug_info (-ENOENT without
 * one), .debug_aranges into di->aranges, every form in the abbreviation tables known
 * (-ENOEXEC if not; the DWARF 5 list sections are checked when loaded, sec_check). No DIE is
 * read. */
int di_check_sections(struct debuginfo *di, const char *info_name)
{
	const uint8_t *data;
	size_t size, i;
	long idx = di_sec_find(di, info_name);

	if (idx < 0 || !di->secs[idx].size)
		return -ENOENT;
	di->info_size = di->secs[idx].size;
	for (i = 0; i < di->nr_secs; i++) {
		if (strncmp(di->secs[i].name, ".debug_abbrev", 13))
			continue; /* the list sections: when loaded (sec_check) */
		if (di_sec_load(di, i) < 0)
			return -ENOEXEC;
		data = di->secs[i].data;
		size = (size_t)di->secs[i].size;
		if (!abbrev_forms_known(data, size))
			return -ENOEXEC;
	}
	/* after info_size is known: its CU offsets are checked against it */
	if (!strcmp(info_name, ".debug_info") &&
	    di_sec_get(di, ".debug_aranges", &data, &size) == 0)
		di_parse_aranges(di, data, size, di->big);
	return 0;
}
