/* aotc report as JSON, for scripts: every figure, every shape (strings
 * that are not UTF-8 with '?' for their high bytes), keys sorted. */
#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include "failures.h"
#include "report_ctx.h"

/* A string, or (for text that is not UTF-8: names from a kernel source)
 * the same with every byte above 0x7f as '?'. */
static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	char *t = xstrdup(s);
	for (char *p = t; *p; p++)
		if ((unsigned char)*p > 0x7f)
			*p = '?';
	j = json_string(t);
	free(t);
	return j ? j : json_null();
}

static json_t *jfailures(const report_ctx *c)
{
	json_t *a = json_array();
	strbuf why, cond;
	strbuf_init(&why);
	strbuf_init(&cond);
	for (int v = 0; v < c->m->nvariants; v++) {
		if (!failure_text(c, v, &why, &cond))
			continue;
		const hfailure *f = &c->m->fail[v];
		json_array_append_new(a, json_pack("{s:o,s:s,s:i,s:i,s:b,s:o,s:b,s:s}", "variant", jstr(vname(c, v)),
		                                   "status", meas_status_name(f->status), "failed_shapes", f->nfailed,
		                                   "ok_shapes", f->nok, "dropped", f->dropped, "may_run_where",
		                                   f->dropped ? json_null() : jstr(cond.data), "dispatched",
		                                   in_subset(c, v), "why", why.data));
	}
	strbuf_finish(&why);
	strbuf_finish(&cond);
	return a;
}

/* The dispatch as select() runs it: the variants it can return, the
 * features it splits on, its tree (leaves name their fallback order) and
 * the shared orders. */
static json_t *jdispatch(const report_ctx *c)
{
	const dispatch *d = c->dp;
	json_t *vars = json_array(), *feats = json_array(), *nodes = json_array(), *orders = json_array();
	for (int v = 0; v < d->nvariants; v++)
		json_array_append_new(vars, jstr(d->variants[v].name));
	for (int f = 0; f < d->nfeatures; f++)
		json_array_append_new(feats, jstr(d->features[f].text));
	for (int i = 0; i < d->nnodes; i++) {
		const dnode *n = &d->nodes[i];
		json_array_append_new(nodes, n->feature < 0 ? json_pack("{s:i}", "order", n->order)
		                                             : json_pack("{s:i,s:I,s:i,s:i}", "feature", n->feature,
		                                                         "threshold", (json_int_t)n->threshold,
		                                                         "left", n->left, "right", n->right));
	}
	for (int o = 0; o < d->norders; o++) {
		json_t *a = json_array();
		for (const int *p = d->orders + d->order_at[o]; *p >= 0; p++)
			json_array_append_new(a, json_integer(*p));
		json_array_append_new(orders, a);
	}
	return json_pack("{s:o,s:o,s:o,s:o,s:i,s:i}", "variants", vars, "features", feats, "nodes", nodes,
	                 "orders", orders, "depth", dispatch_depth(d), "leaves", dispatch_leaves(d));
}

static json_t *jreal(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *jstats(const hstats *s)
{
	return json_pack("{s:o,s:o,s:o,s:i,s:i,s:i}", "geomean", jreal(s->geomean), "p90", jreal(s->p90), "worst",
	                 jreal(s->worst), "misses", s->misses, "failed", s->failed, "shapes", s->n);
}

/* A variant's pick at a shape: name, time, slowdown (null: a miss) and,
 * with a metric, throughput (null: none). */
static json_t *jchoice(const report_ctx *c, int s, int v, double sd)
{
	bool miss = is_miss(sd);
	json_t *o = json_pack("{s:o,s:o,s:o}", "variant", jstr(vname(c, v)), "time_ms",
	                      miss ? json_null() : jreal(cell_time(c->m, s, v)), "slowdown",
	                      miss ? json_null() : json_real(sd));
	if (c->tp_unit)
		json_object_set_new(o, "throughput", miss ? json_null() : jreal(cell_throughput(c, s, v)));
	return o;
}

static json_t *jnames(const report_ctx *c, const int *vars, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, jstr(vname(c, vars[i])));
	return a;
}

/* An integer where x is one (thresholds always are), else a number. */
static json_t *jnumber(double t)
{
	if (t == floor(t) && fabs(t) < 9e15)
		return json_integer((json_int_t)t);
	return jreal(t);
}

static json_t *jtree(const report_ctx *c, int i)
{
	const hnode *n = &c->r->tree.nodes[i];
	if (n->feature < 0)
		return json_pack("{s:o,s:o,s:i}", "variant", jstr(n->norder ? vname(c, n->order[0]) : NULL), "order",
		                 jnames(c, n->order, n->norder), "training_shapes", n->nshapes);
	return json_pack("{s:o,s:o,s:i,s:o,s:o}", "feature", jstr(c->m->feature_names[n->feature]), "threshold",
	                 jnumber(n->threshold), "training_shapes", n->nshapes, "left", jtree(c, n->left), "right",
	                 jtree(c, n->right));
}

static json_t *jshapes(const report_ctx *c)
{
	const hmatrix *m = c->m;
	json_t *rows = json_array();
	for (int s = 0; s < m->nshapes; s++) {
		const shape_info *si = &c->sh[s];
		json_t *args = json_object();
		for (int a = 0; a < c->db->nshape_args; a++) {
			json_t *key = jstr(c->db->shape_args[a]);
			const char *k = json_string_value(key);
			json_object_set_new(args, k ? k : "?", json_integer((json_int_t)m->rows[(size_t)s * m->nargs + a]));
			json_decref(key);
		}
		json_t *row = json_pack("{s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:i}", "index", s, "label", jstr(m->shape_labels[s]),
		                        "args", args, "size", jnumber(si->size), "oracle_ms", jreal(m->oracle[s]),
		                        "best_variant", jstr(vname(c, si->best)), "dispatch",
		                        jchoice(c, s, si->dispatch, si->sd_dispatch), "single",
		                        jchoice(c, s, si->single, si->sd_single), "noise", jreal(si->noise),
		                        "alternated", si->alternated);
		/* the best's, in the metric's unit per second */
		if (c->tp_unit)
			json_object_set_new(row, "throughput", jreal(cell_throughput(c, s, si->best)));
		json_array_append_new(rows, row);
	}
	return rows;
}

static json_t *jselectors(const report_ctx *c)
{
	json_t *a = json_array();
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		json_t *o = json_pack("{s:s,s:o,s:o,s:o}", "key", h_selector_keys[sel], "name", jstr(h_selector_names[sel]),
		                      "train", jstats(&c->r->train[sel]), "heldout", jstats(&c->r->heldout[sel]));
		if (c->eval)
			json_object_set_new(o, "measured_heldout", jstats(&c->eval[sel]));
		if (c->r->weighted) {
			json_object_set_new(o, "train_weighted_geomean", jreal(c->r->train_w[sel]));
			json_object_set_new(o, "heldout_weighted_geomean", jreal(c->r->heldout_w[sel]));
		}
		json_array_append_new(a, o);
	}
	return a;
}

void report_write_json(strbuf *sb, const report_ctx *c)
{
	const tune_db *db = c->db;
	const hmatrix *m = c->m;
	const hresult *r = c->r;
	json_t *args = json_array();
	for (int a = 0; a < db->nshape_args; a++)
		json_array_append_new(args, jstr(db->shape_args[a]));
	json_t *features = json_array();
	for (int f = 0; f < m->nfeatures; f++)
		json_array_append_new(features, jstr(m->feature_names[f]));
	json_t *winners = json_array();
	for (int i = 0; i < c->nwinners; i++)
		json_array_append_new(winners, json_pack("{s:o,s:i}", "variant", jstr(vname(c, c->winners[i])), "shapes",
		                                         c->wins[c->winners[i]]));
	json_t *counts = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "measurements", db->nmeas, "shapes", m->nshapes,
	                           "variants", m->nvariants, "chosen", r->nsubset, "chosen_for_coverage", r->ncover,
	                           "dispatched", c->dp->nvariants, "shapes_without_variant", r->uncovered,
	                           "eval_shapes", c->neval);
	json_t *kinds = json_object();
	for (int i = 0; i < H_NKINDS; i++)
		if (r->kind_cv[i] > 0)
			json_object_set_new(kinds, h_kind_name((hkind)i), json_pack("{s:o,s:i}", "geomean", jreal(r->kind_cv[i]),
			                                                   "variants", r->kind_nvar[i]));
	json_t *heur = json_pack("{s:b,s:b,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:o,s:s,s:s,s:i,s:o}", "cost_model", m->row_info != NULL,
	                         "distilled", r->distilled, "dense_shapes", r->dense_shapes, "tree_depth",
	                         htree_depth(&r->tree), "tree_leaves", htree_leaves(&r->tree), "max_depth",
	                         r->tree.max_depth, "min_leaf", r->tree.min_leaf, "cv_folds", r->folds, "cv_shapes",
	                         r->cv_shapes, "cv_geomean", jreal(r->cv_geomean), "folds_by", h_folds_name(r->fold_by),
	                         "tree_from", h_kind_name(r->kind), "variants_from_order", r->nvar, "cv_by_kind", kinds);
	json_object_set_new(heur, "distilled_contradicted", json_boolean(r->distilled_contradicted));
	json_t *root = json_pack("{s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "aotc_report", 1,
	                         "kernel", jstr(db->kernel), "source", jstr(db->source), "hardware",
	                         jstr(json_string_value(json_object_get(db->hardware, "id"))), "device",
	                         jstr(json_string_value(json_object_get(db->hardware, "name"))), "counts", counts,
	                         "heuristic", heur, "shape_args", args, "features", features, "size", jstr(c->size_name),
	                         "variants_chosen", jnames(c, r->subset, r->nsubset), "best_single_variant",
	                         jstr(vname(c, r->single)), "winners", winners, "selectors", jselectors(c), "tree",
	                         r->tree.nnodes ? jtree(c, 0) : json_null(), "shapes", jshapes(c));
	if (!root || json_object_set_new(root, "failing_variants", jfailures(c)) < 0 ||
	    json_object_set_new(root, "dispatch", jdispatch(c)) < 0)
		die("report: cannot build the JSON document");
	/* Only with a metric: other reports read as before. Throughputs are in
	 * unit per second; scale is what the other formats show them in. */
	if (c->tp_unit &&
	    json_object_set_new(root, "metric",
	                        json_pack("{s:s,s:o,s:s,s:s,s:f}", "unit", metric_unit_name(c->k->metric), "count",
	                                  jstr(c->k->metric_count.text), "throughput_unit",
	                                  c->k->metric == METRIC_FLOP ? "FLOP/s" : "B/s", "scale", c->tp_unit,
	                                  "scale_factor", c->tp_scale)) < 0)
		die("report: cannot build the JSON document");
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(9));
	if (!text)
		die("report: cannot write the JSON document");
	strbuf_puts(sb, text);
	strbuf_putc(sb, '\n');
	free(text);
	json_decref(root);
}
