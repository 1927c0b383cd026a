/* Mappings of a traced process tied to their ELF files. Files are opened through
 * /proc/PID/root so that targets in other mount namespaces (containers) resolve right. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "perch/base/fdlimit.h"
#include "perch/base/log.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "perch/symbols/cfi.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/module.h"
#include "perch/symbols/zip.h"

#define MODULES_VDSO_MAX (1 << 20)

struct modules *modules_new(pid_t pid)
{
	struct modules *ms = xcalloc(1, sizeof(*ms));

	ms->pid = pid;
	return ms;
}

static void module_free(struct module *m)
{
	cfi_table_free(m->unwind.cfi);
	elffile_free(m->ef);
	free(m->mem_image);
	free(m->zip_path);
	free(m->unwind.own_table);
	free(m->path);
	free(m);
}

void modules_free(struct modules *ms)
{
	if (!ms)
		return;
	for (size_t i = 0; i < ms->nr_mods; i++)
		module_free(ms->mods[i]);
	free(ms->mods);
	free(ms->map);
	proc_maps_free(ms->maps);
	free(ms);
}

static int is_module_path(const char *path)
{
	if (!strcmp(path, "[vdso]"))
		return 1;
	return path[0] == '/' && strncmp(path, "/dev/", 5) && strncmp(path, "/memfd:", 7);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static struct module *module_add(struct modules *ms, const struct proc_map *pm, const char *path)
{
	struct module *m = xcalloc(1, sizeof(*m));

	m->path = xstrdup(path);
	m->inode = pm->inode;
	m->dev_major = pm->dev_major;
	m->dev_minor = pm->dev_minor;
	m->deleted = pm->deleted;
	ALLOC_GROW(ms->mods, ms->nr_mods + 1, ms->alloc_mods);
	ms->mods[ms->nr_mods++] = m;
	return m;
}

/* A code mapping of an APK at a non-zero offset runs the library stored in the entry holding
 * that offset (docs/design/android-art.md 5.2): one module per entry, named "<apk>!/<entry>". The
 * other segments of that library (read-only data, RELRO) are mapped from the same entry; other
 * mappings of an APK (dex files, resources) are not libraries. NULL when no stored entry holds
 * it (then the file is treated as any other). */
static struct module *module_get_zip(struct modules *ms, const struct proc_map *pm)
{
	struct zip_entry ze;
	struct module *m;
	char path[4096];

	for (size_t i = 0; i < ms->nr_mods; i++) {
		m = ms->mods[i];
		if (m->zip_path && m->inode == pm->inode && m->dev_major == pm->dev_major &&
		    m->dev_minor == pm->dev_minor && !strcmp(m->zip_path, pm->path) &&
		    pm->offset >= m->zip_start && pm->offset - m->zip_start < m->zip_size)
			return m;
	}
	snprintf(path, sizeof(path), "/proc/%d/root%s", ms->pid, pm->path);
	if (pm->deleted) /* the APK at that path is another one: only the mapped file will do */
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", ms->pid,
			 (unsigned long long)pm->start, (unsigned long long)pm->end);
	if (zip_find_stored_file(path, pm->offset, &ze) < 0 &&
	    (pm->deleted || zip_find_stored_file(pm->path, pm->offset, &ze) < 0))
		return NULL;
	if (!(pm->prot & PROC_MAPS_PROT_EXEC) && !ends_with(ze.name, ".so"))
		return NULL;
	snprintf(path, sizeof(path), "%s!/%s", pm->path, ze.name);
	m = module_add(ms, pm, path);
	m->zip_path = xstrdup(pm->path);
	m->zip_start = ze.data_offset;
	m->zip_size = ze.size;
	return m;
}

static struct module *module_get(struct modules *ms, const struct proc_map *pm)
{
	struct module *m;

	if (pm->offset && ends_with(pm->path, ".apk") && (m = module_get_zip(ms, pm)))
		return m;
	for (size_t i = 0; i < ms->nr_mods; i++) {
		m = ms->mods[i];
		if (m->inode == pm->inode && m->dev_major == pm->dev_major &&
		    m->dev_minor == pm->dev_minor && !m->zip_path && !strcmp(m->path, pm->path))
			return m;
	}
	return module_add(ms, pm, pm->path);
}

int modules_load_maps(struct modules *ms, struct proc_maps *maps)
{
	struct modules_map *map = xcalloc(maps->nr ? maps->nr : 1, sizeof(*map));

	for (size_t i = 0; i < maps->nr; i++) {
		const struct proc_map *pm = &maps->maps[i];

		map[i].start = pm->start;
		map[i].end = pm->end;
		map[i].offset = pm->offset;
		map[i].prot = pm->prot;
		map[i].name = pm->path;
		map[i].mod = is_module_path(pm->path) ? module_get(ms, pm) : NULL;
	}
	free(ms->map);
	proc_maps_free(ms->maps);
	ms->map = map;
	ms->nr_map = maps->nr;
	ms->maps = maps;
	ms->generation++;
	return 0;
}

int modules_reload(struct modules *ms)
{
	struct proc_maps *maps = proc_maps_load(ms->pid);
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ms->last_reload_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (!maps)
		return -errno;
	ms->reloads++;
	return modules_load_maps(ms, maps);
}

const struct modules_map *modules_find_fresh(struct modules *ms, uint64_t addr, uint64_t snap_ns)
{
	const struct modules_map *mm = modules_find(ms, addr);
	struct timespec ts;
	uint64_t now;

	/* code runs only in executable mappings: one that is not was replaced since (dlopen
	 * maps a library where it had just unmapped /etc/ld.so.cache) */
	if ((mm && (mm->prot & PROC_MAPS_PROT_EXEC)) || snap_ns <= ms->last_reload_ns || ms->final)
		return mm;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (now - ms->window_ns > 1000000000ULL) {
		ms->window_ns = now;
		ms->window_reloads = 0;
	}
	if (ms->window_reloads >= MODULES_MAX_RELOADS)
		return mm;
	ms->window_reloads++;
	if (modules_reload(ms) < 0)
		return mm; /* the table was left as it was */
	return modules_find(ms, addr);
}

const struct modules_map *modules_find(const struct modules *ms, uint64_t addr)
{
	size_t lo = 0, hi = ms->nr_map;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < ms->map[mid].start)
			hi = mid;
		else if (addr >= ms->map[mid].end)
			lo = mid + 1;
		else
			return &ms->map[mid];
	}
	return NULL;
}

static struct elffile *open_vdso(struct modules *ms, struct module *m, const struct modules_map *mm)
{
	size_t len = mm->end - mm->start;
	struct iovec local, remote;

	if (len > MODULES_VDSO_MAX)
		return NULL;
	m->mem_image = xmalloc(len);
	local = (struct iovec){m->mem_image, len};
	remote = (struct iovec){(void *)(uintptr_t)mm->start, len};
	if (process_vm_readv(ms->pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return NULL;
	return elffile_open_memory(m->mem_image, len, m->path);
}

/* The module's ELF file through @path: the whole file, or the range of a zip entry. */
static struct elffile *open_path(const struct module *m, const char *path)
{
	if (m->zip_path)
		return elffile_open_range(path, m->zip_start, m->zip_size, m->path);
	return elffile_open(path);
}

#define OVERLAYFS_MAGIC 0x794c7630UL
#define BTRFS_MAGIC	0x9123683eUL

int modules_same_file(uint64_t inode, uint32_t dev_major, uint32_t dev_minor, const struct stat *st,
		      unsigned long fs_type)
{
	if ((uint64_t)st->st_ino != inode)
		return 0;
	/* overlayfs: maps show the underlying file's device, stat() the overlay's; btrfs:
	 * stat() gives the subvolume's anonymous device, maps the file system's */
	return (major(st->st_dev) == dev_major && minor(st->st_dev) == dev_minor) ||
	       fs_type == OVERLAYFS_MAGIC || fs_type == BTRFS_MAGIC;
}

/* @path for module @m, only if it is the file the process mapped. NULL with errno ESTALE (and
 * *@mismatch set) when another file is there now. */
static struct elffile *open_checked(const struct module *m, const char *path, int *mismatch)
{
	struct elffile *ef = NULL;
	struct statfs sfs;
	struct stat st;
	char self[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0 ||
	    !modules_same_file(m->inode, m->dev_major, m->dev_minor, &st,
			       (unsigned long)sfs.f_type)) {
		*mismatch = 1;
		close(fd);
		errno = ESTALE;
		return NULL;
	}
	/* exactly the file checked (the path could change again meanwhile) */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ef = open_path(m, self);
	close(fd);
	return ef;
}

static struct elffile *open_file(struct modules *ms, struct module *m, const struct modules_map *mm)
{
	const char *file = m->zip_path ? m->zip_path : m->path;
	char path[4096], mapped[96];
	struct elffile *ef = NULL;
	int mismatch = 0;

	/* the mapping itself, whatever became of its path (readable with CAP_SYS_ADMIN or
	 * CAP_CHECKPOINT_RESTORE only: not under Android's run-as) */
	snprintf(mapped, sizeof(mapped), "/proc/%d/map_files/%llx-%llx", ms->pid,
		 (unsigned long long)mm->start, (unsigned long long)mm->end);
	if (m->deleted && (ef = open_path(m, mapped)))
		return ef; /* named by that path, which DWARF readers reopen: the mapped file */
	snprintf(path, sizeof(path), "/proc/%d/root%s", ms->pid, file);
	ef = open_checked(m, path, &mismatch);
	if (!ef && !m->deleted)
		ef = open_path(m, mapped);
	if (!ef)
		ef = open_checked(m, file, &mismatch);
	if (!ef)
		fdlimit_note_failure(errno); /* (counted for the lack of descriptors only) */
	if (!ef && mismatch) {
		log_warn(0,
			 "%s was replaced on disk after process %d mapped it (inode %llu): its "
			 "frames stay unnamed (root can read the mapped file through %s)",
			 file, (int)ms->pid, (unsigned long long)m->inode, mapped);
		errno = ESTALE;
	}
	if (ef) {
		free(ef->path);
		ef->path = xstrdup(m->path);
	}
	return ef;
}

#define MODULES_MAX_CANDIDATES 8  /* PT_LOADs that can share one file page: a few */
#define MODULES_LOAD_SCAN      16 /* mappings looked at on each side for the same load */

static uint32_t map_pf(const struct modules_map *mm)
{
	return (mm->prot & PROC_MAPS_PROT_READ ? PF_R : 0) |
	       (mm->prot & PROC_MAPS_PROT_WRITE ? PF_W : 0) |
	       (mm->prot & PROC_MAPS_PROT_EXEC ? PF_X : 0);
}

/* The mapping's file offset inside its ELF file (a zip entry's offsets count from its start). */
static uint64_t map_file_offset(const struct modules_map *mm)
{
	return mm->offset - mm->mod->zip_start;
}

/* The load bias an executable mapping gives beyond doubt: the only executable segment that can
 * be behind it (loaders never add or remove the execute permission). 0 or -ENOENT. */
static int anchor_bias(const struct modules_map *mm, uint64_t *bias)
{
	const struct elffile_load *c[MODULES_MAX_CANDIDATES];
	size_t n =
	    elffile_load_candidates(mm->mod->ef, map_file_offset(mm), map_pf(mm), c, ARRAY_SIZE(c));

	if (!(mm->prot & PROC_MAPS_PROT_EXEC) || n == 0 || !(c[0]->flags & PF_X) ||
	    (n > 1 && (c[1]->flags & PF_X)))
		return -ENOENT;
	*bias = elffile_load_bias(c[0], mm->start, map_file_offset(mm));
	return 0;
}

/* The bias of the load @mm belongs to, from the nearest executable mapping of the same file
 * around it (the loader maps one ELF file's segments next to each other; only anonymous
 * mappings, .bss, come between them). 0 or -ENOENT. */
static int load_anchor(const struct modules *ms, const struct modules_map *mm, uint64_t *bias)
{
	size_t i = (size_t)(mm - ms->map);

	if (anchor_bias(mm, bias) == 0)
		return 0;
	for (size_t d = 1; d <= MODULES_LOAD_SCAN; d++) {
		for (int side = -1; side <= 1; side += 2) {
			const struct modules_map *o;

			if ((side < 0 && d > i) || (side > 0 && i + d >= ms->nr_map))
				continue;
			o = &ms->map[side < 0 ? i - d : i + d];
			if (o->mod == mm->mod && anchor_bias(o, bias) == 0)
				return 0;
		}
	}
	return -ENOENT;
}

/* Which PT_LOAD is behind @mm, as its load bias. Of the segments that can be behind it
 * (elffile_load_candidates), the one that agrees with the load's executable mapping, else the
 * best match by permissions. 0 or -ENOENT. */
static int map_bias(const struct modules *ms, const struct modules_map *mm, uint64_t *bias)
{
	const struct elffile_load *c[MODULES_MAX_CANDIDATES];
	uint64_t off = map_file_offset(mm), anchor;
	size_t n = elffile_load_candidates(mm->mod->ef, off, map_pf(mm), c, ARRAY_SIZE(c));

	if (n == 0)
		return -ENOENT;
	if (n > 1 && load_anchor(ms, mm, &anchor) == 0) {
		for (size_t k = 0; k < n; k++) {
			if (elffile_load_bias(c[k], mm->start, off) == anchor) {
				*bias = anchor;
				return 0;
			}
		}
	}
	*bias = elffile_load_bias(c[0], mm->start, off);
	return 0;
}

struct elffile *modules_elf(struct modules *ms, const struct modules_map *cmm)
{
	struct modules_map *mm = (struct modules_map *)cmm;
	struct module *m = mm->mod;

	if (!m || m->load_failed || mm->bias_state < 0)
		return NULL;
	if (!m->ef) {
		m->ef = strcmp(m->path, "[vdso]") ? open_file(ms, m, mm) : open_vdso(ms, m, mm);
		if (!m->ef) {
			log_debug("cannot open %s: %s", m->path, strerror(errno));
			m->load_failed = 1;
			return NULL;
		}
	}
	if (mm->bias_state == 0)
		mm->bias_state = map_bias(ms, mm, &mm->bias) == 0 ? 1 : -1;
	return mm->bias_state > 0 ? m->ef : NULL;
}

const struct cfi_table *modules_cfi(struct modules *ms, const struct modules_map *mm)
{
	struct elffile *ef = modules_elf(ms, mm);
	struct module_unwind *mu;

	if (!ef)
		return NULL;
	mu = &mm->mod->unwind;
	if (!mu->cfi && !mu->cfi_failed) {
		mu->cfi = cfi_table_new(ef);
		mu->cfi_failed = !mu->cfi;
	}
	return mu->cfi;
}
