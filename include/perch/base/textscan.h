/* Scanning /proc-style text: bounded number scanners, literals, space runs and a line iterator.
 * Knows no file format; the proc-* parsers build on it. No allocation, no locale, no errno.
 *
 * Cursor convention: a scanner reads at *@s, never at or past @end, and on success advances *@s
 * past what it consumed. On failure *@s and *@out are left unchanged. @end may be NULL for a
 * NUL-terminated string: scanning then stops at the NUL (it is never a digit, a space or part
 * of a literal, so a bounded and an unbounded scan of the same line agree).
 */
#ifndef PERCH_TEXTSCAN_H
#define PERCH_TEXTSCAN_H

#include <stddef.h>
#include <stdint.h>

/* Unsigned decimal: one or more of [0-9], no sign, no spaces, leading zeros allowed.
 * 0, -EINVAL when no digit is at *@s, -ERANGE when the value does not fit 64 bits. */
int textscan_u64(const char **s, const char *end, uint64_t *out);

/* Hexadecimal: 1..@max_digits of [0-9a-fA-F], no "0x" (match that with textscan_expect()).
 * @max_digits above 16 counts as 16, so the value always fits. A longer run of digits is an
 * error, not a stop: "123456789" with max 8 fails. 0, -EINVAL when no digit is at *@s (or
 * @max_digits is 0), -ERANGE when the run is longer than @max_digits. */
int textscan_x64(const char **s, const char *end, unsigned int max_digits, uint64_t *out);

/* The literal @lit (non-empty, no NUL inside) at *@s: 0 and advance past it, or -EINVAL. */
int textscan_expect(const char **s, const char *end, const char *lit);

/* Skip a run of ' ' (only: /proc pads columns with spaces, a tab is data). Returns how many
 * were skipped, so "at least one space" is `if (!textscan_skip_spaces(&p, end))`. */
size_t textscan_skip_spaces(const char **s, const char *end);

/* Line iterator over NUL-terminated text. Returns the next line and sets *@eol to its end (the
 * '\n' or the final NUL, not part of the line), and moves *@pos to the line after it; returns
 * NULL at the NUL. A last line without '\n' is still a line; an empty line is a line
 * (line == *eol). After the loop *@pos points at the NUL; a loop left early can test **@pos
 * for unread text.
 *
 *	const char *pos = text, *line, *eol;
 *
 *	while ((line = textscan_line(&pos, &eol)))
 *		parse(line, eol);
 */
const char *textscan_line(const char **pos, const char **eol);

#endif
