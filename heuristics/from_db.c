#include "from_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost_features.h"
#include "failures.h"
#include "shapes.h"

/* With the kernel: the database's shape rows map onto its parameters
 * through a shape set (the database lists shape arguments in the kernel's
 * parameter order, as aotc tune writes them). */
typedef struct row_ctx {
	const kernel *k;       /* NULL: the database alone */
	const tune_db *db;
	shape_set ss;
	cost_features cf;      /* tuner/cost_features.h */
	bool *linear;          /* per cost feature: in the per-variant linear part */
	hfailure *fail;        /* per configuration: where it may run given its failures */
} row_ctx;

/* Parameters of a row into params (k->nparams); false when an AOTC_VALUE
 * cannot be evaluated. The callbacks keep their scratch on the stack: the
 * heuristic calls them from several threads. */
static bool row_params(const row_ctx *c, const int64_t *row, int64_t *params)
{
	return shape_param_values(c->k, &c->ss, row, params) == EVAL_OK;
}

/* Whether database configuration e may run at params: an extern always,
 * a variant of the kernel or of an alternative where ir_dispatchable says
 * (one of a function the kernel does not have never). */
static bool config_dispatchable(const kernel *k, const db_entry *e, const int64_t *params)
{
	if (e->is_extern)
		return true;
	const kernel *f = ir_member(k, e->function);
	return f && e->nvalues == f->ntunables && ir_dispatchable(f, e->values, params);
}

static bool valid_at(void *ctx, const int64_t *row, int v)
{
	const row_ctx *c = ctx;
	int64_t params[c->k->nparams + 1];
	return row_params(c, row, params) && hf_holds(&c->fail[v], row) &&
	       config_dispatchable(c->k, &c->db->configs[v], params);
}

static bool row_info(void *ctx, const int64_t *row, double *feat, bool *valid);

bool hmatrix_row(const hmatrix *m, const int64_t *row, double *feat, bool *valid)
{
	row_ctx *c = m->valid_ctx;
	if (c && c->k)
		return row_info(c, row, feat, valid);
	for (int f = 0; f < m->nfeatures; f++)
		feat[f] = 0;
	for (int v = 0; v < m->nvariants; v++)
		valid[v] = false;
	return false;
}

static bool row_info(void *ctx, const int64_t *row, double *feat, bool *valid)
{
	const row_ctx *c = ctx;
	int nf = c->k->nfeatures ? c->k->nfeatures : c->ss.nargs, nv = c->db->nconfigs;
	int64_t params[c->k->nparams + 1], fv[c->k->nfeatures + c->k->nparams + 1];
	if (!row_params(c, row, params)) {
		for (int f = 0; f < nf; f++)
			feat[f] = 0;
		for (int v = 0; v < nv; v++)
			valid[v] = false;
		return false;
	}
	ir_features(c->k, params, fv);
	for (int f = 0; f < nf; f++)
		feat[f] = (double)fv[f];
	for (int v = 0; v < nv; v++)
		valid[v] = hf_holds(&c->fail[v], row) && config_dispatchable(c->k, &c->db->configs[v], params);
	return true;
}

/* ---- Cost-model features (tuner/cost_features.h) ---------------------------- */

static void cost_row(void *ctx, const int64_t *row, const int *vars, int nvars, double *out)
{
	const row_ctx *c = ctx;
	const int64_t *tv[nvars + 1];
	const kernel *fns[nvars + 1];
	for (int i = 0; i < nvars; i++) {
		const db_entry *e = &c->db->configs[vars[i]];
		tv[i] = e->values;
		/* a function the kernel lacks never reaches here: not dispatchable */
		fns[i] = c->k && e->function ? ir_member(c->k, e->function) : NULL;
	}
	cost_features_row(&c->cf, row, tv, fns, nvars, out);
}

void hmatrix_from_db_finish(hmatrix *m)
{
	row_ctx *c = m->valid_ctx;
	if (c) {
		if (c->k)
			shape_set_finish(&c->ss);
		free(c->linear);
		free(c->fail);
		free(c);
	}
	hmatrix_finish(m);
}

bool hmatrix_from_db(hmatrix *m, const tune_db *db, const kernel *k, diags *d)
{
	row_ctx *c = xcalloc(1, sizeof *c);
	c->db = db;
	c->fail = xmalloc((size_t)db->nconfigs * sizeof *c->fail + 1);
	hf_learn(db, c->fail);
	if (k) {
		c->k = k;
		shape_set_init(&c->ss, k);
		bool same = c->ss.nargs == db->nshape_args;
		for (int a = 0; same && a < db->nshape_args; a++)
			same = !strcmp(k->params[c->ss.params[a]].name, db->shape_args[a]);
		if (!same || db->ntunables != k->ntunables) {
			diag_error(d, (aotc_loc){db->path, 0, 0},
			           "the database's %s do not match '%s'",
			           same ? "tunables" : "shape arguments", k->name);
			shape_set_finish(&c->ss);
			free(c->fail);
			free(c);
			memset(m, 0, sizeof *m);
			return false;
		}
	}
	json_t *sms = json_object_get(db->hardware, "sm_count");
	cost_features_init(&c->cf, k, k ? &c->ss : NULL, db->nshape_args, db->ntunables,
	                   json_is_integer(sms) ? (double)json_integer_value(sms) : 1);
	int nf = k && k->nfeatures ? k->nfeatures : db->nshape_args;
	hmatrix_init(m, db->nshapes, db->nconfigs, nf);
	m->valid_ctx = c;
	m->fail = c->fail;
	m->failed = xcalloc((size_t)db->nshapes * (size_t)db->nconfigs + 1, sizeof *m->failed);
	m->ncost = c->cf.count;
	m->cost_row = cost_row;
	c->linear = xcalloc((size_t)m->ncost + 1, 1);
	for (int i = 0; i < m->ncost; i++)
		c->linear[i] = cost_feature_linear(&c->cf, i);
	m->cost_linear = c->linear;
	if (k) {
		m->valid_at = valid_at;
		m->row_info = row_info;
	}
	for (int v = 0; v < db->nconfigs; v++)
		m->variant_names[v] = xstrdup(db->configs[v].name);
	for (int f = 0; f < nf; f++)
		m->feature_names[f] = xstrdup(k && k->nfeatures ? k->features[f].text : db->shape_args[f]);
	for (int s = 0; s < db->nshapes; s++) {
		const int64_t *row = db->shapes + (size_t)s * db->nshape_args;
		strbuf sb;
		strbuf_init(&sb);
		for (int a = 0; a < db->nshape_args; a++)
			strbuf_printf(&sb, "%s%s=%lld", a ? " " : "", db->shape_args[a], (long long)row[a]);
		m->shape_labels[s] = sb.data;
		if (k) {
			/* Features and validity as the emitted dispatch computes them. */
			row_info(c, row, &m->feat[(size_t)s * nf], &m->valid[(size_t)s * db->nconfigs]);
		} else {
			for (int f = 0; f < nf; f++)
				m->feat[(size_t)s * nf + f] = (double)row[f];
		}
		for (int cfg = 0; cfg < db->nconfigs; cfg++) {
			const measurement *me = db_get(db, cfg, s);
			size_t cell = (size_t)s * db->nconfigs + cfg;
			m->time[cell] = me && me->status == MS_OK ? me->time_ms : INFINITY;
			m->failed[cell] = me && hf_is_failure(me->status);
			if (!k)
				m->valid[cell] = (!me || me->status != MS_INVALID) && hf_holds(&c->fail[cfg], row);
		}
	}
	/* Recorded calls weight the objective: a shape called 1000 times
	 * matters 1000 times as much as one called once; shapes without a
	 * count (from AOTC_SHAPES) count as called once. */
	if (db_has_calls(db)) {
		m->weight = xmalloc((size_t)db->nshapes * sizeof *m->weight + 1);
		for (int s = 0; s < db->nshapes; s++)
			m->weight[s] = db->shape_calls[s] ? (double)db->shape_calls[s] : 1.0;
		h_normalise_weights(m->weight, db->nshapes);
	}
	m->nargs = db->nshape_args;
	m->rows = xmalloc((size_t)db->nshapes * (size_t)db->nshape_args * sizeof *m->rows + 1);
	memcpy(m->rows, db->shapes, (size_t)db->nshapes * (size_t)db->nshape_args * sizeof *m->rows);
	hmatrix_update_oracle(m);
	return true;
}
