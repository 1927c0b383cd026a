/* What the commands share: printing a command's help. */
#include <stdio.h>

#include "perch/base/strbuf.h"
#include "perch/cli/cmd.h"

void cmd_print_help(const struct cmd *c, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;

	c->help(&sb);
	fprintf(f, "%s%s", f == stderr ? "\n" : "", sb.buf);
	strbuf_release(&sb);
}
