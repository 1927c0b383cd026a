/* Option tables: getopt_long's arrays and the --help lines from one struct opt_spec table. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/log.h"
#include "perch/base/options.h"
#include "perch/base/strbuf.h"

static int has_letter(const struct opt_spec *s)
{
	return s->key > 0 && s->key < 256 && isalnum(s->key);
}

void opts_getopt_init(struct opts_getopt *g, int stop_at_word)
{
	memset(g, 0, sizeof(*g));
	if (stop_at_word)
		g->shorts[g->nr_shorts++] = '+';
}

void opts_getopt_add(struct opts_getopt *g, const struct opt_spec *specs, size_t n,
		     unsigned int scope)
{
	for (size_t i = 0; i < n; i++) {
		const struct opt_spec *s = &specs[i];

		if (!opt_in_scope(s, scope))
			continue;
		if (g->nr_longs == OPTS_MAX) {
			log_err(0, "bug: more than OPTS_MAX (%d) options", OPTS_MAX);
			abort();
		}
		g->longs[g->nr_longs++] = (struct option){
		    s->name, s->arg ? required_argument : no_argument, NULL, s->key};
		if (has_letter(s)) {
			g->shorts[g->nr_shorts++] = (char)s->key;
			if (s->arg)
				g->shorts[g->nr_shorts++] = ':';
		}
	}
}

void opts_help(struct strbuf *sb, const struct opt_spec *specs, size_t n, unsigned int scope,
	       int col)
{
	for (size_t i = 0; i < n; i++) {
		const struct opt_spec *s = &specs[i];
		size_t start = sb->len;
		const char *text = s->help;

		if (!opt_in_scope(s, scope) || !text)
			continue;
		if (has_letter(s))
			strbuf_addf(sb, "  -%c, --%s", s->key, s->name);
		else
			strbuf_addf(sb, "      --%s", s->name);
		if (s->arg)
			strbuf_addf(sb, " %s", s->arg);
		if (sb->len - start + 1 <= (size_t)col)
			strbuf_addf(sb, "%*s", (int)((size_t)col - (sb->len - start)), "");
		else if (sb->len - start <= (size_t)col + OPTS_HELP_OVERHANG)
			strbuf_addstr(sb, "  ");
		else
			strbuf_addf(sb, "\n%*s", col, "");
		for (;;) {
			const char *eol = strchr(text, '\n');

			strbuf_add(sb, text, eol ? (size_t)(eol - text) : strlen(text));
			strbuf_addch(sb, '\n');
			if (!eol)
				break;
			text = eol + 1;
			strbuf_addf(sb, "%*s", col, "");
		}
	}
}

const struct opt_spec *opts_find(const struct opt_spec *specs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(specs[i].name, name))
			return &specs[i];
	return NULL;
}

const struct opt_spec *opts_by_key(const struct opt_spec *specs, size_t n, int key)
{
	for (size_t i = 0; i < n; i++)
		if (specs[i].key == key)
			return &specs[i];
	return NULL;
}

const char *opt_what(const struct opt_spec *s, char *buf, size_t size)
{
	if (has_letter(s))
		snprintf(buf, size, "-%c", s->key);
	else
		snprintf(buf, size, "--%s", s->name);
	return buf;
}

int opt_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v <= 0 || v > 0x7fffffff)
		return log_err(-EINVAL, "'%s' is not a process id", s);
	*pid = (pid_t)v;
	return 0;
}

void opts_complete(const struct opt_spec *specs, size_t n, unsigned int scope,
		   void (*add)(void *arg, const char *word), void *arg)
{
	for (size_t i = 0; i < n; i++) {
		const struct opt_spec *s = &specs[i];
		char word[64];

		if (!opt_in_scope(s, scope) || !s->help)
			continue;
		if (has_letter(s)) {
			snprintf(word, sizeof(word), "-%c", s->key);
			add(arg, word);
		}
		snprintf(word, sizeof(word), "--%s", s->name);
		add(arg, word);
	}
}

void opts_getopt_add_list(struct opts_getopt *g, const struct opt_table *const *t, size_t nt,
			  unsigned int scope)
{
	for (size_t i = 0; i < nt; i++)
		opts_getopt_add(g, t[i]->specs, t[i]->n, scope);
}

void opts_help_list(struct strbuf *sb, const struct opt_table *const *t, size_t nt,
		    unsigned int scope, int col)
{
	for (size_t i = 0; i < nt; i++)
		opts_help(sb, t[i]->specs, t[i]->n, scope, col);
}

void opts_complete_list(const struct opt_table *const *t, size_t nt, unsigned int scope,
			void (*add)(void *arg, const char *word), void *arg)
{
	for (size_t i = 0; i < nt; i++)
		opts_complete(t[i]->specs, t[i]->n, scope, add, arg);
}
