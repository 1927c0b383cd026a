/* The interactive prompt (readline), scripted mode (-x FILE or a non-terminal stdin, --json)
 * and the prompt faces of the commands (repl-cmds.c, repl-diff.c, repl-top.c). The prompt
 * knows the commands only through the table it is given (main.c's, see struct cmd). Every
 * command produces one result: human text on a terminal, and in scripted mode a status line or
 * one JSON object (the schema is in perch(1)). A command without a prompt face runs its
 * command line in a child process, with the attached target's pid as -p (CMD_PID). */
#ifndef PERCH_REPL_H
#define PERCH_REPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "perch/base/strbuf.h"
#include "perch/record/record-core.h"

struct cmd;
struct strbuf;
struct session;
struct repl_rec;

enum repl_mode {
	REPL_TTY,    /* a person at the prompt */
	REPL_SCRIPT, /* -x FILE or piped commands: no prompt, no escape codes */
	REPL_CLI,    /* one command from the command line (perch top -p PID) */
};

#define REPL_JSON_DEPTH 8

struct repl {
	enum repl_mode mode;
	int json_mode;	/* scripted mode: one JSON object per command */
	int keep_going; /* scripted mode: run every command even after a failure */
	int color;	/* escape codes allowed (terminal that supports them) */
	struct session *s;
	const struct cmd *const *table; /* the CLI commands (main.c) */
	size_t nr_table;

	/* `set`: the record options every `record` and `top` starts from */
	struct record_opts defaults;

	struct repl_rec *rec; /* the running or last recording, or NULL */
	int quit;

	/* the result of the current command */
	struct strbuf json; /* fields after "cmd"/"ok", each starting with ',' */
	struct strbuf kv;   /* top-level scalar fields as " key=value" (scripted text mode) */
	struct strbuf text; /* human text (scripted text mode: printed indented) */
	int depth;	    /* JSON nesting below the result object */
	int first[REPL_JSON_DEPTH];
};

/* Entry from main(): `perch`, `perch -p PID|NAME`, `perch -x FILE`, `--json`,
 * `--keep-going`, with the commands of @table. @argv[0] is "perch". Returns the exit code. */
int repl_main(int argc, char **argv, const struct cmd *const *table, size_t nr_table);
/* A prompt command from the command line (`perch top -p PID ...`): attach with @table's
 * attach, run the prompt face of @c (which prints its command-line help for -h/--help) with
 * @argv (argv[0] is the command; -p PID|NAME taken out), detach. */
int repl_cli_run(const struct cmd *const *table, size_t nr_table, const struct cmd *c, int argc,
		 char **argv);

/* Split a command line into words: blanks separate, '...' and "..." quote, backslash escapes
 * the next character (also inside "..."), '#' at the start of a word starts a comment.
 * Returns the number of words (the array in *@argv, NULL-terminated, one allocation to
 * free()), or -EINVAL for an unterminated quote. */
int repl_split(const char *line, char ***argv);

/* Find a process by pid or by name: "1234", a command name (comm or argv[0]'s basename) or an
 * Android package name (argv[0] up to ':'). Fills @pids (up to @max) and returns how many
 * matched (perch itself excluded), or -EINVAL for an empty name. */
int repl_find_process(const char *what, pid_t *pids, size_t max);

/* Does a process with this comm and argv[0] match @what (repl_find_process's rules)? Pure, for
 * tests: "app" matches comm "app", argv[0] "/bin/app" or "app"; "com.example" matches the
 * Android process "com.example" and its secondary process "com.example:remote". */
int repl_name_matches(const char *what, const char *comm, const char *argv0);

/* What `attach` lists about a candidate process. */
struct repl_process {
	pid_t pid;
	uid_t uid; /* real uid; on Android the user is uid / 100000 */
	char comm[64];
	char cmdline[256]; /* argv[0] ("" for kernel threads) */
};
#define REPL_ANDROID_PER_USER 100000 /* AID_USER_OFFSET: uid = user * 100000 + app id */
/* Fill @out from /proc/@pid. 0 or -errno. */
int repl_process_info(pid_t pid, struct repl_process *out);

/* Run the table's command-line command @name (argv[0] is the command word) in a child, as for
 * a command without a prompt face (-p PID of the target when it takes one). */
int repl_run_table_cmd(struct repl *r, const char *name, int argc, char **argv);

/* Result building, for the commands. Human text goes to stdout at once on a terminal and in
 * CLI mode, is kept and indented in scripted text mode, dropped with --json. */
void repl_printf(struct repl *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void repl_field_int(struct repl *r, const char *key, long long v);
void repl_field_double(struct repl *r, const char *key, double v);
void repl_field_str(struct repl *r, const char *key, const char *v);
void repl_field_bool(struct repl *r, const char *key, int v);
void repl_field_hex(struct repl *r, const char *key, unsigned long long v); /* "0x1f" */
/* An array of objects (or strings with repl_field_str(r, NULL, s)) under @key. */
void repl_array_begin(struct repl *r, const char *key);
void repl_array_end(struct repl *r);
void repl_object_begin(struct repl *r);
void repl_object_end(struct repl *r);

/* How the prompt completes a command's words. */
enum repl_complete {
	REPL_COMPLETE_NONE,
	REPL_COMPLETE_PROCESS, /* pids and process names */
	REPL_COMPLETE_TID,     /* the target's thread ids */
	REPL_COMPLETE_FILE,
	REPL_COMPLETE_COMMAND,
	REPL_COMPLETE_FORMAT, /* output format names, then files */
};

/* A command's prompt face (struct cmd's @prompt): its own implementation at the prompt. */
struct repl_cmd {
	const char *args; /* "PID|NAME" */
	const char *summary;
	const char *usage;	    /* more help, or NULL */
	const char *const *words;   /* completion words for the first argument (NULL-terminated) */
	const char *const *options; /* completion words for '-' (NULL-terminated) */
	enum repl_complete complete;
	int needs_target;
	int (*fn)(struct repl *r, int argc, char **argv); /* a perch exit code */
	/* the option lines of its help, after @usage (from its option table), or NULL */
	void (*help_options)(struct strbuf *sb);
	/* its options as completion words, given to @add (from its option table), or NULL */
	void (*complete_options)(void (*add)(void *arg, const char *word), void *arg);
	/* completes argument @argc (its words before: @argv) through @add: 1, or 0 to leave it to
	 * @words and @complete; or NULL */
	int (*complete_args)(int argc, char **argv, void (*add)(void *arg, const char *word),
			     void *arg);
	/* frees what the command keeps between calls, when the prompt ends; or NULL */
	void (*release)(struct repl *r);
};

/* repl-cmds.c: the prompt faces of the commands the command line has too. */
extern const struct repl_cmd repl_record, repl_dump, repl_top, repl_threads, repl_maps, repl_report;

/* The command of the prompt's table named @name ("exit" is "quit"), or NULL. */
const struct cmd *repl_find_cmd(const struct repl *r, const char *name);
/* repl-cmds.c: the profile of the last recording, once it ended; NULL (message printed) when
 * there is none or it still runs. Borrowed until the next record. */
struct profile;
const struct profile *repl_last_profile(struct repl *r);
/* Run the foreground session job of `top`/`record`: returns when it ends; on a terminal a
 * key press or Ctrl-C ends it (repl.c watches the keyboard). */
int repl_run_foreground(struct repl *r, int (*fn)(struct session *, void *), void *arg,
			int watch_keys);
/* 1 when a Ctrl-C arrived since the command started. */
int repl_interrupted(void);

/* repl-top.c: the live table of `top`. repl_top_update() takes the profile's counts now:
 * the interval is what was added since the previous update (the first: everything). */
struct profile;
struct repl_top;
struct repl_top *repl_top_new(void);
void repl_top_free(struct repl_top *t);
void repl_top_update(struct repl_top *t, const struct profile *p);
/* Samples counted in the last interval. */
uint64_t repl_top_interval_samples(const struct repl_top *t);
/* The table, hottest in the last interval first (then by time since the start), at most
 * @rows functions; times are samples / @hz. */
void repl_top_print(struct repl_top *t, const struct profile *p, double hz, size_t rows, FILE *f);

#endif
