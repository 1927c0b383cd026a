/* libunwind-ptrace as a reference unwinder: see include/perch/unwind/unwind-ptrace.h. */
#include <libunwind-ptrace.h>
#include <stdlib.h>
#include <libunwind.h>

#include "perch/base/xalloc.h"
#include "perch/unwind/unwind-ptrace.h"

struct unwind_ptrace {
	unw_addr_space_t as;
};

struct unwind_ptrace *unwind_ptrace_new(void)
{
	struct unwind_ptrace *up = xcalloc(1, sizeof(*up));

	up->as = unw_create_addr_space(&_UPT_accessors, 0);
	if (up->as)
		unw_set_caching_policy(up->as, UNW_CACHE_GLOBAL);
	return up;
}

void unwind_ptrace_free(struct unwind_ptrace *up)
{
	if (!up)
		return;
	if (up->as)
		unw_destroy_addr_space(up->as);
	free(up);
}

int unwind_ptrace_pcs(struct unwind_ptrace *up, pid_t tid, uint64_t pac_mask, uint64_t *pcs,
		      int max)
{
	void *ctx;
	unw_cursor_t c;
	unw_word_t ip;
	int n = 0;

	if (!up->as || max <= 0 || !(ctx = _UPT_create(tid)))
		return 0;
	if (unw_init_remote(&c, up->as, ctx) == 0) {
		do {
			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || (ip & ~pac_mask) == 0)
				break;
			pcs[n++] = ip & ~pac_mask;
		} while (n < max && unw_step(&c) > 0);
	}
	_UPT_destroy(ctx);
	return n;
}
