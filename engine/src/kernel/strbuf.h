/*
 * strbuf.h - a growable string and a tiny JSON writer.
 *
 * Numbers are printed with a fixed format (%.*g with 10 significant digits,
 * integers exactly) so native and WASM output match byte for byte.
 */
#ifndef STRBUF_H
#define STRBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct strbuf {
	char *buf;
	size_t len, cap;
	int oom; /* set if an allocation failed; further writes are dropped */
	/* JSON writer state: whether the next value in the current container
	 * needs a leading comma. Depth-limited. */
	int depth;
	unsigned char need_comma[64];
} strbuf;

void sb_init(strbuf *sb);
void sb_free(strbuf *sb);
char *sb_take(strbuf *sb); /* returns the malloc'd string (never NULL unless oom) */
void sb_putc(strbuf *sb, char c);
void sb_puts(strbuf *sb, const char *s);
void sb_printf(strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
/* Format a double the engine's one way: integers exactly, others %.10g,
 * non-finite as "inf"/"-inf"/"nan" (JSON: see js_num). */
void sb_num(strbuf *sb, double v);
/* Echo text the user gave (a refused argument, a setting) so that it can
 * neither break the line nor reach the terminal as control bytes: in
 * single quotes, with \n \r \t \\ \' escaped, other control bytes, DEL,
 * invalid UTF-8 and the code points a terminal or editor may treat as a
 * line break or a reordering (C1 controls, U+2028/9, bidi controls) as
 * \xHH or \u{HHHH}. At most `max` input bytes are shown (0: all), then
 * "..." outside the quotes. */
void sb_quote(strbuf *sb, const char *s, size_t max);

/* JSON writer. Keys and values are separated automatically. */
void js_obj(strbuf *sb);             /* { */
void js_obj_end(strbuf *sb);         /* } */
void js_arr(strbuf *sb);             /* [ */
void js_arr_end(strbuf *sb);         /* ] */
void js_key(strbuf *sb, const char *k);
void js_str(strbuf *sb, const char *v);
void js_num(strbuf *sb, double v);   /* non-finite -> null, except +inf -> "inf" */
void js_int(strbuf *sb, int64_t v);
void js_bool(strbuf *sb, int v);
void js_null(strbuf *sb);
void js_raw(strbuf *sb, const char *json); /* a pre-formatted value */
/* key + value shorthands */
void js_kstr(strbuf *sb, const char *k, const char *v);
void js_knum(strbuf *sb, const char *k, double v);
void js_kint(strbuf *sb, const char *k, int64_t v);
void js_kbool(strbuf *sb, const char *k, int v);

#endif /* STRBUF_H */
