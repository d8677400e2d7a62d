/* Process-wide helpers: allocation that cannot fail, internal-bug aborts,
 * growable strings and whole-file I/O with atomic replace. */
#ifndef AOTC_UTIL_H
#define AOTC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AOTC_VERSION_STRING "0.1.0"
#define COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* For what cannot happen: prints "aotc: internal error: ..." and aborts. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Growable, always NUL-terminated string; caller-owned (strbuf_finish). */
typedef struct strbuf {
	char *data;
	size_t len, cap;
} strbuf;

void strbuf_init(strbuf *sb);
void strbuf_finish(strbuf *sb);
void strbuf_putc(strbuf *sb, char c);
void strbuf_puts(strbuf *sb, const char *s);
void strbuf_putn(strbuf *sb, const char *s, size_t n);
void strbuf_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(strbuf *sb, const char *fmt, va_list ap);
/* Fills lines with items: appends " item" to the line being filled (*col
 * characters long so far), first breaking it ("\n" and indent spaces, *col
 * = indent) when the item would pass width and the line has an item. */
void strbuf_put_wrapped(strbuf *sb, size_t *col, const char *item, int indent, int width);

/* Size limits on what aotc reads (docs/cli.md): kernel sources, shapes
 * files and IR; databases and everything else read_file reads. */
#define AOTC_INPUT_MAX_MIB 64
#define AOTC_DB_MAX_MIB 512

/* Reads a whole file into a malloc'd, NUL-terminated buffer; NULL with errno
 * set on failure, EFBIG for a file of more than max bytes (a pipe or a
 * device is read up to max + 1 bytes, never further). *len (if non-NULL)
 * gets the byte count. */
char *read_file_max(const char *path, size_t *len, size_t max);

/* read_file_max with AOTC_DB_MAX_MIB. */
char *read_file(const char *path, size_t *len);

/* Writes data to path through a temporary file in the same directory and
 * rename(2), so readers see the old file or the new one, never a part.
 * Returns 0, or -1 with errno set (the temporary is removed). */
int write_file_atomic(const char *path, const void *data, size_t len);

/* Creates dir and its missing parents (like mkdir -p); 0, or -1 with errno
 * (ENOENT for "", ENOTDIR where dir or a parent is not a directory). */
int mkdir_p(const char *dir);

/* Whether emit may write its saved dispatch and IR beside the databases:
 * false under AOTC_NO_SAVE=1 (docs/cli.md; a read-only checkout, the test
 * suite), which reuses what is saved and writes nothing. */
bool saving_allowed(void);

/* The median of v[0..n) (n > 0); v is not changed. */
double median(const double *v, size_t n);

/* 128-bit content hash as 32 lowercase hex digits into out[33]. */
void hash_hex(const void *data, size_t len, char out[33]);

/* Seconds on CLOCK_MONOTONIC (for durations). */
double monotonic_s(void);

/* Whether fd is a terminal that can redraw a line ("\r\033[K"): a
 * terminal whose $TERM is set and not "dumb". Others get plain lines. */
bool term_redraws(int fd);

/* Edit distance of a and b (insertions, deletions, substitutions and
 * transpositions of neighbours count 1; case is ignored); names of 64 bytes
 * or more are 64 apart from anything. */
int edit_distance(const char *a, const char *b);

/* "Did you mean": the candidate nearest to a name that was not found, fed
 * one at a time. Near enough is at most 1 edit for names of up to 4
 * characters, 2 up to 9, 3 beyond; the first of equally near ones wins, and
 * the name itself is never offered back. */
typedef struct nearest {
	const char *name;
	const char *best;       /* NULL: none near enough (yet) */
	int best_d;
} nearest;

void nearest_init(nearest *n, const char *name);
void nearest_offer(nearest *n, const char *candidate);

#endif
