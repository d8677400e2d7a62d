#include "diag.h"

#include <limits.h>
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

static int default_limit(void)
{
	const char *s = getenv("AOTC_ERROR_LIMIT");
	char *end = "";
	long v = s && *s ? strtol(s, &end, 10) : -1;
	return v >= 0 && v <= INT_MAX && !*end ? (int)v : DIAG_DEFAULT_LIMIT;
}

void diags_init(diags *d)
{
	memset(d, 0, sizeof *d);
	d->out = stderr;
	d->limit = default_limit();
}

void diags_init_buffered(diags *d)
{
	memset(d, 0, sizeof *d);
	d->limit = default_limit();
	d->out = open_memstream(&d->buf, &d->buf_len);
	if (!d->out)
		die("open_memstream failed");
	d->buffered = true;
}

void diags_flush(diags *d, FILE *f)
{
	if (!d->buffered)
		return;
	diags_print_hidden(d);
	fflush(d->out);
	fwrite(d->buf, 1, d->buf_len, f);
	rewind(d->out);
	d->buf_len = 0;
}

static void record_entry(void *ctx, const char *kind, aotc_loc loc, const char *msg)
{
	diag_list_add(ctx, kind, loc, msg);
}

void diags_init_list(diags *d, diag_list *l)
{
	memset(d, 0, sizeof *d);
	memset(l, 0, sizeof *l);
	d->record = record_entry;
	d->record_ctx = l;
}

void diag_list_add(diag_list *l, const char *kind, aotc_loc loc, const char *msg)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4;
		l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
	}
	l->v[l->n++] = (diag_entry){xstrdup(kind), loc.file ? xstrdup(loc.file) : NULL, loc.line, loc.col,
	                            xstrdup(msg)};
}

void diag_list_replay(const diag_list *l, diags *d)
{
	for (int i = 0; i < l->n; i++) {
		const diag_entry *e = &l->v[i];
		aotc_loc loc = {e->file, e->line, e->col};
		if (!strcmp(e->kind, "error"))
			diag_error(d, loc, "%s", e->msg);
		else if (!strcmp(e->kind, "warning"))
			diag_warning(d, loc, "%s", e->msg);
		else
			diag_note(d, loc, "%s", e->msg);
	}
}

void diag_list_finish(diag_list *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->v[i].kind);
		free(l->v[i].file);
		free(l->v[i].msg);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
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

void diags_print_hidden(diags *d)
{
	if (d->out && (d->hidden_errors || d->hidden_warnings)) {
		fputs("aotc: note: ", d->out);
		if (d->hidden_errors)
			fprintf(d->out, "%d more error%s", d->hidden_errors,
			        d->hidden_errors == 1 ? "" : "s");
		if (d->hidden_errors && d->hidden_warnings)
			fputs(" and ", d->out);
		if (d->hidden_warnings)
			fprintf(d->out, "%d more warning%s", d->hidden_warnings,
			        d->hidden_warnings == 1 ? "" : "s");
		fprintf(d->out, " not shown (limit %d; AOTC_ERROR_LIMIT=0 shows all)\n", d->limit);
	}
	d->hidden_errors = d->hidden_warnings = 0;
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

/* Moves i back (step -1) or on (+1) off UTF-8 continuation bytes, at most
 * three, so that a cut does not split a character. */
static size_t char_boundary(const char *p, size_t len, size_t i, int step)
{
	for (int n = 0; n < 3 && i > 0 && i < len && ((unsigned char)p[i] & 0xC0) == 0x80; n++)
		i = step < 0 ? i - 1 : i + 1;
	return i;
}

/* Prints the source line of loc and a caret under its column. Tabs in the
 * line are kept in the caret line so the caret lines up in any terminal.
 * A line longer than DIAG_LINE_WINDOW shows that much around the column,
 * "..." marking what is cut (minified or generated sources). */
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
	size_t len = (size_t)(eol - p);
	size_t at = loc.col > 1 ? (size_t)loc.col - 1 : 0;
	if (at > len)
		at = len;
	size_t from = 0, to = len;
	if (len > DIAG_LINE_WINDOW) {
		from = at > DIAG_LINE_WINDOW / 2 ? at - DIAG_LINE_WINDOW / 2 : 0;
		if (from > len - DIAG_LINE_WINDOW)
			from = len - DIAG_LINE_WINDOW;
		to = char_boundary(p, len, from + DIAG_LINE_WINDOW, 1);
		from = char_boundary(p, len, from, -1);
	}
	fprintf(d->out, "%5d | %s%.*s%s\n", loc.line, from ? "..." : "", (int)(to - from),
	        p + from, to < len ? "..." : "");
	fputs(from ? "      |    " : "      | ", d->out);
	for (size_t i = from; i < at && i < to; i++)
		fputc(p[i] == '\t' ? '\t' : ' ', d->out);
	fputs("^\n", d->out);
}

/* Whether a diagnostic of kind is printed, counting what the limit hides. */
static bool shown(diags *d, const char *kind)
{
	if (!strcmp(kind, "note"))
		return !d->hiding;
	bool error = !strcmp(kind, "error");
	int *n = error ? &d->shown_errors : &d->shown_warnings;
	d->hiding = d->limit > 0 && *n >= d->limit;
	if (d->hiding)
		(*(error ? &d->hidden_errors : &d->hidden_warnings))++;
	else
		(*n)++;
	return !d->hiding;
}

static void report(diags *d, aotc_loc loc, const char *kind, const char *fmt,
                   va_list ap)
{
	if (!d->record && (!d->out || !shown(d, kind)))
		return;
	strbuf msg;
	strbuf_init(&msg);
	strbuf_vprintf(&msg, fmt, ap);
	if (d->record) {
		d->record(d->record_ctx, kind, loc, msg.data);
		strbuf_finish(&msg);
		return;
	}
	if (msg.len > DIAG_MESSAGE_MAX) {
		msg.len = char_boundary(msg.data, msg.len, DIAG_MESSAGE_MAX, -1);
		msg.data[msg.len] = 0;
		strbuf_puts(&msg, "...");
	}
	if (loc.file && loc.line > 0)
		fprintf(d->out, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, kind);
	else if (loc.file)
		fprintf(d->out, "%s: %s: ", loc.file, kind);
	else
		fprintf(d->out, "aotc: %s: ", kind);
	fputs(msg.data, d->out);
	fputc('\n', d->out);
	if (loc.file && loc.line > 0)
		show_line(d, loc);
	strbuf_finish(&msg);
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
