/* What the files of the heuristic (heuristic.h) share and nobody else sees:
 * the matrix's log slowdowns and sorted lists (matrix.c), validity near
 * the shapes (subset.c), tree pieces the Helion-style tree reuses
 * (tree.c), the cost model and the dense shapes it predicts (distill.c),
 * every selector's model (models.c), the candidate dispatches
 * (candidates.c) and the folds that measure them (crossval.c); h_build
 * (heuristic.c) strings them together.
 *
 * No file keeps state of its own: what a step needs is passed to it, so
 * that cross-validation can run folds on threads. */
#ifndef AOTC_HEURISTIC_INTERNAL_H
#define AOTC_HEURISTIC_INTERNAL_H

#include <math.h>

#include "costmodel.h"
#include "forest.h"
#include "heuristic.h"

/* ---- Matrix (matrix.c) ---------------------------------------------------- */

/* Log slowdown of v at s, from the table hmatrix_update_oracle made: the
 * cross-validation asks for each of them hundreds of times. */
double h_lsd(const hmatrix *m, int s, int v);

/* What the subset, the trees and the single variant minimise: the log
 * slowdown weighted by the shape's weight. */
static inline double h_wlsd(const hmatrix *m, int s, int v) { return h_weight(m, s) * h_lsd(m, s, v); }

static inline const double *h_feat_of(const hmatrix *m, int s) { return &m->feat[(size_t)s * m->nfeatures]; }
static inline const bool *h_valid_of(const hmatrix *m, int s) { return &m->valid[(size_t)s * m->nvariants]; }

/* A value to sort by and where it came from: sorted by value, ties by
 * position, an order that is total, so any sort gives the same list. */
typedef struct h_keyed {
	double key;
	int at;
} h_keyed;

void h_sort_keyed(h_keyed *k, int n);

/* A variant and its cost: sorted cheapest first, ties by index. */
typedef struct ranked {
	int v;
	double cost;
} ranked;

int h_cmp_ranked(const void *a, const void *b);

/* Scratch for h_sort_by_feature, one per fit: folds fit trees on one
 * matrix from several threads. Zeroed to start; h_sort_scratch_finish. */
typedef struct sort_scratch {
	unsigned *mark;         /* per matrix shape */
	unsigned stamp;
	h_keyed *keys;
	size_t cap;
} sort_scratch;

void h_sort_scratch_finish(sort_scratch *ss);

/* sorted[0..n) = shapes[0..n) ordered by feature f, ties by shape index. */
void h_sort_by_feature(const hmatrix *m, sort_scratch *ss, int *sorted, const int *shapes, int n, int f);

/* splitmix64: folds, dense shapes */
static inline uint64_t h_mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline double h_unit(uint64_t *x) { return (double)(h_mix(x) >> 11) * 0x1.0p-53; }

/* Sizes spread over decades, brought near each other (sign kept). */
static inline double h_squash(double x) { return x >= 0 ? log2(1 + x) : -log2(1 - x); }

/* ---- Validity near the shapes (subset.c) ----------------------------------- */

/* m->valid_at at every probe of every shape of m (the shape, and each
 * argument one up and one down), computed once by h_build: cross-
 * validation covers the same shapes again and again. Owned; read-only
 * once made, so folds on threads share it. */
typedef struct hprobes {
	const hmatrix *m;
	int per;                /* probes per shape */
	bool *valid;            /* [(s * per + k) * nvariants + v] */
} hprobes;

/* Empty (valid NULL) when m has no valid_at. */
void hprobes_init(hprobes *p, const hmatrix *m);
void hprobes_finish(hprobes *p);

/* h_cover, reading validity from pv where it was made for m (else asking
 * m->valid_at); the same answer either way. */
int h_cover_probed(const hmatrix *m, const hprobes *pv, const int *shapes, int nshapes, int *subset, int *n);

/* ---- Tree (tree.c) ------------------------------------------------------- */

/* Appends a leaf with no order; returns its index (nodes may move). */
int h_add_node(htree *t);

/* An integer threshold t with a <= t < b. */
double h_threshold_between(double a, double b);

/* The choice of t cut at depth: its nodes at that depth taken as leaves. */
int htree_choose_cut(const htree *t, const double *feat, const bool *valid, int depth);

/* ---- Selectors (selectors.c, helion.c) ------------------------------------ */

/* The best single variant over shapes; order[] (nvariants) gets every
 * variant, cheapest first. */
int h_single_fit(const hmatrix *m, const int *shapes, int n, int *order);

int h_first_valid(const bool *valid, const int *order, int n);

/* The nearest-neighbour selector: its training shapes, each feature's
 * scale and a k-d tree over them (NULL: a linear scan). */
typedef struct nn_index nn_index;

void h_nearest_scale(const hmatrix *m, const int *train, int n, double *scale);
/* NULL (the scan is used) when a scale is not a finite number. */
nn_index *nn_build(const hmatrix *m, const int *train, int n, const double *scale);
void nn_destroy(nn_index *ix);
int h_nearest_choose(const hmatrix *m, const int *train, int n, const double *scale, const nn_index *ix,
                     const double *feat, const bool *valid);

/* Helion's AOT heuristic (SEL_HELION) on shapes, from at most max variants. */
void h_helion_fit(htree *t, const hmatrix *m, const int *shapes, int n, int max);

/* ---- The cost model and the dense shapes (distill.c) ------------------------ */

/* The cost model of log time in three parts (distill.c says which), or a
 * forest of log slowdown; it predicts contenders cv[0..ncv). Owned;
 * cm_finish (a zeroed one too). */
typedef struct cost_model {
	int *cv, ncv;           /* the variants it predicts */
	int nlin, *lin;         /* linear features (cost_row indices), at most H_MAX_LINEAR */
	double *w;              /* [j * (nlin + 1)]: intercept, weights */
	gbm g;
	double *kscale;         /* nlin: each linear feature's standard deviation */
	int *koff, *kn;         /* contender j's points: [koff[j], koff[j] + kn[j]) */
	double *kpts, *alpha;   /* [point * nlin] scaled features; their weights */
	bool is_forest;         /* instead of the three parts: a forest of log slowdown */
	forest fr;
} cost_model;

void cm_fit(cost_model *cm, const hmatrix *m, const int *train, int n);
void cm_finish(cost_model *cm);
/* Predicted log time (forest: log slowdown) of contender j with cost
 * features x. */
double cm_predict(const cost_model *cm, const double *x, int j);

/* The matrix the distilled tree learns from: the measured training shapes
 * with their measured times, and dense shapes where every contender valid
 * there has the cost model's predicted time (the others none). Shapes
 * where nothing is valid are left out of shapes. Owned; dense_finish. */
typedef struct dense_set {
	hmatrix dm;
	int *shapes;
	int n;
	cost_model cm;
} dense_set;

/* nd dense shapes drawn by seed; the forest instead of the three-part
 * model where use_forest. */
void distill_matrix(dense_set *ds, const hmatrix *m, const int *train, int n, int nd, uint64_t seed,
                    bool use_forest);
void dense_finish(dense_set *ds);

/* ---- Models of every selector (models.c) ------------------------------------ */

struct hmodel {
	int *subset;            /* the measured tree's */
	int nsubset, ncover;
	htree measured;
	htree helion;
	int *single_order;
	double *scale;
	nn_index *nn;
	int *train;
	int ntrain;
	cost_model cost;        /* the final cost model (distilled only) */
};

typedef struct hmodel model;

/* The baselines (single variant, nearest neighbour, Helion-style tree);
 * the measured tree and the cost model are fitted by fit_candidate. */
void model_fit(model *md, const hmatrix *m, const int *train, int n, const hoptions *o);
void model_finish(model *md);
/* tree: the dispatch tree (SEL_TREE). */
int model_choose(const model *md, const htree *tree, const hmatrix *m, hselector sel, const double *feat,
                 const bool *valid);

/* ---- Candidate dispatches (candidates.c) ------------------------------------ */

typedef struct candidate {
	hkind kind;
	int nvar;
	int depth_i, leaf_i;
} candidate;

/* Candidates of a kind come one block after the other: the first index
 * of kind k's block; all of them (without a cost model, only the
 * measured kind); candidate c. */
int kind_first(const hoptions *o, hkind k);
int ncandidates(const hoptions *o, bool model_possible);
candidate candidate_at(const hoptions *o, int c);

/* How many variant counts are tried, and the vi-th. */
int nvar_sizes(const hoptions *o);
int var_count(const hoptions *o, int vi);
/* How many depths and leaf sizes a kind tries, and the di-th depth. */
int ndepths(hkind k);
int nleaves(hkind k);
int ntrees(hkind k);
int depth_at(int di);

htree_params tree_params(const candidate *x, int ndense, double min_gain);

/* The greedy order of up to o->max_variants variants over shapes fs of fm
 * (stopping at o->goal), allocated, its length in *n. */
int *greedy_order(const hmatrix *fm, const int *fs, int fn, const hoptions *o, int *n);

/* The first nvar of order completed for coverage of the measured training
 * shapes train[0..nt) of m (pv: as for h_cover_probed); allocated. */
int *prefix_subset(const int *order, int norder, int nvar, const hmatrix *m, const hprobes *pv, const int *train,
                   int nt, int *nsub, int *ncover);

/* A candidate fitted: the tree, its subset (allocated) and how many of
 * them cover, the cost model fitted on the same shapes where one is
 * possible (zeroed otherwise), the dense shapes it learnt from. The
 * caller owns tree, subset and cm. */
typedef struct fitted {
	htree tree;
	int *subset;
	int nsubset, ncover;
	cost_model cm;
	int ndense;
} fitted;

void fit_candidate(fitted *out, const candidate *x, const hmatrix *m, const hprobes *pv, const int *train, int n,
                   const hoptions *o, bool model_possible);

/* ---- Cross-validation (crossval.c) ------------------------------------------ */

/* The folds: held[f * n + i] says whether shapes[i] is held out in fold f.
 * Owned: folds_finish. */
typedef struct folds {
	int k, n;
	unsigned char *held;
	int npairs;             /* sum of the folds' held-out shapes */
	hfolds by;
} folds;

/* Folds that fit the grid over shapes[0..n) (crossval.c says which);
 * k random folds by rank[] otherwise. */
void make_folds(folds *F, const hmatrix *m, const int *shapes, int n, int k, const int *rank);
void folds_finish(folds *F);

/* Held-out slowdowns of every candidate, fold by fold, into
 * sd[candidate * npairs + pair]: with dense, every kind, else the
 * measured only. */
void cv_candidates(const hmatrix *m, const hprobes *pv, const int *shapes, int n, const folds *F, const hoptions *o,
                   bool dense, float *sd);

/* The first candidate in [lo, hi) (the simplest) whose held-out cost is
 * within 0.1% of the lowest (pw: each pair's weight, or NULL), and that
 * cost's geomean. */
int best_candidate(const float *sd, int lo, int hi, int npairs, const double *pw, double *geomean);

/* Held-out slowdowns of the single variant, nearest neighbour and the
 * Helion-style tree: sd[sel][pair]. */
void cv_baselines(const hmatrix *m, const int *shapes, int n, const folds *F, const hoptions *o,
                  double *sd[SEL_COUNT]);

#endif
