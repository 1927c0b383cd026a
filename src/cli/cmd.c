/* What the commands share: printing a command's help, or its short usage after an error;
 * finding the process of -p PID|NAME. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"
#include "perch/cli/cmd.h"
#include "perch/cli/repl.h"

int cmd_find_pid(const char *what, pid_t *pid)
{
	pid_t pids[8];
	int n;

	if (what[0] && isdigit((unsigned char)what[0]))
		return opt_parse_pid(what, pid) < 0 ? PERCH_EXIT_USAGE : 0;
	n = repl_find_process(what, pids, 8);
	if (n == 1) {
		*pid = pids[0];
		return 0;
	}
	if (n <= 0)
		return log_err(PERCH_EXIT_FATAL, "no process matches '%s'", what);
	return log_err(PERCH_EXIT_USAGE,
		       "%d processes match '%s' (pids %d, %d%s): give one by pid ('perch "
		       "threads -p PID' tells them apart)",
		       n, what, (int)pids[0], (int)pids[1], n > 2 ? ", ..." : "");
}

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
