/* The selectors the dispatch is compared with (heuristic.h, "Selectors"):
 * the best single variant, and the nearest measured shape's fastest
 * variant (through a k-d tree). */
#include "heuristic_internal.h"

#include <stdlib.h>
#include <string.h>

/* The best single variant over shapes, with all variants as its fallback
 * order (cheapest first). */
int h_single_fit(const hmatrix *m, const int *shapes, int n, int *order)
{
	ranked *r = xmalloc((size_t)m->nvariants * sizeof *r + 1);
	for (int v = 0; v < m->nvariants; v++) {
		r[v].v = v;
		r[v].cost = 0;
		for (int j = 0; j < n; j++)
			r[v].cost += h_wlsd(m, shapes[j], v);
	}
	qsort(r, (size_t)m->nvariants, sizeof *r, h_cmp_ranked);
	for (int v = 0; v < m->nvariants; v++)
		order[v] = r[v].v;
	int best = m->nvariants ? r[0].v : -1;
	free(r);
	return best;
}

int h_first_valid(const bool *valid, const int *order, int n)
{
	for (int i = 0; i < n; i++)
		if (valid[order[i]])
			return order[i];
	return -1;
}

/* A k-d tree over the training shapes in squashed, standardised feature
 * space (the features with a positive scale), so that a nearest-neighbour
 * query costs about log n instead of n: with a linear scan, report on
 * 300,000 shapes was quadratic. It gives exactly the scan's answer: the
 * distance is summed the same way, a subtree is skipped only when the
 * splitting plane alone is farther than the best so far, and ties go to the
 * first training position. */
typedef struct nn_node {
	int lo, hi;           /* range of perm; a leaf when left < 0 */
	int dim, left, right;
	double split;         /* points in left are <= split, in right >= */
} nn_node;

struct nn_index {
	int nf;               /* active features */
	double *scale;        /* nf */
	double *q;            /* squashed values, [training position * nf + active feature] */
	int *perm;            /* training positions in tree order */
	nn_node *nodes;
	int nnodes;
};

enum { NN_LEAF = 8 };

static int nn_grow(nn_index *ix, int lo, int hi)
{
	int id = ix->nnodes++;
	ix->nodes[id] = (nn_node){lo, hi, 0, -1, -1, 0};
	if (hi - lo <= NN_LEAF)
		return id;
	/* Split the widest dimension at the median. */
	double widest = -1;
	for (int f = 0; f < ix->nf; f++) {
		double a = INFINITY, b = -INFINITY;
		for (int i = lo; i < hi; i++) {
			double v = ix->q[(size_t)ix->perm[i] * ix->nf + f];
			a = v < a ? v : a;
			b = v > b ? v : b;
		}
		if (b - a > widest) {
			widest = b - a;
			ix->nodes[id].dim = f;
		}
	}
	if (widest <= 0)
		return id; /* all the same point */
	int dim = ix->nodes[id].dim;
	h_keyed *keys = xmalloc((size_t)(hi - lo) * sizeof *keys);
	for (int i = lo; i < hi; i++)
		keys[i - lo] = (h_keyed){ix->q[(size_t)ix->perm[i] * ix->nf + dim], ix->perm[i]};
	h_sort_keyed(keys, hi - lo);
	for (int i = lo; i < hi; i++)
		ix->perm[i] = keys[i - lo].at;
	free(keys);
	int mid = lo + (hi - lo) / 2;
	ix->nodes[id].split = ix->q[(size_t)ix->perm[mid] * ix->nf + ix->nodes[id].dim];
	int l = nn_grow(ix, lo, mid);
	int r = nn_grow(ix, mid, hi);
	ix->nodes[id].left = l;
	ix->nodes[id].right = r;
	return id;
}

nn_index *nn_build(const hmatrix *m, const int *train, int n, const double *scale)
{
	nn_index *ix = xcalloc(1, sizeof *ix);
	ix->scale = xmalloc((size_t)m->nfeatures * sizeof *ix->scale + 1);
	int *active = xmalloc((size_t)m->nfeatures * sizeof *active + 1);
	for (int f = 0; f < m->nfeatures; f++) {
		if (scale[f] <= 0)
			continue;
		if (!isfinite(scale[f])) {
			free(active);
			free(ix->scale);
			free(ix);
			return NULL;
		}
		ix->scale[ix->nf] = scale[f];
		active[ix->nf++] = f;
	}
	ix->q = xmalloc((size_t)n * (size_t)ix->nf * sizeof *ix->q + 1);
	ix->perm = xmalloc((size_t)n * sizeof *ix->perm + 1);
	for (int j = 0; j < n; j++) {
		ix->perm[j] = j;
		for (int f = 0; f < ix->nf; f++)
			ix->q[(size_t)j * ix->nf + f] = h_squash(h_feat(m, train[j], active[f]));
	}
	free(active);
	ix->nodes = xmalloc((4 * (size_t)n / NN_LEAF + 4) * sizeof *ix->nodes);
	nn_grow(ix, 0, n);
	return ix;
}

void nn_destroy(nn_index *ix)
{
	if (!ix)
		return;
	free(ix->scale);
	free(ix->q);
	free(ix->perm);
	free(ix->nodes);
	free(ix);
}

static void nn_search(const nn_index *ix, int id, const double *qs, double *bd, int *bj)
{
	const nn_node *nd = &ix->nodes[id];
	if (nd->left < 0) {
		for (int i = nd->lo; i < nd->hi; i++) {
			int j = ix->perm[i];
			const double *p = ix->q + (size_t)j * ix->nf;
			double d = 0;
			for (int f = 0; f < ix->nf; f++) {
				double x = (qs[f] - p[f]) / ix->scale[f];
				d += x * x;
			}
			if (d < *bd || (d == *bd && *bj >= 0 && j < *bj)) {
				*bd = d;
				*bj = j;
			}
		}
		return;
	}
	double x = (qs[nd->dim] - nd->split) / ix->scale[nd->dim];
	bool left = qs[nd->dim] < nd->split;
	nn_search(ix, left ? nd->left : nd->right, qs, bd, bj);
	if (x * x <= *bd)
		nn_search(ix, left ? nd->right : nd->left, qs, bd, bj);
}

/* Nearest training shape in squashed, standardised feature space (through
 * ix when there is one); its variants by time, the first valid at s. */
int h_nearest_choose(const hmatrix *m, const int *train, int n, const double *scale,
                     const nn_index *ix, const double *feat, const bool *valid)
{
	int best = -1;
	double bd = INFINITY;
	if (ix && n > 0) {
		double *qs = xmalloc((size_t)ix->nf * sizeof *qs + 1);
		for (int f = 0, a = 0; f < m->nfeatures; f++)
			if (scale[f] > 0)
				qs[a++] = h_squash(feat[f]);
		int j = -1;
		nn_search(ix, 0, qs, &bd, &j);
		free(qs);
		best = j >= 0 ? train[j] : -1;
	}
	for (int j = 0; j < n && !ix; j++) {
		double d = 0;
		for (int f = 0; f < m->nfeatures; f++) {
			if (scale[f] <= 0)
				continue;
			double x = (h_squash(feat[f]) - h_squash(h_feat(m, train[j], f))) / scale[f];
			d += x * x;
		}
		if (d < bd) {
			bd = d;
			best = train[j];
		}
	}
	if (best < 0)
		return -1;
	/* The neighbour's variants, fastest first: the first valid here. */
	int pick = -1;
	double pt = INFINITY;
	for (int v = 0; v < m->nvariants; v++)
		if (valid[v] && h_time(m, best, v) < pt) {
			pt = h_time(m, best, v);
			pick = v;
		}
	if (pick < 0)
		for (int v = 0; v < m->nvariants && pick < 0; v++)
			if (valid[v])
				pick = v;
	return pick;
}

void h_nearest_scale(const hmatrix *m, const int *train, int n, double *scale)
{
	for (int f = 0; f < m->nfeatures; f++) {
		double mean = 0, var = 0;
		for (int j = 0; j < n; j++)
			mean += h_squash(h_feat(m, train[j], f));
		mean /= n ? n : 1;
		for (int j = 0; j < n; j++) {
			double d = h_squash(h_feat(m, train[j], f)) - mean;
			var += d * d;
		}
		scale[f] = n ? sqrt(var / n) : 0;
	}
}
