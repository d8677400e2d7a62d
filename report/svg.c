/* SVG plot helpers of the HTML report: log axes, legends and the shape
 * axis of the plots over shapes. */
#include <math.h>

#include "report_ctx.h"

double ls_map(const logscale *s, double v)
{
	if (v < s->lo)
		v = s->lo;
	if (v > s->hi)
		v = s->hi;
	return s->p0 + (log(v) - log(s->lo)) / (log(s->hi) - log(s->lo)) * (s->p1 - s->p0);
}

/* Ticks of a log axis over [lo, hi] into out (room for 64): 1, 2, 5 per
 * decade, or 1..9 where that gives fewer than three. */
static int log_ticks(double lo, double hi, double *out)
{
	static const int coarse[] = {1, 2, 5}, fine[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	int n = 0;
	for (int pass = 0; pass < 2 && n < 3; pass++) {
		const int *mult = pass ? fine : coarse;
		int nm = pass ? (int)COUNTOF(fine) : (int)COUNTOF(coarse);
		n = 0;
		for (int e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)) && n < 60; e++)
			for (int i = 0; i < nm && n < 60; i++) {
				double v = mult[i] * pow(10, e);
				if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
					out[n++] = v;
			}
	}
	if (n < 2) {
		out[0] = lo;
		out[1] = hi;
		n = 2;
	}
	return n;
}

void svg_begin(strbuf *sb, const char *id, double w, double h, const char *title)
{
	strbuf_printf(sb, "<svg id=\"%s\" class=\"plot %s\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	                  "role=\"img\" aria-label=\"%s\">\n<title>%s</title>\n",
	              id, id, w, h, w, h, title, title);
}

void svg_y_axis(strbuf *sb, const logscale *y, double x0, double x1, const char *label, bool slowdown)
{
	strbuf_printf(sb, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", x0, y->p1,
	              x1 - x0, y->p0 - y->p1);
	double t[64];
	int n;
	if (slowdown) {
		static const double sd[] = {1, 1.02, 1.05, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100};
		n = 0;
		for (size_t i = 0; i < COUNTOF(sd); i++)
			if (sd[i] <= y->hi * (1 + 1e-9))
				t[n++] = sd[i];
	} else {
		n = log_ticks(y->lo, y->hi, t);
	}
	strbuf_puts(sb, "<g class=\"grid\">");
	double last = INFINITY;
	for (int i = 0; i < n; i++) {
		double py = ls_map(y, t[i]);
		if (last - py < 14)
			continue; /* too close to the one below */
		last = py;
		strbuf_printf(sb, "<path d=\"M%.1f %.1fH%.1f\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>",
		              x0, py, x1, x0 - 4, py + 4, t[i]);
	}
	strbuf_puts(sb, "</g>\n");
	double mid = (y->p0 + y->p1) / 2;
	strbuf_printf(sb, "<text class=\"axis\" x=\"14\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">%s</text>\n",
	              mid, mid, label);
}

void svg_legend(strbuf *sb, double x, double y, const char *colour, const char *dash, const char *text)
{
	strbuf_puts(sb, "<g class=\"legend\"><title>");
	esc(sb, text);
	strbuf_puts(sb, "</title>");
	if (dash)
		strbuf_printf(sb, "<path d=\"M%.1f %.1fh18\" stroke=\"%s\" stroke-width=\"2.5\"%s%s%s fill=\"none\"/>", x,
		              y - 4, colour, *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
	else
		strbuf_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y - 10, colour);
	strbuf_printf(sb, "<text x=\"%.1f\" y=\"%.1f\">", x + 22, y);
	esc_cut(sb, text, LABEL_MAX);
	strbuf_puts(sb, "</text></g>\n");
}

void svg_size_ticks(strbuf *sb, const report_ctx *c, const int *cols, int n, double x0, double band,
                           double ybase)
{
	int step = n > 8 ? (n + 7) / 8 : 1;
	strbuf_puts(sb, "<g class=\"xticks\">");
	for (int i = 0; i < n; i += step) {
		double x = x0 + (i + 0.5) * band;
		strbuf_printf(sb, "<path d=\"M%.1f %.1fv5\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.3g</text>", x,
		              ybase, x, ybase + 17, c->sh[cols[i]].size);
	}
	strbuf_puts(sb, "</g>\n");
}

void svg_x_label(strbuf *sb, const report_ctx *c, double x, double y, int n)
{
	strbuf_printf(sb, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y);
	strbuf_printf(sb, "%s shapes, ordered by ", n < c->m->nshapes ? "sampled" : "measured");
	esc(sb, c->size_name);
	strbuf_puts(sb, " (the product of the shape arguments, ticks show it)</text>\n");
}
