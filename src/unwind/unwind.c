/* Snapshot unwinder: libunwind's DWARF stepping over perch's own accessors, with a
 * frame-pointer walk (arch fp_step) where CFI is missing or fails.
 *
 * libunwind-ptrace's accessors read one word per PTRACE_PEEKDATA and need the thread
 * stopped; these serve the stack from the snapshot, unwind tables straight from the mapped ELF
 * files, and anything else from the running process with process_vm_readv (see
 * docs/design/perf-baseline.md, design lesson 1). */
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "perch/art/art.h"
#include "perch/base/log.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "perch/symbols/cfi.h"
#include "perch/symbols/ehframe.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/module.h"
#include "perch/unwind/unwind.h"

/* Exported by libunwind (it is what _UPT_find_proc_info uses) but not declared in its headers. */
#define unwind_search_table UNW_OBJ(dwarf_search_unwind_table)
extern int unwind_search_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
			       unw_proc_info_t *pi, int need_unwind_info, void *arg);

/* perch's own FDE tables (for files without .eh_frame_hdr) are served to libunwind at
 * addresses no user-space mapping can have: FAKE_BASE + (module index << 32). */
#define FAKE_BASE 0xfff0000000000000ULL
#define FAKE_SPAN (1ULL << 32)
#define PAGE	  4096ULL

struct unwinder {
	pid_t pid;
	const struct perch_arch *arch;
	struct modules *ms;
	unw_addr_space_t as;
	int libunwind; /* libunwind can step this target (the host's architecture) */
	unsigned int generation;
	const struct unwind_snapshot *snap;
	struct perch_regs cur; /* registers libunwind starts from */
	uint64_t page_addr;    /* one-page cache of live reads, valid during one unwind */
	int page_ok;
	uint8_t page[PAGE];
	unwind_jit_cfi_fn *jit_cfi; /* CFI of code without a module (JIT), or NULL */
	void *jit_arg;
	unwind_ret_fn *ret_fn; /* return addresses a runtime replaced, or NULL */
	void *ret_arg;
	uint64_t *dex_pcs; /* ART's DEX PC marker per frame (0: none) */
	uint64_t *dex_sps; /* the stack pointer of those frames */
	uint8_t *exact;	   /* per frame: its pc is not a return address */
	size_t frames_cap; /* entries of the three */
};

/* Copy the stack of @tid from @addr up to @end into @buf, page by page (a copy that runs off
 * the mapped stack stops at the last good page). Bytes copied, or -errno. */
static ssize_t copy_stack(pid_t tid, uint64_t addr, uint64_t end, uint8_t *buf)
{
	struct iovec local, remote[256]; /* 1 MiB in 4 KiB pages: RECORD_MAX_STACK */
	uint64_t start = addr;
	ssize_t got;
	int n = 0;

	if (addr >= end)
		return 0;
	for (; addr < end && n < (int)ARRAY_SIZE(remote); n++) {
		uint64_t next = (addr & ~(PAGE - 1)) + PAGE;

		if (next > end)
			next = end;
		remote[n].iov_base = (void *)(uintptr_t)addr;
		remote[n].iov_len = next - addr;
		addr = next;
	}
	local.iov_base = buf;
	local.iov_len = addr - start;
	got = process_vm_readv(tid, &local, 1, remote, (unsigned long)n, 0);
	return got < 0 ? -errno : got;
}

/* The end of the stack holding @sp when the caller gave the process's maps, else 0 */
static uint64_t stack_limit(const struct unwind_snapshot *snap, uint64_t sp)
{
	return snap->maps ? proc_maps_stack_end(snap->maps, sp) : 0;
}

int unwind_snapshot_take(pid_t pid, pid_t tid, const struct perch_arch *arch,
			 struct unwind_snapshot *snap)
{
	int ret;

	ret = arch->regs_read(tid, &snap->regs);
	if (ret < 0)
		return ret;
	/* the mask is the same for the whole process: ask the kernel once per process */
	if (arch->pac_mask_read) {
		static pid_t mask_pid;
		static uint64_t mask;

		if (mask_pid != pid) {
			if (arch->pac_mask_read(tid, &mask) < 0)
				mask = 0; /* no pointer authentication */
			mask_pid = pid;
		}
		snap->pac_mask = mask;
	}
	snap->tid = tid;
	return unwind_snapshot_read_stack(tid, perch_regs_sp(arch, &snap->regs), snap);
}

int unwind_snapshot_read_stack(pid_t tid, uint64_t sp, struct unwind_snapshot *snap)
{
	uint64_t end = sp + snap->stack_cap, stack_end = stack_limit(snap, sp);
	ssize_t got;

	snap->stack_addr = sp;
	snap->stack_len = 0;
	if (stack_end && stack_end < end)
		end = stack_end;
	if (!snap->stack_cap)
		return 0;
	got = copy_stack(tid, sp, end, snap->stack);
	if (got < 0)
		return (int)got;
	snap->stack_len = (size_t)got;
	return 0;
}

static int snapshot_stack_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct unwind_snapshot *s = ctx;

	if (addr < s->stack_addr || addr - s->stack_addr > s->stack_len ||
	    len > s->stack_len - (addr - s->stack_addr))
		return -EFAULT;
	memcpy(buf, s->stack + (addr - s->stack_addr), len);
	return 0;
}

struct perch_mem unwind_snapshot_stack(const struct unwind_snapshot *snap)
{
	return (struct perch_mem){snapshot_stack_read, (void *)snap};
}

int unwind_snapshot_grow(pid_t tid, struct unwind_snapshot *snap, size_t max)
{
	uint64_t stack_end = stack_limit(snap, snap->stack_addr);

	if (stack_end && stack_end - snap->stack_addr < max)
		max = stack_end - snap->stack_addr;
	while (snap->stack_len == snap->stack_cap && snap->stack_cap < max) {
		size_t cap = snap->stack_cap ? snap->stack_cap * 2 : PAGE;
		ssize_t got;

		if (cap > max)
			cap = max;
		snap->stack = xrealloc(snap->stack, cap);
		snap->stack_cap = cap;
		while (snap->stack_len < cap) {
			got = copy_stack(tid, snap->stack_addr + snap->stack_len,
					 snap->stack_addr + cap, snap->stack + snap->stack_len);
			if (got == -EFAULT || got == 0)
				return 0; /* the end of the stack mapping */
			if (got < 0)
				return (int)got;
			snap->stack_len += (size_t)got;
			if (snap->stack_len % PAGE)
				return 0; /* a short read ends at a page that is not there */
		}
	}
	return 0;
}

const char *unwind_stop_name(enum unwind_stop stop)
{
	static const char *const names[UNWIND_STOP_NR] = {
	    [UNWIND_STOP_NONE] = "",
	    [UNWIND_STOP_NO_INFO] = "no unwind info",
	    [UNWIND_STOP_BAD_CFI] = "bad CFI",
	    [UNWIND_STOP_MEMORY] = "unreadable stack",
	    [UNWIND_STOP_NOT_CODE] = "return address not in code",
	    [UNWIND_STOP_STACK] = "frame not above its callee",
	};

	return (unsigned int)stop < UNWIND_STOP_NR ? names[stop] : "?";
}

/* ---- memory ---- */

static int read_live(struct unwinder *u, uint64_t addr, void *buf, size_t len)
{
	uint64_t page = addr & ~(PAGE - 1);

	if ((addr + len - 1) / PAGE == page / PAGE) {
		if (!u->page_ok || u->page_addr != page) {
			struct iovec l = {u->page, PAGE}, r = {(void *)(uintptr_t)page, PAGE};

			u->page_ok = process_vm_readv(u->pid, &l, 1, &r, 1, 0) == (ssize_t)PAGE;
			u->page_addr = page;
			if (!u->page_ok)
				return -EFAULT;
		}
		memcpy(buf, u->page + (addr - page), len);
		return 0;
	} else {
		struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};

		return process_vm_readv(u->pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
	}
}

/* Bytes of a read-only file-backed mapping, from the ELF file itself. */
static const uint8_t *read_file_backed(struct unwinder *u, const struct modules_map *mm,
				       uint64_t addr, size_t len)
{
	struct elffile *ef;
	uint64_t vaddr;

	if (!mm->mod || (mm->prot & PROC_MAPS_PROT_WRITE))
		return NULL;
	ef = modules_elf(u->ms, mm);
	if (!ef)
		return NULL;
	vaddr = addr - mm->bias;
	for (size_t i = 0; i < ef->nr_loads; i++) {
		const struct elffile_load *l = &ef->loads[i];

		/* RELRO data is relocated at run time: only trust non-writable segments */
		if (!(l->flags & PF_W) && vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz)
			return elffile_vaddr_ptr(ef, vaddr, len);
	}
	return NULL;
}

static int read_fake(struct unwinder *u, uint64_t addr, void *buf, size_t len)
{
	uint64_t idx = (addr - FAKE_BASE) / FAKE_SPAN, off = (addr - FAKE_BASE) % FAKE_SPAN;
	const struct module_unwind *mu;
	size_t size, n;

	if (idx >= u->ms->nr_mods)
		return -EFAULT;
	mu = &u->ms->mods[idx]->unwind;
	if (!mu->own_table)
		return -EFAULT;
	size = mu->nr_entries * 2 * sizeof(int32_t);
	if (off >= size)
		return -EFAULT;
	n = size - off < len ? size - off : len;
	memset(buf, 0, len);
	memcpy(buf, (const uint8_t *)mu->own_table + off, n);
	return 0;
}

static int mem_read(struct unwinder *u, uint64_t addr, void *buf, size_t len)
{
	const struct unwind_snapshot *s = u->snap;
	const struct modules_map *mm;
	const uint8_t *p;

	if (addr >= s->stack_addr && addr - s->stack_addr < s->stack_len &&
	    len <= s->stack_len - (addr - s->stack_addr)) {
		memcpy(buf, s->stack + (addr - s->stack_addr), len);
		return 0;
	}
	if (addr >= FAKE_BASE)
		return read_fake(u, addr, buf, len);
	mm = modules_find(u->ms, addr);
	if (mm && (p = read_file_backed(u, mm, addr, len))) {
		memcpy(buf, p, len);
		return 0;
	}
	return read_live(u, addr, buf, len);
}

static int perch_mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return mem_read(ctx, addr, buf, len);
}

/* ---- libunwind accessors ---- */

static int acc_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
			  void *arg)
{
	(void)as;
	if (write)
		return -UNW_EREADONLYREG;
	return mem_read(arg, addr, val, sizeof(*val)) < 0 ? -UNW_EINVAL : 0;
}

static int acc_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
			  void *arg)
{
	struct unwinder *u = arg;

	(void)as;
	if (write || reg < 0 || reg >= PERCH_MAX_DWREGS || !(u->cur.valid & (1ULL << reg)))
		return -UNW_EBADREG;
	*val = u->cur.r[reg];
	return 0;
}

static int acc_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			    void *arg)
{
	return -UNW_EBADREG;
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int acc_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			     unw_word_t *off, void *arg)
{
	return -UNW_ENOINFO; /* perch symbolizes on its own */
}

static int acc_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO;
}

static void acc_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* libunwind owns what it allocated for remote tables */
}

/* Decode one DW_EH_PE-encoded value of .eh_frame_hdr. 0 or -1 (unsupported). */
static int hdr_read(const uint8_t *hdr, size_t size, size_t *pos, uint8_t enc, uint64_t hdr_vaddr,
		    uint64_t *out)
{
	uint64_t v;
	size_t n;

	switch (enc & 0x0f) {
	case 0x00:
		n = 8;
		break; /* absptr (64-bit targets) */
	case 0x03:
	case 0x0b:
		n = 4;
		break;
	case 0x04:
	case 0x0c:
		n = 8;
		break;
	default:
		return -1;
	}
	if (*pos + n > size)
		return -1;
	if (n == 4) {
		uint32_t x;

		memcpy(&x, hdr + *pos, 4);
		v = (enc & 0x0f) == 0x0b ? (uint64_t)(int64_t)(int32_t)x : x;
	} else {
		memcpy(&v, hdr + *pos, 8);
	}
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10:
		v += hdr_vaddr + *pos;
		break; /* pcrel */
	case 0x30:
		v += hdr_vaddr;
		break; /* datarel: relative to the hdr */
	default:
		return -1;
	}
	*pos += n;
	*out = v;
	return 0;
}

static int prepare_from_hdr(struct module_unwind *mu, const struct elffile *ef)
{
	const uint8_t *hdr = elffile_vaddr_ptr(ef, ef->eh_frame_hdr_vaddr, 4);
	uint64_t eh_frame, count, size = ef->eh_frame_hdr_size;
	size_t pos = 4;

	if (!hdr || size < 12 || !elffile_vaddr_ptr(ef, ef->eh_frame_hdr_vaddr, size))
		return -1;
	if (hdr[0] != 1 || hdr[3] != 0x3b /* datarel | sdata4 */)
		return -1;
	if (hdr_read(hdr, size, &pos, hdr[1], ef->eh_frame_hdr_vaddr, &eh_frame) < 0 ||
	    hdr_read(hdr, size, &pos, hdr[2], ef->eh_frame_hdr_vaddr, &count) < 0)
		return -1;
	if (count == 0 || count > (size - pos) / 8)
		return -1;
	mu->table_vaddr = ef->eh_frame_hdr_vaddr + pos;
	mu->segbase_vaddr = ef->eh_frame_hdr_vaddr;
	mu->nr_entries = count;
	return 0;
}

static int prepare_own_table(struct module_unwind *mu, const struct elffile *ef, size_t idx)
{
	struct ehframe_entry *e = NULL;
	int n = ehframe_build_table(ef, &e);
	size_t k = 0;

	if (n <= 0)
		return -1;
	mu->own_table = xmalloc((size_t)n * 2 * sizeof(int32_t));
	for (int i = 0; i < n; i++) {
		int64_t s = (int64_t)(e[i].start - ef->eh_frame_vaddr);
		int64_t f = (int64_t)(e[i].fde - ef->eh_frame_vaddr);

		if (s != (int32_t)s || f != (int32_t)f)
			continue;
		mu->own_table[2 * k] = (int32_t)s;
		mu->own_table[2 * k + 1] = (int32_t)f;
		k++;
	}
	free(e);
	mu->segbase_vaddr = ef->eh_frame_vaddr;
	mu->table_vaddr = FAKE_BASE + idx * FAKE_SPAN; /* an address, not a vaddr: see FAKE_BASE */
	mu->nr_entries = k;
	return k ? 0 : -1;
}

static size_t module_index(const struct modules *ms, const struct module *m)
{
	for (size_t i = 0; i < ms->nr_mods; i++)
		if (ms->mods[i] == m)
			return i;
	return 0;
}

static int acc_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			      int need_unwind_info, void *arg)
{
	struct unwinder *u = arg;
	const struct modules_map *mm = modules_find_fresh(u->ms, ip, u->snap->time_ns);
	struct module_unwind *mu;
	struct elffile *ef;
	unw_dyn_info_t di;
	uint64_t lo = UINT64_MAX, hi = 0;

	if (!mm || !mm->mod || !(ef = modules_elf(u->ms, mm)))
		return -UNW_ENOINFO;
	mu = &mm->mod->unwind;
	if (mu->state == 0) {
		int ok = ef->eh_frame_hdr_size ? prepare_from_hdr(mu, ef) : -1;

		if (ok < 0 && ef->eh_frame_size)
			ok = prepare_own_table(mu, ef, module_index(u->ms, mm->mod));
		mu->state = ok < 0 ? -1 : 1;
	}
	if (mu->state < 0)
		return -UNW_ENOINFO;
	for (size_t i = 0; i < ef->nr_loads; i++) {
		if (!(ef->loads[i].flags & PF_X))
			continue;
		if (ef->loads[i].vaddr < lo)
			lo = ef->loads[i].vaddr;
		if (ef->loads[i].vaddr + ef->loads[i].memsz > hi)
			hi = ef->loads[i].vaddr + ef->loads[i].memsz;
	}
	if (lo >= hi || ip < lo + mm->bias || ip >= hi + mm->bias)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = lo + mm->bias;
	di.end_ip = hi + mm->bias;
	di.u.rti.segbase = mu->segbase_vaddr + mm->bias;
	di.u.rti.table_data = mu->own_table ? mu->table_vaddr : mu->table_vaddr + mm->bias;
	di.u.rti.table_len = mu->nr_entries * 8 / sizeof(unw_word_t);
	return unwind_search_table(as, ip, &di, pi, need_unwind_info, arg);
}

static unw_accessors_t accessors = {
    .find_proc_info = acc_find_proc_info,
    .put_unwind_info = acc_put_unwind_info,
    .get_dyn_info_list_addr = acc_get_dyn_info_list_addr,
    .access_mem = acc_access_mem,
    .access_reg = acc_access_reg,
    .access_fpreg = acc_access_fpreg,
    .resume = acc_resume,
    .get_proc_name = acc_get_proc_name,
};

struct unwinder *unwinder_new(pid_t pid, const struct perch_arch *arch, struct modules *ms)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->pid = pid;
	u->arch = arch;
	u->ms = ms;
	u->generation = ms->generation;
	/* libunwind is built for the host only: another target (i386 on x86_64) is stepped by
	 * perch's own CFI and the frame pointers */
	u->libunwind = perch_arch_is_host(arch);
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	unw_destroy_addr_space(u->as);
	free(u->dex_pcs);
	free(u->dex_sps);
	free(u->exact);
	free(u);
}

void unwinder_flush(struct unwinder *u)
{
	unw_flush_cache(u->as, 0, 0);
	u->generation = u->ms->generation;
}

void unwinder_set_ret(struct unwinder *u, unwind_ret_fn *fn, void *arg)
{
	u->ret_fn = fn;
	u->ret_arg = arg;
}

void unwinder_set_jit(struct unwinder *u, unwind_jit_cfi_fn *fn, void *arg)
{
	u->jit_cfi = fn;
	u->jit_arg = arg;
}

const uint64_t *unwinder_dex_pcs(const struct unwinder *u)
{
	return u->dex_pcs;
}

const uint8_t *unwinder_exact_pcs(const struct unwinder *u)
{
	return u->exact;
}

const uint64_t *unwinder_dex_sps(const struct unwinder *u)
{
	return u->dex_sps;
}

/* The JIT CFI covering @lookup (run-time addresses), or NULL. */
static const struct cfi_table *jit_cfi(struct unwinder *u, uint64_t lookup)
{
	return u->jit_cfi ? u->jit_cfi(u->jit_arg, lookup, u->snap->time_ns) : NULL;
}

/* One step with perch's own CFI (cfi.c) from @r; @exact: @r's pc is not a return address.
 * 0, -ENOENT at the outermost frame, or another -errno when it cannot step. */
static int own_cfi_step(struct unwinder *u, const struct perch_regs *r, int exact,
			struct perch_regs *out, unsigned int *out_flags)
{
	const struct perch_arch *a = u->arch;
	struct perch_mem mem = {perch_mem_read, u};
	uint64_t pc = perch_regs_pc(a, r);
	const struct modules_map *mm =
	    modules_find_fresh(u->ms, exact ? pc : pc - 1, u->snap->time_ns);
	const struct cfi_table *t = mm ? modules_cfi(u->ms, mm) : NULL;
	uint64_t bias = mm ? mm->bias : 0;

	*out_flags = 0;
	if (!t && (t = jit_cfi(u, exact ? pc : pc - 1)))
		bias = 0; /* JIT symfiles describe absolute addresses */
	if (!t)
		return -ENODATA;
	return cfi_step(a, t, bias, r, exact ? CFI_PC_EXACT : 0, &mem, u->snap->pac_mask, out,
			out_flags);
}

/* The cursor frame's pc into @r. From UNW_REG_IP, libunwind's IP after its steps: its aarch64
 * register 32 (perch's dw_pc) is where the first frame's pc was found and never moves. */
static void cursor_pc(struct unwinder *u, unw_cursor_t *c, struct perch_regs *r)
{
	int pc = u->arch->dw_pc;
	unw_word_t v;

	if (unw_get_reg(c, UNW_REG_IP, &v) == 0) {
		r->r[pc] = v & ~u->snap->pac_mask;
		r->valid |= 1ULL << pc;
	} else {
		r->r[pc] = 0;
		r->valid &= ~(1ULL << pc);
	}
}

/* Every register libunwind knows for the cursor's frame (callee-saved ones included). */
static void cursor_regs_all(struct unwinder *u, unw_cursor_t *c, struct perch_regs *r)
{
	unw_word_t v;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < u->arch->nr_regs && i < PERCH_MAX_DWREGS; i++) {
		if (unw_get_reg(c, i, &v) == 0) {
			r->r[i] = v;
			r->valid |= 1ULL << i;
		}
	}
	cursor_pc(u, c, r);
}

/* ART's DEX PC marker (docs/design/android-art.md section 3) in the CFI row of a frame of the
 * runtime library at @lookup, evaluated with that frame's registers @r (@c: the cursor's frame when
 * @from_cursor, whose callee-saved registers libunwind knows). 0 when there is none. */
static uint64_t frame_dex_pc(struct unwinder *u, unw_cursor_t *c, int from_cursor,
			     const struct perch_regs *r, uint64_t lookup, uint64_t *sp)
{
	struct perch_mem mem = {perch_mem_read, u};
	const struct modules_map *mm = modules_find(u->ms, lookup);
	const struct cfi_table *t;
	struct perch_regs all;
	struct cfi_row row;
	uint64_t dex_pc;

	if (!mm || !(art_module_flags(u->ms, mm) & ART_MOD_RUNTIME) ||
	    !(t = modules_cfi(u->ms, mm)))
		return 0;
	if (cfi_row_find(t, lookup - mm->bias, &row) < 0)
		return 0;
	if (from_cursor)
		cursor_regs_all(u, c, &all);
	if (cfi_row_dex_pc(&row, from_cursor ? &all : r, &mem, &dex_pc) < 0)
		return 0;
	*sp = perch_regs_sp(u->arch, from_cursor ? &all : r);
	return u->arch->e_machine == EM_AARCH64 ? dex_pc & ((1ULL << 56) - 1) : dex_pc;
}

/* Is @addr in an executable mapping? (A frame-pointer chain that leaves code is garbage.)
 * Maps read before the snapshot may lack a library mapped since (a launched program's libc). */
static int is_code(struct unwinder *u, uint64_t addr)
{
	const struct modules_map *mm = modules_find_fresh(u->ms, addr, u->snap->time_ns);

	return mm && (mm->prot & PROC_MAPS_PROT_EXEC);
}

/* Registers of the cursor's current frame, for the frame-pointer fallback. */
static void cursor_regs(struct unwinder *u, unw_cursor_t *c, struct perch_regs *r)
{
	const struct perch_arch *a = u->arch;
	unw_word_t v;

	memset(r, 0, sizeof(*r));
	cursor_pc(u, c, r);
	if (unw_get_reg(c, a->dw_sp, &v) == 0) {
		r->r[a->dw_sp] = v;
		r->valid |= 1ULL << a->dw_sp;
	}
	if (unw_get_reg(c, a->dw_fp, &v) == 0) {
		r->r[a->dw_fp] = v;
		r->valid |= 1ULL << a->dw_fp;
	}
}

/* State of one walk between its steps. */
struct walk {
	unw_cursor_t c;
	int cursor_ok;
	int fresh; /* the cursor has not stepped since its init */
	/* exact: the current frame's pc is not a return address (the first frame, or one a
	 * signal interrupted); own_only: perch's own CFI steps the frames, libunwind only
	 * those it has no CFI for (the vDSO, until perch's CFI covers the frame again). perch's
	 * evaluator with its row memo takes about a third of libunwind's time per 30-frame
	 * stack (5.8 against 16.8 us measured), with the same frames (--verify), and it reads
	 * PAC-signed aarch64 CFI that libunwind 1.6.2 cannot. */
	int exact, own_only;
	uint64_t prev_sp;
};

/* The current frame's registers, for the fallbacks: all the snapshot (or the last fallback)
 * knew while the cursor has not stepped, else pc, sp, fp; for JIT code every register the
 * cursor knows (the callers need the callee-saved ones). Also notes the frame's DEX PC
 * marker. Sets *@in_jit. */
static void frame_regs(struct unwinder *u, struct walk *w, const uint64_t *pcs, int n,
		       struct perch_regs *r, int *in_jit)
{
	*in_jit = 0;
	if (w->cursor_ok && !w->fresh)
		cursor_regs(u, &w->c, r);
	else
		*r = u->cur;
	if (u->jit_cfi) {
		/* the pc as a lookup address (a return address points after its call) */
		int cur_exact = w->cursor_ok ? w->fresh && w->exact : w->exact;
		uint64_t lookup = cur_exact ? pcs[n - 1] : pcs[n - 1] - 1;

		/* every frame's SP (ART's quick frames are placed by it), a marker's own below */
		u->dex_sps[n - 1] = perch_regs_sp(u->arch, r);
		u->dex_pcs[n - 1] = frame_dex_pc(u, &w->c, w->cursor_ok && !w->fresh, r, lookup,
						 &u->dex_sps[n - 1]);
		/* JIT code has no module for libunwind: perch's CFI steps it */
		*in_jit = jit_cfi(u, lookup) != NULL;
		if (*in_jit && w->cursor_ok && !w->fresh)
			cursor_regs_all(u, &w->c, r);
	}
}

/* One libunwind step where it has CFI. 1 with the caller's *@ip, *@sp; 0 at the outermost
 * frame; -1 when libunwind cannot step this frame (let perch's CFI or the frame pointers). */
static int libunwind_step(struct unwinder *u, struct walk *w, uint64_t cur_pc, uint64_t *ip,
			  uint64_t *sp, int *sigframe)
{
	unw_proc_info_t pi;
	unw_word_t v_ip, v_sp;
	int have_pi;

	/* libunwind steps only frames it has CFI for: without, it guesses (x86_64: an rbp
	 * chain that moves the CFA by 16 bytes a frame whatever the frame's size, so the next
	 * frame with CFI starts from a wrong SP; aarch64: LR), and perch's own frame pointer
	 * step does that right (libunwind's x86_64 unw_get_proc_info() succeeds without CFI,
	 * with a zeroed record: format UNW_INFO_FORMAT_DYNAMIC, which perch's accessors never
	 * give). With a link register, the caller of a leaf has the same SP; the current
	 * function's range tells that from a stale LR. */
	if (unw_get_proc_info(&w->c, &pi) < 0 || pi.format == UNW_INFO_FORMAT_DYNAMIC)
		return -1;
	have_pi = pi.end_ip > pi.start_ip;
	*sigframe = unw_is_signal_frame(&w->c) > 0;
	if (unw_step(&w->c) <= 0 || unw_get_reg(&w->c, UNW_REG_IP, &v_ip) < 0 ||
	    unw_get_reg(&w->c, UNW_REG_SP, &v_sp) < 0)
		return -1; /* 1.6.2 also ends on CFI it cannot read (aarch64 PAC): perch's may */
	*ip = v_ip & ~u->snap->pac_mask;
	*sp = v_sp;
	if (*ip == 0)
		return 0;
	/* a frame must move up the stack (equal SP only for a leaf's caller, which is another
	 * function): a step that does not is libunwind guessing (its aarch64 fallback returns
	 * LR) */
	if (*sp > w->prev_sp || (*sp == w->prev_sp && *ip != cur_pc &&
				 !(have_pi && *ip >= pi.start_ip && *ip < pi.end_ip)))
		return 1;
	return -1;
}

/* The caller from the link register of a frame without CFI whose pc is exact (the first frame,
 * or one a signal interrupted): a leaf without a frame record (aarch64
 * -momit-leaf-frame-pointer) or a function stopped in its prologue has its caller only there.
 * Taken when LR is code, is not the pc, and differs from the return address in the frame record
 * @fp_next (NULL: none), which otherwise gives the same caller with the right SP. libunwind
 * 1.6.2's aarch64 fallback guessed the same way. 0 with @next, or -1. */
static int lr_step(struct unwinder *u, const struct perch_regs *r, const struct perch_regs *fp_next,
		   struct perch_regs *next)
{
	const struct perch_arch *a = u->arch;
	uint64_t lr;

	if (a->dw_lr < 0 || !(r->valid & (1ULL << a->dw_lr)))
		return -1;
	lr = r->r[a->dw_lr] & ~u->snap->pac_mask;
	if (lr == 0 || lr == perch_regs_pc(a, r) ||
	    (fp_next && lr == (perch_regs_pc(a, fp_next) & ~u->snap->pac_mask)) || !is_code(u, lr))
		return -1;
	*next = *r;
	next->r[a->dw_pc] = lr;
	next->valid &= ~(1ULL << a->dw_lr); /* used: the caller's own LR is not known */
	return 0;
}

/* Is the frame at @r in a file libunwind could have CFI for (acc_find_proc_info())? Not JIT
 * code in anonymous memory: trying it there costs a cursor init for nothing. */
static int in_elf(struct unwinder *u, const struct perch_regs *r, int exact)
{
	uint64_t pc = perch_regs_pc(u->arch, r);
	const struct modules_map *mm = modules_find(u->ms, exact ? pc : pc - 1);

	return mm && mm->mod && modules_elf(u->ms, mm);
}

/* One step with perch's own CFI, else the frame pointers, from @r into @next. 0, 1 for a step
 * without CFI (frame pointer, link register), -ENOENT at the outermost frame, -EAGAIN to retry
 * the frame with libunwind, or a stop reason as -(UNWIND_STOP_* + 1000). */
#define STOP_RET(reason) (-(1000 + (int)(reason)))
/* Does the code before return address @ra end in a call: a direct call (E8 rel32) (2, its
 * target in @target), an indirect call (FF /2, through a register or memory: any target) (1),
 * or no call (0)? x86_64 and i386 encodings; @word is the address size. */
static int call_before(struct unwinder *u, uint64_t ra, unsigned int word, uint64_t *target)
{
	uint8_t b[8];
	int32_t rel;

	if (ra < sizeof(b) || mem_read(u, ra - sizeof(b), b, sizeof(b)) < 0)
		return 0;
	memcpy(&rel, b + 4, sizeof(rel)); /* E8 at ra - 5, rel32 after it */
	if (b[3] == 0xe8) {
		*target = (ra + (uint64_t)(int64_t)rel) & (word == 4 ? 0xffffffffULL : ~0ULL);
		return 2;
	}
	/* FF with a ModRM whose reg field is 2, as long as the bytes left to @ra */
	for (int at = 0; at < 7; at++) {
		uint8_t modrm = b[at + 1];
		int mod = modrm >> 6, rm = modrm & 7, len = 2;

		if (b[at] != 0xff || (modrm & 0x38) != 0x10)
			continue;
		if (mod != 3 && rm == 4)
			len++; /* SIB */
		if (mod == 1)
			len += 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			len += 4;
		else if (mod == 0 && rm == 4 && (b[at + 2] & 7) == 5)
			len += 4; /* SIB without a base: disp32 */
		if (at + len == (int)sizeof(b))
			return 1;
	}
	return 0;
}

/* The frame pointer of a frame that needs it when it is not known: a thread read from /proc
 * without a stop has only its SP and PC (and the system call's arguments), and a libc wrapper
 * that does not touch rbp leaves its caller's frame pointer in the register, where no stack
 * word holds it. On x86_64 and i386 it can be found instead: the word where the frame's return
 * address is (CFA = fp + off by the frame's CFI, fp + 2 words without CFI) must hold a return
 * address right after a call of this very function. With CFI that is a direct call to its
 * FDE's start, to a PLT stub whose GOT slot holds it or to code that tail-jumps to it; without, a
 * direct call to the nearest start at or below the pc (a stale return address of an earlier call
 * goes to another function), and the saved frame pointer under it must continue the chain (0 or
 * higher up the stack). The lowest such place above SP, else (a thread's start routine, a callback)
 * the lowest after an indirect call. 0 with the register set in @r, or -ENOENT. */
#define FP_RECOVER_MAX	  (64 * 1024) /* bytes of stack above SP searched */
#define FP_RECOVER_FN_MAX (1 << 20)   /* no function is longer than this (no CFI: a guess) */

struct fp_search {
	uint64_t entry; /* the function's start by its CFI, or 0: unknown */
	uint64_t pc;	/* the pc looked up (pc - 1 after a call) */
	uint64_t off;	/* CFA - fp */
	uint64_t best_target, direct, indirect;
};

/* Is @ra a signal trampoline's first byte (its FDE a signal frame's, 'S')? A handler's
 * return address: the kernel called it, no call instruction did. */
static int is_sigreturn(struct unwinder *u, uint64_t ra)
{
	const struct modules_map *mm = modules_find_fresh(u->ms, ra, u->snap->time_ns);
	const struct cfi_table *t = mm ? modules_cfi(u->ms, mm) : NULL;
	struct cfi_row row;

	return t && cfi_row_find(t, ra - mm->bias, &row) == 0 && row.signal_frame;
}

/* Is @target an x86_64 PLT stub (jmp *slot(%rip), after an endbr64 and a bnd prefix where
 * the build has them) whose GOT slot holds @entry in the live process? A shared library
 * calls its own exported functions through its PLT. */
static int plt_to(struct unwinder *u, uint64_t target, uint64_t entry)
{
	uint8_t b[16];
	size_t at = 0;
	int32_t disp;
	uint64_t val = 0;

	if (u->arch->e_machine != EM_X86_64 || !u->pid || mem_read(u, target, b, sizeof(b)) < 0)
		return 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		at = 4; /* endbr64 */
	if (b[at] == 0xf2)
		at++; /* bnd */
	if (b[at] != 0xff || b[at + 1] != 0x25)
		return 0;
	memcpy(&disp, b + at + 2, sizeof(disp));
	return read_live(u, target + at + 6 + (uint64_t)(int64_t)disp, &val, sizeof(val)) == 0 &&
	       val == entry;
}

/* Does the code at @target jump to @entry within its first bytes (jmp rel32 or rel8): a
 * function that ends in a tail call of the one whose frame is looked for (art's
 * ConditionVariable::Wait is push, mov, pop, jmp WaitHoldingLocks)? x86 encodings. */
#define TAIL_JUMP_SCAN 32

static int jumps_to(struct unwinder *u, uint64_t target, uint64_t entry)
{
	uint8_t b[TAIL_JUMP_SCAN];
	int32_t rel;

	if (mem_read(u, target, b, sizeof(b)) < 0)
		return 0;
	for (size_t i = 0; i + 2 <= sizeof(b); i++) {
		if (b[i] == 0xeb && target + i + 2 + (uint64_t)(int64_t)(int8_t)b[i + 1] == entry)
			return 1;
		if (b[i] != 0xe9 || i + 5 > sizeof(b))
			continue;
		memcpy(&rel, b + i + 1, sizeof(rel));
		if (target + i + 5 + (uint64_t)(int64_t)rel == entry)
			return 1;
	}
	return 0;
}

static void fp_candidate(struct unwinder *u, struct fp_search *f, uint64_t x, unsigned int word)
{
	uint64_t ra = 0, saved = 0, target = 0;
	int call;

	if (mem_read(u, x + f->off - word, &ra, word) < 0 || !is_code(u, ra))
		return;
	if (!f->entry && (mem_read(u, x, &saved, word) < 0 || (saved && saved <= x)))
		return; /* without CFI the saved frame pointer must continue the chain */
	call = call_before(u, ra, word, &target);
	if (!call && is_sigreturn(u, ra)) {
		call = 2; /* a signal handler's frame: as good as a direct call of it */
		target = f->entry ? f->entry : f->pc;
	}
	if (call == 1 && !f->indirect)
		f->indirect = x;
	if (call != 2)
		return;
	if (f->entry
		? target == f->entry || plt_to(u, target, f->entry) || jumps_to(u, target, f->entry)
		: target <= f->pc && f->pc - target < FP_RECOVER_FN_MAX &&
		      target > f->best_target) {
		f->best_target = target;
		f->direct = x;
	}
}

static int recover_fp(struct unwinder *u, struct perch_regs *r, int exact)
{
	const struct perch_arch *a = u->arch;
	const struct unwind_snapshot *s = u->snap;
	uint64_t sp = perch_regs_sp(a, r), end;
	unsigned int word = a->e_machine == EM_386 ? 4 : 8;
	struct fp_search f = {.pc = perch_regs_pc(a, r) - (exact ? 0 : 1), .off = 2 * word};
	const struct modules_map *mm;
	const struct cfi_table *t;
	struct cfi_row row;

	if ((a->e_machine != EM_X86_64 && a->e_machine != EM_386) ||
	    (r->valid & (1ULL << a->dw_fp)) || !(r->valid & (1ULL << a->dw_sp)))
		return -ENOENT;
	mm = modules_find_fresh(u->ms, f.pc, s->time_ns);
	t = mm ? modules_cfi(u->ms, mm) : NULL;
	if (t && cfi_row_find(t, f.pc - mm->bias, &row) == 0) {
		if (row.cfa_kind != CFI_CFA_REG_OFF || row.cfa_reg != a->dw_fp ||
		    row.cfa_off < word)
			return -ENOENT;
		f.entry = row.fde_start + mm->bias;
		f.off = (uint64_t)row.cfa_off;
	}
	end = s->stack_addr + s->stack_len;
	if (end > sp + FP_RECOVER_MAX)
		end = sp + FP_RECOVER_MAX;
	for (uint64_t x = (sp + word - 1) & ~(uint64_t)(word - 1); x + f.off <= end; x += word) {
		fp_candidate(u, &f, x, word);
		if (f.direct && f.entry)
			break; /* with CFI the lowest direct call of the function is the one */
	}
	if (!f.direct && !f.indirect)
		return -ENOENT;
	r->r[a->dw_fp] = f.direct ? f.direct : f.indirect;
	r->valid |= 1ULL << a->dw_fp;
	return 0;
}

static int fallback_step(struct unwinder *u, struct walk *w, struct perch_regs *r,
			 struct perch_regs *next)
{
	const struct perch_arch *a = u->arch;
	struct perch_mem mem = {perch_mem_read, u};
	unsigned int out_flags;
	int ret, fret, exact;

	if (w->cursor_ok)
		w->exact =
		    w->fresh && w->exact; /* a frame libunwind stepped to has a return address */
	exact = w->exact;
	ret = own_cfi_step(u, r, exact, next, &out_flags);
	if (ret == -EINVAL && recover_fp(u, r, exact) == 0)
		ret = own_cfi_step(u, r, exact, next, &out_flags);
	if (ret == -ENOENT)
		return -ENOENT;
	if (ret == -ENODATA && w->own_only && u->libunwind && in_elf(u, r, exact)) {
		/* perch has no CFI for this frame (e.g. the vDSO): libunwind may */
		w->own_only = 0;
		w->cursor_ok = unw_init_remote(&w->c, u->as, u) == 0;
		w->fresh = 1;
		if (w->cursor_ok)
			return -EAGAIN;
	}
	/* a frame no CFI covers (JIT code, stepped by its frame pointer) does not make
	 * libunwind step the next ones: perch's CFI tries each first */
	w->own_only = ret == 0 || ret == -ENODATA;
	w->exact = ret == 0 && (out_flags & CFI_PC_EXACT);
	if (ret == 0)
		return perch_regs_pc(a, next) & ~u->snap->pac_mask ? 0 : -ENOENT; /* RA 0: root */
	/* no CFI, and a snapshot read from /proc (no frame pointer in it from the start): the
	 * frame-pointer walk needs the register. (A chain that loses it on the way ends there:
	 * a guess would take a stale word for the next frame.) */
	if (ret == -ENODATA && !(u->snap->regs.valid & (1ULL << a->dw_fp)))
		recover_fp(u, r, exact);
	fret = a->fp_step(r, &mem, next);
	if (exact && ret == -ENODATA && a->dw_lr >= 0) {
		struct perch_regs fp_next = *next;

		if (lr_step(u, r, fret == 0 ? &fp_next : NULL, next) == 0)
			return 1;
		*next = fp_next;
	}
	if (fret < 0) {
		if (ret != -ENODATA)
			return STOP_RET(UNWIND_STOP_BAD_CFI);
		return STOP_RET(fret == -EFAULT ? UNWIND_STOP_MEMORY : UNWIND_STOP_NO_INFO);
	}
	if (a->dw_lr >= 0)
		next->r[a->dw_lr] = perch_regs_pc(a, next);
	return 1;
}

/* ---- Go's stack switches ----
 * Go runs C code (cgo) and its own runtime on the thread's system stack (g0) and goroutines on
 * stacks of their own; the switches between them are in assembly whose CFI cannot say where
 * the other stack is. Go's traceback (runtime/traceback.go) and gdb follow them from the
 * runtime's structures; perch does the same for the two places a stack of a cgo program
 * crosses, tried only where the ordinary step failed. */

/* C code called through runtime.asmcgocall returns to it on the system stack, where it saved
 * the goroutine's g and how deep the goroutine's stack was (arch.h go_cgo_return): the
 * caller is asmcgocall's caller on the goroutine's stack (runtime.cgocall), whose return
 * address is the word at the goroutine's SP. rbp is callee-saved: the C code kept Go's. */
static int go_cgo_step(struct unwinder *u, const struct perch_regs *r, struct perch_regs *next)
{
	const struct perch_arch *a = u->arch;
	uint64_t pc = perch_regs_pc(a, r), sp = perch_regs_sp(a, r), g = 0, hi = 0, depth = 0;
	uint64_t ra = 0;
	uint8_t code[16];
	int g_off, hi_off, depth_off;

	if (!a->go_cgo_return || mem_read(u, pc, code, sizeof(code)) < 0 ||
	    a->go_cgo_return(code, sizeof(code), &g_off, &hi_off, &depth_off) < 0 ||
	    mem_read(u, sp + (uint64_t)g_off, &g, 8) < 0 ||
	    mem_read(u, sp + (uint64_t)depth_off, &depth, 8) < 0 ||
	    mem_read(u, g + (uint64_t)hi_off, &hi, 8) < 0 || depth > hi ||
	    mem_read(u, hi - depth, &ra, 8) < 0 || !is_code(u, ra))
		return -1;
	*next = *r;
	next->r[a->dw_pc] = ra;
	next->r[a->dw_sp] = hi - depth + 8;
	return 0;
}

/* A return address at the very first byte of a function: Go's scheduler saves such a pc for a
 * goroutine that switched to the system stack (gobuf.pc = runtime.systemstack_switch, which
 * runtime.cgocallback pushes as the return address of the goroutine's frames above a
 * callback from C). pc - 1 is then in the function before it; the function's own CFI at its
 * entry steps the frame, as gdb's frameless step does. 1 with @next, else -1. */
static int entry_step(struct unwinder *u, const struct perch_regs *r, struct perch_regs *next)
{
	uint64_t pc = perch_regs_pc(u->arch, r);
	const struct modules_map *mm = modules_find_fresh(u->ms, pc, u->snap->time_ns);
	const struct cfi_table *t = mm ? modules_cfi(u->ms, mm) : NULL;
	unsigned int flags;
	struct cfi_row row;

	if (!t || cfi_row_find(t, pc - mm->bias, &row) < 0 || row.fde_start != pc - mm->bias ||
	    own_cfi_step(u, r, 1, next, &flags) != 0 || !is_code(u, perch_regs_pc(u->arch, next)))
		return -1;
	return 1;
}

/* x86_64: a frame stopped at its exact pc in code without CFI (hand-written assembly: glibc's
 * clone3 just after its system call, in a gap its CFI leaves) whose frame pointer chain gives
 * nothing: when the word at SP is a return address right after a call, the function pushed
 * nothing yet and that is its caller, as gdb's frameless step assumes. 3 with @next, or -1. */
static int leaf_step(struct unwinder *u, const struct perch_regs *r, struct perch_regs *next)
{
	const struct perch_arch *a = u->arch;
	uint64_t sp = perch_regs_sp(a, r), ra = 0, target;

	if (a->e_machine != EM_X86_64 || mem_read(u, sp, &ra, 8) < 0 || !is_code(u, ra) ||
	    !call_before(u, ra, 8, &target))
		return -1;
	*next = *r;
	next->r[a->dw_pc] = ra;
	next->r[a->dw_sp] = sp + 8;
	return 3;
}

/* After the ordinary step of frame @n - 1 (registers @r, @exact: its pc is not a return
 * address) failed: a frameless leaf without CFI (3, leaf_step()), or Go's switches. 0 (the stack
 * switched: @next is the caller's frame on the other stack), 1 (stepped as a function entry: frame
 * @n - 1 is named by its own pc), 2 (a signal trampoline without CFI, Go's runtime.sigreturn: @next
 * is the interrupted frame, on the goroutine's or g0's stack where the handler ran on gsignal's),
 * or -1. */
static int go_step(struct unwinder *u, const struct perch_regs *r, int exact,
		   struct perch_regs *next)
{
	const struct perch_arch *a = u->arch;
	struct perch_mem mem = {perch_mem_read, u};

	if (exact)
		return leaf_step(u, r, next);
	if (a->sigreturn_regs &&
	    a->sigreturn_regs(&mem, perch_regs_pc(a, r), perch_regs_sp(a, r), next) == 0 &&
	    is_code(u, perch_regs_pc(a, next)))
		return 2;
	if (go_cgo_step(u, r, next) == 0)
		return 0;
	return entry_step(u, r, next);
}

static void frames_prepare(struct unwinder *u, int max)
{
	if ((size_t)max > u->frames_cap) {
		u->dex_pcs = xrealloc(u->dex_pcs, (size_t)max * sizeof(*u->dex_pcs));
		u->dex_sps = xrealloc(u->dex_sps, (size_t)max * sizeof(*u->dex_sps));
		u->exact = xrealloc(u->exact, (size_t)max * sizeof(*u->exact));
		u->frames_cap = (size_t)max;
	}
	memset(u->dex_pcs, 0, (size_t)max * sizeof(*u->dex_pcs));
	memset(u->dex_sps, 0, (size_t)max * sizeof(*u->dex_sps));
	memset(u->exact, 0, (size_t)max * sizeof(*u->exact));
}

int unwinder_unwind(struct unwinder *u, const struct unwind_snapshot *snap, uint64_t *pcs, int max,
		    struct unwind_result *res)
{
	const struct perch_arch *a = u->arch;
	struct walk w = {.fresh = 1, .exact = 1, .own_only = 1};
	int n = 0;

	memset(res, 0, sizeof(*res));
	if (max <= 0)
		return 0;
	if (u->generation != u->ms->generation)
		unwinder_flush(u);
	u->snap = snap;
	u->cur = snap->regs;
	u->page_ok = 0;
	frames_prepare(u, max);
	u->exact[n] = 1;
	pcs[n++] = perch_regs_pc(a, &snap->regs);
	w.prev_sp = perch_regs_sp(a, &snap->regs);

	for (;;) {
		struct perch_regs r, next;
		uint64_t ip = 0, sp = 0, real;
		int ret, in_jit, by_fp = 0, by_unw, sigframe = 0, bad = UNWIND_STOP_NONE;
		int cur_exact = w.cursor_ok ? w.fresh && w.exact : w.exact;

		frame_regs(u, &w, pcs, n, &r, &in_jit);
		ret = w.cursor_ok && !in_jit
			  ? libunwind_step(u, &w, pcs[n - 1], &ip, &sp, &sigframe)
			  : -1;
		by_unw = ret > 0;
		if (ret == 0) {
			res->flags |= UNWIND_AT_ROOT;
			break;
		}
		if (ret < 0) {
			/* libunwind could not: one step with perch's own CFI evaluator, else one
			 * frame-pointer step. At a real thread root the CFI says so (return
			 * address undefined) */
			ret = fallback_step(u, &w, &r, &next);
			if (ret == -EAGAIN)
				continue;
			if (ret == -ENOENT) {
				res->flags |= UNWIND_AT_ROOT;
				break;
			}
			if (ret < 0)
				bad = -ret - 1000;
			by_fp = ret == 1;
			sigframe = ret >= 0 && w.exact; /* the row was a signal frame's ('S') */
			ip = perch_regs_pc(a, &next) & ~snap->pac_mask;
			sp = perch_regs_sp(a, &next);
			/* equal SP only for the caller of a leaf (link register), never the same
			 * pc */
			if (!bad && (sp < w.prev_sp || (sp == w.prev_sp && ip == pcs[n - 1])))
				bad = UNWIND_STOP_STACK;
		}
		/* a return address the runtime replaced (ART's tracing exit): the real one, and
		 * the walk starts afresh from there with the registers it has */
		real =
		    u->ret_fn && a->e_machine == EM_X86_64 ? u->ret_fn(u->ret_arg, sp - 8, ip) : ip;
		if (real != ip) {
			if (by_unw)
				cursor_regs_all(u, &w.c, &next);
			ip = real;
			next.r[a->dw_sp] = sp;
			by_unw = by_fp = 0;
		}
		/* a return address outside executable code is garbage (a frame pointer chain
		 * through code that does not keep one), not a frame */
		if (!bad && !is_code(u, ip))
			bad = UNWIND_STOP_NOT_CODE;
		if (bad && (ret = go_step(u, &r, cur_exact, &next)) >= 0) {
			/* Go's stack switch (or a function entry): perch's CFI steps on */
			if (ret == 1 || ret == 2)
				u->exact[n - 1] = 1;
			by_unw = by_fp = 0;
			sigframe = ret == 2;
			w.own_only = 1;
			w.exact = ret == 2;
			ip = perch_regs_pc(a, &next);
			sp = perch_regs_sp(a, &next);
			bad = UNWIND_STOP_NONE;
		}
		if (bad) {
			res->stop = (enum unwind_stop)bad;
			break;
		}
		if (n == max) {
			res->flags |= UNWIND_TRUNCATED;
			break;
		}
		/* a signal trampoline's pc is where the handler returns to, the first byte of
		 * the trampoline, and the frame it interrupted was stopped at its pc: neither
		 * follows a call (gdb's get_frame_address_in_block() does the same) */
		if (sigframe)
			u->exact[n - 1] = u->exact[n] = 1;
		pcs[n++] = ip;
		w.prev_sp = sp;
		if (by_fp) {
			res->flags |= UNWIND_FP_USED;
			res->fp_frames++;
		}
		if (by_unw) {
			w.fresh = 0; /* the cursor goes on */
			continue;
		}
		next.r[a->dw_pc] = ip;
		u->cur = next;
		w.cursor_ok = !w.own_only && u->libunwind && unw_init_remote(&w.c, u->as, u) == 0;
		w.fresh = 1;
	}
	if (res->stop != UNWIND_STOP_NONE)
		res->flags |= UNWIND_STOPPED_EARLY;
	u->snap = NULL;
	return n;
}
