/* The modules of a traced process: its mappings (from /proc/PID/maps) tied to the ELF files
 * behind them, opened lazily, with the load bias of each mapping. Module structs live until
 * modules_free(), across reloads; the mapping table is replaced by each reload. */
#ifndef PERCH_MODULE_H
#define PERCH_MODULE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cfi_table;
struct elffile;
struct proc_maps;
struct stat;

/* What the unwinder found for a module's unwind table (filled by unwind.c). */
struct module_unwind {
	int state;		/* 0 not looked at, 1 ready, -1 none */
	uint64_t table_vaddr;	/* eh_frame_hdr binary-search table, or perch's own copy */
	uint64_t segbase_vaddr; /* what the table's offsets are relative to */
	uint64_t nr_entries;
	int32_t *own_table;    /* pairs (start, fde) built from .eh_frame, or NULL */
	struct cfi_table *cfi; /* perch's own CFI index (module_cfi), NULL until used */
	int cfi_failed;	       /* building it failed: do not retry */
};

struct module {
	char *path; /* as in /proc/PID/maps ("[vdso]" for the vDSO) */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	int deleted;	    /* maps said " (deleted)": @path now names another file, or none */
	struct elffile *ef; /* NULL until module_elf() succeeds */
	int load_failed;    /* module_elf() tried and failed: do not retry */
	uint8_t *mem_image; /* private copy of target memory for [vdso] */
	/* An ELF stored inside a zip (a library run straight from an APK): @path is then
	 * "<zip>!/<entry>", the ELF is @zip_size bytes at @zip_start of the file @zip_path. */
	char *zip_path;
	uint64_t zip_start, zip_size;
	uint32_t profile_str;	/* free for the caller: e.g. a profile string id + 1 */
	unsigned int art_flags; /* art_module_flags(): 0 not looked at yet */
	struct module_unwind unwind;
};

struct modules_map {
	uint64_t start, end, offset;
	uint32_t prot;	    /* PROC_MAPS_PROT_* */
	const char *name;   /* mapping name ("" anonymous, "[stack]", path) */
	struct module *mod; /* NULL when not backed by a file perch could read */
	uint64_t bias;	    /* runtime address = ELF vaddr + bias (valid when mod->ef) */
	int bias_state;	    /* 0 not computed yet, 1 @bias known, -1 no PT_LOAD fits */
};

#define MODULES_MAX_RELOADS 50

struct modules {
	pid_t pid;
	unsigned int generation; /* bumped by every reload that changed the table */
	struct proc_maps *maps;
	struct modules_map *map;
	size_t nr_map;
	struct module **mods;
	size_t nr_mods, alloc_mods;
	uint64_t last_reload_ns;
	uint64_t window_ns; /* start of the current one-second reload budget */
	unsigned int window_reloads;
	unsigned long long reloads; /* successful reloads, for statistics */
	int final;		    /* the maps of a process that is gone: never re-read (its pid
				     * may be another process's by now) */
};

struct modules *modules_new(pid_t pid);
void modules_free(struct modules *ms);
/* Re-read /proc/PID/maps. 0 or -errno. */
int modules_reload(struct modules *ms);
/* Build the table from maps text already read (for tests). */
int modules_load_maps(struct modules *ms, struct proc_maps *maps);
/* The mapping holding @addr, or NULL. Borrowed until the next reload. */
const struct modules_map *modules_find(const struct modules *ms, uint64_t addr);
/* The same for a code address seen in a snapshot taken at @snap_ns (CLOCK_MONOTONIC): when no
 * executable mapping holds it and the maps were read before the snapshot, they may lack a
 * mapping made since (dlopen, a library the loader mapped after exec, possibly where another
 * file was mapped when they were read): re-read them, at most
 * MODULES_MAX_RELOADS times a second (garbage addresses from a bad unwind must not make perch
 * re-read maps constantly). A reload after the snapshot already saw everything it could use. */
const struct modules_map *modules_find_fresh(struct modules *ms, uint64_t addr, uint64_t snap_ns);
/* The ELF file behind @mm, opened on first use (and its bias computed); NULL when none. */
struct elffile *modules_elf(struct modules *ms, const struct modules_map *mm);
/* Is the file @st (on a file system whose statfs f_type is @fs_type) the one a maps line names
 * with @inode and @dev_major:@dev_minor? The inode must match, and the device too, except on
 * overlayfs and btrfs, whose stat() reports another device than /proc/PID/maps does. A file
 * opened by path is used only then: a file replaced while mapped (maps: " (deleted)") has a
 * new file at its path. */
int modules_same_file(uint64_t inode, uint32_t dev_major, uint32_t dev_minor, const struct stat *st,
		      unsigned long fs_type);
/* perch's own CFI index of the module behind @mm, built on first use; NULL when none. */
const struct cfi_table *modules_cfi(struct modules *ms, const struct modules_map *mm);

#endif
