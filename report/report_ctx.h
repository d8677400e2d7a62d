/* What the files of report/ share, private to them: the analysis every
 * format reads (report_ctx, made once by report_write from a report_input),
 * the writer of each format, the HTML escaping and colours, and the SVG
 * helpers and plots of the HTML report.
 *
 * Ownership: a report_ctx borrows everything in its report_input and owns
 * its per-shape arrays (report.c frees them after the writer returns).
 * Every writer only appends to sb. */
#ifndef AOTC_REPORT_CTX_H
#define AOTC_REPORT_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "report.h"

/* The heat map's most columns (shapes) and rows (variants). */
#define HEAT_MAX_COLS 100
#define HEAT_MAX_ROWS 20
/* SVG text: 11px monospace, about this wide per character. */
#define CHAR_W 6.6
/* Labels in plots are cut to this many characters (the full name is in
 * the tooltip). */
#define LABEL_MAX 48

/* ---- The analysis every format shares (report.c) ---- */

typedef struct shape_info {
	double size;            /* product of the shape arguments */
	int best;               /* the per-shape best variant, -1: none ran */
	int dispatch, single;   /* what the dispatch / best single variant picks (-1: none) */
	double sd_dispatch, sd_single; /* their slowdowns (H_MISS_SLOWDOWN: a miss) */
	double noise;           /* the best's spread (meas_spread), NAN: no best */
	int alternated;         /* the best's alternation rounds (0: not alternated) */
} shape_info;

typedef struct report_ctx {
	const tune_db *db;
	const hmatrix *m;
	const hresult *r;
	const hstats *eval;
	int neval;
	const dispatch *dp;
	shape_info *sh;         /* per shape, in the database's order */
	int *by_size;           /* shape indices, smallest first (ties by index) */
	int *wins;              /* per variant: shapes where it is the best */
	int *winners;           /* the variants with wins, most first (ties by index) */
	int nwinners;
	char *size_name;        /* "M*N*K" */
	/* AOTC_METRIC, with the kernel: each shape's parameter values, and the
	 * one scale every throughput is shown in (from the largest per-shape
	 * best's); tp_unit NULL: no metric. */
	const kernel *k;
	int64_t *params;        /* per shape: k->nparams + 1 */
	bool *params_ok;
	double tp_scale;
	const char *tp_unit;    /* "GFLOP/s" */
} report_ctx;

static inline bool is_miss(double sd) { return !(sd < H_MISS_SLOWDOWN); }

/* Variant v's name, NULL for none (v < 0). */
static inline const char *vname(const report_ctx *c, int v) { return v >= 0 ? c->m->variant_names[v] : NULL; }

/* The measured time of variant v at shape s, INFINITY when it has none
 * that counts (failed, invalid or not measured). */
double cell_time(const hmatrix *m, int s, int v);

/* Variant v's throughput at shape s (AOTC_METRIC's count per second of its
 * measured time), NAN where there is none: no metric, no time, or a count
 * that cannot be evaluated for v (it uses the kernel's tunables and v is
 * an alternative's or an extern). */
double cell_throughput(const report_ctx *c, int s, int v);

/* What a cell of the database holds, for a tooltip. */
const char *cell_status(const report_ctx *c, int s, int v);

/* The shapes a table of at most cap rows shows, in size order, into out
 * (room for cap): all of them, or else the cap where the dispatch is
 * slowest. Returns the count. */
int table_rows(const report_ctx *c, int cap, int *out);

/* At most cap shapes evenly spaced over the size order, into out. */
int sample_shapes(const report_ctx *c, int cap, int *out);

/* Whether select() can return variant v. */
bool in_subset(const report_ctx *c, int v);

/* Where variant v failed and where the dispatch may run it
 * (heuristics/failures.h), into why and cond; false when it never failed. */
bool failure_text(const report_ctx *c, int v, strbuf *why, strbuf *cond);

/* ---- The formats: report_text.c, report_json.c, report_md.c, report_html.c ---- */

void report_write_text(strbuf *sb, const report_ctx *c);
void report_write_json(strbuf *sb, const report_ctx *c);
void report_write_markdown(strbuf *sb, const report_ctx *c);
void report_write_html(strbuf *sb, const report_ctx *c);

/* ---- HTML text and colours (report_html.c) ---- */

/* s escaped for HTML text and attribute values, cut to max characters
 * (max <= 0: all) with an ellipsis; NULL as "-". */
void esc_cut(strbuf *sb, const char *s, int max);
void esc(strbuf *sb, const char *s);

/* Characters in s, as displayed (UTF-8 code points, at most max). */
int label_chars(const char *s, int max);

/* The colour of the i-th chosen variant. */
const char *chosen_colour(int i);

/* Where variant v is among the chosen ones, -1 if not. */
int chosen_index(const report_ctx *c, int v);

/* ---- SVG helpers (svg.c) ---- */

/* A log scale: value lo at pixel p0, hi at p1. */
typedef struct logscale {
	double lo, hi, p0, p1;
} logscale;

/* The pixel of v, clamped to [lo, hi]. */
double ls_map(const logscale *s, double v);

/* Opens an <svg> of w x h with the id (also its class) and the title. */
void svg_begin(strbuf *sb, const char *id, double w, double h, const char *title);

/* The plot area's frame and the horizontal grid lines and labels of a log
 * y axis (slowdown: the slowdown ticks 1, 1.02, ... 100), with the axis
 * title turned along it. */
void svg_y_axis(strbuf *sb, const logscale *y, double x0, double x1, const char *label, bool slowdown);

/* A legend entry: a swatch (a line when dash is not NULL, else a box)
 * and the label, with the full text as its tooltip. */
void svg_legend(strbuf *sb, double x, double y, const char *colour, const char *dash, const char *text);

/* x ticks under a plot of n shapes (cols: sampled, in size order) in bands
 * of width band from x0: about eight, labelled with the size. */
void svg_size_ticks(strbuf *sb, const report_ctx *c, const int *cols, int n, double x0, double band,
                    double ybase);

/* The shape axis's title, centred at (x, y). */
void svg_x_label(strbuf *sb, const report_ctx *c, double x, double y, int n);

/* ---- The plots (plots.c, plot_tree.c): each one <svg> ---- */

/* Over the n shapes cols (sample_shapes). */
void plot_slowdown(strbuf *sb, const report_ctx *c, const int *cols, int n);
void plot_times(strbuf *sb, const report_ctx *c, const int *cols, int n);
void plot_throughput(strbuf *sb, const report_ctx *c, const int *cols, int n);
/* Samples its own columns (HEAT_MAX_COLS) and rows (HEAT_MAX_ROWS). */
void plot_heatmap(strbuf *sb, const report_ctx *c);
/* The tree, deep subtrees collapsed (then a note after the <svg>). */
void plot_tree(strbuf *sb, const report_ctx *c);

#endif
