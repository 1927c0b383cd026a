/* `perch mem`: one dumpsys meminfo-style breakdown of a process's memory, from its
 * /proc/PID/smaps or from a saved smaps file. Reads /proc only: no ptrace. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/proc/meminfo.h"
#include "perch/proc/proc-smaps.h"

enum { OPT_SMAPS = 256, OPT_RULES, OPT_JSON, OPT_HELP };

static const struct opt_spec mem_opts[] = {
    {"pid", 'p', "PID", "the process to read", 0},
    {"smaps", OPT_SMAPS, "FILE", "a saved smaps file instead (e.g. pulled from a rooted device)",
     0},
    {"rules", OPT_RULES, "NAME",
     "auto (default: android when Android names are seen, else linux),\n"
     "android, android-10 or linux",
     0},
    {"json", OPT_JSON, NULL, "one JSON object instead of the table", 0},
    {"help", OPT_HELP, NULL, NULL, 0},
};

static void mem_complete_options(void (*add)(void *arg, const char *word), void *arg)
{
	opts_complete(mem_opts, ARRAY_SIZE(mem_opts), 0, add, arg);
}

static void mem_help(struct strbuf *sb)
{
	strbuf_addstr(
	    sb,
	    "usage: perch mem [options] -p PID\n"
	    "       perch mem [options] --smaps FILE\n"
	    "\n"
	    "Break a process's memory down the way Android's dumpsys meminfo does, from\n"
	    "/proc/PID/smaps (no ptrace): every mapping goes to a category (Native Heap, Stack,\n"
	    ".so mmap, Dalvik, Gfx dev, ...), then the App Summary (Java Heap, Native Heap, Code,\n"
	    "Stack, Graphics, Private Other, System). Android and plain Linux (glibc) processes.\n"
	    "\n");
	opts_help(sb, mem_opts, ARRAY_SIZE(mem_opts), 0, 21);
	strbuf_addstr(sb, "\nExit status: 0 ok, 2 cannot read the smaps, 64 usage.\n");
}

static int parse_rules(const char *s, enum meminfo_rules *out)
{
	static const enum meminfo_rules all[] = {MEMINFO_RULES_AUTO, MEMINFO_RULES_ANDROID,
						 MEMINFO_RULES_ANDROID_10, MEMINFO_RULES_LINUX};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!strcmp(s, meminfo_rules_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	}
	return log_err(-EINVAL, "--rules is auto, android, android-10 or linux, not '%s'", s);
}

static int mem_run(int argc, char **argv)
{
	struct opts_getopt g;
	enum meminfo_rules rules = MEMINFO_RULES_AUTO;
	const char *file = NULL;
	struct proc_smaps *s;
	struct meminfo mi;
	int c, pid = 0, json = 0, ret;

	opts_getopt_init(&g, 1);
	opts_getopt_add(&g, mem_opts, ARRAY_SIZE(mem_opts), 0);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (opt_parse_pid(optarg, &pid) < 0)
				goto usage;
			break;
		case OPT_SMAPS:
			file = optarg;
			break;
		case OPT_RULES:
			if (parse_rules(optarg, &rules) < 0)
				goto usage;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_HELP:
			cmd_print_help(&cmd_mem, stdout);
			return PERCH_EXIT_OK;
		default:
			log_err(0, "unknown or incomplete option '%s'", argv[optind - 1]);
			goto usage;
		}
	}
	if (optind < argc) {
		log_err(0, "unexpected argument '%s'", argv[optind]);
		goto usage;
	}
	if (!pid == !file) {
		log_err(0, pid ? "give either -p PID or --smaps FILE, not both"
			       : "nothing to read: give -p PID or --smaps FILE");
		goto usage;
	}
	s = file ? proc_smaps_load_file(file) : proc_smaps_load(pid);
	if (!s) {
		if (file)
			log_errno(-errno, "cannot read %s", file);
		else
			log_errno(-errno, "cannot read /proc/%d/smaps", pid);
		return PERCH_EXIT_FATAL;
	}
	if (!s->nr) {
		proc_smaps_free(s);
		return log_err(PERCH_EXIT_FATAL, "%s has no mappings (is it an smaps file?)",
			       file ? file : "smaps");
	}
	if (s->bad_lines)
		log_warn(0, "%zu lines of %s not understood (skipped)", s->bad_lines,
			 file ? file : "smaps");
	meminfo_compute(s, rules, &mi);
	proc_smaps_free(s);
	ret = json ? meminfo_write_json(&mi, stdout) : meminfo_write_text(&mi, stdout);
	if (ret < 0 || fflush(stdout))
		return log_err(PERCH_EXIT_FATAL, "cannot write the breakdown");
	return PERCH_EXIT_OK;
usage:
	cmd_print_help(&cmd_mem, stderr);
	return PERCH_EXIT_USAGE;
}

const struct cmd cmd_mem = {
    .name = "mem",
    .summary = "a dumpsys meminfo-style memory breakdown of a process or smaps file",
    .help = mem_help,
    .complete_options = mem_complete_options,
    .run = mem_run,
    .flags = CMD_PID | CMD_NO_PTRACE,
};
