/* The table of docs/spec.md §7 as text (h_print_report): every selector's
 * figures on training and held-out shapes, the chosen variants and the
 * tree. */
#include "heuristic.h"

#include <string.h>

#include "dispatch.h"

void h_print_report(strbuf *sb, const hresult *r, const hmatrix *m, const hstats *eval, int neval,
                    const struct dispatch *dp)
{
	int covered = m->nshapes - r->uncovered;
	strbuf_printf(sb, "%d shapes (%d where no variant ran), %d variants; %d chosen for the dispatch",
	              m->nshapes, r->uncovered, m->nvariants, r->nsubset);
	if (r->ncover)
		strbuf_printf(sb, " (%d of them so that every shape near the measured ones has a valid variant)",
		              r->ncover);
	strbuf_putc(sb, '\n');
	if (r->distilled)
		strbuf_printf(sb, "tree learnt from %s's predictions on %d shapes spread over the\n"
		              "  measured range and from the measured shapes\n", h_model_text(r->kind), r->dense_shapes);
	else if (!m->row_info)
		strbuf_puts(sb, "tree learnt from the measured shapes only (no kernel source: no cost model)\n");
	strbuf_printf(sb, "tree: depth %d, %d leaves (max depth %d, min leaf %d) over the first %d variants of the\n"
	              "  greedy order; all three and the kind of tree chosen by %d-fold cross-validation over %d shapes",
	              htree_depth(&r->tree), htree_leaves(&r->tree), r->tree.max_depth, r->tree.min_leaf, r->nvar,
	              r->folds, r->cv_shapes);
	if (r->cv_shapes < covered)
		strbuf_printf(sb, " drawn from the %d, the held-out figures too", covered);
	strbuf_printf(sb, ";\n  %s\n", h_folds_text(r->fold_by));
	if (r->kind_cv[1] > 0)
		strbuf_printf(sb, "cross-validated geomean of the best tree of each kind: from the measured shapes %.3f\n"
		              "  (%d variants), distilled from the cost model %.3f (%d), from the forest %.3f (%d): %s chosen\n",
		              r->kind_cv[0], r->kind_nvar[0], r->kind_cv[1], r->kind_nvar[1], r->kind_cv[2], r->kind_nvar[2],
		              h_kind_name(r->kind));
	if (r->distilled_contradicted)
		strbuf_puts(sb, "  (the distilled tree lost more than 2% to the measured one on the measured shapes)\n");
	strbuf_putc(sb, '\n');
	strbuf_printf(sb, "%-22s %-28s %-34s", "slowdown vs oracle", "training shapes",
	              r->fold_by == H_FOLDS_VALUE ? "held-out (leave one value out)"
	              : r->fold_by == H_FOLDS_SHAPE ? "held-out (leave one shape out)" : "held-out (cross-validated)");
	if (neval > 0)
		strbuf_printf(sb, "measured held-out (aotc eval, %d shapes)", neval);
	strbuf_printf(sb, "\n%-22s %8s %8s %8s   %8s %8s %8s %-7s", "selector", "geomean", "p90", "worst",
	              "geomean", "p90", "worst", "misses");
	if (neval > 0)
		strbuf_printf(sb, "   %8s %8s %8s %s", "geomean", "p90", "worst", "misses");
	strbuf_putc(sb, '\n');
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		if (sel == SEL_MEASURED && !r->distilled)
			continue; /* the same tree as the last line */
		const hstats *t = &r->train[sel], *h = &r->heldout[sel];
		strbuf_printf(sb, "%-22s %8.3f %8.3f %8.3f   %8.3f %8.3f %8.3f %d/%d", h_selector_names[sel],
		              t->geomean, t->p90, t->worst, h->geomean, h->p90, h->worst, t->misses, h->misses);
		if (neval > 0)
			strbuf_printf(sb, "%*s   %8.3f %8.3f %8.3f %d", 4, "", eval[sel].geomean, eval[sel].p90,
			              eval[sel].worst, eval[sel].misses);
		/* a dispatched failure is never left out silently */
		if (t->failed || h->failed || (neval > 0 && eval[sel].failed)) {
			strbuf_printf(sb, "  FAILED: %d training, %d held-out", t->failed, h->failed);
			if (neval > 0)
				strbuf_printf(sb, ", %d eval", eval[sel].failed);
			strbuf_puts(sb, " shapes");
		}
		strbuf_putc(sb, '\n');
	}
	if (r->weighted) {
		strbuf_puts(sb, "\nweighted by each shape's recorded calls (AOTC_RECORD; a shape without a count\n"
		                "  weighs one call), what the dispatch was fitted to minimise:\n");
		strbuf_printf(sb, "%-22s %8s   %8s\n", "selector", "training", "held-out");
		for (int sel = 0; sel < SEL_COUNT; sel++)
			if (sel != SEL_MEASURED || r->distilled)
				strbuf_printf(sb, "%-22s %8.3f   %8.3f\n", h_selector_names[sel], r->train_w[sel],
				              r->heldout_w[sel]);
	}
	strbuf_printf(sb, "\nbest single variant: %s\nchosen variants:", r->single >= 0 ? m->variant_names[r->single] : "none");
	size_t col = strlen("chosen variants:");
	strbuf item;
	strbuf_init(&item);
	for (int i = 0; i < r->nsubset; i++) {
		item.len = 0;
		strbuf_printf(&item, "%s%s", m->variant_names[r->subset[i]], i + 1 < r->nsubset ? "," : "");
		strbuf_put_wrapped(sb, &col, item.data, 2, H_TEXT_WIDTH);
	}
	if (dp) {
		const char *head = "\nselect() can return:";
		strbuf_puts(sb, head);
		col = strlen(head) - 1;
		for (int i = 0; i < dp->nvariants; i++) {
			item.len = 0;
			strbuf_printf(&item, "%s%s", dp->variants[i].name, i + 1 < dp->nvariants ? "," : "");
			strbuf_put_wrapped(sb, &col, item.data, 2, H_TEXT_WIDTH);
		}
	}
	strbuf_finish(&item);
	strbuf_puts(sb, "\n\ntree:\n");
	if (dp)
		dispatch_print(sb, dp);
	else
		htree_print(sb, &r->tree, m);
}
