/* Every selector's model (struct hmodel): what h_choose asks, for the
 * reports and aotc eval, and what cross-validation fits per fold for the
 * baselines. */
#include "heuristic_internal.h"

#include <stdlib.h>
#include <string.h>

void model_fit(model *md, const hmatrix *m, const int *train, int n, const hoptions *o)
{
	md->single_order = xmalloc((size_t)m->nvariants * sizeof *md->single_order + 1);
	h_single_fit(m, train, n, md->single_order);
	md->scale = xmalloc((size_t)m->nfeatures * sizeof *md->scale + 1);
	h_nearest_scale(m, train, n, md->scale);
	md->nn = nn_build(m, train, n, md->scale);
	h_helion_fit(&md->helion, m, train, n, o->max_variants);
	md->train = xmalloc((size_t)n * sizeof *md->train + 1);
	memcpy(md->train, train, (size_t)n * sizeof *md->train);
	md->ntrain = n;
}

void model_finish(model *md)
{
	free(md->subset);
	htree_finish(&md->measured);
	htree_finish(&md->helion);
	free(md->single_order);
	free(md->scale);
	nn_destroy(md->nn);
	free(md->train);
	cm_finish(&md->cost);
}

int model_choose(const model *md, const htree *tree, const hmatrix *m, hselector sel,
                 const double *feat, const bool *valid)
{
	switch (sel) {
	case SEL_SINGLE:
		return h_first_valid(valid, md->single_order, m->nvariants);
	case SEL_NEAREST:
		return h_nearest_choose(m, md->train, md->ntrain, md->scale, md->nn, feat, valid);
	case SEL_HELION:
		return htree_choose(&md->helion, feat, valid);
	case SEL_MEASURED:
		return htree_choose(&md->measured, feat, valid);
	default:
		return htree_choose(tree, feat, valid);
	}
}

int h_choose(const hresult *r, const hmatrix *m, hselector sel, const double *feat, const bool *valid)
{
	if (!r->model)
		return -1;
	return model_choose(r->model, &r->tree, m, sel, feat, valid);
}

int h_predict_best(const hresult *r, const hmatrix *m, const int64_t *row, const bool *valid)
{
	const model *md = r->model;
	if (!md || !md->cost.ncv)
		return -1;
	const cost_model *cm = &md->cost;
	double *x = xmalloc((size_t)cm->ncv * m->ncost * sizeof *x + 1);
	m->cost_row(m->valid_ctx, row, cm->cv, cm->ncv, x);
	int best = -1;
	double bp = INFINITY;
	for (int j = 0; j < cm->ncv; j++) {
		double p = cm_predict(cm, x + (size_t)j * m->ncost, j);
		if (valid[cm->cv[j]] && p < bp) {
			bp = p;
			best = cm->cv[j];
		}
	}
	free(x);
	return best;
}
