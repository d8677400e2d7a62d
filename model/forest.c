#include "forest.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void forest_params_default(forest_params *p)
{
	p->trees = 20;
	p->min_leaf = 3;
	p->max_features = 12;
	p->seed = 1;
}

/* splitmix64 */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unit(uint64_t *s) { return (double)(next(s) >> 11) * 0x1.0p-53; }

typedef struct grow_state {
	forest *f;
	size_t cap;
	const double *x, *y;
	int nf, k;            /* features, drawn per node */
	int min_leaf;
	int *feats;           /* nf: a permutation, the first k drawn */
	uint64_t seed;
} grow_state;

static int new_node(grow_state *g)
{
	forest *f = g->f;
	if ((size_t)f->nnodes == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 256;
		f->nodes = xrealloc(f->nodes, g->cap * sizeof *f->nodes);
	}
	f->nodes[f->nnodes] = (forest_node){-1, 0, -1, -1};
	return f->nnodes++;
}

/* Grows the subtree of rows[0..n) under node (iteratively deep trees
 * recurse at most as deep as the rows allow a split: each side keeps at
 * least min_leaf rows). */
static void grow(grow_state *g, int node, int *rows, int n)
{
	const double *x = g->x, *y = g->y;
	int nf = g->nf;
	double sum = 0, sq = 0;
	for (int i = 0; i < n; i++) {
		sum += y[rows[i]];
		sq += y[rows[i]] * y[rows[i]];
	}
	double mean = n ? sum / n : 0;
	if (n < 2 * g->min_leaf || sq - sum * mean <= 1e-12 * (n > 0 ? n : 1)) {
		g->f->nodes[node].threshold = mean;
		return;
	}
	/* draw k features (a partial Fisher-Yates over the permutation) */
	int best_f = -1;
	double best_t = 0, best_score = sum * mean; /* the parent's: a split must beat it */
	for (int d = 0; d < g->k; d++) {
		int j = d + (int)(next(&g->seed) % (uint64_t)(nf - d));
		int t = g->feats[d];
		g->feats[d] = g->feats[j];
		g->feats[j] = t;
		int fi = g->feats[d];
		double lo = x[(size_t)rows[0] * nf + fi], hi = lo;
		for (int i = 1; i < n; i++) {
			double v = x[(size_t)rows[i] * nf + fi];
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		if (hi <= lo)
			continue;
		double thr = lo + (hi - lo) * unit(&g->seed);
		if (thr >= hi)
			thr = lo;
		double ls = 0;
		int ln = 0;
		for (int i = 0; i < n; i++)
			if (x[(size_t)rows[i] * nf + fi] <= thr) {
				ls += y[rows[i]];
				ln++;
			}
		if (ln < g->min_leaf || n - ln < g->min_leaf)
			continue;
		double rs = sum - ls;
		double score = ls * ls / ln + rs * rs / (n - ln); /* higher: lower squared error */
		if (score > best_score + 1e-12) {
			best_score = score;
			best_f = fi;
			best_t = thr;
		}
	}
	if (best_f < 0) {
		g->f->nodes[node].threshold = mean;
		return;
	}
	/* partition in place */
	int a = 0, b = n - 1;
	while (a <= b) {
		if (x[(size_t)rows[a] * nf + best_f] <= best_t)
			a++;
		else {
			int t = rows[a];
			rows[a] = rows[b];
			rows[b--] = t;
		}
	}
	int l = new_node(g), r = new_node(g);
	forest_node *nd = &g->f->nodes[node];
	nd->feature = best_f;
	nd->threshold = best_t;
	nd->left = l;
	nd->right = r;
	grow(g, l, rows, a);
	grow(g, r, rows + a, n - a);
}

void forest_fit(forest *f, const double *x, const double *y, int n, int nf, const forest_params *p)
{
	memset(f, 0, sizeof *f);
	f->nfeatures = nf;
	f->ntrees = p->trees > 0 ? p->trees : 1;
	f->roots = xmalloc((size_t)f->ntrees * sizeof *f->roots);
	grow_state g = {f, 0, x, y, nf, p->max_features > 0 && p->max_features < nf ? p->max_features : nf,
	                p->min_leaf > 0 ? p->min_leaf : 1, xmalloc((size_t)nf * sizeof(int) + 1), p->seed};
	for (int i = 0; i < nf; i++)
		g.feats[i] = i;
	int *rows = xmalloc((size_t)n * sizeof *rows + 1);
	for (int t = 0; t < f->ntrees; t++) {
		for (int i = 0; i < n; i++)
			rows[i] = i;
		f->roots[t] = new_node(&g);
		if (nf > 0)
			grow(&g, f->roots[t], rows, n);
	}
	free(rows);
	free(g.feats);
}

double forest_predict(const forest *f, const double *x)
{
	double sum = 0;
	for (int t = 0; t < f->ntrees; t++) {
		const forest_node *nd = &f->nodes[f->roots[t]];
		while (nd->feature >= 0)
			nd = &f->nodes[x[nd->feature] <= nd->threshold ? nd->left : nd->right];
		sum += nd->threshold;
	}
	return f->ntrees ? sum / f->ntrees : 0;
}

void forest_finish(forest *f)
{
	free(f->nodes);
	free(f->roots);
	memset(f, 0, sizeof *f);
}
