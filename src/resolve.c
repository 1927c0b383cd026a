/* Snapshot -> unwound and symbolized stack of profile locations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/arch.h"
#include "perch/elffile.h"
#include "perch/log.h"
#include "perch/module.h"
#include "perch/profile.h"
#include "perch/resolve.h"
#include "perch/symbolize.h"
#include "perch/tracee.h"
#include "perch/unwind.h"
#include "perch/xalloc.h"

struct resolver {
	pid_t pid;
	const struct perch_arch *arch;
	struct profile *p;
	struct symbolizer *sym;
	struct modules *ms;
	struct unwinder *u;
	struct resolve_stats st;
	uint64_t pcs[UNWIND_MAX_FRAMES];
	uint32_t locs[UNWIND_MAX_FRAMES + 1];
	uint32_t pseudo_module; /* string id + 1 of the pseudo-module of perch's own frames */
	int nr_pcs;
	uint64_t snap_ns;       /* time of the snapshot being resolved */
};

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
	return r;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	unwinder_free(r->u);
	modules_free(r->ms);
	free(r);
}

void resolver_reload(struct resolver *r)
{
	modules_reload(r->ms);
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

int resolve_is_root_name(const char *name)
{
	static const char *const roots[] = {
		"_start", "start_thread", "clone", "clone3", "__clone", "__clone3",
		"__libc_start_main", "__libc_start_call_main", "main", "thread_start",
		"__start_thread", "__start",
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

/* The profile location for one pc (@lookup is already pc - 1 for return addresses). */
static uint32_t locate(struct resolver *r, uint64_t lookup)
{
	struct sym_frame sf[SYM_MAX_INLINE];
	struct profile_frame pf[SYM_MAX_INLINE];
	const struct modules_map *mm = find_map(r, lookup);
	struct elffile *ef = mm ? modules_elf(r->ms, mm) : NULL;
	uint32_t module = 0, loc;
	uint64_t addr = lookup;
	char name[512];
	int n = 0;

	if (ef) {
		if (!mm->mod->profile_str)
			mm->mod->profile_str = profile_intern_str(r->p, mm->mod->path) + 1;
		module = mm->mod->profile_str - 1;
		addr = lookup - mm->bias;
	}
	loc = profile_find_location(r->p, module, addr);
	if (loc != UINT32_MAX)
		return loc;

	if (ef) {
		uint64_t t0 = tracee_now_ns();

		n = symbolizer_lookup(r->sym, ef, addr, sf, SYM_MAX_INLINE);
		r->st.symbolize_ns += tracee_now_ns() - t0;
	}
	memset(pf, 0, sizeof(pf));
	for (int i = 0; i < n; i++) {
		if (sf[i].func) {
			pf[i].name = profile_intern_str(r->p, sf[i].func);
		} else {
			snprintf(name, sizeof(name), "%s+0x%llx", base_name(mm->mod->path),
				 (unsigned long long)addr);
			pf[i].name = profile_intern_str(r->p, name);
		}
		pf[i].file = sf[i].file ? profile_intern_str(r->p, sf[i].file) : 0;
		pf[i].line = sf[i].line;
		pf[i].module = module;
		pf[i].inlined = (uint8_t)sf[i].inlined;
		pf[i].kind = PROFILE_FRAME_NATIVE;
	}
	if (n == 0) {
		if (ef)
			snprintf(name, sizeof(name), "%s+0x%llx", base_name(mm->mod->path),
				 (unsigned long long)addr);
		else if (mm && mm->name[0])
			snprintf(name, sizeof(name), "%s+0x%llx", base_name(mm->name),
				 (unsigned long long)(lookup - mm->start + mm->offset));
		else
			snprintf(name, sizeof(name), "0x%llx", (unsigned long long)lookup);
		pf[0].name = profile_intern_str(r->p, name);
		pf[0].module = module;
		pf[0].kind = PROFILE_FRAME_NATIVE;
		n = 1;
	}
	return profile_intern_location(r->p, module, addr, pf, (size_t)n);
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
	struct profile_frame f = { .kind = PROFILE_FRAME_PSEUDO };

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

	if (n > UNWIND_MAX_FRAMES)
		n = UNWIND_MAX_FRAMES;
	memmove(r->locs + 1, locs, n * sizeof(r->locs[0]));
	r->locs[0] = pseudo_location(r, text);
	return profile_intern_stack(r->p, r->locs, n + 1);
}

uint32_t resolver_stack(struct resolver *r, const struct unwind_snapshot *snap)
{
	unsigned int flags = 0;
	uint64_t t0;
	int n;

	r->snap_ns = snap->time_ns;
	t0 = tracee_now_ns();
	n = unwinder_unwind(r->u, snap, r->pcs, UNWIND_MAX_FRAMES, &flags);

	r->st.unwind_ns += tracee_now_ns() - t0;
	r->nr_pcs = n;
	r->st.stacks++;
	r->st.frames += (uint64_t)n;
	if (flags & UNWIND_FP_USED)
		r->st.fp_used++;
	if (flags & UNWIND_CFI_FAILED)
		r->st.cfi_failed++;
	if (flags & UNWIND_TRUNCATED)
		r->st.truncated++;
	for (int i = 0; i < n; i++)
		r->locs[i] = locate(r, i == 0 ? r->pcs[i] : r->pcs[i] - 1);
	if (n && ends_at_root(r, r->locs[n - 1]))
		r->st.to_root++;
	return profile_intern_stack(r->p, r->locs, (size_t)n);
}
