/* Extremely randomised trees (Geurts, Ernst and Wehenkel, 2006): an
 * ensemble of regression trees, each grown on every row, where a node draws
 * a threshold uniformly between the smallest and largest value of each of
 * max_features features and keeps the draw that lowers the squared error
 * most. The prediction is the mean of the trees'. The heuristic's second
 * cost model (issue 30): one model over every contender at once, log
 * slowdown from shape, tunable and launch-geometry features, which moves
 * smoothly between measured shapes where a single tree would jump.
 *
 * Deterministic: the draws come from the seed, trees are grown one after
 * the other. Ownership: a forest owns its nodes (forest_finish). */
#ifndef AOTC_FOREST_H
#define AOTC_FOREST_H

#include <stdint.h>

typedef struct forest_params {
	int trees;
	int min_leaf;         /* rows a leaf needs */
	int max_features;     /* features drawn per node (<= 0: all) */
	uint64_t seed;
} forest_params;

void forest_params_default(forest_params *p);

typedef struct forest_node {
	int feature;          /* -1: leaf */
	double threshold;     /* left when x <= threshold; a leaf's value */
	int left, right;
} forest_node;

typedef struct forest {
	int nfeatures;
	forest_node *nodes;
	int nnodes;
	int *roots;
	int ntrees;
} forest;

/* Fits y[i] ~ x[i * nf .. i * nf + nf) for i < n (n may be 0: predicts 0). */
void forest_fit(forest *f, const double *x, const double *y, int n, int nf, const forest_params *p);
double forest_predict(const forest *f, const double *x);
void forest_finish(forest *f);

#endif
