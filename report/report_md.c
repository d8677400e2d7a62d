/* aotc report as GitHub-flavoured Markdown: the summary, the selectors'
 * figures, the chosen variants, the failures, the tree and every shape.
 * Names from the database go in code spans. */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "report_ctx.h"

/* s as a code span (HTML in it is not interpreted), in a table cell when
 * cell: a fence longer than any run of backticks in s, '|' escaped, line
 * breaks as spaces. */
static void md_code(strbuf *sb, const char *s, bool cell)
{
	if (!s) {
		strbuf_puts(sb, "-");
		return;
	}
	int run = 0, longest = 0;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	size_t len = strlen(s);
	bool pad = len && (s[0] == '`' || s[len - 1] == '`' || s[0] == ' ');
	for (int i = 0; i <= longest; i++)
		strbuf_putc(sb, '`');
	if (pad)
		strbuf_putc(sb, ' ');
	for (const char *p = s; *p; p++) {
		if (*p == '\n' || *p == '\r')
			strbuf_putc(sb, ' ');
		else if (*p == '|' && cell)
			strbuf_puts(sb, "\\|");
		else
			strbuf_putc(sb, *p);
	}
	if (pad)
		strbuf_putc(sb, ' ');
	for (int i = 0; i <= longest; i++)
		strbuf_putc(sb, '`');
}

static void md_time(strbuf *sb, double t)
{
	if (isfinite(t))
		strbuf_printf(sb, " %.4g |", t);
	else
		strbuf_puts(sb, " - |");
}

static void md_throughput(strbuf *sb, const report_ctx *c, double tp)
{
	if (isfinite(tp))
		strbuf_printf(sb, " %.4g |", tp / c->tp_scale);
	else
		strbuf_puts(sb, " - |");
}

static void md_slowdown(strbuf *sb, double sd)
{
	if (is_miss(sd))
		strbuf_puts(sb, " miss |");
	else
		strbuf_printf(sb, " %.3f |", sd);
}

static void md_stats(strbuf *sb, const hstats *s)
{
	strbuf_printf(sb, " %.3f | %.3f | %.3f | %d |", s->geomean, s->p90, s->worst, s->misses);
}

static void md_summary(strbuf *sb, const report_ctx *c)
{
	const tune_db *db = c->db;
	const hmatrix *m = c->m;
	const hresult *r = c->r;
	const char *hw = json_string_value(json_object_get(db->hardware, "id"));
	const char *dev = json_string_value(json_object_get(db->hardware, "name"));
	strbuf_puts(sb, "# aotc report: ");
	md_code(sb, db->kernel, false);
	strbuf_puts(sb, " on ");
	md_code(sb, hw ? hw : "?", false);
	strbuf_puts(sb, "\n\n- **Source:** ");
	md_code(sb, db->source ? db->source : "(none recorded)", false);
	if (dev) {
		strbuf_puts(sb, "\n- **Device:** ");
		md_code(sb, dev, false);
	}
	strbuf_printf(sb, "\n- **Measurements:** %d, over %d shapes and %d variants (%d shapes where no variant ran)\n",
	              db->nmeas, m->nshapes, m->nvariants, r->uncovered);
	strbuf_printf(sb, "- **Dispatch:** %d variant%s select() can return (of %d chosen", c->dp->nvariants,
	              c->dp->nvariants == 1 ? "" : "s", r->nsubset);
	if (r->ncover)
		strbuf_printf(sb, ", %d of them for coverage near the measured shapes", r->ncover);
	strbuf_printf(sb, "); tree of depth %d with %d leaves, ", dispatch_depth(c->dp), dispatch_leaves(c->dp));
	if (r->distilled)
		strbuf_printf(sb, "learnt from %s's predictions on %d shapes and the measured ones\n",
		              h_model_text(r->kind), r->dense_shapes);
	else
		strbuf_printf(sb, "learnt from the measured shapes%s\n",
		              m->row_info ? "" : " only (no kernel source: no cost model)");
	strbuf_printf(sb, "- **Cross-validation:** %d folds over %d shapes, %s\n", r->folds, r->cv_shapes,
	              h_folds_text(r->fold_by));
	strbuf_puts(sb, "- **Best single variant:** ");
	md_code(sb, vname(c, r->single), false);
	if (c->tp_unit) {
		strbuf_puts(sb, "\n- **Metric:** ");
		md_code(sb, c->k->metric_count.text, false);
		strbuf_printf(sb, " %s per launch (`AOTC_METRIC`); throughputs in %s", metric_unit_name(c->k->metric),
		              c->tp_unit);
	}
	strbuf_puts(sb, "\n\n");
}

static void md_selectors(strbuf *sb, const report_ctx *c)
{
	strbuf_puts(sb, "## Slowdown against the per-shape best\n\n| selector | train geomean | train p90 | "
	                "train worst | train misses | held-out geomean | held-out p90 | held-out worst | "
	                "held-out misses |");
	if (c->eval)
		strbuf_printf(sb, " eval geomean (%d shapes) | eval p90 | eval worst | eval misses |", c->neval);
	strbuf_puts(sb, "\n|:--|--:|--:|--:|--:|--:|--:|--:|--:|");
	if (c->eval)
		strbuf_puts(sb, "--:|--:|--:|--:|");
	strbuf_putc(sb, '\n');
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		strbuf_printf(sb, "| %s |", h_selector_names[sel]);
		md_stats(sb, &c->r->train[sel]);
		md_stats(sb, &c->r->heldout[sel]);
		if (c->eval)
			md_stats(sb, &c->eval[sel]);
		strbuf_putc(sb, '\n');
	}
	if (c->r->weighted) {
		strbuf_puts(sb, "\nWeighted by each shape's recorded calls (`AOTC_RECORD`; a shape without a count weighs "
		                "one call), what the dispatch was fitted to minimise:\n\n| selector | train weighted geomean "
		                "| held-out weighted geomean |\n|:--|--:|--:|\n");
		for (int sel = 0; sel < SEL_COUNT; sel++)
			strbuf_printf(sb, "| %s | %.3f | %.3f |\n", h_selector_names[sel], c->r->train_w[sel],
			              c->r->heldout_w[sel]);
	}
	strbuf_puts(sb, "\n*Held-out*: cross-validation over the measured shapes; *eval*: the shapes `aotc eval` "
	                "measured.\n\n");
}

static void md_variants(strbuf *sb, const report_ctx *c)
{
	strbuf_puts(sb, "## Chosen variants\n\n| # | variant | per-shape best on |\n|--:|:--|--:|\n");
	for (int i = 0; i < c->r->nsubset; i++) {
		int v = c->r->subset[i];
		strbuf_printf(sb, "| %d | ", i + 1);
		md_code(sb, vname(c, v), true);
		strbuf_printf(sb, " | %d |\n", c->wins[v]);
	}
	strbuf_puts(sb, "\n## Per-shape winners\n\n| variant | shapes |\n|:--|--:|\n");
	for (int i = 0; i < c->nwinners; i++) {
		strbuf_puts(sb, "| ");
		md_code(sb, vname(c, c->winners[i]), true);
		strbuf_printf(sb, " | %d |\n", c->wins[c->winners[i]]);
	}
	strbuf_putc(sb, '\n');
}

static void md_tree(strbuf *sb, const report_ctx *c)
{
	strbuf t;
	strbuf_init(&t);
	dispatch_print(&t, c->dp);
	int run = 0, longest = 2;
	for (size_t i = 0; i < t.len; i++) {
		run = t.data[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	strbuf_puts(sb, "## Decision tree\n\nLeft when the condition holds; a leaf tries its variants in order "
	                "(the first valid one runs).\n\n");
	for (int i = 0; i <= longest; i++)
		strbuf_putc(sb, '`');
	strbuf_puts(sb, "text\n");
	strbuf_puts(sb, t.len ? t.data : "(no tree)\n");
	for (int i = 0; i <= longest; i++)
		strbuf_putc(sb, '`');
	strbuf_puts(sb, "\n\n");
	strbuf_finish(&t);
}

static void md_shapes(strbuf *sb, const report_ctx *c)
{
	const tune_db *db = c->db;
	const hmatrix *m = c->m;
	strbuf_puts(sb, "## Per shape\n\nEvery shape, by ");
	md_code(sb, c->size_name, false);
	strbuf_puts(sb, "; times in ms, slowdowns against the shape's best");
	if (c->tp_unit)
		strbuf_printf(sb, ", throughputs in %s", c->tp_unit);
	strbuf_puts(sb, ".\n\n|");
	for (int a = 0; a < db->nshape_args; a++) {
		strbuf_putc(sb, ' ');
		md_code(sb, db->shape_args[a], true);
		strbuf_puts(sb, " |");
	}
	strbuf_puts(sb, " best ms |");
	if (c->tp_unit)
		strbuf_printf(sb, " best %s |", c->tp_unit);
	strbuf_puts(sb, " best variant | dispatch | dispatch ms |");
	if (c->tp_unit)
		strbuf_printf(sb, " dispatch %s |", c->tp_unit);
	strbuf_puts(sb, " slowdown | single ms | single slowdown | noise | alternated |\n|");
	for (int a = 0; a < db->nshape_args; a++)
		strbuf_puts(sb, "--:|");
	strbuf_puts(sb, c->tp_unit ? "--:|--:|:--|:--|--:|--:|--:|--:|--:|--:|:--|\n" : "--:|:--|:--|--:|--:|--:|--:|--:|:--|\n");
	for (int i = 0; i < m->nshapes; i++) {
		int s = c->by_size[i];
		const shape_info *si = &c->sh[s];
		strbuf_putc(sb, '|');
		for (int a = 0; a < db->nshape_args; a++)
			strbuf_printf(sb, " %lld |", (long long)m->rows[(size_t)s * m->nargs + a]);
		md_time(sb, m->oracle[s]);
		if (c->tp_unit)
			md_throughput(sb, c, cell_throughput(c, s, si->best));
		strbuf_putc(sb, ' ');
		md_code(sb, vname(c, si->best), true);
		strbuf_puts(sb, " | ");
		md_code(sb, vname(c, si->dispatch), true);
		strbuf_puts(sb, " |");
		md_time(sb, is_miss(si->sd_dispatch) ? INFINITY : cell_time(m, s, si->dispatch));
		if (c->tp_unit)
			md_throughput(sb, c, is_miss(si->sd_dispatch) ? NAN : cell_throughput(c, s, si->dispatch));
		md_slowdown(sb, si->sd_dispatch);
		md_time(sb, is_miss(si->sd_single) ? INFINITY : cell_time(m, s, si->single));
		md_slowdown(sb, si->sd_single);
		if (isnan(si->noise))
			strbuf_puts(sb, " \xe2\x80\x94 | \xe2\x80\x94 |");
		else if (si->alternated)
			strbuf_printf(sb, " %.1f %% | %d rounds |", 100 * si->noise, si->alternated);
		else
			strbuf_printf(sb, " %.1f %% | no |", 100 * si->noise);
		strbuf_putc(sb, '\n');
	}
}

static void md_failures(strbuf *sb, const report_ctx *c)
{
	strbuf why, cond;
	strbuf_init(&why);
	strbuf_init(&cond);
	bool any = false;
	for (int v = 0; v < c->m->nvariants; v++) {
		if (!failure_text(c, v, &why, &cond))
			continue;
		if (!any)
			strbuf_puts(sb, "## Measured failing\n\nNever dispatched where they failed, nor on shapes like those.\n\n"
			                "| variant | failed | may run where | dispatched |\n|:--|:--|:--|:--|\n");
		any = true;
		strbuf_puts(sb, "| ");
		md_code(sb, vname(c, v), true);
		strbuf_puts(sb, " | ");
		md_code(sb, why.data, true);
		strbuf_puts(sb, " | ");
		md_code(sb, cond.data, true);
		strbuf_printf(sb, " | %s |\n", in_subset(c, v) ? "yes" : "no");
	}
	if (any)
		strbuf_putc(sb, '\n');
	strbuf_finish(&why);
	strbuf_finish(&cond);
}

void report_write_markdown(strbuf *sb, const report_ctx *c)
{
	md_summary(sb, c);
	md_selectors(sb, c);
	md_variants(sb, c);
	md_failures(sb, c);
	md_tree(sb, c);
	md_shapes(sb, c);
}
