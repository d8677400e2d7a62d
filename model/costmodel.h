/* The cost model (issue 10): gradient-boosted regression trees, least
 * squares, on histogram-binned features. aotc fits it to the log slowdown of
 * every measured (shape, variant) pair, from features derived from the IR
 * (blocks, waves, padding, tunables, divisibility), and predicts variants on
 * shapes nobody measured, so that the dispatch tree can be learnt from a
 * dense set of shapes.
 *
 * Deterministic: no sampling; ties break by feature and bin index.
 * Ownership: a gbm owns its nodes and bin edges (gbm_finish). */
#ifndef AOTC_COSTMODEL_H
#define AOTC_COSTMODEL_H

#include <stdbool.h>

typedef struct gbm_params {
	int rounds;       /* trees */
	int max_depth;
	int min_leaf;     /* rows a leaf needs */
	double rate;      /* shrinkage */
	double lambda;    /* L2 penalty on leaf values */
	int bins;         /* at most this many bins per feature (<= 255) */
} gbm_params;

void gbm_params_default(gbm_params *p);

typedef struct gbm_node {
	int feature;      /* -1: leaf */
	double threshold; /* left when x <= threshold */
	int left, right;
	double value;     /* leaf: the added prediction (rate applied) */
} gbm_node;

typedef struct gbm {
	int nfeatures;
	double base;      /* the mean target */
	gbm_node *nodes;
	int nnodes;
	int *roots;
	int ntrees;
} gbm;

/* Fits y[i] ~ x[i * nf .. i * nf + nf) for i < n. */
void gbm_fit(gbm *g, const double *x, const double *y, int n, int nf, const gbm_params *p);
double gbm_predict(const gbm *g, const double *x);
void gbm_finish(gbm *g);

#endif

/* Ridge regression: w (nf values) minimising |x w - y|^2 + lambda |w|^2
 * (every weight penalised but the first, the intercept column's, when
 * intercept). Normal equations, Cholesky. */
/* Solves a x = b for a symmetric positive definite n x n a (row-major;
 * only its lower triangle is read, and overwritten by the Cholesky factor);
 * x replaces b. False (b undefined) when a is not positive definite. */
bool spd_solve(double *a, double *b, int n);

void ridge_fit(const double *x, const double *y, int n, int nf, double lambda, bool intercept, double *w);
