/* Commands: one table serves the command line (and later the REPL). Each command parses its
 * own options and returns perch's exit code. */
#ifndef PERCH_CMD_H
#define PERCH_CMD_H

#include <stdio.h>

enum perch_exit {
	PERCH_EXIT_OK = 0,
	PERCH_EXIT_SAMPLE_ERRORS = 1, /* finished, but some samples failed */
	PERCH_EXIT_FATAL = 2,
	PERCH_EXIT_REGRESSION = 3, /* report --diff: a --fail-if rule tripped */
	PERCH_EXIT_USAGE = 64,
};

struct strbuf;

struct cmd {
	const char *name;
	const char *summary;
	void (*help)(struct strbuf *sb); /* appends the full help text (`perch CMD --help`) */
	int (*run)(int argc, char **argv);
	unsigned int flags; /* CMD_* */
};

/* @run takes -p PID: the REPL runs it with the attached target's pid (detaching around it,
 * in a child process) when it has no implementation of its own for the command. */
#define CMD_PID 0x1
/* @run never ptraces (it reads /proc or files only): the REPL runs it in a child without
 * detaching from the target, also while a background recording runs. */
#define CMD_NO_PTRACE 0x2

extern const struct cmd cmd_record, cmd_dump, cmd_top, cmd_threads, cmd_maps;
extern const struct cmd cmd_stat, cmd_mem;
extern const struct cmd cmd_report, cmd_annotate;

/* Print @c's help to @f (stderr after a usage error: then a blank line first). */
void cmd_print_help(const struct cmd *c, FILE *f);

#endif
