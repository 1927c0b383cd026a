/* `perch top -p PID`: the prompt's live view of the hottest functions as a command (like
 * py-spy top); `perch threads -p PID` and `perch maps -p PID` likewise. They run their prompt
 * faces (repl-cmds.c), so both ways behave the same. */
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/cli/repl.h"
#include "perch/record/record-opts.h"

/* What the prompt needs to run them: attach, and the commands themselves. */
static const struct cmd *const table[] = {&cmd_attach, &cmd_top, &cmd_threads, &cmd_maps};

static int top_run(int argc, char **argv)
{
	return repl_cli_run(table, ARRAY_SIZE(table), &cmd_top, argc, argv);
}

static int threads_run(int argc, char **argv)
{
	return repl_cli_run(table, ARRAY_SIZE(table), &cmd_threads, argc, argv);
}

static int maps_run(int argc, char **argv)
{
	return repl_cli_run(table, ARRAY_SIZE(table), &cmd_maps, argc, argv);
}

static const struct opt_spec pid_opt[] = {{"pid", 'p', "PID|NAME", "the process", 0}};

static void top_help(struct strbuf *sb)
{
	strbuf_addstr(
	    sb, "usage: perch top -p PID|NAME [options]\n"
		"\n"
		"Sample PID and show its hottest functions, refreshed every second until -d SEC,\n"
		"a key (on a terminal) or Ctrl-C; then detach. Like py-spy top: %Own and %Total\n"
		"are the shares of the last second's samples with the function innermost and\n"
		"anywhere in the stack; OwnTime and TotalTime the seconds since top started\n"
		"(samples / rate, all threads together).\n"
		"\n");
	opts_help(sb, pid_opt, 1, 0, 25);
	record_opts_help(sb, RECORD_PARSE_TOP);
}

static void threads_help(struct strbuf *sb)
{
	strbuf_addstr(sb, "usage: perch threads -p PID|NAME\n"
			  "\n"
			  "The threads of PID: tid, name, state and CPU % (over 0.25 s).\n");
}

static void maps_help(struct strbuf *sb)
{
	strbuf_addstr(sb,
		      "usage: perch maps -p PID|NAME [--exec] [SUBSTRING]\n"
		      "\n"
		      "The memory mappings of PID (--exec: the executable ones only; SUBSTRING:\n"
		      "those whose path has it).\n");
}

const struct cmd cmd_top = {
    .name = "top",
    .summary = "live view of the hottest functions, refreshed every second",
    .help = top_help,
    .run = top_run,
    .flags = CMD_PID,
    .prompt = &repl_top,
};

const struct cmd cmd_threads = {
    .name = "threads",
    .summary = "a process's threads: tid, name, state, CPU %",
    .help = threads_help,
    .run = threads_run,
    .flags = CMD_PID,
    .prompt = &repl_threads,
};

const struct cmd cmd_maps = {
    .name = "maps",
    .summary = "a process's memory mappings",
    .help = maps_help,
    .run = maps_run,
    .flags = CMD_PID,
    .prompt = &repl_maps,
};
