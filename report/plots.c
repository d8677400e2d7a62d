/* The HTML report's plots over shapes: (a) slowdown per shape, (c) time
 * against shape, (e) throughput against shape, (d) the variant x shape
 * heat map. (b), the tree, is plot_tree.c. */
#include <math.h>
#include <stdlib.h>

#include "report_ctx.h"

/* The heat map shows at least this many variants besides the chosen ones. */
#define HEAT_MIN_OTHERS 4

/* ---- HTML: (a) slowdown per shape ------------------------------------------- */

void plot_slowdown(strbuf *sb, const report_ctx *c, const int *cols, int n)
{
	const double W = 1200, H = 380, ml = 64, mr = 16, mt = 44, mb = 56;
	double hi = 1.1;
	for (int i = 0; i < n; i++) {
		const shape_info *si = &c->sh[cols[i]];
		if (!is_miss(si->sd_dispatch) && si->sd_dispatch > hi)
			hi = si->sd_dispatch;
		if (!is_miss(si->sd_single) && si->sd_single > hi)
			hi = si->sd_single;
	}
	hi = hi * 1.05 < H_MISS_SLOWDOWN ? hi * 1.05 : H_MISS_SLOWDOWN;
	logscale y = {1, hi, H - mb, mt};
	double band = (W - ml - mr) / (n ? n : 1);
	svg_begin(sb, "plot-slowdown", W, H, "slowdown per shape: the dispatch and the best single variant");
	svg_y_axis(sb, &y, ml, W - mr, "slowdown vs the shape&#39;s best (log)", true);
	strbuf_puts(sb, "<g class=\"bars\">\n");
	for (int i = 0; i < n; i++) {
		int s = cols[i];
		const shape_info *si = &c->sh[s];
		strbuf_puts(sb, "<g><title>");
		esc(sb, c->m->shape_labels[s]);
		if (is_miss(si->sd_dispatch))
			strbuf_puts(sb, "\ndispatch: miss (no correct measurement)");
		else
			strbuf_printf(sb, "\ndispatch: %.3f\xc3\x97 (", si->sd_dispatch);
		if (!is_miss(si->sd_dispatch)) {
			esc(sb, vname(c, si->dispatch));
			strbuf_putc(sb, ')');
		}
		if (is_miss(si->sd_single))
			strbuf_puts(sb, "\nbest single variant: miss");
		else
			strbuf_printf(sb, "\nbest single variant: %.3f\xc3\x97", si->sd_single);
		strbuf_printf(sb, "\nbest: %.4g ms</title>", c->m->oracle[s]);
		double sds[2] = {si->sd_dispatch, si->sd_single};
		for (int k = 0; k < 2; k++) {
			bool miss = is_miss(sds[k]);
			double top = miss ? y.p1 : ls_map(&y, sds[k]);
			double h = y.p0 - top < 1 ? 1 : y.p0 - top;
			strbuf_printf(sb, "<rect class=\"%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>",
			              miss ? "miss" : k ? "single" : "dispatch", ml + (i + 0.08 + 0.42 * k) * band, y.p0 - h,
			              band * 0.42, h);
		}
		strbuf_puts(sb, "</g>\n");
	}
	strbuf_puts(sb, "</g>\n");
	/* training geomeans over every shape */
	double gm[2] = {c->r->train[SEL_TREE].geomean, c->r->train[SEL_SINGLE].geomean};
	const char *gc[2] = {"#1f4e9c", "#c05a00"};
	for (int k = 0; k < 2; k++)
		if (isfinite(gm[k]) && gm[k] <= hi)
			strbuf_printf(sb, "<path class=\"geomean\" d=\"M%.1f %.1fH%.1f\" stroke=\"%s\"><title>geomean "
			                  "%.3f\xc3\x97 over every shape</title></path>\n",
			              ml, ls_map(&y, gm[k]), W - mr, gc[k], gm[k]);
	svg_legend(sb, ml, 24, "#4c78c8", NULL, "aotc dispatch (dashed: its geomean)");
	strbuf sl;
	strbuf_init(&sl);
	strbuf_printf(&sl, "best single variant %s", vname(c, c->r->single) ? vname(c, c->r->single) : "-");
	svg_legend(sb, ml + 300, 24, "#f5a25d", NULL, sl.data);
	strbuf_finish(&sl);
	svg_legend(sb, ml + 780, 24, "#d62728", NULL, "miss: no correct measurement");
	svg_size_ticks(sb, c, cols, n, ml, band, y.p0);
	svg_x_label(sb, c, (ml + W - mr) / 2, H - 12, n);
	strbuf_puts(sb, "</svg>\n");
}

/* ---- HTML: (c) time against shape ------------------------------------------- */

/* One series' polyline (broken where a time is missing) over the shapes. */
static void time_series(strbuf *sb, const report_ctx *c, const int *cols, int n, int v, const logscale *y,
                        double x0, double band, const char *colour, const char *cls, const char *title)
{
	strbuf_printf(sb, "<g class=\"%s\"><title>", cls);
	esc(sb, title);
	strbuf_printf(sb, "</title><path stroke=\"%s\" d=\"", colour);
	bool pen = false;
	for (int i = 0; i < n; i++) {
		int s = cols[i];
		double t = v < 0 ? c->m->oracle[s] : cell_time(c->m, s, v);
		if (!isfinite(t)) {
			pen = false;
			continue;
		}
		strbuf_printf(sb, "%s%.1f %.1f", pen ? "L" : "M", x0 + (i + 0.5) * band, ls_map(y, t));
		pen = true;
	}
	strbuf_puts(sb, "\"/>");
	if (n <= 40)
		for (int i = 0; i < n; i++) {
			double t = v < 0 ? c->m->oracle[cols[i]] : cell_time(c->m, cols[i], v);
			if (isfinite(t))
				strbuf_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>", x0 + (i + 0.5) * band,
				              ls_map(y, t), colour);
		}
	strbuf_puts(sb, "</g>\n");
}

void plot_times(strbuf *sb, const report_ctx *c, const int *cols, int n)
{
	const hresult *r = c->r;
	bool single_extra = r->single >= 0 && chosen_index(c, r->single) < 0;
	int nseries = r->nsubset + single_extra + 1;
	int per_row = 3;
	int legend_rows = (nseries + per_row - 1) / per_row;
	const double W = 1200, ml = 64, mr = 16, mt = 16, ph = 320;
	double H = mt + ph + 56 + legend_rows * 18 + 8;
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < n; i++) {
		int s = cols[i];
		for (int k = -1; k < r->nsubset + single_extra; k++) {
			int v = k < 0 ? -1 : k < r->nsubset ? r->subset[k] : r->single;
			double t = v < 0 ? c->m->oracle[s] : cell_time(c->m, s, v);
			if (isfinite(t) && t > 0) {
				lo = t < lo ? t : lo;
				hi = t > hi ? t : hi;
			}
		}
	}
	if (!(lo < INFINITY)) {
		lo = 1e-3;
		hi = 1;
	}
	if (hi <= lo * 1.01) {
		lo /= 2;
		hi *= 2;
	}
	logscale y = {lo / 1.15, hi * 1.15, mt + ph, mt};
	double band = (W - ml - mr) / (n ? n : 1);
	svg_begin(sb, "plot-times", W, H, "time against shape for the chosen variants and the per-shape best");
	svg_y_axis(sb, &y, ml, W - mr, "time in ms (log)", false);
	time_series(sb, c, cols, n, -1, &y, ml, band, "#000", "series oracle",
	            "per-shape best of every variant (the oracle)");
	if (single_extra) {
		strbuf st;
		strbuf_init(&st);
		strbuf_printf(&st, "best single variant: %s", vname(c, r->single));
		time_series(sb, c, cols, n, r->single, &y, ml, band, "#888", "series single", st.data);
		strbuf_finish(&st);
	}
	for (int k = 0; k < r->nsubset; k++)
		time_series(sb, c, cols, n, r->subset[k], &y, ml, band, chosen_colour(k), "series",
		            c->m->variant_names[r->subset[k]]);
	svg_size_ticks(sb, c, cols, n, ml, band, y.p0);
	svg_x_label(sb, c, (ml + W - mr) / 2, y.p0 + 38, n);
	double ly = y.p0 + 62, lw = (W - ml - mr) / per_row;
	int e = 0;
	svg_legend(sb, ml + (e % per_row) * lw, ly + (e / per_row) * 18, "#000", "", "per-shape best (oracle)");
	e++;
	if (single_extra) {
		strbuf sl;
		strbuf_init(&sl);
		strbuf_printf(&sl, "best single: %s", vname(c, r->single));
		svg_legend(sb, ml + (e % per_row) * lw, ly + (e / per_row) * 18, "#888", "5 3", sl.data);
		strbuf_finish(&sl);
		e++;
	}
	for (int k = 0; k < r->nsubset; k++, e++)
		svg_legend(sb, ml + (e % per_row) * lw, ly + (e / per_row) * 18, chosen_colour(k), "",
		           c->m->variant_names[r->subset[k]]);
	strbuf_puts(sb, "</svg>\n");
}

/* ---- HTML: (e) throughput against shape (AOTC_METRIC) ------------------------ */

/* Throughput of the per-shape best (which = 0) or the dispatch's choice (1)
 * at shape s, in the report's scale; NAN where none. */
static double plot_tp(const report_ctx *c, int s, int which)
{
	const shape_info *si = &c->sh[s];
	if (which && is_miss(si->sd_dispatch))
		return NAN;
	return cell_throughput(c, s, which ? si->dispatch : si->best) / c->tp_scale;
}

void plot_throughput(strbuf *sb, const report_ctx *c, const int *cols, int n)
{
	const double W = 1200, ml = 64, mr = 16, mt = 36, ph = 300;
	double H = mt + ph + 56;
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < n; i++)
		for (int w = 0; w < 2; w++) {
			double tp = plot_tp(c, cols[i], w);
			if (isfinite(tp) && tp > 0) {
				lo = tp < lo ? tp : lo;
				hi = tp > hi ? tp : hi;
			}
		}
	if (!(lo < INFINITY)) {
		lo = 1;
		hi = 10;
	}
	if (hi <= lo * 1.01) {
		lo /= 2;
		hi *= 2;
	}
	logscale y = {lo / 1.15, hi * 1.15, mt + ph, mt};
	double band = (W - ml - mr) / (n ? n : 1);
	strbuf label;
	strbuf_init(&label);
	strbuf_printf(&label, "throughput in %s (log)", c->tp_unit);
	svg_begin(sb, "plot-throughput", W, H, "throughput against shape: the per-shape best and the dispatch");
	svg_y_axis(sb, &y, ml, W - mr, label.data, false);
	strbuf_finish(&label);
	static const char *const cls[2] = {"series oracle", "series"}, *const colour[2] = {"#000", "#4c78c8"};
	static const char *const what[2] = {"per-shape best", "aotc dispatch"};
	for (int w = 0; w < 2; w++) {
		strbuf_printf(sb, "<g class=\"%s\"><title>%s</title><path stroke=\"%s\" d=\"", cls[w], what[w], colour[w]);
		bool pen = false;
		for (int i = 0; i < n; i++) {
			double tp = plot_tp(c, cols[i], w);
			if (!isfinite(tp)) {
				pen = false;
				continue;
			}
			strbuf_printf(sb, "%s%.1f %.1f", pen ? "L" : "M", ml + (i + 0.5) * band, ls_map(&y, tp));
			pen = true;
		}
		strbuf_puts(sb, "\"/>");
		for (int i = 0; i < n && n <= 40; i++) {
			double tp = plot_tp(c, cols[i], w);
			if (!isfinite(tp))
				continue;
			strbuf_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>", ml + (i + 0.5) * band,
			              ls_map(&y, tp), colour[w]);
			esc(sb, c->m->shape_labels[cols[i]]);
			strbuf_printf(sb, "\n%s: %.4g %s</title></circle>", what[w], tp, c->tp_unit);
		}
		strbuf_puts(sb, "</g>\n");
	}
	svg_legend(sb, ml, 22, "#000", "", "per-shape best (oracle)");
	svg_legend(sb, ml + 300, 22, "#4c78c8", "", "aotc dispatch");
	svg_size_ticks(sb, c, cols, n, ml, band, y.p0);
	svg_x_label(sb, c, (ml + W - mr) / 2, y.p0 + 38, n);
	strbuf_puts(sb, "</svg>\n");
}

/* ---- HTML: (d) variant × shape heat map ---------------------------------------- */

/* Slowdown classes: upper bounds and colours (green: the best, red: far). */
static const double heat_bounds[] = {1.02, 1.05, 1.1, 1.25, 1.5, 2, 3, INFINITY};
static const char *const heat_colours[] = {"#1a9850", "#66bd63", "#a6d96a", "#d9ef8b",
                                           "#fee08b", "#fdae61", "#f46d43", "#d73027"};
static const char *const heat_labels[] = {"< 1.02", "< 1.05", "< 1.1", "< 1.25", "< 1.5", "< 2", "< 3", "\xe2\x89\xa5 3"};
#define HEAT_NONE "#c8c8c8"

static const char *heat_colour(double sd)
{
	for (size_t i = 0; i < COUNTOF(heat_bounds); i++)
		if (sd < heat_bounds[i])
			return heat_colours[i];
	return heat_colours[COUNTOF(heat_colours) - 1];
}

/* The heat map's rows into out (room for HEAT_MAX_ROWS + nsubset + 1):
 * the chosen variants, the best single variant, then the next best by
 * training cost (r->single_order) up to HEAT_MAX_ROWS, at least
 * HEAT_MIN_OTHERS of them. *nchosen gets how many are chosen ones. */
static int heat_rows(const report_ctx *c, int *out, int *nchosen)
{
	const hresult *r = c->r;
	int n = 0;
	for (int i = 0; i < r->nsubset; i++)
		out[n++] = r->subset[i];
	*nchosen = n;
	if (r->single >= 0 && chosen_index(c, r->single) < 0)
		out[n++] = r->single;
	int want = n + HEAT_MIN_OTHERS > HEAT_MAX_ROWS ? n + HEAT_MIN_OTHERS : HEAT_MAX_ROWS;
	for (int i = 0; i < c->m->nvariants && n < want && r->single_order; i++) {
		int v = r->single_order[i];
		bool have = false;
		for (int j = 0; j < n && !have; j++)
			have = out[j] == v;
		if (!have)
			out[n++] = v;
	}
	return n;
}

void plot_heatmap(strbuf *sb, const report_ctx *c)
{
	const hmatrix *m = c->m;
	int *rows = xmalloc(((size_t)c->r->nsubset + HEAT_MAX_ROWS + HEAT_MIN_OTHERS + 2) * sizeof *rows);
	int nchosen, nr = heat_rows(c, rows, &nchosen);
	int *cols = xmalloc(((size_t)m->nshapes + 1) * sizeof *cols);
	int nc = sample_shapes(c, HEAT_MAX_COLS, cols);
	int lchars = 0;
	for (int i = 0; i < nr; i++) {
		int k = label_chars(m->variant_names[rows[i]], LABEL_MAX);
		lchars = k > lchars ? k : lchars;
	}
	/* whole pixels: shorter numbers, crisp cells */
	double cw = nc ? floor(1000.0 / nc) : 16, ch = 16;
	cw = cw < 6 ? 6 : cw > 40 ? 40 : cw;
	bool col_labels = cw >= 12;
	double ml = floor(24 + (lchars + 1) * CHAR_W), mt = 12, gh = nr * ch;
	double lab = col_labels ? 130 : 24;
	const double lw = 72; /* a legend entry */
	double W = ml + nc * cw + 16, H = mt + gh + lab + 60;
	if (W < 16 + COUNTOF(heat_colours) * lw + 260)
		W = 16 + COUNTOF(heat_colours) * lw + 260;
	svg_begin(sb, "plot-heatmap", W, H, "slowdown of each variant at each shape against the shape's best");
	strbuf_puts(sb, "<g class=\"rows\">\n");
	for (int i = 0; i < nr; i++) {
		int v = rows[i], ci = chosen_index(c, v);
		double y = mt + i * ch;
		strbuf_printf(sb, "<g><title>%s", ci >= 0 ? "chosen: " : v == c->r->single ? "best single variant: " : "");
		esc(sb, m->variant_names[v]);
		strbuf_puts(sb, "</title>");
		if (ci >= 0)
			strbuf_printf(sb, "<rect x=\"4\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>", y + 3,
			              chosen_colour(ci));
		strbuf_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"%s>", ml - 6, y + 12,
		              ci >= 0 ? "" : " class=\"dim\"");
		esc_cut(sb, m->variant_names[v], LABEL_MAX);
		strbuf_puts(sb, "</text></g>\n");
	}
	strbuf_puts(sb, "</g>\n<g class=\"cells\">\n");
	for (int i = 0; i < nr; i++) {
		int v = rows[i];
		for (int j = 0; j < nc; j++) {
			int s = cols[j];
			double t = cell_time(m, s, v);
			bool ok = isfinite(t) && isfinite(m->oracle[s]);
			double sd = ok ? t / m->oracle[s] : 0;
			bool picked = c->sh[s].dispatch == v && !is_miss(c->sh[s].sd_dispatch);
			strbuf_printf(sb, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"%s\"%s><title>", ml + j * cw,
			              mt + i * ch, cw, ch, ok ? heat_colour(sd) : HEAT_NONE, picked ? " class=\"pick\"" : "");
			esc(sb, m->shape_labels[s]);
			if (ok)
				strbuf_printf(sb, ": %.3f\xc3\x97 (%.4g ms)%s", sd, t, picked ? ", the dispatch's choice" : "");
			else
				strbuf_printf(sb, ": %s", cell_status(c, s, v));
			strbuf_puts(sb, "</title></rect>\n");
		}
	}
	strbuf_puts(sb, "</g>\n");
	if (nchosen < nr)
		strbuf_printf(sb, "<path class=\"sep\" d=\"M%.1f %.1fh%.1f\"/>\n", ml, mt + nchosen * ch, nc * cw);
	double by = mt + gh;
	if (col_labels) {
		strbuf_puts(sb, "<g class=\"xlabels\">");
		for (int j = 0; j < nc; j++) {
			double x = ml + (j + 0.5) * cw + 4, yy = by + 8;
			strbuf_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-60 %.1f %.1f)\">", x, yy,
			              x, yy);
			esc_cut(sb, m->shape_labels[cols[j]], 22);
			strbuf_puts(sb, "</text>");
		}
		strbuf_puts(sb, "</g>\n");
	}
	double ly = by + lab + 8;
	strbuf_printf(sb, "<text class=\"axis\" x=\"16\" y=\"%.1f\">", ly - 12);
	strbuf_printf(sb, "%d of %d shapes, ordered by ", nc, m->nshapes);
	esc(sb, c->size_name);
	strbuf_printf(sb, "; %d of %d variants; outlined: the dispatch&#39;s choice</text>\n", nr, m->nvariants);
	for (size_t i = 0; i < COUNTOF(heat_colours); i++)
		svg_legend(sb, 16 + i * lw, ly + 14, heat_colours[i], NULL, heat_labels[i]);
	svg_legend(sb, 16 + COUNTOF(heat_colours) * lw, ly + 14, HEAT_NONE, NULL, "failed, invalid or not measured");
	strbuf_puts(sb, "</svg>\n");
	free(rows);
	free(cols);
}
