/* aotc report in four formats (report.h). One analysis of the database
 * (report_ctx: per-shape best, dispatch and single-variant choices, sizes,
 * winners) feeds every format; each format is a few functions writing to
 * one strbuf, the HTML one a function per plot. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "failures.h"
#include "shapes.h"

/* Text: the per-shape table shows at most this many shapes. */
#define TEXT_MAX_ROWS 40
/* HTML: the per-shape table's rows, the shapes a plot draws (evenly
 * spaced by size), the heat map's columns and rows. */
#define HTML_MAX_ROWS 500
#define PLOT_MAX_SHAPES 300
#define HEAT_MAX_COLS 100
#define HEAT_MAX_ROWS 20
#define HEAT_MIN_OTHERS 4
/* The tree plot collapses subtrees below the depth where it would draw
 * more than this many leaves. */
#define TREE_MAX_LEAVES 48
/* SVG text: 11px monospace, about this wide per character. */
#define CHAR_W 6.6
/* Labels in plots are cut to this many characters (the full name is in
 * the tooltip). */
#define LABEL_MAX 48

bool report_format_parse(const char *name, report_format *out)
{
	static const char *const names[] = {"text", "json", "markdown", "html"};
	if (!name) {
		*out = REPORT_TEXT;
		return true;
	}
	for (size_t i = 0; i < COUNTOF(names); i++)
		if (!strcmp(name, names[i])) {
			*out = (report_format)i;
			return true;
		}
	return false;
}

/* ---- The analysis every format shares ------------------------------------ */

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

static bool is_miss(double sd) { return !(sd < H_MISS_SLOWDOWN); }

/* The measured time of variant v at shape s, INFINITY when it has none
 * that counts (failed, invalid or not measured). */
static double cell_time(const hmatrix *m, int s, int v)
{
	if (v < 0 || !h_valid(m, s, v))
		return INFINITY;
	return h_time(m, s, v);
}

typedef struct keyed {
	double key;
	int i;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Variant v's throughput at shape s (AOTC_METRIC's count per second of its
 * measured time), NAN where there is none: no metric, no time, or a count
 * that cannot be evaluated for v (it uses the kernel's tunables and v is
 * an alternative's or an extern). */
static double cell_throughput(const report_ctx *c, int s, int v)
{
	double t = cell_time(c->m, s, v), count;
	if (!c->tp_unit || !isfinite(t) || !(t > 0) || !c->params_ok[s])
		return NAN;
	const db_entry *e = &c->db->configs[v];
	const kernel *f = e->is_extern ? NULL : ir_member(c->k, e->function);
	if (!e->is_extern && (!f || e->nvalues != f->ntunables))
		return NAN;
	if (!ir_metric_count(c->k, f, e->values, c->params + (size_t)s * (c->k->nparams + 1), &count))
		return NAN;
	return count / (t * 1e-3);
}

/* The throughputs of AOTC_METRIC (report_ctx's k, params, tp_*). */
static void ctx_metric(report_ctx *c, const kernel *k)
{
	if (!k || k->metric == METRIC_NONE)
		return;
	int ns = c->m->nshapes;
	c->k = k;
	c->params = xcalloc((size_t)ns * (k->nparams + 1) + 1, sizeof *c->params);
	c->params_ok = xcalloc((size_t)ns + 1, sizeof *c->params_ok);
	shape_set ss;
	shape_set_init(&ss, k);
	for (int s = 0; s < ns; s++)
		c->params_ok[s] = shape_param_values(k, &ss, c->m->rows + (size_t)s * c->m->nargs,
		                                     c->params + (size_t)s * (k->nparams + 1)) == EVAL_OK;
	shape_set_finish(&ss);
	c->tp_unit = ""; /* cell_throughput's, until the scale is known */
	double max = 0;
	for (int s = 0; s < ns; s++) {
		double tp = cell_throughput(c, s, c->sh[s].best);
		if (tp > max)
			max = tp;
	}
	c->tp_unit = ir_throughput_scale(k->metric, max, &c->tp_scale);
}

static void ctx_init(report_ctx *c, const report_input *in)
{
	const hmatrix *m = in->m;
	const hresult *r = in->r;
	*c = (report_ctx){.db = in->db, .m = m, .r = r, .eval = in->neval > 0 ? in->eval : NULL,
	                  .neval = in->eval ? in->neval : 0, .dp = in->dp};
	int ns = m->nshapes, nv = m->nvariants;
	c->sh = xcalloc((size_t)ns + 1, sizeof *c->sh);
	c->wins = xcalloc((size_t)nv + 1, sizeof *c->wins);
	keyed *k = xmalloc(((size_t)ns + 1) * sizeof *k);
	for (int s = 0; s < ns; s++) {
		shape_info *si = &c->sh[s];
		const double *feat = &m->feat[(size_t)s * m->nfeatures];
		const bool *valid = &m->valid[(size_t)s * nv];
		si->size = 1;
		for (int a = 0; a < m->nargs && m->rows; a++)
			si->size *= (double)m->rows[(size_t)s * m->nargs + a];
		si->best = -1;
		si->noise = NAN;
		for (int v = 0; v < nv && isfinite(m->oracle[s]); v++)
			if (h_time(m, s, v) == m->oracle[s]) {
				si->best = v;
				c->wins[v]++;
				break;
			}
		const measurement *bm = db_get(c->db, si->best, s);
		if (bm) {
			si->noise = meas_spread(bm);
			si->alternated = bm->alternated;
		}
		si->dispatch = h_choose(r, m, SEL_TREE, feat, valid);
		si->single = h_choose(r, m, SEL_SINGLE, feat, valid);
		si->sd_dispatch = h_slowdown(m, s, si->dispatch);
		si->sd_single = h_slowdown(m, s, si->single);
		k[s] = (keyed){si->size, s};
	}
	qsort(k, (size_t)ns, sizeof *k, cmp_keyed);
	c->by_size = xmalloc(((size_t)ns + 1) * sizeof *c->by_size);
	for (int i = 0; i < ns; i++)
		c->by_size[i] = k[i].i;
	free(k);
	k = xmalloc(((size_t)nv + 1) * sizeof *k);
	for (int v = 0; v < nv; v++)
		if (c->wins[v])
			k[c->nwinners++] = (keyed){-(double)c->wins[v], v};
	qsort(k, (size_t)c->nwinners, sizeof *k, cmp_keyed);
	c->winners = xmalloc(((size_t)c->nwinners + 1) * sizeof *c->winners);
	for (int i = 0; i < c->nwinners; i++)
		c->winners[i] = k[i].i;
	free(k);
	strbuf sb;
	strbuf_init(&sb);
	for (int a = 0; a < c->db->nshape_args; a++)
		strbuf_printf(&sb, "%s%s", a ? "*" : "", c->db->shape_args[a]);
	if (!c->db->nshape_args)
		strbuf_puts(&sb, "index");
	c->size_name = sb.data;
	ctx_metric(c, in->k);
}

static void ctx_finish(report_ctx *c)
{
	free(c->sh);
	free(c->by_size);
	free(c->wins);
	free(c->winners);
	free(c->size_name);
	free(c->params);
	free(c->params_ok);
}

/* The shapes a table of at most cap rows shows, in size order, into out
 * (room for cap): all of them, or else the cap where the dispatch is
 * slowest. Returns the count. */
static int table_rows(const report_ctx *c, int cap, int *out)
{
	int ns = c->m->nshapes;
	if (ns <= cap) {
		memcpy(out, c->by_size, (size_t)ns * sizeof *out);
		return ns;
	}
	keyed *k = xmalloc((size_t)ns * sizeof *k);
	for (int i = 0; i < ns; i++)
		k[i] = (keyed){-c->sh[c->by_size[i]].sd_dispatch, i};
	qsort(k, (size_t)ns, sizeof *k, cmp_keyed);
	/* back to size order: by rank in by_size */
	for (int i = 0; i < cap; i++)
		k[i].key = k[i].i;
	qsort(k, (size_t)cap, sizeof *k, cmp_keyed);
	for (int i = 0; i < cap; i++)
		out[i] = c->by_size[k[i].i];
	free(k);
	return cap;
}

/* At most cap shapes evenly spaced over the size order, into out. */
static int sample_shapes(const report_ctx *c, int cap, int *out)
{
	int ns = c->m->nshapes;
	int n = ns < cap ? ns : cap;
	for (int i = 0; i < n; i++)
		out[i] = c->by_size[n == ns ? i : (int)((long long)i * (ns - 1) / (n - 1))];
	return n;
}

static const char *vname(const report_ctx *c, int v) { return v >= 0 ? c->m->variant_names[v] : NULL; }

/* What a cell of the database holds, for a tooltip. */
/* ---- Variants measured failing (heuristics/failures.h) ---- */

/* Whether select() can return variant v. */
static bool in_subset(const report_ctx *c, int v)
{
	for (int i = 0; i < c->dp->nvariants; i++)
		if (c->dp->variants[i].config == v)
			return true;
	return false;
}

/* Where variant v failed and where the dispatch may run it, into why and
 * cond; false when it never failed. */
static bool failure_text(const report_ctx *c, int v, strbuf *why, strbuf *cond)
{
	const hfailure *f = c->m->fail ? &c->m->fail[v] : NULL;
	if (!f || !f->nfailed)
		return false;
	why->len = cond->len = 0;
	if (why->data)
		why->data[0] = 0;
	if (cond->data)
		cond->data[0] = 0;
	hf_print_why(why, f, c->db);
	if (f->dropped)
		strbuf_puts(cond, "never (dropped)");
	else
		hf_print(cond, f, (const char *const *)c->db->shape_args);
	return true;
}

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

static json_t *jstr(const char *s);

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

static const char *cell_status(const report_ctx *c, int s, int v)
{
	const measurement *me = db_get(c->db, v, s);
	if (!me)
		return "not measured";
	if (me->status == MS_OK && !h_valid(c->m, s, v))
		return "not valid here";
	return meas_status_name(me->status);
}

/* ---- Text ---------------------------------------------------------------- */

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

static void write_text(strbuf *sb, const report_ctx *c)
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

/* ---- JSON ------------------------------------------------------------------ */

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

static const char *const selector_keys[SEL_COUNT] = {"single", "nearest", "helion", "measured", "tree"};

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
		json_t *o = json_pack("{s:s,s:o,s:o,s:o}", "key", selector_keys[sel], "name", jstr(h_selector_names[sel]),
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

static void write_json(strbuf *sb, const report_ctx *c)
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

/* ---- Markdown -------------------------------------------------------------- */

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

static void write_markdown(strbuf *sb, const report_ctx *c)
{
	md_summary(sb, c);
	md_selectors(sb, c);
	md_variants(sb, c);
	md_failures(sb, c);
	md_tree(sb, c);
	md_shapes(sb, c);
}

/* ---- HTML: text ------------------------------------------------------------ */

/* s escaped for HTML text and attribute values, cut to max characters
 * (max <= 0: all) with an ellipsis. */
static void esc_cut(strbuf *sb, const char *s, int max)
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

static void esc(strbuf *sb, const char *s) { esc_cut(sb, s, 0); }

/* Characters in s, as displayed (UTF-8 code points, at most max). */
static int label_chars(const char *s, int max)
{
	int n = 0;
	for (const char *p = s ? s : "-"; *p; p++)
		n += ((unsigned char)*p & 0xc0) != 0x80;
	return n < max ? n : max + 1;
}

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31",
                                      "#843c39", "#7b4173", "#3182bd", "#e6550d"};

/* The colour of the i-th chosen variant. */
static const char *chosen_colour(int i) { return palette[i % (int)COUNTOF(palette)]; }

/* Where variant v is among the chosen ones, -1 if not. */
static int chosen_index(const report_ctx *c, int v)
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

/* ---- HTML: plot helpers ---------------------------------------------------- */

/* A log scale: value lo at pixel p0, hi at p1. */
typedef struct logscale {
	double lo, hi, p0, p1;
} logscale;

static double ls_map(const logscale *s, double v)
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

static void svg_begin(strbuf *sb, const char *id, double w, double h, const char *title)
{
	strbuf_printf(sb, "<svg id=\"%s\" class=\"plot %s\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	                  "role=\"img\" aria-label=\"%s\">\n<title>%s</title>\n",
	              id, id, w, h, w, h, title, title);
}

/* The plot area's frame and the horizontal grid lines and labels of a log
 * y axis, with the axis title turned along it. */
static void svg_y_axis(strbuf *sb, const logscale *y, double x0, double x1, const char *label, bool slowdown)
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

/* A legend entry: a swatch (a line when dashed is not NULL, else a box)
 * and the label, with the full text as its tooltip. */
static void svg_legend(strbuf *sb, double x, double y, const char *colour, const char *dash, const char *text)
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

/* x ticks under a plot of n shapes (sampled, in size order) in bands of
 * width band from x0: about eight, labelled with the size. */
static void svg_size_ticks(strbuf *sb, const report_ctx *c, const int *cols, int n, double x0, double band,
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

static void svg_x_label(strbuf *sb, const report_ctx *c, double x, double y, int n)
{
	strbuf_printf(sb, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y);
	strbuf_printf(sb, "%s shapes, ordered by ", n < c->m->nshapes ? "sampled" : "measured");
	esc(sb, c->size_name);
	strbuf_puts(sb, " (the product of the shape arguments, ticks show it)</text>\n");
}

/* ---- HTML: (a) slowdown per shape ------------------------------------------- */

static void plot_slowdown(strbuf *sb, const report_ctx *c, const int *cols, int n)
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

/* ---- HTML: (b) the decision tree --------------------------------------------- */

/* Drawn left to right: the root at the left, a column per depth, every
 * leaf in the last column one row apart, a node level with the middle of
 * its children. Below the depth cut, subtrees are one grey box. */
typedef struct tree_layout {
	const report_ctx *c;
	int cut;                /* nodes at this depth are drawn as leaves */
	int nleaves;            /* leaves placed so far */
	double leafx, rowh, top;
	double *colx;           /* per depth: the left edge of its column */
	double *x, *y;          /* per node: its box's left edge and vertical centre */
	int *depth;
} tree_layout;

#define TREE_LINE 14.0

/* Leaves of the tree cut at depth cut (a node at depth cut counts as one). */
static int leaves_cut(const htree *t, int i, int d, int cut)
{
	const hnode *n = &t->nodes[i];
	if (n->feature < 0 || d >= cut)
		return 1;
	return leaves_cut(t, n->left, d + 1, cut) + leaves_cut(t, n->right, d + 1, cut);
}

static int subtree_leaves(const htree *t, int i)
{
	const hnode *n = &t->nodes[i];
	return n->feature < 0 ? 1 : subtree_leaves(t, n->left) + subtree_leaves(t, n->right);
}

static bool tree_inner(const tree_layout *L, int i)
{
	return L->c->r->tree.nodes[i].feature >= 0 && L->depth[i] < L->cut;
}

/* A node's label lines, into l[3] (each freed by the caller); the count. */
static int node_lines(const tree_layout *L, int i, char **l)
{
	const hnode *n = &L->c->r->tree.nodes[i];
	const hmatrix *m = L->c->m;
	strbuf a[3];
	for (int j = 0; j < 3; j++)
		strbuf_init(&a[j]);
	int k = 2;
	if (n->feature < 0) {
		const char *name = n->norder ? m->variant_names[n->order[0]] : "(none valid)";
		const char *lt = strchr(name, '<');
		/* long template names on two lines: "kernel" / "<args>" */
		if (lt && lt != name && label_chars(name, LABEL_MAX) > 30) {
			strbuf_putn(&a[0], name, (size_t)(lt - name));
			strbuf_puts(&a[1], lt);
			k = 3;
		} else {
			strbuf_puts(&a[0], name);
		}
		strbuf_printf(&a[k - 1], "%d shapes", n->nshapes);
		if (n->norder > 1)
			strbuf_printf(&a[k - 1], ", +%d fallbacks", n->norder - 1);
	} else if (!tree_inner(L, i)) {
		strbuf_printf(&a[0], "\xe2\x80\xa6 subtree, %d leaves", subtree_leaves(&L->c->r->tree, i));
		strbuf_printf(&a[1], "%d shapes", n->nshapes);
	} else {
		strbuf_printf(&a[0], "%s <= %.0f", m->feature_names[n->feature], n->threshold);
		strbuf_printf(&a[1], "%d shapes", n->nshapes);
	}
	for (int j = 0; j < 3; j++) {
		if (j < k)
			l[j] = a[j].data;
		else
			strbuf_finish(&a[j]);
	}
	return k;
}

static double node_width(const tree_layout *L, int i)
{
	char *l[3];
	int k = node_lines(L, i, l), w = 0;
	for (int j = 0; j < k; j++) {
		int n = label_chars(l[j], LABEL_MAX);
		w = n > w ? n : w;
		free(l[j]);
	}
	return w * CHAR_W + 16;
}

/* Depths (with the cut), the widest inner box of each depth (inner_w[d])
 * and the widest leaf box. */
static void tree_measure(tree_layout *L, int i, int d, double *inner_w, double *leaf_w)
{
	const hnode *n = &L->c->r->tree.nodes[i];
	L->depth[i] = d;
	double w = node_width(L, i);
	double *into = tree_inner(L, i) ? &inner_w[d] : leaf_w;
	*into = w > *into ? w : *into;
	if (tree_inner(L, i)) {
		tree_measure(L, n->left, d + 1, inner_w, leaf_w);
		tree_measure(L, n->right, d + 1, inner_w, leaf_w);
	}
}

static double tree_place(tree_layout *L, int i)
{
	const hnode *n = &L->c->r->tree.nodes[i];
	if (!tree_inner(L, i)) {
		L->x[i] = L->leafx;
		L->y[i] = L->top + (L->nleaves++ + 0.5) * L->rowh;
	} else {
		double a = tree_place(L, n->left), b = tree_place(L, n->right);
		L->x[i] = L->colx[L->depth[i]];
		L->y[i] = (a + b) / 2;
	}
	return L->y[i];
}

static void tree_draw(strbuf *sb, const tree_layout *L, int i)
{
	const hnode *n = &L->c->r->tree.nodes[i];
	const hmatrix *m = L->c->m;
	char *l[3];
	int k = node_lines(L, i, l);
	double w = node_width(L, i), h = 8 + TREE_LINE * k, x = L->x[i], y = L->y[i];
	if (tree_inner(L, i)) {
		for (int side = 0; side < 2; side++) {
			int ch = side ? n->right : n->left;
			double x0 = x + w, cx = L->x[ch], cy = L->y[ch], mx = x0 + 28;
			strbuf_printf(sb, "<path class=\"edge\" d=\"M%.1f %.1fC%.1f %.1f %.1f %.1f %.1f %.1f\"/>"
			                  "<text class=\"edgel\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			              x0, y, mx, y, mx, cy, cx, cy, x0 + 4, y + (side ? 14 : -6), side ? "no" : "yes");
			tree_draw(sb, L, ch);
		}
	}
	const char *fill = "#eef2f7";
	if (n->feature < 0 && n->norder) {
		int ci = chosen_index(L->c, n->order[0]);
		fill = ci >= 0 ? chosen_colour(ci) : "#999";
	} else if (!tree_inner(L, i)) {
		fill = "#ddd";
	}
	strbuf_puts(sb, "<g class=\"node\"><title>");
	if (n->feature < 0) {
		strbuf_printf(sb, "leaf, %d training shapes; tries in order:", n->nshapes);
		for (int j = 0; j < n->norder; j++) {
			strbuf_printf(sb, "\n%d. ", j + 1);
			esc(sb, m->variant_names[n->order[j]]);
		}
	} else {
		strbuf_printf(sb, "%d training shapes; up (yes) when ", n->nshapes);
		esc(sb, m->feature_names[n->feature]);
		strbuf_printf(sb, " <= %.0f", n->threshold);
	}
	strbuf_printf(sb, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"4\" fill=\"%s\"%s/>", x,
	              y - h / 2, w, h, fill, n->feature < 0 ? " fill-opacity=\"0.3\"" : "");
	for (int j = 0; j < k; j++) {
		strbuf_printf(sb, "<text x=\"%.1f\" y=\"%.1f\"%s>", x + 8, y - h / 2 + 15 + TREE_LINE * j,
		              j == k - 1 ? " class=\"dim\"" : "");
		esc_cut(sb, l[j], LABEL_MAX);
		strbuf_puts(sb, "</text>");
		free(l[j]);
	}
	strbuf_puts(sb, "</g>\n");
}

static void plot_tree(strbuf *sb, const report_ctx *c)
{
	const htree *t = &c->r->tree;
	if (!t->nnodes) {
		svg_begin(sb, "plot-tree", 400, 60, "decision tree");
		strbuf_puts(sb, "<rect class=\"frame\" x=\"0\" y=\"0\" width=\"400\" height=\"60\"/><text x=\"20\" y=\"35\">"
		                "no tree</text>\n</svg>\n");
		return;
	}
	int depth = htree_depth(t);
	tree_layout L = {.c = c, .cut = depth, .rowh = 58, .top = 6};
	while (L.cut > 0 && leaves_cut(t, 0, 0, L.cut) > TREE_MAX_LEAVES)
		L.cut--;
	L.x = xcalloc((size_t)t->nnodes, sizeof *L.x);
	L.y = xcalloc((size_t)t->nnodes, sizeof *L.y);
	L.depth = xcalloc((size_t)t->nnodes, sizeof *L.depth);
	double *inner_w = xcalloc((size_t)L.cut + 1, sizeof *inner_w), leaf_w = 0;
	L.colx = xcalloc((size_t)L.cut + 1, sizeof *L.colx);
	tree_measure(&L, 0, 0, inner_w, &leaf_w);
	/* a column per depth, as wide as its widest box and room for the edges */
	L.colx[0] = 8;
	for (int d = 1; d <= L.cut; d++)
		L.colx[d] = L.colx[d - 1] + inner_w[d - 1] + 48;
	L.leafx = L.colx[L.cut];
	free(inner_w);
	tree_place(&L, 0);
	double W = L.leafx + leaf_w + 8, H = L.top * 2 + L.nleaves * L.rowh;
	svg_begin(sb, "plot-tree", W < 300 ? 300 : W, H, "the dispatch's decision tree");
	tree_draw(sb, &L, 0);
	strbuf_puts(sb, "</svg>\n");
	if (L.cut < depth)
		strbuf_printf(sb, "<p class=\"note\">The tree has depth %d and %d leaves; drawn to depth %d, deeper subtrees "
		                  "collapsed (the text below has all of it).</p>\n",
		              depth, htree_leaves(t), L.cut);
	free(L.colx);
	free(L.x);
	free(L.y);
	free(L.depth);
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

static void plot_times(strbuf *sb, const report_ctx *c, const int *cols, int n)
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

static void plot_throughput(strbuf *sb, const report_ctx *c, const int *cols, int n)
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

static void plot_heatmap(strbuf *sb, const report_ctx *c)
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

/* ---- HTML: the document -------------------------------------------------------- */

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

static void write_html(strbuf *sb, const report_ctx *c)
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

void report_write(strbuf *out, report_format fmt, const report_input *in)
{
	report_ctx c;
	ctx_init(&c, in);
	switch (fmt) {
	case REPORT_TEXT: write_text(out, &c); break;
	case REPORT_JSON: write_json(out, &c); break;
	case REPORT_MARKDOWN: write_markdown(out, &c); break;
	case REPORT_HTML: write_html(out, &c); break;
	}
	ctx_finish(&c);
}
