/* `perch --version`: the release, the build-id read from perch's own program headers, and the
 * library versions. This is the one file that asks every library for its version; it calls
 * nothing else in them (libdwarf stays debuginfo.c's, capstone the disassembler's, ...). */
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include <elfutils/version.h>
#include <libdwarf.h>
#include <libunwind.h>
#include <lzma.h>
#include <readline/readline.h>
#include <zlib.h>

#include "perch/arch.h"
#include "perch/cli/version.h"
#include "perch/symbols/disasm.h"
#include "perch/symbols/inflate.h"

#ifndef PERCH_VERSION
#define PERCH_VERSION "0.1"
#endif

#define STR_(x) #x
#define STR(x)	STR_(x)

const char *version_string(void)
{
	return PERCH_VERSION;
}

struct build_id_ctx {
	char *buf;
	size_t size;
	int ret;
};

/* The first object dl_iterate_phdr() reports is the program itself (static builds too). */
static int build_id_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id_ctx *ctx = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*nh);
			const unsigned char *desc =
			    (const unsigned char *)(name + ((nh->n_namesz + 3) & ~3u));

			if ((const char *)desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4)) {
				if (nh->n_descsz * 2 + 1 > ctx->size) {
					ctx->ret = -ENOSPC;
					return 1;
				}
				for (unsigned int j = 0; j < nh->n_descsz; j++)
					sprintf(ctx->buf + 2 * j, "%02x", desc[j]);
				ctx->ret = 0;
				return 1;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* only the program */
}

int version_build_id(char *buf, size_t size)
{
	struct build_id_ctx ctx = {buf, size, -ENOENT};

	dl_iterate_phdr(build_id_cb, &ctx);
	return ctx.ret;
}

/* "NAME BUILT", and " (running RUNTIME)" when the loaded library reports another version
 * (capstone reports only major.minor at run time: "4.0" matches "4.0.2") */
static void lib_line(FILE *f, const char *name, const char *built, const char *runtime)
{
	size_t n = runtime ? strlen(runtime) : 0;
	int same = !runtime || (!strncmp(runtime, built, n) && (!built[n] || built[n] == '.'));

	fprintf(f, "  %-10s %s", name, built);
	if (!same)
		fprintf(f, " (running %s)", runtime);
	fputc('\n', f);
}

void version_print(FILE *f)
{
	char id[2 * 64 + 1], cs_run[32];
	const struct disasm_lib *cs;
	const char *why = NULL;
	int cs_major, cs_minor;

	fprintf(f, "perch %s\n", version_string());
	fprintf(f, "build-id: %s\n", version_build_id(id, sizeof(id)) ? "none" : id);
	fprintf(f, "arch: %s\n", perch_arch_host()->name);
	fprintf(f, "built with:\n");
	lib_line(f, "libunwind",
		 STR(UNW_VERSION_MAJOR) "." STR(UNW_VERSION_MINOR) "." STR(UNW_VERSION_EXTRA),
		 NULL);
	/* libdwarf has no version macro: the one it reports is the library's own */
	lib_line(f, "libdwarf", dwarf_package_version(), NULL);
	if ((cs = disasm_lib(&why))) {
		cs->version(&cs_major, &cs_minor);
		snprintf(cs_run, sizeof(cs_run), "%d.%d", cs_major, cs_minor);
	} else {
		snprintf(cs_run, sizeof(cs_run), "none: %.20s", why);
	}
	lib_line(f, "capstone", STR(CS_API_MAJOR) "." STR(CS_API_MINOR) "." STR(CS_VERSION_EXTRA),
		 cs_run);
	lib_line(f, "libelf", "0." STR(_ELFUTILS_VERSION) " (elfutils)", NULL);
	lib_line(f, "readline", STR(RL_VERSION_MAJOR) "." STR(RL_VERSION_MINOR),
		 rl_library_version);
	lib_line(f, "zlib", ZLIB_VERSION, zlibVersion());
	lib_line(f, "liblzma", LZMA_VERSION_STRING, lzma_version_string());
	fprintf(f, "inflating with %s\n", inflater_backend());
}
