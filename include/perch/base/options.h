/* A command's options, declared once: one table of struct opt_spec gives getopt_long its
 * arrays, `--help` its option lines, the prompt its help and completion words, and the
 * man-page check (tests/docs/check_docs.py) its truth. Also the value parsers commands share.
 * Pure: no I/O but what the caller asks for (a strbuf); anyone may use it. */
#ifndef PERCH_OPTIONS_H
#define PERCH_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <sys/types.h>

struct strbuf;

struct opt_spec {
	const char *name;   /* long name, without the dashes */
	int key;	    /* what the parser gets back: a letter (also the short option), or
			     * a value of 256 and above (long only) */
	const char *arg;    /* the value's name in help ("HZ"); NULL: the option takes none */
	const char *help;   /* one line, or several split by '\n' (wrapped by hand) */
	unsigned int scope; /* the caller's bits: where the option applies; 0: everywhere */
};

/* The most options one table may hold. */
#define OPTS_MAX 64

/* What getopt_long wants, gathered from one table or several. */
struct opts_getopt {
	struct option longs[OPTS_MAX + 1]; /* ends in a zeroed entry */
	char shorts[2 * OPTS_MAX + 2];	   /* "+p:F:..." ('+': stop at the first non-option) */
	size_t nr_longs, nr_shorts;
};

/* One table of options; a command may gather several (its own and shared ones) in a list of
 * pointers to them, which the *_list functions below take in order. */
struct opt_table {
	const struct opt_spec *specs;
	size_t n;
};
#define OPT_TABLE(a)                                                                               \
	{                                                                                          \
		(a), sizeof(a) / sizeof((a)[0])                                                    \
	}

/* Does @s apply in @scope? */
static inline int opt_in_scope(const struct opt_spec *s, unsigned int scope)
{
	return !s->scope || (s->scope & scope);
}

/* An empty @g; @stop_at_word puts the '+' first (options end at the first word, as for
 * `record -- PROGRAM`). */
void opts_getopt_init(struct opts_getopt *g, int stop_at_word);
/* Add the @n options of @specs that apply in @scope to @g (at most OPTS_MAX in all: more is
 * a bug, and aborts). */
void opts_getopt_add(struct opts_getopt *g, const struct opt_spec *specs, size_t n,
		     unsigned int scope);

/* The option lines of `--help` for those of @specs in @scope (but those without help text),
 * appended to @sb: "  -F, --freq HZ          samples per second" with the text at column
 * @col (its continuation lines too); a head too long for @col is followed by two spaces, or
 * by a new line when it reaches OPTS_HELP_OVERHANG columns past @col. */
#define OPTS_HELP_OVERHANG 8
void opts_help(struct strbuf *sb, const struct opt_spec *specs, size_t n, unsigned int scope,
	       int col);

/* Each option of @specs in @scope (but those without help text) as completion words, "-F"
 * and "--freq", given to @add. */
void opts_complete(const struct opt_spec *specs, size_t n, unsigned int scope,
		   void (*add)(void *arg, const char *word), void *arg);

/* opts_getopt_add(), opts_help() and opts_complete() over each of the @nt tables of @t. */
void opts_getopt_add_list(struct opts_getopt *g, const struct opt_table *const *t, size_t nt,
			  unsigned int scope);
void opts_help_list(struct strbuf *sb, const struct opt_table *const *t, size_t nt,
		    unsigned int scope, int col);
void opts_complete_list(const struct opt_table *const *t, size_t nt, unsigned int scope,
			void (*add)(void *arg, const char *word), void *arg);

/* The option of @specs with long name @name, or NULL. */
const struct opt_spec *opts_find(const struct opt_spec *specs, size_t n, const char *name);
/* The option of @specs whose key is @key, or NULL. */
const struct opt_spec *opts_by_key(const struct opt_spec *specs, size_t n, int key);

/* How messages name @s: "-F" when it has a letter, else "--name", into @buf. */
const char *opt_what(const struct opt_spec *s, char *buf, size_t size);

/* A process or thread id: a decimal number from 1 to 2^31-1. 0, or -EINVAL with the message
 * "'S' is not a process id" printed. */
int opt_parse_pid(const char *s, pid_t *pid);

#endif
