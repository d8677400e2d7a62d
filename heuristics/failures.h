/* Where each variant failed, and the region of shapes the dispatch keeps it
 * out of (docs/spec.md §7: a variant measured failing on a shape is never
 * returned there, nor for shapes like it).
 *
 * A variant with failed measurements (wrong, fault, timeout, out of bounds,
 * resources, error, compile error) gets a condition over the shape
 * arguments, a conjunction of terms each of the form `a % d == 0`,
 * `a <= hi` or `a >= lo`, that holds on every shape where it ran correctly
 * and on none where it failed. Each term is the strictest the correct
 * shapes allow (d is the gcd of their values of a, hi their largest, lo
 * their smallest), so an unmeasured shape counts as "like a correct one"
 * only when it shares what all of them share; the terms are chosen greedily
 * by how many failures they exclude, and where two exclude the same
 * failures both are kept (which one explains the failure is unknown). A
 * variant no such condition separates (it failed on shapes like those it
 * passed on, e.g. a race) is dropped: never dispatched.
 *
 * Ownership: an hfailure is plain data (terms inline). */
#ifndef AOTC_FAILURES_H
#define AOTC_FAILURES_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "util.h"

/* At most three terms (multiple, at most, at least) per shape argument. */
#define HF_MAX_ARGS 16

typedef enum hterm_kind { HT_MULTIPLE, HT_AT_MOST, HT_AT_LEAST } hterm_kind;

typedef struct hterm {
	int arg;               /* shape argument index (the database's order) */
	hterm_kind kind;
	int64_t bound;         /* d (> 1), hi or lo */
} hterm;

typedef struct hfailure {
	int nfailed;           /* shapes where it was measured failing */
	int first;             /* the first of them (shape index), -1 if none */
	meas_status status;    /* that shape's status */
	int nok;               /* shapes where it ran correctly */
	bool dropped;          /* no condition separates: never dispatched */
	hterm terms[3 * HF_MAX_ARGS];
	int nterms;
} hfailure;

/* Whether status is a failure of the variant itself (not "invalid",
 * "skipped" or "not measured"). */
bool hf_is_failure(meas_status status);

/* Learns the condition of every configuration of db into out[nconfigs].
 * A configuration without failures gets nfailed 0 and no terms. */
void hf_learn(const tune_db *db, hfailure *out);

/* Whether the condition holds at a shape row (the database's argument
 * order); false when dropped. */
bool hf_holds(const hfailure *f, const int64_t *row);

/* "n % 1024 == 0" (arg names the shape arguments). */
void hf_print_term(strbuf *sb, const hterm *t, const char *const *args);

/* "n % 1024 == 0 && n <= 65536", or "never" when dropped, or "" without
 * failures. */
void hf_print(strbuf *sb, const hfailure *f, const char *const *args);

/* "wrong at n=1001 (and 3 more shapes)" for a variant with failures. */
void hf_print_why(strbuf *sb, const hfailure *f, const tune_db *db);

#endif
