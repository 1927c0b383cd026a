/* Shared by `perch report` and `perch annotate` (see report.h): load, filter, re-symbolize. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/exitcode.h"
#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/path.h"
#include "perch/base/xalloc.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"
#include "perch/report/report.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/symbolize.h"
#include "perch/symbols/symfs.h"

void report_filter_init(struct report_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->end_s = -1;
}

void report_filter_release(struct report_filter *f)
{
	free(f->tids);
	if (f->have_re)
		regfree(&f->thread_re);
	report_filter_init(f);
}

static int parse_seconds(const char *name, const char *arg, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	if (*end || end == arg || !(*out >= 0) || *out > 1e9)
		return log_err(-EINVAL, "--%s wants seconds (>= 0), not '%s'", name, arg);
	return 0;
}

static const struct opt_spec report_filter_opts[] = {
    {"tid", REPORT_FILTER_KEY, "TID[,TID..]", "only these threads", REPORT_FILTER_TIDS},
    {"thread", REPORT_FILTER_KEY + 1, "REGEX", "only threads whose name matches (extended regex)",
     0},
    {"mode", REPORT_FILTER_KEY + 2, "wall|cpu",
     "wall (default): every sample; cpu: only samples of running\n"
     "threads (state R)",
     0},
    {"start", REPORT_FILTER_KEY + 3, "SEC", "only samples at least SEC seconds after the first one",
     0},
    {"end", REPORT_FILTER_KEY + 4, "SEC", "only samples before SEC seconds after the first one", 0},
};
const struct opt_table report_filter_table = OPT_TABLE(report_filter_opts);

const struct opt_spec *report_filter_opt(int key)
{
	return opts_by_key(report_filter_opts, ARRAY_SIZE(report_filter_opts), key);
}

int report_filter_option(struct report_filter *f, const char *name, const char *arg)
{
	if (!strcmp(name, "tid")) {
		char *copy = xstrdup(arg), *save = NULL, *tok;
		int ret = 0;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int tid;

			if (opt_parse_pid(tok, &tid) < 0) {
				ret = -EINVAL;
				break;
			}
			ALLOC_GROW(f->tids, f->nr_tids + 1, f->alloc_tids);
			f->tids[f->nr_tids++] = tid;
		}
		free(copy);
		if (!ret && !f->nr_tids)
			ret = log_err(-EINVAL, "--tid wants thread ids, not '%s'", arg);
		return ret;
	}
	if (!strcmp(name, "thread")) {
		int ret;

		if (f->have_re)
			regfree(&f->thread_re);
		f->have_re = 0;
		ret = regcomp(&f->thread_re, arg, REG_EXTENDED | REG_NOSUB);
		if (ret) {
			char msg[128];

			regerror(ret, &f->thread_re, msg, sizeof(msg));
			return log_err(-EINVAL, "--thread '%s': %s", arg, msg);
		}
		f->have_re = 1;
		return 0;
	}
	if (!strcmp(name, "mode")) {
		if (strcmp(arg, "wall") && strcmp(arg, "cpu"))
			return log_err(-EINVAL, "--mode is wall or cpu, not '%s'", arg);
		f->cpu_only = !strcmp(arg, "cpu");
		return 0;
	}
	if (!strcmp(name, "start"))
		return parse_seconds(name, arg, &f->start_s);
	if (!strcmp(name, "end"))
		return parse_seconds(name, arg, &f->end_s);
	return log_err(-EINVAL, "BUG: unknown filter option %s", name);
}

int report_filter_is_empty(const struct report_filter *f)
{
	return !f->nr_tids && !f->have_re && !f->cpu_only && f->start_s <= 0 && f->end_s < 0;
}

int report_load(const char *path, struct profile **out, int quiet)
{
	struct recording_info info;
	int ret = recording_read(path, out, &info);

	if (ret < 0) {
		if (info.error[0])
			log_err(0, "cannot read %s: %s", path, info.error);
		else
			log_errno(ret, "cannot read %s", path);
		return PERCH_EXIT_FATAL;
	}
	if (!info.complete && !quiet)
		log_warn(0,
			 "%s was cut short (%s at byte %llu): using the %llu samples of its %llu "
			 "complete chunks",
			 path, info.error, (unsigned long long)info.bad_offset,
			 (unsigned long long)profile_total_samples(*out),
			 (unsigned long long)info.chunks);
	return 0;
}

/* re-symbolizing */

struct rs_module {
	char *path;
	struct elffile *ef; /* NULL: no copy in the symfs */
};

struct report_symfs {
	struct symfs *fs;
	struct symbolizer *sym;
	struct rs_module *mods;
	size_t nr, alloc;
};

struct report_symfs *report_symfs_new(const char *dir)
{
	struct report_symfs *rs;
	struct symfs *fs = symfs_new(dir);

	if (!fs) {
		log_errno(-errno, "cannot use --symfs %s", dir);
		return NULL;
	}
	rs = xcalloc(1, sizeof(*rs));
	rs->fs = fs;
	rs->sym = symbolizer_new(NULL, NULL);
	return rs;
}

void report_symfs_free(struct report_symfs *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->nr; i++) {
		elffile_free(rs->mods[i].ef);
		free(rs->mods[i].path);
	}
	free(rs->mods);
	symbolizer_free(rs->sym);
	symfs_free(rs->fs);
	free(rs);
}

struct elffile *report_symfs_elf(struct report_symfs *rs, const struct profile *p, const char *path)
{
	char *key, *found;
	struct rs_module *m;

	for (size_t i = 0; i < rs->nr; i++)
		if (!strcmp(rs->mods[i].path, path))
			return rs->mods[i].ef;
	ALLOC_GROW(rs->mods, rs->nr + 1, rs->alloc);
	m = &rs->mods[rs->nr++];
	m->path = xstrdup(path);
	m->ef = NULL;
	key = xasprintf("build_id:%s", path);
	found = symfs_find(rs->fs, path, profile_meta(p, key));
	free(key);
	if (found) {
		m->ef = elffile_open(found);
		log_info("symfs: %s -> %s", path, found);
		free(found);
	}
	return m->ef;
}

/* The copy of location @loc of @src in @dst, re-symbolized when the symfs has its module. */
static uint32_t copy_location(const struct profile *src, uint32_t loc, struct profile *dst,
			      struct report_symfs *rs)
{
	const struct profile_location *l = profile_location(src, loc);
	const char *module = profile_str(src, l->module);
	struct profile_frame pf[SYM_MAX_INLINE];
	struct sym_frame sf[SYM_MAX_INLINE];
	uint32_t dmod = profile_intern_str(dst, module);
	const uint32_t *fr;
	size_t n;
	int ns = 0;

	memset(pf, 0, sizeof(pf));
	if (rs && module[0] == '/') {
		struct elffile *ef = report_symfs_elf(rs, src, module);

		if (ef)
			ns = symbolizer_lookup(rs->sym, ef, l->addr, sf, SYM_MAX_INLINE);
	}
	fr = profile_location_frames(src, loc, &n);
	for (int i = 0; i < ns; i++) {
		const struct profile_frame *f0 = n ? profile_frame(src, fr[0]) : NULL;
		uint64_t start = l->addr;
		char name[512];

		if (!sf[i].func) {
			/* one name per function without a symbol (resolve.c does the same) */
			if (symbolizer_func_start(rs->sym, report_symfs_elf(rs, src, module),
						  l->addr, NULL, &start) < 0)
				start = l->addr;
			snprintf(name, sizeof(name), "[%s+0x%llx]", path_base(module),
				 (unsigned long long)start);
		}
		pf[i].name = profile_intern_str(dst, sf[i].func ? sf[i].func : name);
		pf[i].file = sf[i].file ? profile_intern_str(dst, sf[i].file) : 0;
		pf[i].line = sf[i].line;
		pf[i].module = dmod;
		pf[i].inlined = (uint8_t)sf[i].inlined;
		pf[i].kind = PROFILE_FRAME_NATIVE;
		pf[i].tailcall = f0 ? f0->tailcall : 0; /* a tail-call frame stays one */
	}
	if (ns > 0)
		return profile_intern_location(dst, dmod, l->addr, pf, (size_t)ns);
	return profile_copy_location(src, loc, dst);
}

struct apply_ctx {
	const struct report_filter *f;
	struct report_symfs *rs;
};

static int keep_thread(const struct report_filter *f, const struct profile *src, uint32_t t)
{
	const struct profile_thread *th = profile_thread_get(src, t);
	size_t i;

	if (f->nr_tids) {
		for (i = 0; i < f->nr_tids && f->tids[i] != th->tid; i++)
			;
		if (i == f->nr_tids)
			return 0;
	}
	return !f->have_re || !regexec(&f->thread_re, profile_str(src, th->name), 0, NULL, 0);
}

static uint32_t copy_location_cb(const struct profile *src, uint32_t loc, struct profile *dst,
				 void *arg)
{
	return copy_location(src, loc, dst, ((const struct apply_ctx *)arg)->rs);
}

static int keep_thread_cb(const struct profile *src, uint32_t t, void *arg)
{
	return keep_thread(((const struct apply_ctx *)arg)->f, src, t);
}

struct profile *report_apply(const struct profile *src, const struct report_filter *f,
			     struct report_symfs *rs)
{
	struct apply_ctx ctx = {f, rs};
	struct profile_copy_opts o = {.cpu_only = f->cpu_only,
				      .keep_thread = keep_thread_cb,
				      .copy_location = copy_location_cb,
				      .arg = &ctx};
	size_t n;
	const struct profile_sample *s = profile_samples(src, &n);
	uint64_t t0 = UINT64_MAX;

	for (size_t i = 0; i < n; i++)
		if (s[i].time_ns < t0)
			t0 = s[i].time_ns;
	o.lo_ns = t0 + (uint64_t)(f->start_s * 1e9);
	o.hi_ns = f->end_s < 0 ? UINT64_MAX : t0 + (uint64_t)(f->end_s * 1e9);
	return profile_copy(src, &o);
}
