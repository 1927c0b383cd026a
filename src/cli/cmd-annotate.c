/* `perch annotate FUNC RECORDING`: the function's machine code (capstone) with the share of
 * the samples whose leaf pc is at each instruction, like `perf annotate --stdio`. The code is
 * read from the module file on this machine (its build-id must match the recording's) or from
 * its copy in --symfs. */
#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/base/u64map.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/profile/profile.h"
#include "perch/report/report.h"
#include "perch/symbols/disasm.h"
#include "perch/symbols/elffile.h"
#include "perch/symbols/elfsym.h"

#define ANNOTATE_MAX_CODE (256u << 10) /* bytes of one function we disassemble */

enum { OPT_SYMFS = 256, OPT_HELP };

static const struct opt_spec annotate_opts[] = {
    {"symfs", OPT_SYMFS, "DIR", "unstripped copies of the modules below DIR (by build-id)", 0},
};
static const struct opt_spec annotate_opts_msg[] = {
    {"quiet", 'q', NULL, "no warnings", 0},
    {"verbose", 'v', NULL, "more messages", 0},
    {"help", OPT_HELP, NULL, NULL, 0},
};

static const struct opt_table own_table = OPT_TABLE(annotate_opts),
			      msg_table = OPT_TABLE(annotate_opts_msg);
static const struct opt_table *const annotate_tables[] = {&own_table, &report_filter_table,
							  &msg_table};

static void annotate_complete_options(void (*add)(void *arg, const char *word), void *arg)
{
	opts_complete_list(annotate_tables, ARRAY_SIZE(annotate_tables), REPORT_FILTER_TIDS, add,
			   arg);
}

static void annotate_help(struct strbuf *sb)
{
	strbuf_addstr(
	    sb,
	    "usage: perch annotate [options] FUNCTION RECORDING\n"
	    "\n"
	    "Print FUNCTION's disassembly with the share of its samples at each instruction (the\n"
	    "samples whose innermost frame is in FUNCTION, by their exact pc). The code comes "
	    "from\n"
	    "the module file (its build-id must match the recording's) or its copy under --symfs.\n"
	    "\n");
	opts_help_list(sb, annotate_tables, ARRAY_SIZE(annotate_tables), REPORT_FILTER_TIDS, 25);
	strbuf_addstr(sb,
		      "\nExit status: 0 ok, 2 the recording, the function or its code cannot be "
		      "found, 64 usage.\n");
}

/* Sampled leaf addresses of the function, per module. */
struct hits {
	uint32_t module; /* profile string id */
	uint64_t total;
	struct u64map idx; /* addr -> index in addr/weight */
	uint64_t *addr, *weight;
	size_t nr, alloc_a, alloc_w;
};

struct annotate {
	const char *func, *in, *symfs;
	struct report_filter filter;
	int quiet;
	struct hits *mods;
	size_t nr_mods, alloc_mods;
	uint64_t all; /* samples after the filters */
};

/* @name is @func, or @func followed by its parameters ("f(int)"). */
static int name_is(const char *name, const char *func)
{
	size_t n = strlen(func);

	return !strncmp(name, func, n) && (!name[n] || name[n] == '(');
}

/* The function a location is in: its outermost frame (the inlined ones come first). */
static const char *loc_function(const struct profile *p, uint32_t loc)
{
	size_t n;
	const uint32_t *fr = profile_location_frames(p, loc, &n);

	return n ? profile_str(p, profile_frame(p, fr[n - 1])->name) : "";
}

static int loc_is_pseudo(const struct profile *p, uint32_t loc)
{
	size_t n;
	const uint32_t *fr = profile_location_frames(p, loc, &n);

	return n && profile_frame(p, fr[0])->kind == PROFILE_FRAME_PSEUDO;
}

static struct hits *hits_of(struct annotate *an, uint32_t module)
{
	for (size_t i = 0; i < an->nr_mods; i++)
		if (an->mods[i].module == module)
			return &an->mods[i];
	ALLOC_GROW(an->mods, an->nr_mods + 1, an->alloc_mods);
	memset(&an->mods[an->nr_mods], 0, sizeof(an->mods[0]));
	an->mods[an->nr_mods].module = module;
	return &an->mods[an->nr_mods++];
}

static void hit(struct hits *h, uint64_t addr, uint64_t weight)
{
	size_t slot;
	uint32_t i = u64map_find(&h->idx, addr, &slot);

	if (i == UINT32_MAX) {
		ALLOC_GROW(h->addr, h->nr + 1, h->alloc_a);
		ALLOC_GROW(h->weight, h->nr + 1, h->alloc_w);
		h->addr[h->nr] = addr;
		h->weight[h->nr] = 0;
		i = (uint32_t)h->nr++;
		u64map_set(&h->idx, slot, addr, i);
	}
	h->weight[i] += weight;
	h->total += weight;
}

/* Collect the leaf pcs (past perch's wait pseudo-frames) that lie in the function. */
static void collect(struct annotate *an, const struct profile *p)
{
	size_t n;
	const struct profile_sample *s = profile_samples(p, &n);

	for (size_t i = 0; i < n; i++) {
		size_t k, j = 0;
		const uint32_t *locs = profile_stack(p, s[i].stack, &k);
		const struct profile_location *l;

		an->all += s[i].weight;
		while (j < k && loc_is_pseudo(p, locs[j]))
			j++;
		if (j == k || !name_is(loc_function(p, locs[j]), an->func))
			continue;
		l = profile_location(p, locs[j]);
		/* addresses of the same function in several modules are kept apart */
		hit(hits_of(an, l->module), l->addr, s[i].weight);
	}
}

/* A module where the function appears at all (as a caller), when no sample ends in it. */
static int find_caller_module(const struct profile *p, const char *func, uint32_t *module)
{
	for (uint32_t l = 0; l < profile_nr_locations(p); l++) {
		if (name_is(loc_function(p, l), func) && profile_location(p, l)->module) {
			*module = profile_location(p, l)->module;
			return 0;
		}
	}
	return -ENOENT;
}

/* The module file to read the code from: the symfs copy, or the file itself when its
 * build-id is the recording's. */
static struct elffile *open_module(struct annotate *an, const struct profile *p, const char *path,
				   struct report_symfs *rs, int *owned)
{
	char *key = xasprintf("build_id:%s", path), hex[129];
	const char *want = profile_meta(p, key);
	struct elffile *ef;

	free(key);
	*owned = 0;
	if (rs) {
		ef = report_symfs_elf(rs, p, path);
		if (ef)
			return ef;
		log_warn(0, "no copy of %s under --symfs %s: trying the file itself", path,
			 an->symfs);
	}
	ef = elffile_open(path);
	if (!ef) {
		log_errno(-errno, "cannot open %s (give --symfs DIR with a copy of it)", path);
		return NULL;
	}
	if (want && strcmp(elffile_build_id_hex(ef, hex), want)) {
		log_err(0,
			"%s has build-id %s here, the recording's is %s: give --symfs DIR with "
			"the right copy",
			path, hex[0] ? hex : "(none)", want);
		elffile_free(ef);
		return NULL;
	}
	*owned = 1;
	return ef;
}

/* The symbol holding the hottest address (or named @func): its address range. */
static int function_range(struct annotate *an, const struct elffile *ef, const struct hits *h,
			  uint64_t *start, uint64_t *end)
{
	struct elfsym_table *t = elfsym_table_new();
	const struct elfsym *sym = NULL;
	size_t best = 0;
	int ret = 0;

	elfsym_table_load(t, ef->image, ef->size, ELFSYM_SYMTAB | ELFSYM_DYNSYM);
	elfsym_table_finish(t);
	for (size_t i = 1; h && i < h->nr; i++)
		if (h->weight[i] > h->weight[best])
			best = i;
	if (h && h->nr)
		sym = elfsym_table_find(t, h->addr[best]);
	if (!sym)
		sym = elfsym_table_find_name(t, an->func);
	if (!sym) {
		ret = log_err(-ENOENT, "no symbol for %s in %s: is it stripped? (give --symfs DIR)",
			      an->func, ef->path);
		goto out;
	}
	*start = sym->addr;
	*end = sym->size ? sym->addr + sym->size : sym->sec_end;
	if (*end <= *start || *end - *start > ANNOTATE_MAX_CODE)
		*end = *start + ANNOTATE_MAX_CODE;
out:
	elfsym_table_free(t);
	return ret;
}

/* " file:line" of the location at @addr, when the recording has one. */
static void print_line(const struct profile *p, uint32_t module, uint64_t addr)
{
	uint32_t loc = profile_find_location(p, module, addr);
	size_t n;
	const uint32_t *fr;
	const struct profile_frame *f;

	if (loc == UINT32_MAX)
		return;
	fr = profile_location_frames(p, loc, &n);
	if (!n)
		return;
	f = profile_frame(p, fr[0]);
	if (f->line)
		printf("  ; %s:%u", profile_str(p, f->file), f->line);
}

static int disassemble(struct annotate *an, const struct profile *p, const struct elffile *ef,
		       const struct hits *h, uint32_t module)
{
	uint64_t start = 0, end = 0, shown = 0;
	const uint8_t *code = NULL;
	const struct disasm_lib *cs_lib;
	const char *why = NULL;
	cs_insn *insn;
	size_t count;
	cs_arch arch;
	cs_mode mode;
	csh cs;

	if (ef->machine == EM_X86_64) {
		arch = CS_ARCH_X86;
		mode = CS_MODE_64;
	} else if (ef->machine == EM_AARCH64) {
		arch = CS_ARCH_ARM64;
		mode = CS_MODE_ARM;
	} else {
		return log_err(-ENOTSUP,
			       "%s is for machine %u: perch disassembles x86_64 and aarch64",
			       ef->path, ef->machine);
	}
	if (function_range(an, ef, h, &start, &end) < 0)
		return -ENOENT;
	while (end > start && !(code = elffile_vaddr_ptr(ef, start, end - start)))
		end = start + (end - start) / 2;
	if (end <= start)
		return log_err(-ENOENT, "the code of %s is not in %s", an->func, ef->path);
	if (!(cs_lib = disasm_lib(&why)))
		return log_err(-ENOENT, "cannot disassemble: %s (install capstone's library)", why);
	if (cs_lib->open(arch, mode, &cs) != CS_ERR_OK)
		return log_err(-ENOMEM, "capstone cannot open its disassembler");
	count = cs_lib->disasm(cs, code, end - start, start, 0, &insn);
	printf(" Percent | %s in %s: %" PRIu64 " samples (%.2f%% of %" PRIu64 ")\n", an->func,
	       profile_str(p, module), h ? h->total : 0,
	       h && an->all ? 100.0 * (double)h->total / (double)an->all : 0.0, an->all);
	printf("---------+--------------------------------------------------------------------\n");
	printf("         : %" PRIx64 " <%s>:\n", start, an->func);
	for (size_t i = 0; i < count; i++) {
		uint64_t w = 0;

		for (size_t j = 0; h && j < h->nr; j++)
			if (h->addr[j] >= insn[i].address &&
			    h->addr[j] < insn[i].address + insn[i].size)
				w += h->weight[j];
		shown += w;
		if (w)
			printf("%8.2f :", 100.0 * (double)w / (double)h->total);
		else
			printf("         :");
		printf("   %8" PRIx64 ":  %-7s %s", insn[i].address, insn[i].mnemonic,
		       insn[i].op_str);
		if (w)
			print_line(p, module, insn[i].address);
		printf("\n");
	}
	if (h && shown < h->total)
		printf("%8.2f : (outside the disassembled code)\n",
		       100.0 * (double)(h->total - shown) / (double)h->total);
	if (count)
		cs_lib->free(insn, count);
	cs_lib->close(&cs);
	return count ? 0 : log_err(-ENOEXEC, "capstone decoded no instruction of %s", an->func);
}

static int parse_args(struct annotate *an, int argc, char **argv)
{
	const struct opt_spec *s;
	struct opts_getopt g;
	int c;

	opts_getopt_init(&g, 0);
	opts_getopt_add_list(&g, annotate_tables, ARRAY_SIZE(annotate_tables), REPORT_FILTER_TIDS);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		if ((s = report_filter_opt(c))) {
			if (report_filter_option(&an->filter, s->name, optarg) < 0)
				return -EINVAL;
			continue;
		}
		switch (c) {
		case OPT_SYMFS:
			an->symfs = optarg;
			break;
		case 'q':
			an->quiet = 1;
			log_level = LOG_LEVEL_QUIET;
			break;
		case 'v':
			log_level++;
			break;
		case OPT_HELP:
			cmd_print_help(&cmd_annotate, stdout);
			exit(PERCH_EXIT_OK);
		default:
			return log_err(-EINVAL, "unknown or incomplete option '%s'",
				       argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return log_err(-EINVAL, "give FUNCTION and RECORDING");
	an->func = argv[optind];
	an->in = argv[optind + 1];
	if (!an->func[0])
		return log_err(-EINVAL, "FUNCTION is empty");
	return 0;
}

static int annotate_run(int argc, char **argv)
{
	struct annotate an = {0};
	struct report_symfs *rs = NULL;
	struct profile *src = NULL, *p = NULL;
	struct elffile *ef = NULL;
	const struct hits *h = NULL;
	uint32_t module;
	int code, owned = 0;

	report_filter_init(&an.filter);
	if (parse_args(&an, argc, argv) < 0) {
		cmd_print_help(&cmd_annotate, stderr);
		report_filter_release(&an.filter);
		return PERCH_EXIT_USAGE;
	}
	code = PERCH_EXIT_USAGE;
	if (an.symfs && !(rs = report_symfs_new(an.symfs)))
		goto out;
	code = report_load(an.in, &src, an.quiet);
	if (code)
		goto out;
	code = PERCH_EXIT_FATAL;
	/* through the filters, and with names from the symfs (a stripped module's FUNC) */
	p = report_apply(src, &an.filter, rs);
	collect(&an, p);
	for (size_t i = 0; i < an.nr_mods; i++)
		if (!h || an.mods[i].total > h->total)
			h = &an.mods[i];
	if (h) {
		module = h->module;
		if (an.nr_mods > 1)
			log_warn(0,
				 "%s is in %zu modules: showing %s, the one with the most samples",
				 an.func, an.nr_mods, profile_str(p, module));
	} else if (find_caller_module(p, an.func, &module) < 0) {
		log_err(0, "no sample of %s has %s in its stack", an.in, an.func);
		goto out;
	} else {
		log_warn(0, "no sample ends in %s (it only calls others)", an.func);
	}
	if (!module || profile_str(p, module)[0] != '/') {
		log_err(0, "%s is not in a module file perch can read", an.func);
		goto out;
	}
	ef = open_module(&an, p, profile_str(p, module), rs, &owned);
	if (ef && disassemble(&an, p, ef, h, module) == 0)
		code = PERCH_EXIT_OK;
out:
	if (owned)
		elffile_free(ef);
	for (size_t i = 0; i < an.nr_mods; i++) {
		u64map_release(&an.mods[i].idx);
		free(an.mods[i].addr);
		free(an.mods[i].weight);
	}
	free(an.mods);
	profile_free(p);
	profile_free(src);
	report_symfs_free(rs);
	report_filter_release(&an.filter);
	return code;
}

const struct cmd cmd_annotate = {
    .name = "annotate",
    .summary = "a function's disassembly with the share of samples per instruction",
    .help = annotate_help,
    .complete_options = annotate_complete_options,
    .run = annotate_run,
    .flags = CMD_NO_PTRACE,
};
