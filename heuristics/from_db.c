#include "from_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Integer parameter values of a shape row: shape arguments by name, then
 * the AOTC_VALUEs that depend on them. */
static bool row_params(const kernel *k, const tune_db *db, const int64_t *row, int64_t *params)
{
	memset(params, 0, (size_t)k->nparams * sizeof *params);
	for (int a = 0; a < db->nshape_args; a++) {
		int p = ir_find_param(k, db->shape_args[a]);
		if (p < 0)
			return false;
		params[p] = row[a];
	}
	eval_env env = {.params = params, .nparams = k->nparams};
	for (int i = 0; i < k->nvalues; i++)
		if (!k->values[i].is_float &&
		    expr_eval(k->values[i].iexpr.e, &env, &params[k->values[i].param]) != EVAL_OK)
			return false;
	return true;
}

typedef struct valid_ctx {
	const kernel *k;
	const tune_db *db;
	int64_t *params;
} valid_ctx;

static bool valid_at(void *ctx, const int64_t *row, int v)
{
	valid_ctx *c = ctx;
	if (!row_params(c->k, c->db, row, c->params))
		return false;
	eval_env env = {.tunables = c->db->configs[v].values, .ntunables = c->k->ntunables,
	                .params = c->params, .nparams = c->k->nparams};
	for (int i = 0; i < c->k->nvalid_ifs; i++) {
		int64_t x;
		if (expr_eval(c->k->valid_ifs[i].e, &env, &x) != EVAL_OK || x == 0)
			return false;
	}
	return true;
}

void hmatrix_from_db_finish(hmatrix *m)
{
	valid_ctx *c = m->valid_ctx;
	if (c) {
		free(c->params);
		free(c);
	}
	hmatrix_finish(m);
}

bool hmatrix_from_db(hmatrix *m, const tune_db *db, const kernel *k, diags *d)
{
	int nf = k ? (k->nfeatures ? k->nfeatures : db->nshape_args) : db->nshape_args;
	if (k) {
		for (int a = 0; a < db->nshape_args; a++) {
			int p = ir_find_param(k, db->shape_args[a]);
			if (p < 0 || k->params[p].shape < 0) {
				diag_error(d, (aotc_loc){db->path, 0, 0},
				           "the database's shape argument '%s' is not one of '%s'",
				           db->shape_args[a], k->name);
				return false;
			}
		}
		if (db->ntunables != k->ntunables) {
			diag_error(d, (aotc_loc){db->path, 0, 0}, "the database's tunables do not match '%s'",
			           k->name);
			return false;
		}
	}
	hmatrix_init(m, db->nshapes, db->nconfigs, nf);
	for (int v = 0; v < db->nconfigs; v++)
		m->variant_names[v] = xstrdup(db->configs[v].name);
	for (int f = 0; f < nf; f++)
		m->feature_names[f] = xstrdup(k && k->nfeatures ? k->features[f].text : db->shape_args[f]);
	int64_t *params = k ? xcalloc((size_t)k->nparams + 1, sizeof *params) : NULL;
	for (int s = 0; s < db->nshapes; s++) {
		const int64_t *row = db->shapes + (size_t)s * db->nshape_args;
		strbuf sb;
		strbuf_init(&sb);
		for (int a = 0; a < db->nshape_args; a++)
			strbuf_printf(&sb, "%s%s=%lld", a ? " " : "", db->shape_args[a], (long long)row[a]);
		m->shape_labels[s] = sb.data;
		bool have_params = k && row_params(k, db, row, params);
		eval_env env = {.params = params, .nparams = k ? k->nparams : 0};
		for (int f = 0; f < nf; f++) {
			int64_t v = 0;
			if (k && k->nfeatures) {
				/* A feature that cannot be evaluated splits as 0. */
				if (!have_params || expr_eval(k->features[f].e, &env, &v) != EVAL_OK)
					v = 0;
			} else {
				v = row[f];
			}
			m->feat[(size_t)s * nf + f] = (double)v;
		}
		for (int c = 0; c < db->nconfigs; c++) {
			const measurement *me = db_get(db, c, s);
			size_t cell = (size_t)s * db->nconfigs + c;
			m->time[cell] = me && me->status == MS_OK ? me->time_ms : INFINITY;
			if (!k) {
				m->valid[cell] = !me || me->status != MS_INVALID;
				continue;
			}
			eval_env ve = {.tunables = db->configs[c].values, .ntunables = k->ntunables,
			               .params = params, .nparams = k->nparams};
			bool ok = have_params;
			for (int i = 0; i < k->nvalid_ifs && ok; i++) {
				int64_t x;
				ok = expr_eval(k->valid_ifs[i].e, &ve, &x) == EVAL_OK && x != 0;
			}
			m->valid[cell] = ok;
		}
	}
	free(params);
	m->nargs = db->nshape_args;
	m->rows = xmalloc((size_t)db->nshapes * (size_t)db->nshape_args * sizeof *m->rows + 1);
	memcpy(m->rows, db->shapes, (size_t)db->nshapes * (size_t)db->nshape_args * sizeof *m->rows);
	if (k) {
		valid_ctx *c = xcalloc(1, sizeof *c);
		c->k = k;
		c->db = db;
		c->params = xcalloc((size_t)k->nparams + 1, sizeof *c->params);
		m->valid_at = valid_at;
		m->valid_ctx = c;
	}
	hmatrix_update_oracle(m);
	return true;
}
