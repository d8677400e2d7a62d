#include "from_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shapes.h"

/* The cdiv() calls of the grid that the cost model reports the padding of. */
#define MAX_CDIVS 8

/* With the kernel: the database's shape rows map onto its parameters
 * through a shape set (the database lists shape arguments in the kernel's
 * parameter order, as aotc tune writes them). */
typedef struct row_ctx {
	const kernel *k;       /* NULL: the database alone */
	const tune_db *db;
	shape_set ss;
	double sm_count;       /* the device's multiprocessors (1 if unknown) */
	bool *linear;          /* per cost feature: in the per-variant linear part */
	const expr *cdivs[MAX_CDIVS]; /* the cdiv() calls of AOTC_GRID */
	int ncdivs;
} row_ctx;

/* Parameters of a row into params (k->nparams); false when an AOTC_VALUE
 * cannot be evaluated. The callbacks keep their scratch on the stack: the
 * heuristic calls them from several threads. */
static bool row_params(const row_ctx *c, const int64_t *row, int64_t *params)
{
	return shape_param_values(c->k, &c->ss, row, params) == EVAL_OK;
}

static bool valid_at(void *ctx, const int64_t *row, int v)
{
	const row_ctx *c = ctx;
	int64_t params[c->k->nparams + 1];
	return row_params(c, row, params) && ir_dispatchable(c->k, c->db->configs[v].values, params);
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
		valid[v] = ir_dispatchable(c->k, c->db->configs[v].values, params);
	return true;
}

/* ---- Cost-model features ------------------------------------------------ */

/* What the time of a variant at a shape depends on, as far as the IR says:
 * per shape argument its log2 and how many times 2 divides it (alignment);
 * the tunable values; for a kernel with a grid the blocks per launch
 * (log2), the waves over the device's multiprocessors (log2 of the
 * fraction and of the whole waves), the wave efficiency (blocks over whole
 * waves times multiprocessors), the threads per block, and per cdiv(a, b)
 * of the grid the useful fraction a / (cdiv(a, b) * b) and their product
 * (fractions as log2), and per buffer its elements per thread launched.
 * The logs of sizes, blocks, waves and fractions are the per-variant
 * linear part of the cost model (row_ctx.linear). */

static void find_cdivs(row_ctx *c, const expr *e)
{
	if (!e)
		return;
	if (e->kind == EXPR_CALL && e->func == FN_CDIV && c->ncdivs < MAX_CDIVS)
		c->cdivs[c->ncdivs++] = e;
	find_cdivs(c, e->a);
	find_cdivs(c, e->b);
	find_cdivs(c, e->c);
}

/* Buffers whose elements per thread are a feature (the first few). */
static int nbufs(const row_ctx *c) { return c->k->nbuffers < 4 ? c->k->nbuffers : 4; }

static int cost_count(const row_ctx *c, int nargs, int ntunables)
{
	int n = 2 * nargs + ntunables;
	if (c->k && c->k->grid.ndims > 0)
		n += 6 + c->ncdivs + nbufs(c);
	return n;
}

static double log2_or_0(double x) { return x > 0 ? log2(x) : 0; }

static int twos(int64_t x)
{
	int n = 0;
	while (x != 0 && x % 2 == 0 && n < 12) {
		x /= 2;
		n++;
	}
	return n;
}

static void cost_row(void *ctx, const int64_t *row, const int *vars, int nvars, double *out)
{
	const row_ctx *c = ctx;
	const tune_db *db = c->db;
	int nargs = db->nshape_args, nt = db->ntunables;
	int per = cost_count(c, nargs, nt);
	int64_t params[(c->k ? c->k->nparams : 0) + 1];
	bool have = c->k && row_params(c, row, params);
	for (int i = 0; i < nvars; i++) {
		double *o = out + (size_t)i * per;
		const int64_t *tv = db->configs[vars[i]].values;
		int n = 0;
		for (int a = 0; a < nargs; a++) {
			o[n++] = log2_or_0((double)row[a]);
			o[n++] = twos(row[a]);
		}
		for (int t = 0; t < nt; t++)
			o[n++] = (double)tv[t];
		if (!c->k || c->k->grid.ndims == 0)
			continue;
		double blocks = 0, threads = 0;
		int64_t dims[7];
		int which;
		eval_env env = {.tunables = tv, .ntunables = nt, .params = params, .nparams = c->k->nparams};
		if (have && ir_launch_dims(&c->k->grid, &c->k->block, &c->k->smem, &env, dims, &which) == EVAL_OK) {
			blocks = (double)dims[0] * (double)dims[1] * (double)dims[2];
			threads = (double)dims[3] * (double)dims[4] * (double)dims[5];
		}
		double waves = blocks / c->sm_count, whole = ceil(waves);
		o[n++] = log2_or_0(blocks);
		o[n++] = log2_or_0(waves);
		o[n++] = log2_or_0(whole);
		o[n++] = whole > 0 ? log2(waves / whole) : -16;
		o[n++] = log2_or_0(threads);
		double useful = 1;
		for (int j = 0; j < c->ncdivs; j++) {
			int64_t a = 0, b = 0, q = 0;
			double f = 0;
			if (have && expr_eval(c->cdivs[j]->a, &env, &a) == EVAL_OK &&
			    expr_eval(c->cdivs[j]->b, &env, &b) == EVAL_OK &&
			    expr_eval(c->cdivs[j], &env, &q) == EVAL_OK && q > 0 && b > 0)
				f = (double)a / ((double)q * (double)b);
			o[n++] = f > 0 ? log2(f) : -16;
			useful *= f;
		}
		o[n++] = useful > 0 ? log2(useful) : -16;
		/* elements of each buffer per thread launched: the work of one
		 * thread (a loop count the grid does not show) */
		for (int b = 0; b < nbufs(c); b++) {
			int64_t count = 0;
			eval_env pe = {.params = params, .nparams = c->k->nparams};
			bool ok = have && expr_eval(c->k->buffers[b].count.e, &pe, &count) == EVAL_OK && count > 0 &&
			          blocks * threads > 0;
			o[n++] = ok ? log2((double)count / (blocks * threads)) : -64;
		}
	}
}

void hmatrix_from_db_finish(hmatrix *m)
{
	row_ctx *c = m->valid_ctx;
	if (c) {
		if (c->k)
			shape_set_finish(&c->ss);
		free(c->linear);
		free(c);
	}
	hmatrix_finish(m);
}

bool hmatrix_from_db(hmatrix *m, const tune_db *db, const kernel *k, diags *d)
{
	row_ctx *c = xcalloc(1, sizeof *c);
	c->db = db;
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
			free(c);
			memset(m, 0, sizeof *m);
			return false;
		}
		for (int i = 0; i < k->grid.ndims; i++)
			find_cdivs(c, k->grid.dims[i].e);
	}
	json_t *sms = json_object_get(db->hardware, "sm_count");
	c->sm_count = json_is_integer(sms) && json_integer_value(sms) > 0 ? (double)json_integer_value(sms) : 1;
	int nf = k && k->nfeatures ? k->nfeatures : db->nshape_args;
	hmatrix_init(m, db->nshapes, db->nconfigs, nf);
	m->valid_ctx = c;
	m->ncost = cost_count(c, db->nshape_args, db->ntunables);
	m->cost_row = cost_row;
	/* linear in log time: the logs of the sizes, blocks, waves, the wave
	 * efficiency and the paddings; not the alignment, tunables, threads */
	c->linear = xcalloc((size_t)m->ncost + 1, 1);
	for (int a = 0; a < db->nshape_args; a++)
		c->linear[2 * a] = true;
	for (int i = 2 * db->nshape_args + db->ntunables; k && i < m->ncost - nbufs(c); i++)
		c->linear[i] = i != 2 * db->nshape_args + db->ntunables + 4;
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
			if (!k)
				m->valid[cell] = !me || me->status != MS_INVALID;
		}
	}
	m->nargs = db->nshape_args;
	m->rows = xmalloc((size_t)db->nshapes * (size_t)db->nshape_args * sizeof *m->rows + 1);
	memcpy(m->rows, db->shapes, (size_t)db->nshapes * (size_t)db->nshape_args * sizeof *m->rows);
	hmatrix_update_oracle(m);
	return true;
}
