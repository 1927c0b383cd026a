/* perch's entry point: dispatch to a command from the table. */
#include <stdio.h>
#include <string.h>

#include "perch/cmd.h"
#include "perch/log.h"
#include "perch/xalloc.h"

#define PERCH_VERSION "0.1"

static const struct cmd *const commands[] = { &cmd_record, &cmd_dump };

static void usage(FILE *f)
{
	fprintf(f, "usage: perch <command> [options]\n\n"
		   "perch samples the stacks of a running process with ptrace, from outside.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\n'perch help <command>' or 'perch <command> --help' for its options.\n");
}

static const struct cmd *find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		usage(stderr);
		return PERCH_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return PERCH_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("perch %s\n", PERCH_VERSION);
		return PERCH_EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc > 2 && (c = find(argv[2]))) {
			fputs(c->usage, stdout);
			return PERCH_EXIT_OK;
		}
		usage(argc > 2 ? stderr : stdout);
		return argc > 2 ? PERCH_EXIT_USAGE : PERCH_EXIT_OK;
	}
	c = find(argv[1]);
	if (!c) {
		log_err(0, "unknown command '%s'", argv[1]);
		usage(stderr);
		return PERCH_EXIT_USAGE;
	}
	return c->run(argc - 1, argv + 1);
}
