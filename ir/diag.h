/* Diagnostics in the compilers' format:
 *
 *   file:line:col: error: message
 *      12 | AOTC_TUNE(BX, 1, 2)
 *         |           ^
 *
 * Every user error goes through here; the count decides the exit status.
 * Internal bugs use die() instead.
 *
 * Output is bounded whatever the input: the quoted source line is cut to a
 * window around the column, a message to DIAG_MESSAGE_MAX bytes, and after
 * `limit` errors (and, separately, warnings) the rest are only counted; their
 * notes go with them. */
#ifndef AOTC_DIAG_H
#define AOTC_DIAG_H

#include <stdbool.h>
#include <stdio.h>

#define DIAG_DEFAULT_LIMIT 50   /* errors shown; $AOTC_ERROR_LIMIT overrides, 0: all */
#define DIAG_LINE_WINDOW 200    /* longest source line shown whole */
#define DIAG_MESSAGE_MAX 1000   /* longest message shown whole */

/* A position in a source file. line and col count from 1; line 0 means
 * "the whole file" (no source line or caret is shown). file is borrowed: it
 * must outlive every diagnostic that uses it. */
typedef struct aotc_loc {
	const char *file;
	int line, col;
} aotc_loc;

typedef struct diags {
	FILE *out;          /* default stderr; NULL: count, print nothing */
	int errors, warnings;
	bool quiet_warnings;
	/* A small cache of source files so the line of each diagnostic can be
	 * shown; files are read on first use. */
	struct diag_source *sources;
	bool buffered;      /* diags_init_buffered: out is a memory stream */
	char *buf;          /* what it holds so far */
	size_t buf_len;
	int limit;          /* errors (and warnings) shown at most; 0: no limit */
	int shown_errors, shown_warnings;
	int hidden_errors, hidden_warnings;
	bool hiding;        /* the last error or warning was hidden: so are its notes */
	/* Set: every diagnostic goes to record instead of out (still counted),
	 * unformatted; kind is "error", "warning" or "note". The frontend's
	 * parser process hands its diagnostics to aotc so. */
	void (*record)(void *ctx, const char *kind, aotc_loc loc, const char *msg);
	void *record_ctx;
} diags;

void diags_init(diags *d);
/* Like diags_init, but the diagnostics are kept in memory until
 * diags_flush prints them, so a caller can decide whether to show them
 * (instead of running the work twice to reproduce them). */
void diags_init_buffered(diags *d);
/* Prints what a buffered diags collected to f (with diags_print_hidden's
 * line) and empties it. */
void diags_flush(diags *d, FILE *f);
void diags_finish(diags *d);

/* Prints one line saying how many errors and warnings the limit hid, if
 * any, and resets those counts. */
void diags_print_hidden(diags *d);

/* Registers the text of file so diagnostics do not re-read it from disk
 * (and work for in-memory files). text is copied. */
void diags_add_source(diags *d, const char *file, const char *text, size_t len);

/* Diagnostics kept as data, to be shown later or saved (the saved dispatch
 * keeps what finding its databases said): diags_init_list makes d record
 * every diagnostic into l, warnings and notes included (quiet_warnings
 * off); diag_list_replay reports them through another diags, as they would
 * have been. Ownership: l owns its copies (diag_list_finish). */
typedef struct diag_entry {
	char *kind;             /* "error", "warning", "note" */
	char *file;             /* or NULL */
	int line, col;
	char *msg;
} diag_entry;

typedef struct diag_list {
	diag_entry *v;
	int n, cap;
} diag_list;

void diags_init_list(diags *d, diag_list *l);
void diag_list_add(diag_list *l, const char *kind, aotc_loc loc, const char *msg);
void diag_list_replay(const diag_list *l, diags *d);
void diag_list_finish(diag_list *l);

void diag_error(diags *d, aotc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(diags *d, aotc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_note(diags *d, aotc_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An error with no position, "aotc: error: message" (bad options, missing
 * files). */
void diag_plain_error(diags *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
