/* Commands: one table serves the command line (and later the REPL). Each command parses its
 * own options and returns perch's exit code. */
#ifndef PERCH_CMD_H
#define PERCH_CMD_H

enum perch_exit {
	PERCH_EXIT_OK = 0,
	PERCH_EXIT_SAMPLE_ERRORS = 1, /* finished, but some samples failed */
	PERCH_EXIT_FATAL = 2,
	PERCH_EXIT_USAGE = 64,
};

struct cmd {
	const char *name;
	const char *summary;
	const char *usage;  /* full help text */
	int (*run)(int argc, char **argv);
};

extern const struct cmd cmd_record, cmd_dump;

/* Parse a pid argument; 0 or -EINVAL (message printed). */
int cmd_parse_pid(const char *s, int *pid);

#endif
