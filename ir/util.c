#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

_Noreturn void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("aotc: internal error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

void strbuf_init(strbuf *sb)
{
	sb->cap = 64;
	sb->len = 0;
	sb->data = xmalloc(sb->cap);
	sb->data[0] = 0;
}

void strbuf_finish(strbuf *sb)
{
	free(sb->data);
	sb->data = NULL;
	sb->len = sb->cap = 0;
}

static void strbuf_reserve(strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->cap)
		return;
	while (sb->len + extra + 1 > sb->cap)
		sb->cap *= 2;
	sb->data = xrealloc(sb->data, sb->cap);
}

void strbuf_putn(strbuf *sb, const char *s, size_t n)
{
	strbuf_reserve(sb, n);
	memcpy(sb->data + sb->len, s, n);
	sb->len += n;
	sb->data[sb->len] = 0;
}

void strbuf_putc(strbuf *sb, char c) { strbuf_putn(sb, &c, 1); }
void strbuf_puts(strbuf *sb, const char *s) { strbuf_putn(sb, s, strlen(s)); }

void strbuf_vprintf(strbuf *sb, const char *fmt, va_list ap)
{
	/* Print into the spare room first; grow and print again if short. */
	va_list ap2;
	va_copy(ap2, ap);
	size_t room = sb->cap - sb->len;
	int n = vsnprintf(sb->data + sb->len, room, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		die("strbuf_printf: bad format '%s'", fmt);
	if ((size_t)n >= room) {
		strbuf_reserve(sb, (size_t)n);
		vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	}
	sb->len += (size_t)n;
}

void strbuf_printf(strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_put_wrapped(strbuf *sb, size_t *col, const char *item, int indent, int width)
{
	size_t len = strlen(item);
	if (*col > (size_t)indent && *col + 1 + len > (size_t)width) {
		strbuf_printf(sb, "\n%*s", indent, "");
		*col = (size_t)indent;
	}
	strbuf_putc(sb, ' ');
	strbuf_puts(sb, item);
	*col += 1 + len;
}

char *read_file_max(const char *path, size_t *len, size_t max)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	/* A regular file too large is refused before reading; anything else
	 * (a pipe, /dev/zero) is read until it ends or passes max. */
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max) {
		fclose(f);
		errno = EFBIG;
		return NULL;
	}
	size_t cap = 65536, n = 0;
	char *data = xmalloc(cap);
	int e = 0;
	for (;;) {
		if (n + 1 == cap) {
			if (n > max) {
				e = EFBIG;
				break;
			}
			/* Never past max + 2: one byte over max says "too large". */
			cap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
			data = xrealloc(data, cap);
		}
		size_t got = fread(data + n, 1, cap - 1 - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				e = errno ? errno : EIO;
			break;
		}
	}
	if (!e && n > max)
		e = EFBIG;
	fclose(f);
	if (e) {
		free(data);
		errno = e;
		return NULL;
	}
	data[n] = 0;
	if (len)
		*len = n;
	return data;
}

char *read_file(const char *path, size_t *len)
{
	return read_file_max(path, len, (size_t)AOTC_DB_MAX_MIB << 20);
}

/* umask(2) can only be read by setting it, which races with other threads:
 * read it once. */
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;
static mode_t process_umask;

static void read_umask(void)
{
	process_umask = umask(022);
	umask(process_umask);
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	size_t n = strlen(path);
	char *tmp = xmalloc(n + 16);
	snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		p += w;
		left -= (size_t)w;
	}
	/* mkstemp creates 0600; emitted sources and databases are ordinary
	 * files, so honour the umask like fopen would. */
	pthread_once(&umask_once, read_umask);
	if (fchmod(fd, 0666 & ~process_umask) < 0 || fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	free(tmp);
	return 0;
fail:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	errno = e;
	return -1;
}

void hash_hex(const void *data, size_t len, char out[33])
{
	XXH128_hash_t h = XXH3_128bits(data, len);
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64,
	         (unsigned long long)h.low64);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double median(const double *v, size_t n)
{
	double *s = xmalloc(n * sizeof *s + 1);
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

int mkdir_p(const char *dir)
{
	if (!*dir) {
		errno = ENOENT; /* what mkdir("") says */
		return -1;
	}
	char *p = xstrdup(dir);
	int r = 0;
	/* Each prefix that ends before a '/' (the root's own excepted), then
	 * the whole path; "a//b" and "a/" just repeat one. */
	for (char *s = p + 1; r == 0; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			r = -1;
		*s = c;
		if (!c)
			break;
	}
	struct stat st;
	if (r == 0 && stat(p, &st) < 0) {
		r = -1;
	} else if (r == 0 && !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		r = -1;
	}
	free(p);
	return r;
}

double monotonic_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool term_redraws(int fd)
{
	const char *term = getenv("TERM");
	return isatty(fd) && term && term[0] && strcmp(term, "dumb") != 0;
}

int edit_distance(const char *a, const char *b)
{
	enum { MAX = 64 };
	size_t na = strlen(a), nb = strlen(b);
	if (na >= MAX || nb >= MAX)
		return MAX;
	/* Optimal string alignment: three rows of the Damerau table. */
	int rows[3][MAX + 1];
	int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		cur[0] = (int)i;
		int ca = tolower((unsigned char)a[i - 1]);
		for (size_t j = 1; j <= nb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			int best = prev[j - 1] + (ca != cb);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		int *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[nb];
}

void nearest_init(nearest *n, const char *name)
{
	size_t len = strlen(name);
	n->name = name;
	n->best = NULL;
	n->best_d = (len <= 2 ? 0 : len <= 4 ? 1 : len <= 9 ? 2 : 3) + 1;
}

void nearest_offer(nearest *n, const char *candidate)
{
	if (!candidate || !candidate[0] || strcmp(candidate, n->name) == 0)
		return;
	int d = edit_distance(n->name, candidate);
	if (d < n->best_d) {
		n->best_d = d;
		n->best = candidate;
	}
}

bool saving_allowed(void)
{
	const char *e = getenv("AOTC_NO_SAVE");
	return !e || !*e || !strcmp(e, "0");
}
