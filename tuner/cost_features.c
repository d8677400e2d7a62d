#include "cost_features.h"

#include <math.h>
#include <string.h>

static void find_cdivs(cost_features *f, const expr *e)
{
	if (!e)
		return;
	if (e->kind == EXPR_CALL && e->func == FN_CDIV && f->ncdivs < COST_MAX_CDIVS)
		f->cdivs[f->ncdivs++] = e;
	find_cdivs(f, e->a);
	find_cdivs(f, e->b);
	find_cdivs(f, e->c);
}

/* Buffers whose elements per thread are a feature (the first few). */
static int nbufs(const cost_features *f) { return f->k->nbuffers < 4 ? f->k->nbuffers : 4; }

static bool has_grid(const cost_features *f) { return f->k && f->k->grid.ndims > 0; }

void cost_features_init(cost_features *f, const kernel *k, const shape_set *ss, int nargs,
                        int ntunables, double sm_count)
{
	*f = (cost_features){.k = k, .ss = ss, .nargs = nargs, .ntunables = ntunables,
	                     .sm_count = sm_count > 0 ? sm_count : 1};
	for (int i = 0; k && i < k->grid.ndims; i++)
		find_cdivs(f, k->grid.dims[i].e);
	f->fn_col = k && k->nalts > 0;
	f->count = 2 * nargs + ntunables + (has_grid(f) ? 6 + f->ncdivs + nbufs(f) : 0) + f->fn_col;
}

bool cost_feature_linear(const cost_features *f, int i)
{
	int tail = 2 * f->nargs + f->ntunables;
	if (i < 2 * f->nargs)
		return i % 2 == 0;
	return has_grid(f) && i >= tail && i < f->count - f->fn_col - nbufs(f) && i != tail + 4;
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

void cost_features_row(const cost_features *f, const int64_t *row, const int64_t *const *tv,
                       const kernel *const *fns, int n, double *out)
{
	const kernel *k = f->k;
	int64_t params[(k ? k->nparams : 0) + 1];
	bool have = k && shape_param_values(k, f->ss, row, params) == EVAL_OK;
	for (int i = 0; i < n; i++) {
		double *o = out + (size_t)i * f->count;
		const kernel *g = k && fns && fns[i] ? fns[i] : k;
		int gt = g ? g->ntunables : f->ntunables;
		int c = 0;
		for (int a = 0; a < f->nargs; a++) {
			o[c++] = log2_or_0((double)row[a]);
			o[c++] = twos(row[a]);
		}
		for (int t = 0; t < f->ntunables; t++)
			o[c++] = g == k || t < gt ? (double)tv[i][t] : 0;
		if (f->fn_col)
			o[f->count - 1] = g == k ? 0 : (double)(g - k->alts + 1);
		if (!has_grid(f))
			continue;
		double blocks = 0, threads = 0;
		int64_t dims[7];
		int which;
		/* The launch may use per-variant values: this configuration's. */
		int64_t own[k->nparams + 1];
		memcpy(own, params, (size_t)k->nparams * sizeof *own);
		eval_env env = {.tunables = tv[i], .ntunables = gt, .params = own, .nparams = k->nparams};
		if (have && !g->host_launcher && ir_variant_params(g, tv[i], own) == EVAL_OK &&
		    ir_launch_dims(&g->grid, &g->block, &g->smem, &env, dims, &which) == EVAL_OK) {
			blocks = (double)dims[0] * (double)dims[1] * (double)dims[2];
			threads = (double)dims[3] * (double)dims[4] * (double)dims[5];
		}
		double waves = blocks / f->sm_count, whole = ceil(waves);
		o[c++] = log2_or_0(blocks);
		o[c++] = log2_or_0(waves);
		o[c++] = log2_or_0(whole);
		o[c++] = whole > 0 ? log2(waves / whole) : -16;
		o[c++] = log2_or_0(threads);
		double useful = 1;
		for (int j = 0; j < f->ncdivs; j++) {
			int64_t a = 0, b = 0, q = 0;
			double fr = 0;
			if (have && g == k && expr_eval(f->cdivs[j]->a, &env, &a) == EVAL_OK &&
			    expr_eval(f->cdivs[j]->b, &env, &b) == EVAL_OK &&
			    expr_eval(f->cdivs[j], &env, &q) == EVAL_OK && q > 0 && b > 0)
				fr = (double)a / ((double)q * (double)b);
			o[c++] = fr > 0 ? log2(fr) : -16;
			useful *= fr;
		}
		o[c++] = useful > 0 ? log2(useful) : -16;
		/* elements of each buffer per thread launched: the work of one
		 * thread (a loop count the grid does not show) */
		for (int b = 0; b < nbufs(f); b++) {
			int64_t count = 0;
			eval_env pe = {.params = params, .nparams = k->nparams};
			bool ok = have && expr_eval(k->buffers[b].count.e, &pe, &count) == EVAL_OK &&
			          count > 0 && blocks * threads > 0;
			o[c++] = ok ? log2((double)count / (blocks * threads)) : -64;
		}
	}
}
