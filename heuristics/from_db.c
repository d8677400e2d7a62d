#include "from_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shapes.h"

/* With the kernel: the database's shape rows map onto its parameters
 * through a shape set (the database lists shape arguments in the kernel's
 * parameter order, as aotc tune writes them). */
typedef struct row_ctx {
	const kernel *k;
	const tune_db *db;
	shape_set ss;
	int64_t *params, *feat;
} row_ctx;

/* Parameters of a row; false when an AOTC_VALUE cannot be evaluated. */
static bool row_params(row_ctx *c, const int64_t *row)
{
	return shape_param_values(c->k, &c->ss, row, c->params) == EVAL_OK;
}

static bool valid_at(void *ctx, const int64_t *row, int v)
{
	row_ctx *c = ctx;
	return row_params(c, row) && ir_dispatchable(c->k, c->db->configs[v].values, c->params);
}

bool hmatrix_row(const hmatrix *m, const int64_t *row, double *feat, bool *valid)
{
	row_ctx *c = m->valid_ctx;
	if (!c || !row_params(c, row)) {
		for (int f = 0; f < m->nfeatures; f++)
			feat[f] = 0;
		for (int v = 0; v < m->nvariants; v++)
			valid[v] = false;
		return false;
	}
	ir_features(c->k, c->params, c->feat);
	for (int f = 0; f < m->nfeatures; f++)
		feat[f] = (double)c->feat[f];
	for (int v = 0; v < m->nvariants; v++)
		valid[v] = ir_dispatchable(c->k, c->db->configs[v].values, c->params);
	return true;
}

void hmatrix_from_db_finish(hmatrix *m)
{
	row_ctx *c = m->valid_ctx;
	if (c) {
		shape_set_finish(&c->ss);
		free(c->params);
		free(c->feat);
		free(c);
	}
	hmatrix_finish(m);
}

bool hmatrix_from_db(hmatrix *m, const tune_db *db, const kernel *k, diags *d)
{
	row_ctx *c = NULL;
	if (k) {
		c = xcalloc(1, sizeof *c);
		c->k = k;
		c->db = db;
		shape_set_init(&c->ss, k);
		bool same = c->ss.nargs == db->nshape_args;
		for (int a = 0; same && a < db->nshape_args; a++)
			same = !strcmp(k->params[c->ss.params[a]].name, db->shape_args[a]);
		if (!same || db->ntunables != k->ntunables) {
			diag_error(d, (aotc_loc){db->path, 0, 0},
			           "the database's %s do not match '%s'",
			           same ? "tunables" : "shape arguments", k->name);
			shape_set_finish(&c->ss);
			free(c);
			return false;
		}
		c->params = xcalloc((size_t)k->nparams + 1, sizeof *c->params);
		c->feat = xcalloc((size_t)(k->nfeatures + k->nparams) + 1, sizeof *c->feat);
	}
	int nf = k && k->nfeatures ? k->nfeatures : db->nshape_args;
	hmatrix_init(m, db->nshapes, db->nconfigs, nf);
	m->valid_ctx = c;
	if (c)
		m->valid_at = valid_at;
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
		if (c) {
			/* Features and validity as the emitted dispatch computes them. */
			hmatrix_row(m, row, &m->feat[(size_t)s * nf], &m->valid[(size_t)s * db->nconfigs]);
		} else {
			for (int f = 0; f < nf; f++)
				m->feat[(size_t)s * nf + f] = (double)row[f];
		}
		for (int cfg = 0; cfg < db->nconfigs; cfg++) {
			const measurement *me = db_get(db, cfg, s);
			size_t cell = (size_t)s * db->nconfigs + cfg;
			m->time[cell] = me && me->status == MS_OK ? me->time_ms : INFINITY;
			if (!c)
				m->valid[cell] = !me || me->status != MS_INVALID;
		}
	}
	m->nargs = db->nshape_args;
	m->rows = xmalloc((size_t)db->nshapes * (size_t)db->nshape_args * sizeof *m->rows + 1);
	memcpy(m->rows, db->shapes, (size_t)db->nshapes * (size_t)db->nshape_args * sizeof *m->rows);
	hmatrix_update_oracle(m);
	return true;
}
