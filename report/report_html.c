/* aotc report as one self-contained HTML document (no network, no
 * scripts): the summary, the selectors' figures, the chosen variants, the
 * failures, the plots (plots.c, plot_tree.c), the per-shape table and the
 * text report. Also the HTML escaping and the chosen variants' colours the
 * plots share. */
#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include "report_ctx.h"

/* The per-shape table's rows, the shapes a plot draws (evenly spaced by
 * size). */
#define HTML_MAX_ROWS 500
#define PLOT_MAX_SHAPES 300

void esc_cut(strbuf *sb, const char *s, int max)
{
	if (!s) {
		strbuf_puts(sb, "-");
		return;
	}
	int chars = 0;
	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if ((ch & 0xc0) != 0x80 && max > 0 && ++chars > max) {
			strbuf_puts(sb, "\xe2\x80\xa6");
			return;
		}
		switch (ch) {
		case '&': strbuf_puts(sb, "&amp;"); break;
		case '<': strbuf_puts(sb, "&lt;"); break;
		case '>': strbuf_puts(sb, "&gt;"); break;
		case '"': strbuf_puts(sb, "&quot;"); break;
		case '\'': strbuf_puts(sb, "&#39;"); break;
		default:
			if (ch < 0x20 && ch != '\n' && ch != '\t')
				strbuf_putc(sb, ' ');
			else
				strbuf_putc(sb, (char)ch);
		}
	}
}

void esc(strbuf *sb, const char *s) { esc_cut(sb, s, 0); }

int label_chars(const char *s, int max)
{
	int n = 0;
	for (const char *p = s ? s : "-"; *p; p++)
		n += ((unsigned char)*p & 0xc0) != 0x80;
	return n < max ? n : max + 1;
}

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31",
                                      "#843c39", "#7b4173", "#3182bd", "#e6550d"};

const char *chosen_colour(int i) { return palette[i % (int)COUNTOF(palette)]; }

int chosen_index(const report_ctx *c, int v)
{
	for (int i = 0; i < c->r->nsubset; i++)
		if (c->r->subset[i] == v)
			return i;
	return -1;
}

static void html_time(strbuf *sb, double t)
{
	if (isfinite(t))
		strbuf_printf(sb, "<td>%.4g</td>", t);
	else
		strbuf_puts(sb, "<td class=\"miss\">-</td>");
}

static void html_throughput(strbuf *sb, const report_ctx *c, double tp)
{
	if (isfinite(tp))
		strbuf_printf(sb, "<td>%.4g</td>", tp / c->tp_scale);
	else
		strbuf_puts(sb, "<td class=\"miss\">-</td>");
}

static void html_slowdown(strbuf *sb, double sd)
{
	if (is_miss(sd))
		strbuf_puts(sb, "<td class=\"miss\">miss</td>");
	else
		strbuf_printf(sb, "<td%s>%.3f</td>", sd > 1.25 ? " class=\"bad\"" : "", sd);
}

static void html_stats(strbuf *sb, const hstats *s)
{
	strbuf_printf(sb, "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%d</td>", s->geomean, s->p90, s->worst, s->misses);
}

static void html_summary(strbuf *sb, const report_ctx *c)
{
	const tune_db *db = c->db;
	const hmatrix *m = c->m;
	const hresult *r = c->r;
	const char *dev = json_string_value(json_object_get(db->hardware, "name"));
	strbuf_puts(sb, "<table class=\"kv\">\n<tr><th>kernel</th><td><code>");
	esc(sb, db->kernel);
	strbuf_puts(sb, "</code></td></tr>\n<tr><th>source</th><td><code>");
	esc(sb, db->source ? db->source : "(none recorded)");
	strbuf_puts(sb, "</code></td></tr>\n<tr><th>device</th><td>");
	esc(sb, dev ? dev : "?");
	strbuf_printf(sb, "</td></tr>\n<tr><th>measurements</th><td>%d over %d shapes &times; %d variants "
	                  "(%d shapes where no variant ran)</td></tr>\n",
	              db->nmeas, m->nshapes, m->nvariants, r->uncovered);
	strbuf_printf(sb, "<tr><th>dispatch</th><td>%d variant%s select() can return (of %d chosen",
	              c->dp->nvariants, c->dp->nvariants == 1 ? "" : "s", r->nsubset);
	if (r->ncover)
		strbuf_printf(sb, ", %d of them for coverage near the measured shapes", r->ncover);
	strbuf_printf(sb, "); a tree of depth %d with %d leaves, ", dispatch_depth(c->dp), dispatch_leaves(c->dp));
	if (r->distilled)
		strbuf_printf(sb, "learnt from %s&rsquo;s predictions on %d shapes and the measured ones",
		              h_model_text(r->kind), r->dense_shapes);
	else
		strbuf_printf(sb, "learnt from the measured shapes%s",
		              m->row_info ? "" : " only (no kernel source: no cost model)");
	strbuf_printf(sb, "</td></tr>\n<tr><th>cross-validation</th><td>%d folds over %d shapes, %s</td></tr>\n",
	              r->folds, r->cv_shapes,
	              h_folds_text(r->fold_by));
	strbuf_puts(sb, "<tr><th>best single variant</th><td><code>");
	esc(sb, vname(c, r->single));
	strbuf_puts(sb, "</code></td></tr>\n");
	if (c->tp_unit) {
		strbuf_puts(sb, "<tr><th>metric</th><td><code>");
		esc(sb, c->k->metric_count.text);
		strbuf_printf(sb, "</code> %s per launch (AOTC_METRIC); throughputs in %s</td></tr>\n",
		              metric_unit_name(c->k->metric), c->tp_unit);
	}
	strbuf_puts(sb, "</table>\n");
}

static void html_selectors(strbuf *sb, const report_ctx *c)
{
	strbuf_puts(sb, "<h2>Slowdown against the per-shape best</h2>\n<table>\n<tr><th class=\"l\" rowspan=\"2\">"
	                "selector</th><th colspan=\"4\">training shapes</th><th colspan=\"4\">held-out "
	                "(cross-validated)</th>");
	if (c->eval)
		strbuf_printf(sb, "<th colspan=\"4\">measured held-out (aotc eval, %d shapes)</th>", c->neval);
	strbuf_puts(sb, "</tr>\n<tr>");
	for (int g = 0; g < (c->eval ? 3 : 2); g++)
		strbuf_puts(sb, "<th>geomean</th><th>p90</th><th>worst</th><th>misses</th>");
	strbuf_puts(sb, "</tr>\n");
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		strbuf_printf(sb, "<tr%s><td class=\"l\">%s</td>", sel == SEL_TREE ? " class=\"ours\"" : "",
		              h_selector_names[sel]);
		html_stats(sb, &c->r->train[sel]);
		html_stats(sb, &c->r->heldout[sel]);
		if (c->eval)
			html_stats(sb, &c->eval[sel]);
		strbuf_puts(sb, "</tr>\n");
	}
	strbuf_puts(sb, "</table>\n");
	if (c->r->weighted) {
		strbuf_puts(sb, "<p>Weighted by each shape's recorded calls (AOTC_RECORD; a shape without a count weighs "
		                "one call), what the dispatch was fitted to minimise:</p>\n<table>\n<tr><th class=\"l\">"
		                "selector</th><th>training geomean</th><th>held-out geomean</th></tr>\n");
		for (int sel = 0; sel < SEL_COUNT; sel++)
			strbuf_printf(sb, "<tr%s><td class=\"l\">%s</td><td>%.3f</td><td>%.3f</td></tr>\n",
			              sel == SEL_TREE ? " class=\"ours\"" : "", h_selector_names[sel], c->r->train_w[sel],
			              c->r->heldout_w[sel]);
		strbuf_puts(sb, "</table>\n");
	}
}

static void html_variants(strbuf *sb, const report_ctx *c)
{
	strbuf_puts(sb, "<h2>Chosen variants</h2>\n<table>\n<tr><th>#</th><th class=\"l\">variant</th>"
	                "<th>per-shape best on</th></tr>\n");
	for (int i = 0; i < c->r->nsubset; i++) {
		int v = c->r->subset[i];
		strbuf_printf(sb, "<tr><td><span class=\"sw\" style=\"background:%s\"></span> %d</td><td class=\"l\"><code>",
		              chosen_colour(i), i + 1);
		esc(sb, vname(c, v));
		strbuf_printf(sb, "</code></td><td>%d</td></tr>\n", c->wins[v]);
	}
	strbuf_puts(sb, "</table>\n<details><summary>Per-shape winners (every variant that is the best on some "
	                "shape)</summary>\n<table>\n<tr><th class=\"l\">variant</th><th>shapes</th></tr>\n");
	for (int i = 0; i < c->nwinners; i++) {
		strbuf_puts(sb, "<tr><td class=\"l\"><code>");
		esc(sb, vname(c, c->winners[i]));
		strbuf_printf(sb, "</code></td><td>%d</td></tr>\n", c->wins[c->winners[i]]);
	}
	strbuf_puts(sb, "</table>\n</details>\n");
}

static void html_failures(strbuf *sb, const report_ctx *c)
{
	strbuf why, cond;
	strbuf_init(&why);
	strbuf_init(&cond);
	bool any = false;
	for (int v = 0; v < c->m->nvariants; v++) {
		if (!failure_text(c, v, &why, &cond))
			continue;
		if (!any)
			strbuf_puts(sb, "<h2>Measured failing</h2>\n<p>Never dispatched where they failed, nor on shapes like "
			                "those.</p>\n<table>\n<tr><th class=\"l\">variant</th><th class=\"l\">failed</th>"
			                "<th class=\"l\">may run where</th><th>dispatched</th></tr>\n");
		any = true;
		strbuf_puts(sb, "<tr><td class=\"l\"><code>");
		esc(sb, vname(c, v));
		strbuf_puts(sb, "</code></td><td class=\"l\">");
		esc(sb, why.data);
		strbuf_puts(sb, "</td><td class=\"l\"><code>");
		esc(sb, cond.data);
		strbuf_printf(sb, "</code></td><td>%s</td></tr>\n", in_subset(c, v) ? "yes" : "no");
	}
	if (any)
		strbuf_puts(sb, "</table>\n");
	strbuf_finish(&why);
	strbuf_finish(&cond);
}

static void html_shapes(strbuf *sb, const report_ctx *c)
{
	const tune_db *db = c->db;
	const hmatrix *m = c->m;
	int *rows = xmalloc(((size_t)m->nshapes + 1) * sizeof *rows);
	int n = table_rows(c, HTML_MAX_ROWS, rows);
	strbuf_puts(sb, "<h2>Per shape</h2>\n<p>By ");
	esc(sb, c->size_name);
	if (n < m->nshapes)
		strbuf_printf(sb, "; the %d of %d shapes where the dispatch is slowest (<code>--format json</code> has all)",
		              n, m->nshapes);
	strbuf_puts(sb, ". Times in ms; slowdowns against the shape&rsquo;s best");
	if (c->tp_unit)
		strbuf_printf(sb, "; throughputs in %s", c->tp_unit);
	strbuf_puts(sb, ".</p>\n<table>\n<tr>");
	for (int a = 0; a < db->nshape_args; a++) {
		strbuf_puts(sb, "<th>");
		esc(sb, db->shape_args[a]);
		strbuf_puts(sb, "</th>");
	}
	strbuf_puts(sb, "<th>best ms</th>");
	if (c->tp_unit)
		strbuf_printf(sb, "<th>best %s</th>", c->tp_unit);
	strbuf_puts(sb, "<th class=\"l\">best variant</th><th class=\"l\">dispatch</th><th>dispatch ms</th>");
	if (c->tp_unit)
		strbuf_printf(sb, "<th>dispatch %s</th>", c->tp_unit);
	strbuf_puts(sb, "<th>slowdown</th><th>single ms</th><th>single slowdown</th>"
	                "<th>noise</th><th class=\"l\">alternated</th></tr>\n");
	for (int i = 0; i < n; i++) {
		int s = rows[i];
		const shape_info *si = &c->sh[s];
		strbuf_puts(sb, "<tr>");
		for (int a = 0; a < db->nshape_args; a++)
			strbuf_printf(sb, "<td>%lld</td>", (long long)m->rows[(size_t)s * m->nargs + a]);
		html_time(sb, m->oracle[s]);
		if (c->tp_unit)
			html_throughput(sb, c, cell_throughput(c, s, si->best));
		strbuf_puts(sb, "<td class=\"l\"><code>");
		esc(sb, vname(c, si->best));
		strbuf_puts(sb, "</code></td><td class=\"l\"><code>");
		esc(sb, vname(c, si->dispatch));
		strbuf_puts(sb, "</code></td>");
		html_time(sb, is_miss(si->sd_dispatch) ? INFINITY : cell_time(m, s, si->dispatch));
		if (c->tp_unit)
			html_throughput(sb, c, is_miss(si->sd_dispatch) ? NAN : cell_throughput(c, s, si->dispatch));
		html_slowdown(sb, si->sd_dispatch);
		html_time(sb, is_miss(si->sd_single) ? INFINITY : cell_time(m, s, si->single));
		html_slowdown(sb, si->sd_single);
		if (isnan(si->noise))
			strbuf_puts(sb, "<td>&mdash;</td><td class=\"l\">&mdash;</td>");
		else if (si->alternated)
			strbuf_printf(sb, "<td>%.1f&nbsp;%%</td><td class=\"l\">%d rounds</td>", 100 * si->noise, si->alternated);
		else
			strbuf_printf(sb, "<td>%.1f&nbsp;%%</td><td class=\"l\">no</td>", 100 * si->noise);
		strbuf_puts(sb, "</tr>\n");
	}
	strbuf_puts(sb, "</table>\n");
	free(rows);
}

static const char html_style[] =
	"body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;color:#222;margin:24px auto;"
	"max-width:1280px;padding:0 16px}\n"
	"h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}\n"
	"code,pre{font:12px/1.4 ui-monospace,monospace}\n"
	"table{border-collapse:collapse;margin:8px 0 16px}\n"
	"th,td{border:1px solid #d4d4d4;padding:2px 8px;text-align:right;vertical-align:top}\n"
	"th{background:#f3f3f3}.l,.kv th,.kv td{text-align:left}\n"
	"tr.ours td{font-weight:600}td.miss{color:#b00}td.bad{color:#a40}\n"
	".sw{display:inline-block;width:10px;height:10px}\n"
	"figure{margin:16px 0}figcaption{color:#555;font-size:13px;max-width:1000px}\n"
	".scroll{overflow-x:auto}.note{color:#555;font-size:13px}\n"
	"svg.plot{display:block;max-width:none;background:#fff}\n"
	"svg text{font:11px ui-monospace,monospace;fill:#222}svg text.axis{font-size:12px}svg text.dim{fill:#555}\n"
	"svg .frame{fill:#fbfbfb;stroke:#ccc}svg .grid path,svg .xticks path{stroke:#e2e2e2}\n"
	"svg .xticks path{stroke:#999}\n"
	"svg rect.dispatch{fill:#4c78c8}svg rect.single{fill:#f5a25d}svg rect.miss{fill:#d62728}\n"
	"svg .geomean{stroke-dasharray:6 4;stroke-width:1.5;fill:none}\n"
	"svg .series path{fill:none;stroke-width:1.6}svg .series.oracle path{stroke-width:5;stroke-opacity:.25}\n"
	"svg .series.single path{stroke-dasharray:5 3}\n"
	"svg .edge{fill:none;stroke:#888;stroke-width:1.3}svg text.edgel{fill:#777;font-size:10px}\n"
	"svg .node rect{stroke:#667}svg rect.pick{stroke:#000;stroke-width:1.5}\n"
	"svg .cells rect{shape-rendering:crispEdges}svg .sep{stroke:#000;stroke-width:1.5}\n";

void report_write_html(strbuf *sb, const report_ctx *c)
{
	const tune_db *db = c->db;
	const hmatrix *m = c->m;
	const char *hw = json_string_value(json_object_get(db->hardware, "id"));
	strbuf_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	                "<meta name=\"generator\" content=\"aotc " AOTC_VERSION_STRING "\">\n<title>aotc report: ");
	esc(sb, db->kernel);
	strbuf_puts(sb, " on ");
	esc(sb, hw ? hw : "?");
	strbuf_printf(sb, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>aotc report: <code>", html_style);
	esc(sb, db->kernel);
	strbuf_puts(sb, "</code> on <code>");
	esc(sb, hw ? hw : "?");
	strbuf_puts(sb, "</code></h1>\n");
	html_summary(sb, c);
	html_selectors(sb, c);
	html_variants(sb, c);
	html_failures(sb, c);

	int *cols = xmalloc(((size_t)m->nshapes + 1) * sizeof *cols);
	int n = sample_shapes(c, PLOT_MAX_SHAPES, cols);
	strbuf_puts(sb, "<h2>Plots</h2>\n");
	if (n < m->nshapes)
		strbuf_printf(sb, "<p class=\"note\">The plots of shapes draw %d of the %d shapes, evenly spaced by size; "
		                  "the heat map %d.</p>\n",
		              n, m->nshapes, m->nshapes < HEAT_MAX_COLS ? m->nshapes : HEAT_MAX_COLS);
	strbuf_puts(sb, "<figure>\n<div class=\"scroll\">\n");
	plot_slowdown(sb, c, cols, n);
	strbuf_puts(sb, "</div>\n<figcaption>(a) Slowdown of the dispatch and of the best single variant against "
	                "each shape&rsquo;s fastest measured variant, log scale; hover a bar for the shape.</figcaption>\n"
	                "</figure>\n<figure>\n<div class=\"scroll\">\n");
	plot_tree(sb, c);
	strbuf_puts(sb, "</div>\n<figcaption>(b) The dispatch&rsquo;s decision tree, root at the left: the upper "
	                "branch (yes) when the condition holds; a leaf runs its first valid variant (its colour as in the plots), the others are its "
	                "fallbacks. Shape counts are the training shapes that reach each node.</figcaption>\n"
	                "</figure>\n<figure>\n<div class=\"scroll\">\n");
	plot_times(sb, c, cols, n);
	strbuf_puts(sb, "</div>\n<figcaption>(c) Time against shape for the chosen variants, with the per-shape best "
	                "(the oracle, the wide grey line); breaks where a variant has no correct measurement."
	                "</figcaption>\n</figure>\n<figure>\n<div class=\"scroll\">\n");
	plot_heatmap(sb, c);
	strbuf_printf(sb, "</div>\n<figcaption>(d) Slowdown of each variant against the shape&rsquo;s best: the chosen "
	                  "variants (above the line), the best single variant and the next best by training slowdown, "
	                  "at most %d rows and %d shapes.</figcaption>\n</figure>\n",
	              HEAT_MAX_ROWS, HEAT_MAX_COLS);
	if (c->tp_unit) {
		strbuf_puts(sb, "<figure>\n<div class=\"scroll\">\n");
		plot_throughput(sb, c, cols, n);
		strbuf_puts(sb, "</div>\n<figcaption>(e) Throughput (<code>AOTC_METRIC</code>: <code>");
		esc(sb, c->k->metric_count.text);
		strbuf_printf(sb, "</code> %s per launch) of the per-shape best and of the dispatch&rsquo;s choice, log "
		                  "scale; breaks where there is none (no correct measurement, or a count that uses "
		                  "tunables the variant lacks).</figcaption>\n</figure>\n",
		              metric_unit_name(c->k->metric));
	}
	free(cols);

	html_shapes(sb, c);
	strbuf t;
	strbuf_init(&t);
	h_print_report(&t, c->r, m, c->eval, c->neval, c->dp);
	strbuf_puts(sb, "<h2>As text</h2>\n<details><summary><code>aotc report</code>&rsquo;s text, with the whole "
	                "tree</summary>\n<pre>");
	esc(sb, t.data);
	strbuf_puts(sb, "</pre>\n</details>\n</body>\n</html>\n");
	strbuf_finish(&t);
}
