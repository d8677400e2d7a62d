/* aotc report as text, for a terminal: the header, the per-shape winners
 * (wrapped), the heuristic's own report, the variants measured failing and
 * a per-shape table of at most TEXT_MAX_ROWS rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report_ctx.h"

/* The per-shape table shows at most this many shapes. */
#define TEXT_MAX_ROWS 40

static void text_failures(strbuf *sb, const report_ctx *c)
{
	strbuf why, cond;
	strbuf_init(&why);
	strbuf_init(&cond);
	bool any = false;
	for (int v = 0; v < c->m->nvariants; v++) {
		if (!failure_text(c, v, &why, &cond))
			continue;
		if (!any)
			strbuf_puts(sb, "\nmeasured failing (never dispatched where they failed, nor on shapes like those):\n");
		any = true;
		strbuf_printf(sb, "  %s%s: %s\n    may run where: %s\n", vname(c, v), in_subset(c, v) ? " (dispatched)" : "",
		              why.data, cond.data);
	}
	strbuf_finish(&why);
	strbuf_finish(&cond);
}

static void text_winners(strbuf *sb, const report_ctx *c)
{
	const char *head = "per-shape winners:";
	strbuf_puts(sb, head);
	size_t col = strlen(head);
	strbuf item;
	strbuf_init(&item);
	for (int i = 0; i < c->nwinners; i++) {
		int v = c->winners[i];
		item.len = 0;
		strbuf_printf(&item, "%s x%d%s", c->m->variant_names[v], c->wins[v], i + 1 < c->nwinners ? "," : "");
		strbuf_put_wrapped(sb, &col, item.data, 1, H_TEXT_WIDTH);
	}
	strbuf_finish(&item);
	if (!c->nwinners)
		strbuf_puts(sb, " (none: no variant ran)");
	strbuf_puts(sb, "\n\n");
}

static void text_time(strbuf *sb, int width, double t)
{
	if (isfinite(t))
		strbuf_printf(sb, " %*.4g", width, t);
	else
		strbuf_printf(sb, " %*s", width, "-");
}

static void text_slowdown(strbuf *sb, int width, double sd)
{
	if (is_miss(sd))
		strbuf_printf(sb, " %*s", width, "miss");
	else
		strbuf_printf(sb, " %*.3f", width, sd);
}

/* A throughput in the report's scale, or "-". */
static void text_throughput(strbuf *sb, int width, const report_ctx *c, double tp)
{
	if (isfinite(tp))
		strbuf_printf(sb, " %*.4g", width, tp / c->tp_scale);
	else
		strbuf_printf(sb, " %*s", width, "-");
}

static void text_shapes(strbuf *sb, const report_ctx *c)
{
	const tune_db *db = c->db;
	const hmatrix *m = c->m;
	int *rows = xmalloc(((size_t)m->nshapes + 1) * sizeof *rows);
	int n = table_rows(c, TEXT_MAX_ROWS, rows), alternated = 0;
	strbuf_printf(sb, "\nper shape, by %s", c->size_name);
	if (n < m->nshapes)
		strbuf_printf(sb, " (the %d of %d where the dispatch is slowest)", n, m->nshapes);
	strbuf_puts(sb, ":\n");
	int *w = xmalloc(((size_t)db->nshape_args + 1) * sizeof *w);
	for (int a = 0; a < db->nshape_args; a++) {
		w[a] = (int)strlen(db->shape_args[a]);
		for (int i = 0; i < n; i++) {
			char num[32];
			int len = snprintf(num, sizeof num, "%lld", (long long)m->rows[(size_t)rows[i] * m->nargs + a]);
			if (len > w[a])
				w[a] = len;
		}
	}
	for (int a = 0; a < db->nshape_args; a++)
		strbuf_printf(sb, "%s%*s", a ? " " : "", w[a], db->shape_args[a]);
	char best_tp[32], disp_tp[32];
	int tw = 0;
	if (c->tp_unit) {
		snprintf(best_tp, sizeof best_tp, "best %s", c->tp_unit);
		tw = snprintf(disp_tp, sizeof disp_tp, "dispatch %s", c->tp_unit);
	}
	strbuf_printf(sb, " %10s", "best ms");
	if (c->tp_unit)
		strbuf_printf(sb, " %*s", tw, best_tp);
	strbuf_printf(sb, " %11s", "dispatch ms");
	if (c->tp_unit)
		strbuf_printf(sb, " %*s", tw, disp_tp);
	strbuf_printf(sb, " %9s %9s %8s\n", "slowdown", "single", "noise");
	for (int i = 0; i < n; i++) {
		int s = rows[i];
		const shape_info *si = &c->sh[s];
		for (int a = 0; a < db->nshape_args; a++)
			strbuf_printf(sb, "%s%*lld", a ? " " : "", w[a], (long long)m->rows[(size_t)s * m->nargs + a]);
		text_time(sb, 10, m->oracle[s]);
		if (c->tp_unit)
			text_throughput(sb, tw, c, cell_throughput(c, s, si->best));
		text_time(sb, 11, is_miss(si->sd_dispatch) ? INFINITY : cell_time(m, s, si->dispatch));
		if (c->tp_unit)
			text_throughput(sb, tw, c, is_miss(si->sd_dispatch) ? NAN : cell_throughput(c, s, si->dispatch));
		text_slowdown(sb, 9, si->sd_dispatch);
		text_slowdown(sb, 9, si->sd_single);
		/* the best's spread; '*': the shape's contenders were alternated */
		if (isnan(si->noise))
			strbuf_printf(sb, " %8s\n", "-");
		else
			strbuf_printf(sb, " %7.1f%%%s\n", 100 * si->noise, si->alternated ? "*" : "");
		alternated += si->alternated > 0;
	}
	if (n < m->nshapes)
		strbuf_printf(sb, "\xe2\x80\xa6 %d more (--format json has all)\n", m->nshapes - n);
	if (alternated)
		strbuf_puts(sb, "noise: the best's p10-p90 spread over its median; *: its contenders were alternated\n");
	free(w);
	free(rows);
}

void report_write_text(strbuf *sb, const report_ctx *c)
{
	const char *hw = json_string_value(json_object_get(c->db->hardware, "id"));
	strbuf_printf(sb, "%s on %s: %d measurements\n", c->db->kernel, hw ? hw : "?", c->db->nmeas);
	if (c->tp_unit)
		strbuf_printf(sb, "metric: %s %s per launch (AOTC_METRIC); throughputs in %s\n", c->k->metric_count.text,
		              metric_unit_name(c->k->metric), c->tp_unit);
	text_winners(sb, c);
	h_print_report(sb, c->r, c->m, c->eval, c->neval, c->dp);
	text_failures(sb, c);
	text_shapes(sb, c);
}
