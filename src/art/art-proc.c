/* ART awareness for one traced process: its memory (read only, process_vm_readv with a
 * /proc/PID/mem fallback), where the descriptors are (spec 1.7: the data symbols of libart.so
 * turned into a file offset, then into the read-write mapping holding that offset), and when
 * the lists are re-read (once per batch of samples when a descriptor changed). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "perch/art/art-thread.h"
#include "perch/art/art.h"
#include "perch/art/dex.h"
#include "perch/base/log.h"
#include "perch/base/path.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/module.h"

#define ART_CHECK_NS 1000000ULL /* a lookup miss re-reads a list at most once per ms */
/* the runtime's thread list is re-read at most this often for a thread not in it (a native
 * thread never attached, or one started since): about 20 reads per thread each time */
#define ART_THREADS_NS	  100000000ULL
#define ART_FULL_NS	  1000000000ULL /* and the lists re-read every second regardless */
#define ART_DEX_CACHE_MAX 65536		/* dex pcs whose method and line are kept */
#define ART_NATIVE_CACHE  64		/* native methods named, by ArtMethod* (direct-mapped) */

/* One dex pc looked up: its method and line, and whether it is the method's first
 * instruction (the switch interpreter's marker; 0 unknown, 1 yes, -1 no). */
struct dex_pc_entry {
	struct dex_method m;
	int ok;
	int start;
};

struct art_proc {
	pid_t pid;
	int mem_fd; /* /proc/PID/mem, opened when process_vm_readv fails */
	struct perch_mem mem;
	unsigned int generation; /* of the modules last searched */
	int searched;
	uint64_t jit_desc, dex_desc;
	struct art_jit *jit;
	struct art_dex *dex;
	int is_64;	      /* the runtime library's ELF class */
	struct u64map pc_map; /* dex pc -> index into pc_cache */
	struct dex_pc_entry *pc_cache;
	size_t nr_pc, alloc_pc;
	uint64_t runtime_instance;  /* &art::Runtime::instance_, 0 when not found */
	struct art_threads threads; /* ART's threads as last read (art_proc_java_wait) */
	uint64_t threads_ns;	    /* when */
	int threads_err;	    /* -EPROTO once the layout was found unknown */
	uint64_t exit_pc; /* ART's instrumentation exit routine, once a replaced return address was
			     seen */
	struct {
		uint64_t method, insns; /* insns 0: none */
	} insns[ART_NATIVE_CACHE];	/* art_method_insns() by ArtMethod* (direct-mapped) */
	struct {
		pid_t tid;
		uint64_t time_ns, addr;
		size_t len;
		int ok;
		uint8_t buf[128];
	} win;			  /* art_thread_window() of one thread for one sample */
	struct perch_mem win_mem; /* reads through it */
	struct {
		uint64_t method; /* ArtMethod*, 0 for an empty slot */
		char name[160];	 /* "" when not a native method */
	} natives[ART_NATIVE_CACHE];
	uint64_t verified; /* the lists are known as they were at this time */
	uint64_t last_full, last_retry;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int proc_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct art_proc *a = ctx;
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	if (!len)
		return 0;
	if (addr + len < addr)
		return -EFAULT;
	n = process_vm_readv(a->pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && errno != EPERM && errno != ENOSYS)
		return -EFAULT; /* unmapped: /proc/PID/mem would say the same */
	if (a->mem_fd < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/mem", (int)a->pid);
		a->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (a->mem_fd < 0)
			return -EFAULT;
	}
	if (addr > INT64_MAX)
		return -EFAULT;
	n = pread(a->mem_fd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* Reads served from the window of the sample's thread when they fall in it. */
static int win_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct art_proc *a = ctx;

	if (a->win.ok && addr >= a->win.addr && addr - a->win.addr + len <= a->win.len) {
		memcpy(buf, a->win.buf + (addr - a->win.addr), len);
		return 0;
	}
	return proc_read(a, addr, buf, len);
}

/* The reader for thread @t's per-sample reads at @time_ns: its window read once. */
static const struct perch_mem *sample_mem(struct art_proc *a, const struct art_thread *t,
					  uint64_t time_ns)
{
	if (a->win.tid != t->tid || a->win.time_ns != time_ns || !time_ns) {
		a->win.tid = t->tid;
		a->win.time_ns = time_ns;
		art_thread_window(t->self, &a->win.addr, &a->win.len);
		a->win.ok = a->win.len <= sizeof(a->win.buf) &&
			    proc_read(a, a->win.addr, a->win.buf, a->win.len) == 0;
	}
	return &a->win_mem;
}

struct art_proc *art_proc_new(pid_t pid)
{
	struct art_proc *a = xcalloc(1, sizeof(*a));

	a->pid = pid;
	a->mem_fd = -1;
	a->mem.read = proc_read;
	a->mem.ctx = a;
	a->win_mem.read = win_read;
	a->win_mem.ctx = a;
	return a;
}

void art_proc_free(struct art_proc *a)
{
	if (!a)
		return;
	art_jit_free(a->jit);
	art_dex_free(a->dex);
	art_threads_release(&a->threads);
	u64map_release(&a->pc_map);
	free(a->pc_cache);
	if (a->mem_fd >= 0)
		close(a->mem_fd);
	free(a);
}

unsigned int art_module_flags(struct modules *ms, const struct modules_map *mm)
{
	struct elffile *ef;

	if (!mm || !mm->mod)
		return 0;
	if (!mm->mod->art_flags) {
		/* the file, whichever mapping asks (one outside every PT_LOAD has no bias) */
		ef = mm->mod->ef ? mm->mod->ef : modules_elf(ms, mm);
		if (!ef && !mm->mod->ef && !mm->mod->load_failed)
			return 0; /* look again from another mapping */
		mm->mod->art_flags = ef ? art_elf_flags(ef->image, ef->size) : ART_MOD_CHECKED;
		if (mm->mod->art_flags & ART_MOD_RUNTIME)
			log_debug("art: %s is ART's runtime library", mm->mod->path);
	}
	return mm->mod->art_flags;
}

/* The run-time address of data symbol @name of the module behind @mm: through the file offset
 * of the symbol and the writable mapping of the same file holding that offset (page-unaligned
 * segments cannot fool it), else vaddr + load bias (a .bss symbol). 0 when not found. */
static uint64_t symbol_address(struct modules *ms, const struct modules_map *mm,
			       const struct elffile *ef, const char *name)
{
	uint64_t vaddr, size, off;

	if (art_elf_data_symbol(ef->image, ef->size, name, &vaddr, &size, &off) < 0)
		return 0;
	if (off != UINT64_MAX) {
		for (size_t i = 0; i < ms->nr_map; i++) {
			const struct modules_map *m = &ms->map[i];

			if (m->mod != mm->mod || !(m->prot & PROC_MAPS_PROT_WRITE))
				continue;
			if (off >= m->offset && off - m->offset < m->end - m->start)
				return m->start + (off - m->offset);
		}
	}
	return vaddr + mm->bias;
}

static void use_descriptors(struct art_proc *a, uint64_t jit, uint64_t dex,
			    const struct elffile *ef, const char *path)
{
	if (jit && !a->jit) {
		a->jit_desc = jit;
		a->jit = art_jit_new(&a->mem, jit, ef->machine, ef->is_64);
		log_debug("art: __jit_debug_descriptor of %s at 0x%llx", path,
			  (unsigned long long)jit);
	}
	if (dex && !a->dex) {
		a->is_64 = ef->is_64;
		a->dex_desc = dex;
		a->dex = art_dex_new(&a->mem, dex, ef->machine, ef->is_64);
		log_debug("art: __dex_debug_descriptor of %s at 0x%llx", path,
			  (unsigned long long)dex);
	}
	a->verified = 0; /* read them at the next update */
}

int art_proc_locate(struct art_proc *a, struct modules *ms)
{
	if (a->jit && a->dex)
		return 1;
	if (a->searched && a->generation == ms->generation)
		return a->jit || a->dex;
	a->searched = 1;
	a->generation = ms->generation;
	/* ART's runtime first: both lists, and its descriptor wins over any GDB one */
	for (size_t i = 0; i < ms->nr_map && !(a->jit && a->dex); i++) {
		const struct modules_map *mm = &ms->map[i];
		struct elffile *ef;

		if (!mm->mod || !(mm->prot & PROC_MAPS_PROT_EXEC) ||
		    !(art_module_flags(ms, mm) & ART_MOD_RUNTIME))
			continue;
		ef = modules_elf(ms, mm);
		if (!ef)
			continue;
		use_descriptors(a, symbol_address(ms, mm, ef, "__jit_debug_descriptor"),
				symbol_address(ms, mm, ef, "__dex_debug_descriptor"), ef,
				mm->mod->path);
		if (!a->runtime_instance)
			a->runtime_instance =
			    symbol_address(ms, mm, ef, "_ZN3art7Runtime9instance_E");
	}
	/* the plain GDB JIT interface of other runtimes, in any module with code */
	for (size_t i = 0; i < ms->nr_map && !a->jit; i++) {
		const struct modules_map *mm = &ms->map[i];
		struct elffile *ef;
		uint64_t jit;

		if (!mm->mod || !(mm->prot & PROC_MAPS_PROT_EXEC) || mm->mod->path[0] != '/' ||
		    !(art_module_flags(ms, mm) & ART_MOD_JIT))
			continue;
		ef = modules_elf(ms, mm);
		if (!ef)
			continue;
		jit = symbol_address(ms, mm, ef, "__jit_debug_descriptor");
		if (jit)
			use_descriptors(a, jit, 0, ef, mm->mod->path);
	}
	return a->jit || a->dex;
}

static void dex_cache_clear(struct art_proc *a);

void art_proc_update(struct art_proc *a, uint64_t sample_ns)
{
	uint64_t now;
	int force;

	if ((!a->jit && !a->dex) || sample_ns <= a->verified)
		return; /* the last look at the lists was after this sample: one look per batch */
	now = now_ns();
	force = now - a->last_full >= ART_FULL_NS;
	if (force)
		a->last_full = now;
	if (a->jit)
		art_jit_update(a->jit, now, force);
	if (a->dex && art_dex_update(a->dex, now, force) > 0)
		dex_cache_clear(a);
	a->verified = now;
}

int art_proc_jit_find(struct art_proc *a, uint64_t pc, uint64_t time_ns, struct art_jit_sym *out,
		      const struct cfi_table **cfi)
{
	uint64_t now;

	if (!a->jit)
		return -ENOENT;
	if (art_jit_find(a->jit, pc, time_ns, out, cfi) == 0)
		return 0;
	/* a method registered since the last look: one fresh snapshot per update period */
	now = now_ns();
	if (now - a->last_retry < ART_CHECK_NS)
		return -ENOENT;
	a->last_retry = now;
	if (art_jit_update(a->jit, now, 0) <= 0)
		return -ENOENT;
	return art_jit_find(a->jit, pc, time_ns, out, cfi);
}

/* The dex list changed (or was read for the first time): names cached by dex pc may be
 * stale (a dex file unloaded and another registered at its address). */
static void dex_cache_clear(struct art_proc *a)
{
	u64map_release(&a->pc_map);
	a->pc_map = (struct u64map)U64MAP_INIT;
	a->nr_pc = 0;
}

static int dex_lookup_uncached(struct art_proc *a, uint64_t dex_pc, struct dex_method *out)
{
	uint64_t now;

	if (!a->dex)
		return -ENOENT;
	if (art_dex_lookup(a->dex, dex_pc, out) == 0)
		return 0;
	now = now_ns();
	if (now - a->last_retry < ART_CHECK_NS)
		return -ENOENT;
	a->last_retry = now;
	if (art_dex_update(a->dex, now, 0) <= 0)
		return -ENOENT;
	dex_cache_clear(a);
	return art_dex_lookup(a->dex, dex_pc, out);
}

/* The cache entry of @dex_pc, looked up on first use; NULL when the pc is not named (misses
 * are not cached: the dex file may be registered later). */
static struct dex_pc_entry *dex_cached(struct art_proc *a, uint64_t dex_pc)
{
	struct dex_pc_entry e = {.start = 0};
	size_t slot;
	uint32_t i = dex_pc == UINT64_MAX ? UINT32_MAX : u64map_find(&a->pc_map, dex_pc, &slot);

	if (i != UINT32_MAX)
		return &a->pc_cache[i];
	if (dex_lookup_uncached(a, dex_pc, &e.m) < 0)
		return NULL;
	if (a->nr_pc >= ART_DEX_CACHE_MAX)
		dex_cache_clear(a);
	e.ok = 1;
	ALLOC_GROW(a->pc_cache, a->nr_pc + 1, a->alloc_pc);
	a->pc_cache[a->nr_pc] = e;
	u64map_find(&a->pc_map, dex_pc, &slot); /* the clear above may have moved it */
	u64map_set(&a->pc_map, slot, dex_pc, (uint32_t)a->nr_pc);
	return &a->pc_cache[a->nr_pc++];
}

int art_proc_dex_lookup(struct art_proc *a, uint64_t dex_pc, struct dex_method *out)
{
	const struct dex_pc_entry *e = dex_cached(a, dex_pc);

	if (!e)
		return -ENOENT;
	*out = e->m;
	return 0;
}

uint64_t art_proc_interp_dex_pc(struct art_proc *a, const struct perch_mem *stack, uint64_t sp,
				uint64_t dex_pc, int *unknown)
{
	struct dex_pc_entry *e = dex_cached(a, dex_pc);
	struct dex_method prev;
	uint64_t pc;
	int ret;

	*unknown = 0;
	if (!e)
		return dex_pc;
	/* only a method's first instruction can be a switch interpreter's marker: the
	 * instruction before it is not in the same method (for standard dex, not in any) */
	if (!e->start)
		e->start = art_dex_lookup(a->dex, dex_pc - 2, &prev) < 0 ||
				   strcmp(prev.name, e->m.name) ||
				   prev.code_offset != e->m.code_offset
			       ? 1
			       : -1;
	if (e->start < 0)
		return dex_pc;
	ret = art_switch_dex_pc(stack, a->is_64, sp, dex_pc, &pc);
	*unknown = ret == -ERANGE;
	return ret < 0 ? dex_pc : pc;
}

int art_proc_active(const struct art_proc *a)
{
	return a->jit || a->dex;
}

uint64_t art_proc_jit_descriptor(const struct art_proc *a)
{
	return a->jit_desc;
}

uint64_t art_proc_dex_descriptor(const struct art_proc *a)
{
	return a->dex_desc;
}

size_t art_hide_runtime_frames(const uint8_t *kind, size_t n, uint8_t *hide)
{
	size_t hidden = 0;

	memset(hide, 0, n);
	for (size_t i = 0; i < n; i++) {
		if (kind[i] != ART_FRAME_JAVA)
			continue;
		for (size_t j = i; j > 0 && kind[j - 1] == ART_FRAME_RUNTIME; j--)
			hidden += !hide[j - 1], hide[j - 1] = 1;
		for (size_t j = i + 1; j < n && kind[j] == ART_FRAME_RUNTIME; j++)
			hidden += !hide[j], hide[j] = 1;
	}
	return hidden;
}

int art_proc_threads(struct art_proc *a, struct art_threads *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (!a->runtime_instance)
		return -ENOENT;
	/* the list changes only when a thread starts or exits: a few tries */
	for (int i = 0; i < 4; i++) {
		ret = art_threads_read(&a->mem, a->runtime_instance, a->is_64, out);
		if (ret != -EAGAIN)
			break;
	}
	if (ret == -EPROTO && !a->threads_err)
		log_warn(0, "art: this runtime's thread layout is not one perch knows (it reads "
			    "Android 11's): Java thread states are not shown, wait reasons are "
			    "the kernel's");
	if (ret == -EPROTO)
		a->threads_err = ret;
	return ret;
}

/* The cached entry of @tid, the list re-read (at most once per ART_THREADS_NS) when it has none
 * or the entry is stale. */
static struct art_thread *cached_thread(struct art_proc *a, pid_t tid)
{
	struct art_thread *t = (struct art_thread *)art_threads_find(&a->threads, tid);
	uint64_t now;

	if (t && art_thread_refresh(&a->mem, &a->threads, t) == 0)
		return t;
	now = now_ns();
	if (a->threads_ns && now - a->threads_ns < ART_THREADS_NS)
		return NULL;
	a->threads_ns = now;
	art_threads_release(&a->threads);
	if (art_proc_threads(a, &a->threads) < 0)
		return NULL;
	return (struct art_thread *)art_threads_find(&a->threads, tid);
}

int art_proc_java_wait(struct art_proc *a, pid_t tid, char *buf, size_t size)
{
	const struct art_thread *t;

	buf[0] = 0;
	if (!a->runtime_instance || a->threads_err)
		return -ENOENT;
	t = cached_thread(a, tid);
	if (!t)
		return -ENOENT;
	art_thread_wait_frame(t, buf, size);
	return buf[0] ? 0 : -ENOENT;
}

int art_proc_native_method(struct art_proc *a, pid_t tid, uint64_t time_ns,
			   const struct perch_mem *stack, char *name, size_t size)
{
	const struct art_thread *t;
	uint64_t now, method;
	size_t slot;

	name[0] = 0;
	if (!a->runtime_instance || a->threads_err)
		return -ENOENT;
	t = art_threads_find(&a->threads, tid);
	if (!t) { /* a thread not seen yet: the list again, at most once per ART_THREADS_NS */
		now = now_ns();
		if (a->threads_ns && now - a->threads_ns < ART_THREADS_NS)
			return -ENOENT;
		a->threads_ns = now;
		art_threads_release(&a->threads);
		if (art_proc_threads(a, &a->threads) < 0)
			return -ENOENT;
		t = art_threads_find(&a->threads, tid);
	}
	if (!t || art_thread_native_frame(sample_mem(a, t, time_ns), t->self, stack, &method) < 0)
		return -ENOENT;
	slot = (size_t)(method >> 3) % ART_NATIVE_CACHE;
	if (a->natives[slot].method != method) {
		if (art_method_native_name(&a->mem, method, a->natives[slot].name,
					   sizeof(a->natives[slot].name)) == -EFAULT)
			return -ENOENT; /* not cached: unreadable now */
		a->natives[slot].method = method;
	}
	snprintf(name, size, "%s", a->natives[slot].name);
	return name[0] ? 0 : -ENOENT;
}

int art_proc_callers(struct art_proc *a, pid_t tid, uint64_t time_ns, const struct perch_mem *stack,
		     struct art_shadow_frame *out, size_t max)
{
	const struct art_thread *t;

	if (!a->runtime_instance || a->threads_err)
		return 0;
	t = art_threads_find(&a->threads, tid);
	return t ? art_thread_callers(sample_mem(a, t, time_ns), t->self, stack, out, max) : 0;
}

uint64_t art_proc_return(struct art_proc *a, pid_t tid, uint64_t slot, uint64_t ip)
{
	const struct art_thread *t;
	uint64_t pc;

	if (!a->runtime_instance || a->threads_err || (a->exit_pc && ip != a->exit_pc))
		return ip;
	t = art_threads_find(&a->threads, tid);
	if (!t) { /* the thread's Thread: the list, at most once per ART_THREADS_NS */
		uint64_t now = now_ns();

		if (a->threads_ns && now - a->threads_ns < ART_THREADS_NS)
			return ip;
		a->threads_ns = now;
		art_threads_release(&a->threads);
		art_proc_threads(a, &a->threads);
		t = art_threads_find(&a->threads, tid);
	}
	if (!t || art_thread_instrumentation_pc(&a->mem, t->self, slot, &pc) < 0)
		return ip;
	a->exit_pc = ip; /* every replaced return address is that one routine */
	return pc;
}

uint64_t art_proc_shadow_dex_pc(struct art_proc *a, const struct art_shadow_frame *sf)
{
	size_t slot = (size_t)(sf->method >> 3) % ART_NATIVE_CACHE;
	uint64_t insns;

	if (a->insns[slot].method != sf->method) {
		if (art_method_insns(&a->mem, sf->method, &insns) < 0)
			insns = 0;
		a->insns[slot].method = sf->method;
		a->insns[slot].insns = insns;
	}
	return a->insns[slot].insns ? a->insns[slot].insns + 2ull * sf->pc : 0;
}
