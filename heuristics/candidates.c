/* The candidate dispatches (heuristic_internal.h, candidate): which kinds
 * of tree, variant counts, depths and leaf sizes are tried, and how one is
 * fitted on training shapes. */
#include "heuristic_internal.h"

#include <stdlib.h>
#include <string.h>

/* A candidate is one way to learn the dispatch from training shapes: the
 * tree learnt from the measured shapes, or distilled from a cost model's
 * predictions on dense shapes (with the measured ones): the three-part
 * model above or the forest (heuristics/forest.h); over the first
 * var_counts[] variants of the greedy order on those shapes (completed for
 * coverage); of a depth and a minimum leaf. Every candidate is measured on
 * the same folds, and the one with the lowest held-out cost is fitted on
 * every shape: how many variants, how deep a tree and which model to trust
 * are all chosen by what held-out shapes say, not by a goal checked on
 * predictions. Within a kind, candidates are listed simplest first (fewer
 * variants, shallower, larger leaves) and the simplest within 0.1% of the
 * best is taken; the three-part model comes before the forest, and the
 * measured tree must beat the best distilled one by 0.1% (h_build). A
 * distilled tree counts its leaves in fractions of the dense shapes. */
static const int var_counts[] = {1, 2, 4, 8, 16, 32};
static const int size_depths[] = {0, 1, 2, 3, 4, 5, 6, 8};
static const int size_leaves[] = {8, 4, 2, 1};
static const int dense_leaf_div[] = {25, 100, 400};
#define NVARC ((int)(sizeof var_counts / sizeof *var_counts))
#define NDEPTHS ((int)(sizeof size_depths / sizeof *size_depths))
#define NLEAVES ((int)(sizeof size_leaves / sizeof *size_leaves))
#define NDENSE_LEAVES ((int)(sizeof dense_leaf_div / sizeof *dense_leaf_div))

/* How many variant counts are tried: those below max_variants, and
 * max_variants. */
int nvar_sizes(const hoptions *o)
{
	int k = 0;
	while (k < NVARC && var_counts[k] < o->max_variants)
		k++;
	return k + 1;
}

int var_count(const hoptions *o, int vi)
{
	return vi < NVARC && var_counts[vi] < o->max_variants ? var_counts[vi] : o->max_variants;
}

/* depth 8 only for trees learnt from dense shapes */
int ndepths(hkind k) { return k != H_KIND_MEASURED ? NDEPTHS : NDEPTHS - 1; }
int nleaves(hkind k) { return k != H_KIND_MEASURED ? NDENSE_LEAVES : NLEAVES; }
int ntrees(hkind k) { return ndepths(k) * nleaves(k); }
int depth_at(int di) { return size_depths[di]; }

int kind_first(const hoptions *o, hkind k)
{
	int c = 0;
	for (int i = 0; i < (int)k; i++)
		c += nvar_sizes(o) * ntrees((hkind)i);
	return c;
}

int ncandidates(const hoptions *o, bool model_possible)
{
	return kind_first(o, model_possible ? H_NKINDS : H_KIND_MODEL);
}

candidate candidate_at(const hoptions *o, int c)
{
	candidate x = {0};
	while (x.kind + 1 < H_NKINDS && c >= kind_first(o, x.kind + 1))
		x.kind++;
	c -= kind_first(o, x.kind);
	int nt = ntrees(x.kind), nl = nleaves(x.kind);
	x.nvar = var_count(o, c / nt);
	x.depth_i = c % nt / nl;
	x.leaf_i = c % nl;
	return x;
}

htree_params tree_params(const candidate *x, int ndense, double min_gain)
{
	int leaf = x->kind != H_KIND_MEASURED ? ndense / dense_leaf_div[x->leaf_i] : size_leaves[x->leaf_i];
	return (htree_params){size_depths[x->depth_i], leaf < 1 ? 1 : leaf, min_gain};
}

int *greedy_order(const hmatrix *fm, const int *fs, int fn, const hoptions *o, int *n)
{
	int *order = xmalloc(((size_t)o->max_variants + 1) * sizeof *order);
	*n = h_select_subset(fm, fs, fn, o->max_variants, o->goal, order);
	return order;
}

int *prefix_subset(const int *order, int norder, int nvar, const hmatrix *m, const hprobes *pv, const int *train,
                   int nt, int *nsub, int *ncover)
{
	int *sub = xmalloc(((size_t)norder + (size_t)m->nvariants) * sizeof *sub + 1);
	*nsub = nvar < norder ? nvar : norder;
	memcpy(sub, order, (size_t)*nsub * sizeof *sub);
	*ncover = h_cover_probed(m, pv, train, nt, sub, nsub);
	return sub;
}
const char *h_kind_name(hkind k)
{
	static const char *const names[H_NKINDS] = {"measured", "model", "forest"};
	return names[k];
}

const char *h_model_text(hkind k) { return k == H_KIND_FOREST ? "a randomised-tree forest" : "a cost model"; }

void fit_candidate(fitted *out, const candidate *x, const hmatrix *m, const hprobes *pv, const int *train, int n,
                   const hoptions *o, bool model_possible)
{
	memset(out, 0, sizeof *out);
	dense_set ds = {0};
	const hmatrix *fm = m;
	const int *fs = train;
	int fn = n;
	if (x->kind != H_KIND_MEASURED) {
		distill_matrix(&ds, m, train, n, H_DENSE_SHAPES, o->seed, x->kind == H_KIND_FOREST);
		fm = &ds.dm;
		fs = ds.shapes;
		fn = ds.n;
		out->ndense = ds.n - n;
	} else if (model_possible) {
		cm_fit(&out->cm, m, train, n);
	}
	int norder;
	int *order = greedy_order(fm, fs, fn, o, &norder);
	out->subset = prefix_subset(order, norder, x->nvar, m, pv, train, n, &out->nsubset, &out->ncover);
	free(order);
	htree_params p = tree_params(x, fn, o->min_gain);
	htree_fit(&out->tree, fm, fs, fn, out->subset, out->nsubset, &p);
	if (x->kind != H_KIND_MEASURED) {
		out->cm = ds.cm;
		ds.cm = (cost_model){0};
		dense_finish(&ds);
	}
}
