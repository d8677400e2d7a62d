/* The unit tests' checks: one header, included once by each test_*.c.
 *
 *	CHECK(cond)                 cond holds
 *	CHECKF(cond, fmt, ...)      cond holds; fmt says what was seen if not
 *	CHECK_INT(got, want)        two integers are equal
 *	CHECK_STR(got, want)        two strings are equal (got may be NULL)
 *	check_at(ok, file, line, fmt, ...)  for a helper that checks on behalf
 *	                            of its caller's line
 *	return check_done();        N passed, M failed; the exit status
 *
 * A failure prints FILE:LINE: FAIL and what was seen; check_done prints,
 * after any failure, the command that reruns the test alone (AOTC_TEST and
 * AOTC_BUILD come from tests/meson.build). */
#ifndef AOTC_TEST_CHECK_H
#define AOTC_TEST_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed, check_failed;

static void check_at(bool ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void check_at(bool ok, const char *file, int line, const char *fmt, ...)
{
	if (ok) {
		check_passed++;
		return;
	}
	check_failed++;
	printf("%s:%d: FAIL ", file, line);
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

#define CHECK(cond) check_at((cond), __FILE__, __LINE__, "%s", #cond)
#define CHECKF(cond, ...) check_at((cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_INT(got, want)                                                   \
	do {                                                                   \
		int64_t g_ = (got), w_ = (want);                               \
		check_at(g_ == w_, __FILE__, __LINE__,                         \
		         "%s: got %" PRId64 ", want %" PRId64, #got, g_, w_);  \
	} while (0)
#define CHECK_STR(got, want)                                                   \
	do {                                                                   \
		const char *g_ = (got), *w_ = (want);                          \
		check_at(g_ && strcmp(g_, w_) == 0, __FILE__, __LINE__,        \
		         "%s:\n  got  \"%s\"\n  want \"%s\"", #got,            \
		         g_ ? g_ : "(null)", w_);                              \
	} while (0)

static int check_done(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	if (check_failed) {
		const char *build = getenv("AOTC_BUILD"), *name = getenv("AOTC_TEST");
		printf("rerun this test alone: meson test -C %s --print-errorlogs %s\n",
		       build ? build : "build", name ? name : "NAME");
	}
	return check_failed != 0;
}

#endif
