/* JSON string escaping and UTF-8 validation for the writers (json.h); no JSON parsing. */
#include "perch/out/json.h"

uint32_t json_utf8_next(const char *s, size_t *len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp, min;
	size_t n, i;

	*len = 1;
	if (u[0] < 0x80)
		return u[0];
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		n = 2;
		cp = u[0] & 0x1f;
		min = 0x80;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		n = 3;
		cp = u[0] & 0x0f;
		min = 0x800;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		n = 4;
		cp = u[0] & 0x07;
		min = 0x10000;
	} else {
		return JSON_REPLACEMENT_CHAR; /* continuation byte, 0xc0/0xc1 or 0xf5.. */
	}
	/* a NUL ends the loop as a non-continuation byte: no read past the string */
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return JSON_REPLACEMENT_CHAR;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return JSON_REPLACEMENT_CHAR;
	*len = n;
	return cp;
}

void json_add_utf8(struct strbuf *sb, uint32_t cp)
{
	if (cp < 0x80) {
		strbuf_addch(sb, (int)cp);
	} else if (cp < 0x800) {
		strbuf_addch(sb, (int)(0xc0 | cp >> 6));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		strbuf_addch(sb, (int)(0xe0 | cp >> 12));
		strbuf_addch(sb, (int)(0x80 | (cp >> 6 & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	} else {
		strbuf_addch(sb, (int)(0xf0 | cp >> 18));
		strbuf_addch(sb, (int)(0x80 | (cp >> 12 & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | (cp >> 6 & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	}
}

void json_add_str(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	while (s && *s) {
		size_t n;
		uint32_t cp = json_utf8_next(s, &n);

		s += n;
		switch (cp) {
		case '"':
			strbuf_addstr(sb, "\\\"");
			break;
		case '\\':
			strbuf_addstr(sb, "\\\\");
			break;
		case '\n':
			strbuf_addstr(sb, "\\n");
			break;
		case '\t':
			strbuf_addstr(sb, "\\t");
			break;
		case '\r':
			strbuf_addstr(sb, "\\r");
			break;
		default:
			if (cp < 0x20 || cp == 0x7f || cp == '<' || cp == '>' || cp == '&' ||
			    cp == 0x2028 || cp == 0x2029 || cp == JSON_REPLACEMENT_CHAR)
				strbuf_addf(sb, "\\u%04x", (unsigned int)cp);
			else
				json_add_utf8(sb, cp);
		}
	}
	strbuf_addch(sb, '"');
}
