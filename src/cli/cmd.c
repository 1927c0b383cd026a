/* What the commands share: printing a command's help, or its short usage after an error. */
#include <stdio.h>
#include <string.h>

#include "perch/base/strbuf.h"
#include "perch/cli/cmd.h"

/* The synopsis (the help's lines up to its first blank line) and where the rest is. */
static void print_usage(const struct cmd *c, const char *help, FILE *f)
{
	const char *end = strstr(help, "\n\n");

	fprintf(f, "%.*s\nsee 'perch %s --help' for the options\n",
		(int)(end ? end - help : (int)strlen(help)), help, c->name);
}

void cmd_print_help(const struct cmd *c, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;

	c->help(&sb);
	if (f == stderr)
		print_usage(c, sb.buf, f);
	else
		fputs(sb.buf, f);
	strbuf_release(&sb);
}
