/*
 * strbuf.c - growable strings and the JSON writer (see strbuf.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "labmem.h"

void sb_init(strbuf *sb)
{
	memset(sb, 0, sizeof *sb);
}

void sb_free(strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

char *sb_take(strbuf *sb)
{
	if (sb->oom) {
		sb_free(sb);
		return NULL;
	}
	if (!sb->buf) {
		char *e = lab_malloc(1);
		if (e)
			e[0] = 0;
		return e;
	}
	char *r = sb->buf;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return r;
}

static int sb_reserve(strbuf *sb, size_t extra)
{
	if (sb->oom)
		return -1;
	if (sb->len + extra + 1 <= sb->cap)
		return 0;
	size_t cap = sb->cap ? sb->cap : 256;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	char *b = lab_realloc(sb->buf, cap);
	if (!b) {
		sb->oom = 1;
		return -1;
	}
	sb->buf = b;
	sb->cap = cap;
	return 0;
}

void sb_putc(strbuf *sb, char c)
{
	if (sb_reserve(sb, 1))
		return;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = 0;
}

void sb_puts(strbuf *sb, const char *s)
{
	size_t n = strlen(s);
	if (sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n + 1);
	sb->len += n;
}

void sb_printf(strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char tmp[256];
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		sb_puts(sb, tmp);
		return;
	}
	if (sb_reserve(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

/* One number format for every build: integers exactly, others with 10
 * significant digits (musl and glibc both round %g correctly). */
void sb_num(strbuf *sb, double v)
{
	if (v != v) {
		sb_puts(sb, "nan");
	} else if (isinf(v)) {
		sb_puts(sb, v > 0 ? "inf" : "-inf");
	} else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		sb_printf(sb, "%lld", (long long)v);
	} else {
		sb_printf(sb, "%.10g", v);
	}
}

/* The length of the valid UTF-8 sequence at s (2-4), or 0; its code
 * point in *cp. Overlong forms and surrogates are invalid. */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (s[0] >= 0xf5)
		n = 0;
	if (!n)
		return 0;
	uint32_t c = s[0] & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void sb_quote(strbuf *sb, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0;
	sb_putc(sb, '\'');
	while (i < len && (!max || i < max)) {
		unsigned char c = p[i];
		uint32_t cp = 0;
		int n;
		if (c == '\n' || c == '\r' || c == '\t' || c == '\\' || c == '\'') {
			sb_putc(sb, '\\');
			sb_putc(sb, c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : (char)c);
			i++;
		} else if (c >= 0x20 && c < 0x7f) {
			sb_putc(sb, (char)c);
			i++;
		} else if (c < 0x80 || !(n = utf8_seq(p + i, &cp))) {
			sb_printf(sb, "\\x%02x", c);
			i++;
		} else if ((cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
			   (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
			   cp == 0x200e || cp == 0x200f || cp == 0x061c) {
			sb_printf(sb, "\\u{%04x}", (unsigned)cp);
			i += (size_t)n;
		} else {
			for (int k = 0; k < n; k++)
				sb_putc(sb, (char)p[i + (size_t)k]);
			i += (size_t)n;
		}
	}
	sb_putc(sb, '\'');
	if (i < len)
		sb_puts(sb, "...");
}

/* ---- JSON ---- */

static void js_sep(strbuf *sb)
{
	if (sb->depth > 0 && sb->depth < 64) {
		if (sb->need_comma[sb->depth])
			sb_putc(sb, ',');
		sb->need_comma[sb->depth] = 1;
	}
}

static void js_open(strbuf *sb, char c)
{
	js_sep(sb);
	sb_putc(sb, c);
	sb->depth++;
	if (sb->depth < 64)
		sb->need_comma[sb->depth] = 0;
}

static void js_close(strbuf *sb, char c)
{
	sb_putc(sb, c);
	if (sb->depth > 0)
		sb->depth--;
}

void js_obj(strbuf *sb) { js_open(sb, '{'); }
void js_obj_end(strbuf *sb) { js_close(sb, '}'); }
void js_arr(strbuf *sb) { js_open(sb, '['); }
void js_arr_end(strbuf *sb) { js_close(sb, ']'); }

static void js_quote(strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': sb_puts(sb, "\\\""); break;
		case '\\': sb_puts(sb, "\\\\"); break;
		case '\n': sb_puts(sb, "\\n"); break;
		case '\r': sb_puts(sb, "\\r"); break;
		case '\t': sb_puts(sb, "\\t"); break;
		default:
			if (*p < 0x20)
				sb_printf(sb, "\\u%04x", *p);
			else
				sb_putc(sb, (char)*p);
		}
	}
	sb_putc(sb, '"');
}

/* A key is followed by its value, which must not get a comma of its own. */
void js_key(strbuf *sb, const char *k)
{
	js_sep(sb);
	js_quote(sb, k);
	sb_putc(sb, ':');
	if (sb->depth < 64)
		sb->need_comma[sb->depth] = 0;
	/* restore after the value: the value's js_sep sees need_comma == 0 and
	 * sets it to 1 again, which is what the next key needs. */
}

void js_str(strbuf *sb, const char *v)
{
	js_sep(sb);
	js_quote(sb, v ? v : "");
}

void js_num(strbuf *sb, double v)
{
	js_sep(sb);
	if (v != v || (isinf(v) && v < 0))
		sb_puts(sb, "null");
	else if (isinf(v))
		sb_puts(sb, "\"inf\"");
	else
		sb_num(sb, v);
}

void js_int(strbuf *sb, int64_t v)
{
	js_sep(sb);
	sb_printf(sb, "%lld", (long long)v);
}

void js_bool(strbuf *sb, int v)
{
	js_sep(sb);
	sb_puts(sb, v ? "true" : "false");
}

void js_null(strbuf *sb)
{
	js_sep(sb);
	sb_puts(sb, "null");
}

void js_raw(strbuf *sb, const char *json)
{
	js_sep(sb);
	sb_puts(sb, json);
}

void js_kstr(strbuf *sb, const char *k, const char *v) { js_key(sb, k); js_str(sb, v); }
void js_knum(strbuf *sb, const char *k, double v) { js_key(sb, k); js_num(sb, v); }
void js_kint(strbuf *sb, const char *k, int64_t v) { js_key(sb, k); js_int(sb, v); }
void js_kbool(strbuf *sb, const char *k, int v) { js_key(sb, k); js_bool(sb, v); }
