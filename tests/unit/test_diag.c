/* Unit tests for ir/diag.c: what a diagnostic prints is bounded (the source
 * line's window, the message, the error limit) and unchanged otherwise. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diag.h"

typedef struct capture {
	diags d;
	FILE *f;
	char *buf;
	size_t len;
} capture;

static void start(capture *c, const char *text, int limit)
{
	diags_init(&c->d);
	c->f = open_memstream(&c->buf, &c->len);
	c->d.out = c->f;
	c->d.limit = limit;
	if (text)
		diags_add_source(&c->d, "t.cu", text, strlen(text));
}

/* What was printed (malloc'd). */
static char *end(capture *c)
{
	diags_print_hidden(&c->d);
	fclose(c->f);
	diags_finish(&c->d);
	return c->buf;
}

static char *repeat(char ch, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memset(s, ch, n);
	s[n] = 0;
	return s;
}

static void test_short_line(void)
{
	capture c;
	start(&c, "int a;\n\tint b = x;\n", 0);
	diag_error(&c.d, (aotc_loc){"t.cu", 2, 10}, "use of '%s'", "x");
	char *out = end(&c);
	CHECK_STR(out, "t.cu:2:10: error: use of 'x'\n"
	               "    2 | \tint b = x;\n"
	               "      | \t        ^\n");
	free(out);
}

static void test_long_line(void)
{
	/* 1000 'a', then "XY", then 1000 'b': the window is 200 around X. */
	char *a = repeat('a', 1000), *b = repeat('b', 1000), *sp = repeat(' ', 200);
	static char line[2100];
	sprintf(line, "%sXY%s\n", a, b);
	capture c;
	start(&c, line, 0);
	diag_error(&c.d, (aotc_loc){"t.cu", 1, 1001}, "here");
	diag_error(&c.d, (aotc_loc){"t.cu", 1, 1}, "start");
	diag_error(&c.d, (aotc_loc){"t.cu", 1, 2003}, "end");
	char *out = end(&c);
	static char want[4000];
	char *p = want;
	p += sprintf(p, "t.cu:1:1001: error: here\n    1 | ...%.100sXY%.98s...\n      |    %.100s^\n",
	             a, b, sp);
	p += sprintf(p, "t.cu:1:1: error: start\n    1 | %.200s...\n      | ^\n", a);
	sprintf(p, "t.cu:1:2003: error: end\n    1 | ...%.200s\n      |    %.200s^\n", b, sp);
	CHECK_STR(out, want);
	free(out);
	free(a);
	free(b);
	free(sp);
}

static void test_utf8_cut(void)
{
	/* "é" is two bytes: a cut never splits one. */
	char line[1000] = "";
	for (int i = 0; i < 300; i++)
		strcat(line, "\xc3\xa9");
	capture c;
	start(&c, line, 0);
	diag_error(&c.d, (aotc_loc){"t.cu", 1, 301}, "mid");
	char *out = end(&c);
	const char *l = strstr(out, "    1 | ...");
	int ok = l != NULL;
	for (const char *q = l ? l + 11 : out; ok && *q != '.'; q += 2)
		ok = (unsigned char)q[0] == 0xc3 && (unsigned char)q[1] == 0xa9;
	CHECK_STR(ok ? "whole characters" : out, "whole characters");
	free(out);
}

static void test_message_cut(void)
{
	char *m = repeat('m', 5000);
	capture c;
	start(&c, NULL, 0);
	diag_plain_error(&c.d, "%s", m);
	char *out = end(&c);
	static char want[1100];
	sprintf(want, "aotc: error: %.1000s...\n", m);
	CHECK_STR(out, want);
	free(out);
	free(m);
}

static void test_limit(void)
{
	capture c;
	start(&c, NULL, 2);
	for (int i = 0; i < 5; i++) {
		diag_error(&c.d, (aotc_loc){"t.cu", 0, 0}, "e%d", i);
		diag_note(&c.d, (aotc_loc){"t.cu", 0, 0}, "n%d", i);
	}
	diag_warning(&c.d, (aotc_loc){"t.cu", 0, 0}, "w");
	int errors = c.d.errors;
	char *out = end(&c);
	CHECK_STR(out, "t.cu: error: e0\nt.cu: note: n0\nt.cu: error: e1\nt.cu: note: n1\n"
	               "t.cu: warning: w\n"
	               "aotc: note: 3 more errors not shown (limit 2; AOTC_ERROR_LIMIT=0 shows all)\n");
	CHECK_STR(errors == 5 ? "all counted" : "not", "all counted");
	free(out);
}

typedef struct seen {
	char text[256];
} seen;

static void record(void *ctx, const char *kind, aotc_loc loc, const char *msg)
{
	seen *s = ctx;
	size_t n = strlen(s->text);
	snprintf(s->text + n, sizeof s->text - n, "%s %s:%d:%d %s;", kind, loc.file ? loc.file : "-",
	         loc.line, loc.col, msg);
}

static void test_record(void)
{
	seen s = {""};
	diags d;
	diags_init(&d);
	d.limit = 1;
	d.record = record;
	d.record_ctx = &s;
	diag_error(&d, (aotc_loc){"t.cu", 3, 4}, "a");
	diag_error(&d, (aotc_loc){"t.cu", 5, 6}, "b");
	diag_note(&d, (aotc_loc){0}, "c");
	diags_finish(&d);
	/* Recorded whole: limits apply where they are printed. */
	CHECK_STR(s.text, "error t.cu:3:4 a;error t.cu:5:6 b;note -:0:0 c;");
}

int main(void)
{
	test_short_line();
	test_long_line();
	test_utf8_cut();
	test_message_cut();
	test_limit();
	test_record();
	return check_done();
}
