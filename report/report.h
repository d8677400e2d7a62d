/* `aotc report`: one tuning database and the heuristic learnt from it, as
 * text (the default, for a terminal), JSON (every figure, for scripts),
 * GitHub-flavoured Markdown, or one self-contained HTML file with inline
 * SVG plots (no network, no scripts). Every format is deterministic: the
 * same database gives the same bytes. Strings from the database (kernel,
 * variant, shape argument and feature names) are escaped for the format.
 *
 * A reader of the database (tuner/) and of what heuristics/ learnt from
 * it; only tools/ calls it. The files of report/ share report_ctx.h.
 *
 * Ownership: report_input borrows everything; report_write only appends
 * to out. */
#ifndef AOTC_REPORT_H
#define AOTC_REPORT_H

#include <stdbool.h>

#include "db.h"
#include "dispatch.h"
#include "heuristic.h"
#include "ir.h"
#include "util.h"

typedef enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_MARKDOWN, REPORT_HTML } report_format;

typedef struct report_input {
	const tune_db *db;      /* kernel, hardware, measurements, shape arguments */
	const hmatrix *m;       /* made from db (variants = db's configs, shapes = its shapes) */
	const hresult *r;       /* h_build on m */
	const hstats *eval;     /* SEL_COUNT figures on aotc eval's shapes, or NULL */
	int neval;              /* how many shapes those are (0: none) */
	const dispatch *dp;     /* r as select() runs it (dispatch_from_result) */
	/* The kernel db was tuned from (its source found and unchanged), or
	 * NULL: with its AOTC_METRIC every format adds throughputs. */
	const kernel *k;
} report_input;

/* Appends the report of in to out in format fmt. The text format is the
 * header, the per-shape winners (wrapped), h_print_report and a per-shape
 * table of at most 40 rows; JSON, Markdown and HTML have every shape
 * (HTML's plots sample at most a few hundred, and say so). */
void report_write(strbuf *out, report_format fmt, const report_input *in);

#endif
