/* Bounded scanners for /proc-style text (numbers, literals, spaces, lines). No format knowledge:
 * the rules of each file stay in its parser. */
#include <errno.h>
#include <string.h>

#include "perch/base/textscan.h"

/* Is there a byte to read at @p? (@end NULL: the string's NUL stops every scanner anyway.) */
static int more(const char *p, const char *end)
{
	return !end || p < end;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int textscan_u64(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (!more(p, end) || *p < '0' || *p > '9')
		return -EINVAL;
	for (; more(p, end) && *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*s = p;
	*out = v;
	return 0;
}

int textscan_x64(const char **s, const char *end, unsigned int max_digits, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	unsigned int n;
	int d;

	if (!max_digits)
		return -EINVAL;
	if (max_digits > 16)
		max_digits = 16;
	for (n = 0; more(p, end) && (d = hexval(*p)) >= 0; n++, p++) {
		if (n == max_digits)
			return -ERANGE;
		v = v << 4 | (uint64_t)d;
	}
	if (!n)
		return -EINVAL;
	*s = p;
	*out = v;
	return 0;
}

int textscan_expect(const char **s, const char *end, const char *lit)
{
	const char *p = *s;

	if (!*lit)
		return -EINVAL;
	/* byte by byte: stops at @end and at a NUL in the text, where memcmp() would read on */
	for (; *lit; lit++, p++)
		if (!more(p, end) || *p != *lit)
			return -EINVAL;
	*s = p;
	return 0;
}

size_t textscan_skip_spaces(const char **s, const char *end)
{
	const char *start = *s, *p = start;

	while (more(p, end) && *p == ' ')
		p++;
	*s = p;
	return (size_t)(p - start);
}

const char *textscan_line(const char **pos, const char **eol)
{
	const char *line = *pos;

	if (!*line)
		return NULL;
	*eol = strchrnul(line, '\n');
	*pos = **eol ? *eol + 1 : *eol;
	return line;
}
