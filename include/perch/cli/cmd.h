/* Commands: one table (main.c) serves the command line and the prompt. A command has a
 * command-line face (@run, @help), a prompt face (@prompt: struct repl_cmd, repl.h), or both;
 * at the prompt, a command without a prompt face runs its @run in a child (CMD_PID and
 * CMD_NO_PTRACE say how). Each face parses its own arguments and returns perch's exit code. */
#ifndef PERCH_CMD_H
#define PERCH_CMD_H

#include <stdio.h>
#include <sys/types.h>

#include "perch/base/exitcode.h"

struct repl_cmd;
struct strbuf;

struct cmd {
	const char *name;
	const char *summary;		   /* its line in `perch --help` (with @run) */
	void (*help)(struct strbuf *sb);   /* appends `perch CMD --help` (with @run) */
	int (*run)(int argc, char **argv); /* `perch CMD ...`; NULL: a prompt-only command */
	unsigned int flags;		   /* CMD_* */
	const struct repl_cmd *prompt;	   /* the prompt's own implementation, or NULL */
	/* the options of @run as completion words, given to @add (from its option table), for
	 * a prompt that runs @run with them (stat, mem, annotate; report FILE.perch); or NULL */
	void (*complete_options)(void (*add)(void *arg, const char *word), void *arg);
};

/* @run takes -p PID: the prompt runs it with the attached target's pid (detaching around it,
 * in a child process) when the command has no prompt face. */
#define CMD_PID 0x1
/* @run never ptraces (it reads /proc or files only): the prompt runs it in a child without
 * detaching from the target, also while a background recording runs. */
#define CMD_NO_PTRACE 0x2

extern const struct cmd cmd_record, cmd_dump, cmd_top, cmd_threads, cmd_maps;
extern const struct cmd cmd_stat, cmd_mem;
extern const struct cmd cmd_report, cmd_annotate;
/* the prompt's own (repl-cmds.c, repl-diff.c) */
extern const struct cmd cmd_attach, cmd_detach, cmd_save, cmd_diff, cmd_set, cmd_help, cmd_quit;

/* Print @c's help to @f; to stderr (after a usage error) only its synopsis and a pointer to
 * `perch CMD --help`. */
void cmd_print_help(const struct cmd *c, FILE *f);

/* -p PID|NAME: a pid as it is; a name as the prompt's attach finds it (comm, argv[0]'s
 * basename, an Android package), exactly one process. 0 with *@pid set, or the exit code
 * with the message printed (none: PERCH_EXIT_FATAL; several: PERCH_EXIT_USAGE). */
int cmd_find_pid(const char *what, pid_t *pid);

#endif
