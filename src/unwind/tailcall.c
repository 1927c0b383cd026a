/* Tail-call frames from DWARF call sites, by gdb's rule (see tailcall.h). The search reads
 * call sites through the symbolizer (debuginfo.c) and maps addresses through the caller's
 * locate function; results are cached per (caller return address, callee pc). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/debuginfo.h"
#include "perch/symbols/symbolize.h"
#include "perch/unwind/tailcall.h"

#define TC_MAX_TARGETS 16	  /* entries of one call site's target looked at */
#define TC_MAX_STEPS   4096	  /* call sites visited by one search: paths can explode */
#define TC_CACHE_MAX   (1u << 16) /* cached pairs before the cache starts again */

/* One cached answer: frames[first .. first + n) of the pool. */
struct tc_entry {
	uint64_t caller, callee; /* caller == 0: empty slot */
	uint32_t first;
	uint8_t n;
};

struct tailcall {
	struct symbolizer *s;
	tailcall_locate_fn *locate;
	void *arg;
	struct tc_entry *slots; /* open addressing, power-of-two capacity */
	size_t cap, nr;
	uint64_t *pool;
	size_t nr_pool, alloc_pool;
};

/* One search (gdb's call_site_find_chain_1). */
struct search {
	struct tailcall *tc;
	uint64_t callee_entry, callee_pc;
	uint64_t path[TAILCALL_MAX]; /* run-time pcs of the tail-call sites entered */
	int depth;
	uint64_t result[TAILCALL_MAX]; /* the first path found, then what all paths share */
	int length, callers, callees, have;
	unsigned int steps;
};

struct tailcall *tailcall_new(struct symbolizer *s, tailcall_locate_fn *locate, void *arg)
{
	struct tailcall *tc = xcalloc(1, sizeof(*tc));

	tc->s = s;
	tc->locate = locate;
	tc->arg = arg;
	return tc;
}

void tailcall_flush(struct tailcall *tc)
{
	if (!tc)
		return;
	free(tc->slots);
	tc->slots = NULL;
	tc->cap = tc->nr = 0;
	tc->nr_pool = 0;
}

void tailcall_free(struct tailcall *tc)
{
	if (!tc)
		return;
	tailcall_flush(tc);
	free(tc->pool);
	free(tc);
}

static size_t slot_of(const struct tc_entry *t, size_t cap, uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ (b + 0x632be59bd9b4e019ULL + (a << 6));
	size_t i;

	h ^= h >> 31;
	for (i = (size_t)h & (cap - 1); t[i].caller && (t[i].caller != a || t[i].callee != b);
	     i = (i + 1) & (cap - 1))
		;
	return i;
}

static void cache_put(struct tailcall *tc, uint64_t caller, uint64_t callee, const uint64_t *f,
		      int n)
{
	size_t i;

	if (!caller)
		return;
	if (tc->nr >= TC_CACHE_MAX)
		tailcall_flush(tc);
	if ((tc->nr + 1) * 2 > tc->cap) {
		size_t cap = tc->cap ? tc->cap * 2 : 256;
		struct tc_entry *t = xcalloc(cap, sizeof(*t));

		for (i = 0; i < tc->cap; i++)
			if (tc->slots[i].caller)
				t[slot_of(t, cap, tc->slots[i].caller, tc->slots[i].callee)] =
				    tc->slots[i];
		free(tc->slots);
		tc->slots = t;
		tc->cap = cap;
	}
	i = slot_of(tc->slots, tc->cap, caller, callee);
	if (n) {
		ALLOC_GROW(tc->pool, tc->nr_pool + (size_t)n, tc->alloc_pool);
		memcpy(tc->pool + tc->nr_pool, f, (size_t)n * sizeof(*f));
	}
	tc->slots[i] = (struct tc_entry){
	    .caller = caller, .callee = callee, .first = (uint32_t)tc->nr_pool, .n = (uint8_t)n};
	tc->nr_pool += (size_t)n;
	tc->nr++;
}

/* The run-time entries a call site @c (in the file mapped with @bias, @ef) may jump to.
 * -1 when gdb would give up (NO_ENTRY_VALUE_ERROR): no target, a computed one, a name no
 * symbol table has. A name is looked up in the callee's module first (where a chain has to
 * end), then in the call site's own. */
static int site_targets(struct search *st, const struct debuginfo_call *c, const struct elffile *ef,
			uint64_t bias, uint64_t *t)
{
	const struct elffile *cef;
	uint64_t cbias, v;
	int n = 0;

	if (c->kind == DEBUGINFO_TARGET_ADDRS) {
		for (size_t i = 0; i < c->nr_addrs && n < TC_MAX_TARGETS; i++)
			t[n++] = c->addrs[i] + bias;
		return n;
	}
	if (c->kind != DEBUGINFO_TARGET_NAME)
		return -1;
	if (st->tc->locate(st->tc->arg, st->callee_pc, &cef, &cbias) == 0 &&
	    symbolizer_find_function(st->tc->s, cef, c->name, &v) == 0) {
		t[0] = v + cbias;
		return 1;
	}
	if (symbolizer_find_function(st->tc->s, ef, c->name, &v) == 0) {
		t[0] = v + bias;
		return 1;
	}
	return -1;
}

/* gdb's chain_candidate(): keep what this path shares with the paths found before. -1 when
 * nothing is left (ambiguous). */
static int candidate(struct search *st)
{
	int i, n;

	if (!st->have) {
		memcpy(st->result, st->path, (size_t)st->depth * sizeof(*st->path));
		st->length = st->callers = st->callees = st->depth;
		st->have = 1;
		return 0;
	}
	n = st->callers < st->depth ? st->callers : st->depth;
	for (i = 0; i < n; i++)
		if (st->result[i] != st->path[i]) {
			st->callers = i;
			break;
		}
	n = st->callees < st->depth ? st->callees : st->depth;
	for (i = 0; i < n; i++)
		if (st->result[st->length - 1 - i] != st->path[st->depth - 1 - i]) {
			st->callees = i;
			break;
		}
	return st->callers || st->callees ? 0 : -1;
}

/* gdb's call_site_find_chain_2(): from call site @c (of the file @ef mapped at @bias), every
 * path of tail calls to the callee. 0 to go on, -1 when the search must stop with no
 * answer. */
static int visit(struct search *st, const struct debuginfo_call *c, const struct elffile *ef,
		 uint64_t bias)
{
	uint64_t t[TC_MAX_TARGETS];
	int nt = site_targets(st, c, ef, bias, t), i;

	if (nt < 0 || ++st->steps > TC_MAX_STEPS)
		return -1;
	for (i = 0; i < nt; i++)
		if (t[i] == st->callee_entry)
			return candidate(st);
	for (i = 0; i < nt; i++) {
		const struct debuginfo_call *calls;
		const struct elffile *fef;
		uint64_t fbias;
		size_t n, k;

		/* a target must be a function's entry (gdb: func_addr_to_tail_call_list) */
		if (st->tc->locate(st->tc->arg, t[i], &fef, &fbias) < 0 ||
		    symbolizer_tail_calls(st->tc->s, fef, t[i] - fbias, &calls, &n) < 0)
			return -1;
		for (k = 0; k < n; k++) {
			uint64_t pc = calls[k].pc + fbias;
			int d, r;

			for (d = 0; d < st->depth && st->path[d] != pc; d++)
				;
			if (d < st->depth)
				continue; /* on this path already: recursion */
			if (st->depth == TAILCALL_MAX)
				return -1;
			st->path[st->depth++] = pc;
			r = visit(st, &calls[k], fef, fbias);
			st->depth--;
			if (r < 0)
				return -1;
		}
	}
	return 0;
}

/* The search itself: frames into @out, innermost first. */
static int find_chain(struct tailcall *tc, uint64_t caller_ret, uint64_t callee_pc, uint64_t *out,
		      int max)
{
	struct search st = {.tc = tc, .callee_pc = callee_pc};
	struct debuginfo_call site;
	const struct elffile *ef;
	uint64_t bias, entry;
	int n = 0, i, callers;

	/* the callee's function, where the chain has to end (gdb: get_pc_function_start) */
	if (tc->locate(tc->arg, callee_pc, &ef, &bias) < 0 ||
	    symbolizer_func_entry(tc->s, ef, callee_pc - bias, &entry) < 0)
		return 0;
	st.callee_entry = entry + bias;
	/* the caller's call site: the call instruction ends at its return address */
	if (tc->locate(tc->arg, caller_ret - 1, &ef, &bias) < 0 ||
	    symbolizer_call_site(tc->s, ef, caller_ret - bias, &site) < 0)
		return 0;
	if (visit(&st, &site, ef, bias) < 0 || !st.have || !st.length)
		return 0;
	/* innermost first: the call sites every path ends with, then those it begins with
	 * (gdb's pretend_pc); all of them when there was one path */
	for (i = 0; i < st.callees && n < max; i++)
		out[n++] = st.result[st.length - 1 - i];
	if (st.callees != st.length) {
		callers = st.callers < st.length - st.callees ? st.callers : st.length - st.callees;
		for (i = callers - 1; i >= 0 && n < max; i--)
			out[n++] = st.result[i];
	}
	return n;
}

int tailcall_frames(struct tailcall *tc, uint64_t caller_ret, uint64_t callee_pc, uint64_t *out,
		    int max)
{
	uint64_t f[TAILCALL_MAX];
	size_t i;
	int n;

	if (!tc || !caller_ret || max <= 0)
		return 0;
	if (tc->cap) {
		i = slot_of(tc->slots, tc->cap, caller_ret, callee_pc);
		if (tc->slots[i].caller) {
			n = tc->slots[i].n < max ? tc->slots[i].n : max;
			if (n)
				memcpy(out, tc->pool + tc->slots[i].first,
				       (size_t)n * sizeof(*out));
			return n;
		}
	}
	n = find_chain(tc, caller_ret, callee_pc, f, TAILCALL_MAX);
	cache_put(tc, caller_ret, callee_pc, f, n);
	if (n > max)
		n = max;
	if (n)
		memcpy(out, f, (size_t)n * sizeof(*out));
	return n;
}
