/* Text escaping shared by the JSON and SVG writers: UTF-8 validation (invalid bytes become
 * U+FFFD) and JSON string literals that are also safe inside XML/HTML <script> text. */
#ifndef PERCH_JSON_H
#define PERCH_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "perch/base/strbuf.h"

#define JSON_REPLACEMENT_CHAR 0xfffdu

/* Decode one UTF-8 character at @s (which must not point at the terminating NUL). Returns the
 * code point and sets *@len to the bytes it used; an invalid, overlong, surrogate or truncated
 * sequence returns JSON_REPLACEMENT_CHAR with *@len = 1, so a caller always makes progress. */
uint32_t json_utf8_next(const char *s, size_t *len);

/* Append @cp (< 0x110000) encoded as UTF-8. */
void json_add_utf8(struct strbuf *sb, uint32_t cp);

/* Append @s as a JSON string literal with its quotes (NULL is ""). Escaped: '"', '\\', every
 * control character, DEL, '<', '>', '&', U+2028 and U+2029 (so the literal can sit inside
 * an XML CDATA section or an HTML <script>); invalid UTF-8 becomes \ufffd. */
void json_add_str(struct strbuf *sb, const char *s);

#endif
