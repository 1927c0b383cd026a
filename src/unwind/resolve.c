/* Snapshot -> unwound and symbolized stack of profile locations. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/arch.h"
#include "perch/art/art-thread.h"
#include "perch/art/art.h"
#include "perch/art/dex.h"
#include "perch/art/mapkind.h"
#include "perch/base/log.h"
#include "perch/base/monotime.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/proc/proc-maps.h"
#include "perch/profile/profile.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/module.h"
#include "perch/symbols/perfmap.h"
#include "perch/symbols/symbolize.h"
#include "perch/unwind/resolve.h"
#include "perch/unwind/tailcall.h"
#include "perch/unwind/unwind.h"

/* Locations of one stack of @frames unwound frames: a Java frame after each interpreter frame,
 * and tail-call frames between them. */
#define RESOLVE_MAX_LOCS(frames) (4 * (frames))
/* resolver_set_max_frames(r, 0): as many frames as the stack copy can hold, each return
 * address taking at least one word of it */
#define RESOLVE_WORD 8

struct resolver {
	pid_t pid;
	const struct perch_arch *arch;
	struct profile *p;
	struct symbolizer *sym;
	struct modules *ms;
	struct unwinder *u;
	struct resolve_stats st;
	/* pcs and locations for stacks of up to @cap frames (grown by frames_room()), with room
	 * for a Java frame after each interpreter frame, and for a pseudo-frame at each end
	 * ("[truncated]", resolver_add_leaf()) */
	int cap, max_locs; /* max_locs: RESOLVE_MAX_LOCS(cap) */
	uint64_t *pcs;	   /* 2 * cap */
	uint8_t *is_dex;   /* 2 * cap: pcs[i] is a dex pc (an interpreted frame) */
	uint8_t *exact;	   /* 2 * cap: pcs[i] is no return address: named as is */
	uint64_t *sps;	   /* 2 * cap: each frame's SP (when ART is known) */
	uint32_t *locs;	   /* max_locs + 2 */
	/* the last stack with its tail-call frames (tailcall.h) and, when cut at the frame
	 * limit, its "[truncated]" frame: locations and their pcs (max_locs + 1) */
	uint32_t *out_locs;
	uint64_t *out_pcs;
	int nr_out;
	struct unwind_result last_res; /* how the last unwind ended */
	int last_at_root;
	struct tailcall *tc;
	unsigned int tc_generation;	 /* of r->ms when the tail-call cache was last valid */
	uint8_t *art_kind;		 /* 2 * cap: art.h ART_FRAME_* of each location */
	uint8_t *art_hide;		 /* 2 * cap */
	int show_art_frames;		 /* keep ART's runtime frames between Java frames */
	int max_frames;			 /* resolver_set_max_frames(); 0: no limit */
	uint32_t truncated_loc;		 /* location + 1 of the "[truncated]" pseudo-frame */
	struct art_proc *art;		 /* ART's JIT and dex lists (and GDB JIT interfaces) */
	uint32_t jit_module, dex_module; /* string id + 1 of "[jit]", "[dex]" */
	uint32_t pseudo_module;	 /* string id + 1 of the pseudo-module of perch's own frames */
	struct perfmap *perfmap; /* /tmp/perf-PID.map of other JITs (Node, JVM agents, ...) */
	uint32_t perfmap_module; /* string id + 1 of "[perf-map]" */
	int nr_pcs;
	uint64_t snap_ns; /* time of the snapshot being resolved */
	pid_t snap_tid;	  /* and its thread */
	/* modules (struct module pointers) already unwound through / symbolized in: a call that
	 * meets a new one paid its loading (resolve_stats) */
	struct u64map seen_unwind, seen_sym;
};

/* Is @key new in @m (and now recorded)? */
static int first_use(struct u64map *m, const void *key)
{
	size_t slot;

	if (!key || u64map_find(m, (uint64_t)(uintptr_t)key, &slot) != UINT32_MAX)
		return 0;
	u64map_set(m, slot, (uint64_t)(uintptr_t)key, 1);
	return 1;
}

/* Add @ns of a call to the per-sample figure @ns_sample, or to the loading one when the call
 * loaded something (@loaded) or re-read the maps (their count moved from @reloads0). */
static void account(struct resolver *r, uint64_t ns, int loaded, unsigned long long reloads0,
		    uint64_t *ns_sample, uint64_t *ns_load)
{
	if (loaded || r->ms->reloads != reloads0) {
		*ns_load += ns;
		r->st.loads++;
	} else {
		*ns_sample += ns;
	}
}

/* JIT code: executable, and no ELF file behind it (a memfd or anonymous JIT cache). */
static int maybe_jit(struct resolver *r, const struct modules_map *mm)
{
	return mm && (mm->prot & PROC_MAPS_PROT_EXEC) && art_proc_active(r->art) &&
	       !(mm->mod && modules_elf(r->ms, mm));
}

/* The unwinder's CFI source for JIT code (unwind.h). */
static const struct cfi_table *jit_cfi(void *arg, uint64_t pc, uint64_t time_ns)
{
	struct resolver *r = arg;
	const struct cfi_table *cfi = NULL;
	struct art_jit_sym sym;

	if (!maybe_jit(r, modules_find(r->ms, pc)) ||
	    art_proc_jit_find(r->art, pc, time_ns, &sym, &cfi) < 0)
		return NULL;
	return cfi;
}

static const struct modules_map *find_map(struct resolver *r, uint64_t addr);

/* tailcall.h's view of the process: the ELF module holding @addr and its bias. */
static int tail_locate(void *arg, uint64_t addr, const struct elffile **ef, uint64_t *bias)
{
	struct resolver *r = arg;
	const struct modules_map *mm = find_map(r, addr);
	struct elffile *e = mm ? modules_elf(r->ms, mm) : NULL;

	if (!e)
		return -ENOENT;
	*ef = e;
	*bias = mm->bias;
	return 0;
}

static void frames_room(struct resolver *r, int frames);

/* unwind_ret_fn: ART's method tracing (art.h) */
static uint64_t art_return(void *arg, uint64_t slot, uint64_t ip)
{
	struct resolver *r = arg;

	/* ART's instrumentation exit routine (art_quick_instrumentation_exit) is code of its
	 * runtime */
	if (!r->snap_tid || !art_proc_active(r->art) ||
	    !(art_module_flags(r->ms, find_map(r, ip)) & ART_MOD_RUNTIME))
		return ip;
	return art_proc_return(r->art, r->snap_tid, slot, ip);
}

struct resolver *resolver_new(pid_t pid, const struct perch_arch *arch, struct profile *p,
			      struct symbolizer *sym)
{
	struct resolver *r = xcalloc(1, sizeof(*r));

	r->pid = pid;
	r->arch = arch;
	r->p = p;
	r->sym = sym;
	r->ms = modules_new(pid);
	if (modules_reload(r->ms) < 0)
		log_debug("cannot read the maps of %d yet", pid);
	r->u = unwinder_new(pid, arch, r->ms);
	if (!r->u)
		die("cannot create a libunwind address space");
	r->art = art_proc_new(pid);
	r->perfmap = perfmap_new(pid);
	unwinder_set_jit(r->u, jit_cfi, r);
	unwinder_set_ret(r->u, art_return, r);
	r->tc = tailcall_new(sym, tail_locate, r);
	r->max_frames = UNWIND_DEFAULT_FRAMES;
	frames_room(r, UNWIND_DEFAULT_FRAMES);
	return r;
}

void resolver_set_max_frames(struct resolver *r, int max)
{
	r->max_frames = max < 0 ? 1 : max;
}

/* Room for stacks of @frames unwound frames. */
static void frames_room(struct resolver *r, int frames)
{
	size_t n2;

	if (frames <= r->cap)
		return;
	r->cap = frames;
	r->max_locs = RESOLVE_MAX_LOCS(frames);
	n2 = 2 * (size_t)frames;
	r->pcs = xrealloc(r->pcs, n2 * sizeof(*r->pcs));
	r->is_dex = xrealloc(r->is_dex, n2);
	r->exact = xrealloc(r->exact, n2);
	r->sps = xrealloc(r->sps, n2 * sizeof(*r->sps));
	r->art_kind = xrealloc(r->art_kind, n2);
	r->art_hide = xrealloc(r->art_hide, n2);
	r->locs = xrealloc(r->locs, ((size_t)r->max_locs + 2) * sizeof(*r->locs));
	r->out_locs = xrealloc(r->out_locs, ((size_t)r->max_locs + 1) * sizeof(*r->out_locs));
	r->out_pcs = xrealloc(r->out_pcs, ((size_t)r->max_locs + 1) * sizeof(*r->out_pcs));
}

/* The frame limit for @snap: the one set, or what its stack copy can hold. */
static int frame_limit(const struct resolver *r, const struct unwind_snapshot *snap)
{
	size_t words = snap->stack_len / RESOLVE_WORD + 2;

	if (r->max_frames)
		return r->max_frames;
	return words > (size_t)INT32_MAX / 8 ? INT32_MAX / 8 : (int)words;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	unwinder_free(r->u);
	tailcall_free(r->tc);
	art_proc_free(r->art);
	perfmap_free(r->perfmap);
	modules_free(r->ms);
	free(r->pcs);
	free(r->is_dex);
	free(r->exact);
	free(r->sps);
	free(r->art_kind);
	free(r->art_hide);
	free(r->locs);
	free(r->out_locs);
	free(r->out_pcs);
	u64map_release(&r->seen_unwind);
	u64map_release(&r->seen_sym);
	free(r);
}

void resolver_show_art_frames(struct resolver *r, int on)
{
	r->show_art_frames = on;
}

struct art_proc *resolver_art(struct resolver *r)
{
	art_proc_locate(r->art, r->ms);
	return r->art;
}

void resolver_reload(struct resolver *r)
{
	modules_reload(r->ms);
	unwinder_flush(r->u);
	tailcall_flush(r->tc);
}

void resolver_final_maps(struct resolver *r, const char *maps_text)
{
	modules_load_maps(r->ms, proc_maps_parse(maps_text, NULL));
	r->ms->final = 1;
	unwinder_flush(r->u);
}

const struct resolve_stats *resolver_stats(struct resolver *r)
{
	r->st.reloads = r->ms->reloads;
	return &r->st;
}

const uint64_t *resolver_last_pcs(const struct resolver *r, int *n)
{
	*n = r->nr_pcs;
	return r->pcs;
}

const uint64_t *resolver_last_loc_pcs(const struct resolver *r, int *n)
{
	*n = r->nr_out;
	return r->out_pcs;
}

const struct unwind_result *resolver_last_result(const struct resolver *r, int *at_root)
{
	*at_root = r->last_at_root;
	return &r->last_res;
}

int resolve_is_root_name(const char *name)
{
	static const char *const roots[] = {
	    "_start",
	    "start_thread",
	    "clone",
	    "clone3",
	    "__clone",
	    "__clone3",
	    "__libc_start_main",
	    "__libc_start_call_main",
	    "main",
	    "thread_start",
	    "__start_thread",
	    "__start",
	};

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++)
		if (!strcmp(name, roots[i]))
			return 1;
	return 0;
}

static const struct modules_map *find_map(struct resolver *r, uint64_t addr)
{
	return modules_find_fresh(r->ms, addr, r->snap_ns);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The first time a module shows up in the profile: its build-id and where it was loaded, as
 * meta "build_id:PATH" (the writers' mappings and debug images, report --symfs) and
 * "load:PATH" (recording.h). */
static void note_module(struct resolver *r, const struct modules_map *mm, const struct elffile *ef)
{
	char hex[129], *key, *val;

	if (elffile_build_id_hex(ef, hex)[0]) {
		key = xasprintf("build_id:%s", mm->mod->path);
		profile_set_meta(r->p, key, hex);
		free(key);
	}
	key = xasprintf("load:%s", mm->mod->path);
	val = xasprintf("start=0x%llx bias=0x%llx machine=%u", (unsigned long long)mm->start,
			(unsigned long long)mm->bias, ef->machine);
	profile_set_meta(r->p, key, val);
	free(key);
	free(val);
}

static uint32_t own_module(struct resolver *r, uint32_t *id, const char *name)
{
	if (!*id)
		*id = profile_intern_str(r->p, name) + 1;
	return *id - 1;
}

/* A JIT-compiled method (art.h), or UINT32_MAX. Code addresses are reused for other methods,
 * so the location is keyed by method, not by address: module "[jit]", address = the name's
 * string id << 32 | the offset in the method. */
static uint32_t jit_location(struct resolver *r, uint64_t lookup)
{
	struct profile_frame f = {.kind = PROFILE_FRAME_JIT};
	struct art_jit_sym sym;
	uint64_t addr;
	uint32_t loc;

	if (art_proc_jit_find(r->art, lookup, r->snap_ns, &sym, NULL) < 0)
		return UINT32_MAX;
	f.module = own_module(r, &r->jit_module, "[jit]");
	f.name = profile_intern_str(r->p, sym.name);
	addr = (uint64_t)f.name << 32 | ((lookup - sym.start) & 0xffffffffu);
	loc = profile_find_location(r->p, f.module, addr);
	return loc != UINT32_MAX ? loc : profile_intern_location(r->p, f.module, addr, &f, 1);
}

/* An interpreted Java frame at @dex_pc (art.h, dex.h): module "[dex]", keyed by method and
 * line (@line_unknown: line 0, the file kept); "[dex]+0x<pc>" when the dex file is unknown. */
static uint32_t dex_location(struct resolver *r, uint64_t dex_pc, int line_unknown)
{
	struct profile_frame f = {.kind = PROFILE_FRAME_INTERP};
	struct dex_method m;
	uint64_t addr = dex_pc;
	uint32_t loc;
	char name[64];

	f.module = own_module(r, &r->dex_module, "[dex]");
	if (art_proc_dex_lookup(r->art, dex_pc, &m) == 0) {
		f.name = profile_intern_str(r->p, m.name);
		f.file = m.file[0] ? profile_intern_str(r->p, m.file) : 0;
		f.line = m.line;
		f.detail = m.signature[0] ? profile_intern_str(r->p, m.signature) : 0;
		/* bit 63 apart from raw dex pcs (user-space addresses); line 0 with bit 61: the
		 * method, its line unknown ("File.java:?" in the outputs) */
		if (line_unknown)
			f.line = 0;
		addr =
		    1ULL << 63 | (line_unknown ? 1ULL << 61 : 0) | (uint64_t)f.name << 32 | f.line;
	} else {
		snprintf(name, sizeof(name), "[dex]+0x%llx", (unsigned long long)dex_pc);
		f.name = profile_intern_str(r->p, name);
	}
	loc = profile_find_location(r->p, f.module, addr);
	return loc != UINT32_MAX ? loc : profile_intern_location(r->p, f.module, addr, &f, 1);
}

/* Put the Java frame of every interpreter frame after it (leaf first: between the
 * interpreter's native frame and its caller, as libunwindstack does); the switch
 * interpreter's current instruction comes from its ShadowFrame (art.h). Returns the new
 * count. */
static int insert_dex_frames(struct resolver *r, const struct unwind_snapshot *snap, int n)
{
	const uint64_t *dex = unwinder_dex_pcs(r->u), *sps = unwinder_dex_sps(r->u);
	const uint8_t *exact = unwinder_exact_pcs(r->u);
	struct perch_mem stack = unwind_snapshot_stack(snap);
	int extra = 0, k;

	for (int i = 0; i < n; i++)
		extra += dex[i] != 0;
	memset(r->is_dex, 0, (size_t)(n + extra));
	k = n + extra;
	for (int i = n - 1; i >= 0; i--) {
		if (dex[i]) {
			int unknown;

			r->pcs[--k] =
			    art_proc_interp_dex_pc(r->art, &stack, sps[i], dex[i], &unknown);
			r->is_dex[k] = unknown ? 2 : 1; /* 2: the method, its line unknown */
			r->sps[k] = sps[i];
		}
		r->pcs[--k] = r->pcs[i];
		r->exact[k] = exact[i];
		r->sps[k] = sps[i];
	}
	return n + extra;
}

/* JIT code named by /tmp/perf-PID.map (perfmap.h): only for pcs in executable mappings with
 * no file behind them. Keyed like jit_location(): module "[perf-map]", name << 32 | offset.
 * UINT32_MAX when the map does not name it. */
static uint32_t perfmap_location(struct resolver *r, const struct modules_map *mm, uint64_t lookup)
{
	struct profile_frame f = {.kind = PROFILE_FRAME_JIT};
	const struct perfmap_sym *sym;
	uint64_t addr;
	uint32_t loc;

	if (!mm || mm->mod || !(mm->prot & PROC_MAPS_PROT_EXEC) ||
	    !(sym = perfmap_find_at(r->perfmap, lookup, r->snap_ns)))
		return UINT32_MAX;
	f.module = own_module(r, &r->perfmap_module, "[perf-map]");
	f.name = profile_intern_str(r->p, sym->name);
	addr = (uint64_t)f.name << 32 | ((lookup - sym->start) & 0xffffffffu);
	loc = profile_find_location(r->p, f.module, addr);
	return loc != UINT32_MAX ? loc : profile_intern_location(r->p, f.module, addr, &f, 1);
}

/* The name of a frame in @mm's module at ELF vaddr @addr that no symbol names:
 * "[libfoo.so+0x1a20]" (bracketed, so that it cannot be read as a symbol plus an offset) with the
 * offset of its function's start (symbolizer_func_start()), so that a stripped function is one
 * frame, not one per pc; the pc's own offset when nothing bounds the function. */
static void unknown_name(struct resolver *r, const struct modules_map *mm, const struct elffile *ef,
			 uint64_t addr, char *buf, size_t size)
{
	uint64_t start = addr;

	if (symbolizer_func_start(r->sym, ef, addr, modules_cfi(r->ms, mm), &start) < 0)
		start = addr;
	snprintf(buf, size, "[%s+0x%llx]", base_name(mm->mod->path), (unsigned long long)start);
}

/* The profile location for one pc (@lookup is already pc - 1 for return addresses); with
 * @tail, of a tail-call frame (its frames are marked so). A tail-call frame's lookup address
 * lies inside a jump instruction, a real frame's at the start of an instruction (a leaf) or
 * inside a call: they never share a location. */
static uint32_t locate(struct resolver *r, uint64_t lookup, int tail)
{
	struct sym_frame sf[SYM_MAX_INLINE];
	struct profile_frame pf[SYM_MAX_INLINE];
	unsigned long long reloads0 = r->ms->reloads;
	uint64_t t0 = monotime_ns();
	const struct modules_map *mm = find_map(r, lookup);
	int fresh = mm && first_use(&r->seen_sym, mm->mod);
	struct elffile *ef = mm ? modules_elf(r->ms, mm) : NULL;
	uint32_t module = 0, loc;
	uint64_t addr = lookup;
	char name[512];
	int n = 0;

	if (!ef && maybe_jit(r, mm) && (loc = jit_location(r, lookup)) != UINT32_MAX)
		return loc;
	if (!ef && (loc = perfmap_location(r, mm, lookup)) != UINT32_MAX)
		return loc;
	if (ef) {
		if (!mm->mod->profile_str) {
			mm->mod->profile_str = profile_intern_str(r->p, mm->mod->path) + 1;
			note_module(r, mm, ef);
		}
		module = mm->mod->profile_str - 1;
		addr = lookup - mm->bias;
	}
	loc = profile_find_location(r->p, module, addr);
	if (loc != UINT32_MAX)
		return loc;

	if (ef) {
		int loaded0 = symbolizer_modules_loaded(r->sym);

		n = symbolizer_lookup(r->sym, ef, addr, sf, SYM_MAX_INLINE);
		account(r, monotime_ns() - t0,
			fresh || symbolizer_modules_loaded(r->sym) != loaded0, reloads0,
			&r->st.symbolize_ns, &r->st.symbolize_load_ns);
	}
	memset(pf, 0, sizeof(pf));
	for (int i = 0; i < n; i++) {
		/* oat/odex code is AOT-compiled Java (names from its MiniDebugInfo) */
		int aot = mapkind_is_aot(mapkind_classify(mm->mod->path, 1, 0, NULL));
		char jn[256];

		if (sf[i].func) {
			/* full debug info names it "void a.B.c(int)": one name per Java method */
			pf[i].name = profile_intern_str(
			    r->p, aot ? dex_java_name(sf[i].func, jn, sizeof(jn)) : sf[i].func);
		} else {
			unknown_name(r, mm, ef, addr, name, sizeof(name));
			pf[i].name = profile_intern_str(r->p, name);
		}
		pf[i].file = sf[i].file ? profile_intern_str(r->p, sf[i].file) : 0;
		pf[i].line = sf[i].line;
		pf[i].module = module;
		pf[i].inlined = (uint8_t)sf[i].inlined;
		pf[i].kind = aot ? PROFILE_FRAME_AOT : PROFILE_FRAME_NATIVE;
		pf[i].tailcall = (uint8_t) !!tail;
	}
	if (n == 0) {
		if (ef)
			unknown_name(r, mm, ef, addr, name, sizeof(name));
		else if (mm && mm->name[0])
			snprintf(name, sizeof(name), "[%s+0x%llx]", base_name(mm->name),
				 (unsigned long long)(lookup - mm->start + mm->offset));
		else
			snprintf(name, sizeof(name), "0x%llx", (unsigned long long)lookup);
		pf[0].name = profile_intern_str(r->p, name);
		pf[0].module = module;
		pf[0].kind = PROFILE_FRAME_NATIVE;
		pf[0].tailcall = (uint8_t) !!tail;
		n = 1;
	}
	return profile_intern_location(r->p, module, addr, pf, (size_t)n);
}

/* r->out_locs/out_pcs: the @n located frames of r->locs with the tail-call frames between
 * each frame and its caller (tailcall.h), as gdb shows them; never below the leaf, so they
 * get no self time. Not between Java frames: ART's frames have no DWARF call sites. */
static void add_tail_calls(struct resolver *r, int n)
{
	uint64_t f[TAILCALL_MAX];
	int k = 0;

	if (r->ms->generation != r->tc_generation) { /* mappings changed: addresses too */
		tailcall_flush(r->tc);
		r->tc_generation = r->ms->generation;
	}
	for (int i = 0; i < n; i++) {
		int dex =
		    art_proc_active(r->art) && (r->is_dex[i] || (i + 1 < n && r->is_dex[i + 1]));
		int nt = 0;

		r->out_locs[k] = r->locs[i];
		r->out_pcs[k++] = r->pcs[i];
		if (i + 1 < n && !dex && r->max_locs - k > n - i) {
			int room = r->max_locs - k - (n - i);

			nt = tailcall_frames(r->tc, r->pcs[i + 1],
					     r->exact[i] ? r->pcs[i] : r->pcs[i] - 1, f,
					     room < TAILCALL_MAX ? room : TAILCALL_MAX);
		}
		for (int j = 0; j < nt; j++) {
			r->out_locs[k] = locate(r, f[j] - 1, 1);
			r->out_pcs[k++] = f[j];
		}
	}
	r->nr_out = k;
}

static int ends_at_root(struct resolver *r, uint32_t loc)
{
	size_t n;
	const uint32_t *frames = profile_location_frames(r->p, loc, &n);

	if (!n)
		return 0;
	/* the outermost frame of the location is its last (the real function) */
	return resolve_is_root_name(profile_str(r->p, profile_frame(r->p, frames[n - 1])->name));
}

/* A location for one of perch's own frames: module "[perch]", address = the text's id. */
static uint32_t pseudo_location(struct resolver *r, const char *text)
{
	struct profile_frame f = {.kind = PROFILE_FRAME_PSEUDO};

	if (!r->pseudo_module)
		r->pseudo_module = profile_intern_str(r->p, "[perch]") + 1;
	f.name = profile_intern_str(r->p, text);
	f.module = r->pseudo_module - 1;
	return profile_intern_location(r->p, f.module, f.name, &f, 1);
}

uint32_t resolver_add_leaf(struct resolver *r, uint32_t stack, const char *text)
{
	size_t n;
	const uint32_t *locs = profile_stack(r->p, stack, &n);

	if (n > (size_t)r->max_locs)
		n = (size_t)r->max_locs;
	memmove(r->locs + 1, locs, n * sizeof(r->locs[0]));
	r->locs[0] = pseudo_location(r, text);
	return profile_intern_stack(r->p, r->locs, n + 1);
}

/* Which frames are Java (interpreted frames, JIT and AOT code) and which ART's runtime (its
 * module, and JIT trampolines to JNI): r->art_kind (art.h ART_FRAME_*). */
static void classify_art_frames(struct resolver *r, int n)
{
	for (int i = 0; i < n; i++) {
		const struct profile_frame *f;
		size_t nf;
		const uint32_t *fr = profile_location_frames(r->p, r->locs[i], &nf);

		f = nf ? profile_frame(r->p, fr[0]) : NULL;
		r->art_kind[i] = ART_FRAME_OTHER;
		if (r->is_dex[i] || (f && f->kind == PROFILE_FRAME_AOT) ||
		    (f && f->kind == PROFILE_FRAME_JIT &&
		     strcmp(profile_str(r->p, f->name), "art_jni_trampoline")))
			r->art_kind[i] = ART_FRAME_JAVA;
		else if ((f && f->kind == PROFILE_FRAME_JIT) ||
			 (art_module_flags(r->ms, find_map(r, i ? r->pcs[i] - 1 : r->pcs[i])) &
			  ART_MOD_RUNTIME))
			r->art_kind[i] = ART_FRAME_RUNTIME;
	}
}

/* A native method's Java frame: module "[dex]", "java.lang.Object.wait (Native method)". */
static uint32_t native_method_location(struct resolver *r, const char *method)
{
	struct profile_frame f = {.kind = PROFILE_FRAME_INTERP};
	char name[192];
	uint64_t addr;
	uint32_t loc;

	snprintf(name, sizeof(name), "%s (Native method)", method);
	f.module = own_module(r, &r->dex_module, "[dex]");
	f.name = profile_intern_str(r->p, name);
	addr = 1ULL << 62 | (uint64_t)f.name << 32; /* apart from dex pcs and dex lines */
	loc = profile_find_location(r->p, f.module, addr);
	return loc != UINT32_MAX ? loc : profile_intern_location(r->p, f.module, addr, &f, 1);
}

/* Make room at @j among the @n frames and put there a Java frame at location @loc: a dex pc
 * @dex (an interpreted frame's), or 0 (a native method's), its SP @sp. */
static void put_java_frame(struct resolver *r, int j, int n, uint32_t loc, uint64_t dex,
			   uint64_t sp)
{
	memmove(r->locs + j + 1, r->locs + j, (size_t)(n - j) * sizeof(r->locs[0]));
	memmove(r->pcs + j + 1, r->pcs + j, (size_t)(n - j) * sizeof(r->pcs[0]));
	memmove(r->exact + j + 1, r->exact + j, (size_t)(n - j));
	memmove(r->is_dex + j + 1, r->is_dex + j, (size_t)(n - j));
	memmove(r->art_kind + j + 1, r->art_kind + j, (size_t)(n - j));
	memmove(r->sps + j + 1, r->sps + j, (size_t)(n - j) * sizeof(r->sps[0]));
	r->locs[j] = loc;
	r->pcs[j] = dex;
	r->exact[j] = 1;
	r->is_dex[j] = dex != 0;
	r->art_kind[j] = ART_FRAME_JAVA;
	r->sps[j] = sp;
}

/* The leaf-most Java frame called from ART's runtime (a trampoline, then the runtime's or a
 * library's code of a native method): the native method ART says the thread is in, as a
 * Java frame of its own above it, when the snapshot's stack holds it (art.h). Returns the new
 * count. */
static int insert_native_method(struct resolver *r, const struct unwind_snapshot *snap, int n)
{
	struct perch_mem stack = unwind_snapshot_stack(snap);
	char method[160];
	int j = 0;

	while (j < n && r->art_kind[j] != ART_FRAME_JAVA)
		j++;
	if (j == 0 || j == n || r->art_kind[j - 1] != ART_FRAME_RUNTIME || n + 1 > 2 * r->cap ||
	    art_proc_native_method(r->art, snap->tid, snap->time_ns, &stack, method,
				   sizeof(method)) < 0)
		return n;
	put_java_frame(r, j, n, native_method_location(r, method), 0, r->sps[j]);
	return n + 1;
}

/* Does location @loc name Java method @name? */
static int names_method(struct resolver *r, uint32_t loc, const char *name)
{
	size_t nf;
	const uint32_t *fr = profile_location_frames(r->p, loc, &nf);

	return nf && !strcmp(profile_str(r->p, profile_frame(r->p, fr[0])->name), name);
}

/* Make room at @j and put there the Java frame of dex pc @insns (an address in a dex file). */
static void put_caller(struct resolver *r, int j, int n, uint64_t insns, uint64_t sp)
{
	put_java_frame(r, j, n, dex_location(r, insns, 0), insns, sp);
}

/* A method the runtime was about to interpret when it ran other Java code first (a class
 * initializer for the method whose call needed it: Glacier.<clinit> for Glacier.touch) has a
 * ShadowFrame at the top of a managed-stack fragment but no interpreter frame of its own yet;
 * ART's own dump shows it, so perch puts it where its ShadowFrame lies on the stack. Only in
 * a gap of runtime frames below a Java frame, and never when the Java frame just below or
 * above is that method (an interpreter's own ShadowFrame). Returns the new count. */
static int insert_init_callers(struct resolver *r, const struct unwind_snapshot *snap, int n)
{
	struct perch_mem stack = unwind_snapshot_stack(snap);
	struct art_shadow_frame sf[8];
	int nq = art_proc_callers(r->art, snap->tid, snap->time_ns, &stack, sf, 8);

	for (int k = 0; k < nq && n + 1 <= 2 * r->cap; k++) {
		struct dex_method m;
		uint64_t dex_pc;
		int i = 0, below = -1, java;

		for (; i < n && r->sps[i] <= sf[k].sp; i++)
			if (r->art_kind[i] == ART_FRAME_JAVA)
				below = i;
		/* above it, past runtime frames only: the Java frame of the caller */
		for (java = i; java < n && r->art_kind[java] == ART_FRAME_RUNTIME;)
			java++;
		if (i == 0 || java >= n || r->art_kind[java] != ART_FRAME_JAVA ||
		    r->art_kind[i - 1] != ART_FRAME_RUNTIME ||
		    !(dex_pc = art_proc_shadow_dex_pc(r->art, &sf[k])) ||
		    art_proc_dex_lookup(r->art, dex_pc, &m) < 0 ||
		    (below >= 0 && names_method(r, r->locs[below], m.name)) ||
		    names_method(r, r->locs[java], m.name))
			continue;
		put_caller(r, i, n++, dex_pc, sf[k].sp);
	}
	return n;
}

/* Drop the frames of ART's runtime library that sit next to Java frames (art.h, after
 * classify_art_frames()). Returns the new count; pcs and locations stay paired. */
static int hide_art_frames(struct resolver *r, int n)
{
	int k = 0;

	if (!art_hide_runtime_frames(r->art_kind, (size_t)n, r->art_hide))
		return n;
	for (int i = 0; i < n; i++) {
		if (r->art_hide[i])
			continue;
		r->locs[k] = r->locs[i];
		r->pcs[k] = r->pcs[i];
		r->exact[k] = r->exact[i];
		r->sps[k] = r->sps[i];
		r->is_dex[k++] = r->is_dex[i];
	}
	return k;
}

uint32_t resolver_stack(struct resolver *r, const struct unwind_snapshot *snap)
{
	struct unwind_result res;
	unsigned long long reloads0;
	uint64_t t0, java_ns;
	int n, loaded = 0, at_root, max;

	r->snap_ns = snap->time_ns;
	r->snap_tid = snap->tid;
	/* the JIT and dex lists: found once, re-read at most once per batch when they changed */
	art_proc_locate(r->art, r->ms);
	art_proc_update(r->art, snap->time_ns);
	reloads0 = r->ms->reloads;
	t0 = monotime_ns();
	max = frame_limit(r, snap);
	frames_room(r, max);
	n = unwinder_unwind(r->u, snap, r->pcs, max, &res);
	memcpy(r->exact, unwinder_exact_pcs(r->u), (size_t)(n > 0 ? n : 0));
	/* a frame in a module not unwound through before: its table was built in this call */
	for (int i = 0; i < n; i++) {
		const struct modules_map *mm = modules_find(r->ms, r->pcs[i]);

		if (mm && first_use(&r->seen_unwind, mm->mod))
			loaded = 1;
	}
	account(r, monotime_ns() - t0, loaded, reloads0, &r->st.unwind_ns, &r->st.unwind_load_ns);
	t0 = monotime_ns();
	if (n > 0 && art_proc_active(r->art))
		n = insert_dex_frames(r, snap, n);
	java_ns = monotime_ns() - t0;
	r->nr_pcs = n;
	r->st.stacks++;
	r->st.frames += (uint64_t)n;
	r->st.fp_frames += (uint64_t)res.fp_frames;
	if (res.flags & UNWIND_FP_USED)
		r->st.fp_used++;
	if (res.flags & UNWIND_TRUNCATED)
		r->st.truncated++;
	for (int i = 0; i < n; i++) {
		if (art_proc_active(r->art) && r->is_dex[i]) {
			t0 = monotime_ns();
			r->locs[i] = dex_location(r, r->pcs[i], r->is_dex[i] == 2);
			java_ns += monotime_ns() - t0;
			r->st.java_frames++;
		} else {
			r->locs[i] = locate(r, r->exact[i] ? r->pcs[i] : r->pcs[i] - 1, 0);
		}
	}
	/* the unwinder saw the outermost frame, or it has a root's name (a walk that ended
	 * otherwise, e.g. on frame pointers, at _start or clone) */
	at_root = n && ((res.flags & UNWIND_AT_ROOT) || ends_at_root(r, r->locs[n - 1]));
	r->last_res = res;
	r->last_at_root = at_root;
	if (at_root)
		r->st.to_root++;
	else if (res.flags & UNWIND_STOPPED_EARLY)
		r->st.stopped[res.stop]++;
	if (n && art_proc_active(r->art)) {
		t0 = monotime_ns();
		classify_art_frames(r, n);
		n = insert_native_method(r, snap, n);
		n = insert_init_callers(r, snap, n);
		if (!r->show_art_frames)
			n = hide_art_frames(r, n);
		java_ns += monotime_ns() - t0;
	}
	r->st.java_ns += java_ns;
	r->nr_pcs = n;
	add_tail_calls(r, n);
	/* a stack cut at the frame limit says so at its root end, in every output */
	if (res.flags & UNWIND_TRUNCATED) {
		if (!r->truncated_loc)
			r->truncated_loc = pseudo_location(r, "[truncated]") + 1;
		r->out_locs[r->nr_out] = r->truncated_loc - 1;
		r->out_pcs[r->nr_out++] = 0;
	}
	return profile_intern_stack(r->p, r->out_locs, (size_t)r->nr_out);
}
