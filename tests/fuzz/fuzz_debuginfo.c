/* Fuzz the DWARF line and inline reader (src/symbols/debuginfo.c, over libdwarf): the input is an
 * ELF file (written to a memfd, since debuginfo_open() takes a path), looked up at addresses spread
 * over its executable segments and .text. Frames must be well-formed. */
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "perch/symbols/debuginfo.h"
#include "perch/symbols/elffile.h"

#define FUZZ_LOOKUPS 48

static void lookup(struct debuginfo *di, uint64_t vaddr)
{
	struct sym_frame frames[SYM_MAX_INLINE];
	int n = debuginfo_lookup(di, vaddr, frames, SYM_MAX_INLINE);

	FUZZ_CHECK(n >= 0 && n <= SYM_MAX_INLINE);
	for (int i = 0; i < n; i++) {
		if (frames[i].func)
			(void)strlen(frames[i].func);
		if (frames[i].file)
			(void)strlen(frames[i].file);
	}
	/* a short buffer: never written past */
	n = debuginfo_lookup(di, vaddr, frames, 1);
	FUZZ_CHECK(n >= 0 && n <= 1);
}

static void lookup_range(struct debuginfo *di, uint64_t lo, uint64_t len)
{
	uint64_t step = len / FUZZ_LOOKUPS ? len / FUZZ_LOOKUPS : 1;

	for (int i = 0; i < FUZZ_LOOKUPS && (uint64_t)i * step < len; i++)
		lookup(di, lo + (uint64_t)i * step);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elffile_section text;
	struct debuginfo *di;
	struct elffile *ef;
	char path[64];
	int fd;

	fd = memfd_create("fuzz-debuginfo", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	di = debuginfo_open(path);
	if (di) {
		elf_version(EV_CURRENT);
		ef = elffile_open_memory(data, size, "fuzz");
		if (ef) {
			for (size_t i = 0; i < ef->nr_loads; i++)
				if (ef->loads[i].flags & 1 /* PF_X */)
					lookup_range(di, ef->loads[i].vaddr, ef->loads[i].memsz);
			if (elffile_section(ef, ".text", &text) == 0)
				lookup_range(di, text.vaddr, text.size);
			elffile_free(ef);
		}
		lookup(di, 0);
		lookup(di, UINT64_MAX);
		debuginfo_free(di);
	}
	close(fd);
	return 0;
}
