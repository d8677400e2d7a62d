/* aotc report's analysis (report_ctx.h): one pass over the database and
 * the heuristic (per-shape best, dispatch and single-variant choices,
 * sizes, winners, throughputs) that every format reads; report_write hands
 * it to the format's writer. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "failures.h"
#include "report_ctx.h"
#include "shapes.h"

double cell_time(const hmatrix *m, int s, int v)
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

double cell_throughput(const report_ctx *c, int s, int v)
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

int table_rows(const report_ctx *c, int cap, int *out)
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

int sample_shapes(const report_ctx *c, int cap, int *out)
{
	int ns = c->m->nshapes;
	int n = ns < cap ? ns : cap;
	for (int i = 0; i < n; i++)
		out[i] = c->by_size[n == ns ? i : (int)((long long)i * (ns - 1) / (n - 1))];
	return n;
}

bool in_subset(const report_ctx *c, int v)
{
	for (int i = 0; i < c->dp->nvariants; i++)
		if (c->dp->variants[i].config == v)
			return true;
	return false;
}

bool failure_text(const report_ctx *c, int v, strbuf *why, strbuf *cond)
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

const char *cell_status(const report_ctx *c, int s, int v)
{
	const measurement *me = db_get(c->db, v, s);
	if (!me)
		return "not measured";
	if (me->status == MS_OK && !h_valid(c->m, s, v))
		return "not valid here";
	return meas_status_name(me->status);
}

void report_write(strbuf *out, report_format fmt, const report_input *in)
{
	report_ctx c;
	ctx_init(&c, in);
	switch (fmt) {
	case REPORT_TEXT: report_write_text(out, &c); break;
	case REPORT_JSON: report_write_json(out, &c); break;
	case REPORT_MARKDOWN: report_write_markdown(out, &c); break;
	case REPORT_HTML: report_write_html(out, &c); break;
	}
	ctx_finish(&c);
}
