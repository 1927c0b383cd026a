/* perch's entry point: dispatch to a command from the table. */
#include <stdio.h>
#include <string.h>

#include "perch/base/fdlimit.h"
#include "perch/base/log.h"
#include "perch/base/xalloc.h"
#include "perch/cli/cmd.h"
#include "perch/cli/repl.h"
#include "perch/cli/version.h"

#ifdef PERCH_FAULT_INJECTION
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

/* Every command, of the command line and of the prompt (see struct cmd): in this order in
 * `perch --help` (those with a command-line face) and in the prompt's `help`. */
static const struct cmd *const commands[] = {
    &cmd_attach,   &cmd_detach, &cmd_record, &cmd_dump, &cmd_top,  &cmd_threads,
    &cmd_maps,	   &cmd_report, &cmd_save,   &cmd_diff, &cmd_stat, &cmd_mem,
    &cmd_annotate, &cmd_set,	&cmd_help,   &cmd_quit,
};
static void usage(FILE *f)
{
	fprintf(f,
		"usage: perch <command> [options]\n"
		"       perch [-p PID|NAME] [-x FILE] [--json] [--keep-going]   (prompt, scripts)\n"
		"       perch --version | -h, --help\n\n"
		"perch samples the stacks of a running process with ptrace, from outside.\n\n"
		"commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (commands[i]->run)
			fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\n'perch help <command>' or 'perch <command> --help' for its options.\n");
}

/* The command-line command @name, or NULL. */
static const struct cmd *find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (commands[i]->run && !strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

#ifdef PERCH_FAULT_INJECTION
/* Test builds only (tests/faults, perch-fault): PERCH_CRASH_AFTER_US=N makes perch crash N
 * microseconds after start, wherever the main thread (the tracer) is by then: a timer sends it
 * SIGSEGV, which perch never blocks; PERCH_CRASH_HOW=abort turns that into abort(). The suite
 * checks that the target survives, as it must survive any crash of perch. No core file. */
static void fault_abort(int sig)
{
	(void)sig;
	abort();
}

static void fault_arm(void)
{
	const char *after = getenv("PERCH_CRASH_AFTER_US"), *how = getenv("PERCH_CRASH_HOW");
	struct rlimit no_core = {0, 0};
	struct sigevent sev = {0};
	struct itimerspec its = {0};
	long long us;
	timer_t timer;

	if (!after || (us = atoll(after)) <= 0)
		return;
	setrlimit(RLIMIT_CORE, &no_core);
	/* SIG_DFL also in sanitizer builds, whose handler would turn the crash into exit 1 */
	signal(SIGSEGV, how && !strcmp(how, "abort") ? fault_abort : SIG_DFL);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGSEGV;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	its.it_value.tv_sec = us / 1000000;
	its.it_value.tv_nsec = us % 1000000 * 1000;
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) || timer_settime(timer, 0, &its, NULL))
		log_errno(-errno, "cannot arm PERCH_CRASH_AFTER_US");
}
#endif

int main(int argc, char **argv)
{
	const struct cmd *c;

#ifdef PERCH_FAULT_INJECTION
	fault_arm();
#endif
	fdlimit_raise();

	/* no command, or session options (-p, -x, --json, ...): the prompt or scripted mode */
	if (argc < 2 || (argv[1][0] == '-' && strcmp(argv[1], "--help") && strcmp(argv[1], "-h") &&
			 strcmp(argv[1], "--version")))
		return repl_main(argc, argv, commands, ARRAY_SIZE(commands));
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return PERCH_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		version_print(stdout);
		return PERCH_EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc > 2 && (c = find(argv[2]))) {
			cmd_print_help(c, stdout);
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
