#include "text.h"

#include <ctype.h>
#include <stdarg.h>
#include <string.h>

void out_line(out *o, const char *fmt, ...)
{
	for (int i = 0; i < o->indent; i++)
		strbuf_putc(&o->sb, '\t');
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(&o->sb, fmt, ap);
	va_end(ap);
	strbuf_putc(&o->sb, '\n');
}

void out_raw(out *o, const char *text) { strbuf_puts(&o->sb, text); }

void put_comment_text(strbuf *sb, const char *s)
{
	/* A '/' or '*' that would pair with what sb ends with is a space too. */
	char prev = sb->len ? sb->data[sb->len - 1] : ' ';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c == '*' && (s[1] == '/' || prev == '/')) || (c == '/' && (s[1] == '*' || prev == '*')))
			c = ' '; /* closes or nests (-Wcomment) a comment */
		else if (c == '?' && s[1] == '?')
			c = ' ';
		else if (c == '\\' && !s[1])
			c = ' '; /* with the newline after it: a line splice */
		else if (c < 0x20 || c >= 0x7f)
			c = ' ';
		strbuf_putc(sb, (char)c);
		prev = (char)c;
	}
}

bool is_identifier_n(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

bool is_identifier(const char *s) { return is_identifier_n(s, strlen(s)); }


bool path_is_plain(const char *s)
{
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("._/+-", *s)))
			return false;
	return true;
}

bool include_text_ok(const char *s)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\' ||
		    (c == '*' && p[1] == '/') || (c == '/' && (p[1] == '*' || p[1] == '/')) ||
		    (c == '?' && p[1] == '?'))
			return false;
	}
	return true;
}

void source_name(strbuf *sb, const char *file)
{
	const char *slash = strrchr(file, '/');
	strbuf_puts(sb, slash ? slash + 1 : file);
}

void relative_path(strbuf *sb, const char *base, const char *target)
{
	/* The longest common prefix that ends at a component boundary. */
	size_t common = 0;
	for (size_t i = 0;; i++) {
		bool bend = base[i] == '\0' || base[i] == '/';
		bool tend = target[i] == '\0' || target[i] == '/';
		if (bend && tend)
			common = i;
		if (!base[i] || !target[i] || base[i] != target[i])
			break;
	}
	size_t before = sb->len;
	for (const char *p = base + common; *p; p++)
		if (*p == '/' && p[1])
			strbuf_puts(sb, "../");
	const char *rest = target + common;
	if (*rest == '/')
		rest++;
	if (*rest)
		strbuf_puts(sb, rest);
	else if (sb->len == before)
		strbuf_putc(sb, '.');
	else
		sb->len--, sb->data[sb->len] = '\0'; /* drop the trailing '/' */
}
