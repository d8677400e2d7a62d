#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct diag_source {
	struct diag_source *next;
	char *file;
	char *text;     /* NULL when the file could not be read */
	size_t len;
};

void diags_init(diags *d)
{
	memset(d, 0, sizeof *d);
	d->out = stderr;
}

void diags_init_buffered(diags *d)
{
	memset(d, 0, sizeof *d);
	d->out = open_memstream(&d->buf, &d->buf_len);
	if (!d->out)
		die("open_memstream failed");
	d->buffered = true;
}

void diags_flush(diags *d, FILE *f)
{
	if (!d->buffered)
		return;
	fflush(d->out);
	fwrite(d->buf, 1, d->buf_len, f);
	rewind(d->out);
	d->buf_len = 0;
}

void diags_finish(diags *d)
{
	if (d->buffered) {
		fclose(d->out);
		free(d->buf);
		d->buf = NULL;
		d->out = NULL;
		d->buffered = false;
	}
	struct diag_source *s = d->sources;
	while (s) {
		struct diag_source *next = s->next;
		free(s->file);
		free(s->text);
		free(s);
		s = next;
	}
	d->sources = NULL;
}

void diags_add_source(diags *d, const char *file, const char *text, size_t len)
{
	struct diag_source *s = xcalloc(1, sizeof *s);
	s->file = xstrdup(file);
	s->text = xmalloc(len + 1);
	memcpy(s->text, text, len);
	s->text[len] = 0;
	s->len = len;
	s->next = d->sources;
	d->sources = s;
}

static struct diag_source *find_source(diags *d, const char *file)
{
	for (struct diag_source *s = d->sources; s; s = s->next)
		if (strcmp(s->file, file) == 0)
			return s;
	struct diag_source *s = xcalloc(1, sizeof *s);
	s->file = xstrdup(file);
	s->text = read_file_max(file, &s->len, (size_t)AOTC_INPUT_MAX_MIB << 20);
	s->next = d->sources;
	d->sources = s;
	return s;
}

/* Prints the source line of loc and a caret under its column. Tabs in the
 * line are kept in the caret line so the caret lines up in any terminal. */
static void show_line(diags *d, aotc_loc loc)
{
	struct diag_source *s = find_source(d, loc.file);
	if (!s->text)
		return;
	const char *p = s->text, *end = s->text + s->len;
	for (int line = 1; line < loc.line && p < end; p++)
		if (*p == '\n')
			line++;
	if (p >= end && loc.line > 1)
		return;
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		eol = end;
	if (eol > p && eol[-1] == '\r')
		eol--;
	fprintf(d->out, "%5d | %.*s\n", loc.line, (int)(eol - p), p);
	fputs("      | ", d->out);
	for (int col = 1; col < loc.col && p + col - 1 < eol; col++)
		fputc(p[col - 1] == '\t' ? '\t' : ' ', d->out);
	fputs("^\n", d->out);
}

static void report(diags *d, aotc_loc loc, const char *kind, const char *fmt,
                   va_list ap)
{
	if (!d->out)
		return;
	if (loc.file && loc.line > 0)
		fprintf(d->out, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, kind);
	else if (loc.file)
		fprintf(d->out, "%s: %s: ", loc.file, kind);
	else
		fprintf(d->out, "aotc: %s: ", kind);
	vfprintf(d->out, fmt, ap);
	fputc('\n', d->out);
	if (loc.file && loc.line > 0)
		show_line(d, loc);
}

void diag_error(diags *d, aotc_loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(d, loc, "error", fmt, ap);
	va_end(ap);
	d->errors++;
}

void diag_warning(diags *d, aotc_loc loc, const char *fmt, ...)
{
	d->warnings++;
	if (d->quiet_warnings)
		return;
	va_list ap;
	va_start(ap, fmt);
	report(d, loc, "warning", fmt, ap);
	va_end(ap);
}

void diag_note(diags *d, aotc_loc loc, const char *fmt, ...)
{
	if (d->quiet_warnings && d->errors == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	report(d, loc, "note", fmt, ap);
	va_end(ap);
}

void diag_plain_error(diags *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(d, (aotc_loc){0}, "error", fmt, ap);
	va_end(ap);
	d->errors++;
}
