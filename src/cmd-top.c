/* `perch top -p PID`: the REPL's live view of the hottest functions as a command (like
 * py-spy top); `perch threads -p PID` and `perch maps -p PID` likewise. They run the session
 * commands of repl-cmds.c, so both ways behave the same. */
#include "perch/cmd.h"
#include "perch/repl.h"

static int top_run(int argc, char **argv)
{
	return repl_cli_run("top", argc, argv);
}

static int threads_run(int argc, char **argv)
{
	return repl_cli_run("threads", argc, argv);
}

static int maps_run(int argc, char **argv)
{
	return repl_cli_run("maps", argc, argv);
}

const struct cmd cmd_top = {
    .name = "top",
    .summary = "live view of the hottest functions, refreshed every second",
    .usage = "usage: perch top -p PID|NAME [-F HZ] [-d SEC] [-n ROWS] [--mode wall|cpu]\n"
	     "                [--stack-size BYTES] [--follow-cpu] [--no-idle-reuse]\n"
	     "                [--no-cpu-hold] [--show-art-frames] [--sysroot DIR] [--symfs DIR]\n"
	     "\n"
	     "Sample PID and show its hottest functions, refreshed every second until -d SEC,\n"
	     "a key (on a terminal) or Ctrl-C; then detach. Like py-spy top: %Own and %Total\n"
	     "are the shares of the last second's samples with the function innermost and\n"
	     "anywhere in the stack; OwnTime and TotalTime the seconds since top started\n"
	     "(samples / rate, all threads together). The options are perch record's.\n",
    .run = top_run,
    .flags = CMD_PID,
};

const struct cmd cmd_threads = {
    .name = "threads",
    .summary = "a process's threads: tid, name, state, CPU %",
    .usage = "usage: perch threads -p PID|NAME\n",
    .run = threads_run,
    .flags = CMD_PID,
};

const struct cmd cmd_maps = {
    .name = "maps",
    .summary = "a process's memory mappings",
    .usage = "usage: perch maps -p PID|NAME [--exec] [SUBSTRING]\n",
    .run = maps_run,
    .flags = CMD_PID,
};
