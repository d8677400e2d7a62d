/* The heuristic (docs/spec.md §7): from a matrix of measured times (shapes ×
 * variants), choose a few variants that together come close to the per-shape
 * best, and learn a decision tree over shape features that picks among
 * them, splitting to minimise slowdown (summed log time / best), not
 * misclassification. With a cost model (the matrix's cost_row and row_info,
 * from the kernel's IR) the subset and tree may be learnt from its
 * predictions on dense shapes over the measured range (issue 10). Which
 * kind of tree, how many variants and what size are chosen among
 * candidates by cross-validation on folds that fit the grid (issue 30),
 * which also gives the held-out figures.
 * Everything is deterministic: ties break by index, and the folds that run
 * on threads write their own slots.
 *
 * Ownership: an hmatrix owns its arrays (hmatrix_finish); an htree owns its
 * nodes (htree_finish); an hresult its subset, tree and models. */
#ifndef AOTC_HEURISTIC_H
#define AOTC_HEURISTIC_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Slowdown charged for a shape where the chosen variant cannot run (no
 * valid or correct variant): large but finite, so that sums stay finite. */
#define H_MISS_SLOWDOWN 100.0

/* Slowdown charged for a shape where the chosen variant was measured
 * failing (wrong, fault, ...): a dispatched failure, counted on its own
 * (hstats.failed), never as a miss or as absent. */
#define H_FAIL_SLOWDOWN 1000.0

/* Cross-validation (tree size, held-out figures) uses at most this many
 * shapes, drawn by the seed; the final models use all. */
#define H_CV_SHAPES 20000

typedef struct hmatrix {
	int nshapes, nvariants, nfeatures;
	char **variant_names;   /* nvariants */
	char **feature_names;   /* nfeatures, as C-like text ("M * N") */
	char **shape_labels;    /* nshapes, "M=128 N=256 K=64" */
	double *time;           /* [s * nvariants + v] ms; INFINITY unless ok */
	bool *valid;            /* [s * nvariants + v]: AOTC_VALID_IF holds */
	double *feat;           /* [s * nfeatures + f] */
	double *oracle;         /* per shape: the best time (INFINITY: none ran) */
	/* Optional: the shape rows (nargs values each) and whether variant v
	 * may run at any row (its AOTC_VALID_IF), so that the chosen variants
	 * can be made to cover shapes beyond the measured ones. */
	int nargs;
	int64_t *rows;
	bool (*valid_at)(void *ctx, const int64_t *row, int v);
	void *valid_ctx;
	/* Optional, for the cost model (issue 10), with valid_ctx: the tree
	 * features and validity at any row (false: none valid there), and
	 * ncost cost-model features of each of vars[0..nvars) at a row, into
	 * out[i * ncost ..]. */
	bool (*row_info)(void *ctx, const int64_t *row, double *feat, bool *valid);
	int ncost;
	void (*cost_row)(void *ctx, const int64_t *row, const int *vars, int nvars, double *out);
	const bool *cost_linear; /* ncost: features of the per-variant linear part */
	double *lsd;            /* [s * nvariants + v]: log h_slowdown, by hmatrix_update_oracle */
	/* Optional: [s * nvariants + v] the variant was measured failing there
	 * (owned, freed by hmatrix_finish), and per variant the region it is
	 * kept out of (heuristics/failures.h; borrowed), whose condition valid[]
	 * and valid_at already include. */
	bool *failed;
	const struct hfailure *fail;
	/* Optional, per shape: how much it matters (recorded calls, scaled to
	 * mean 1), weighting every log slowdown the heuristic minimises; NULL:
	 * every shape 1. */
	double *weight;
	/* Every feature's order over the shapes ([f * nshapes + i]), by
	 * hmatrix_update_oracle: tree fitting takes a node's sorted lists from
	 * it. Derived, not part of the value. */
	int *order;
} hmatrix;

/* Allocates the arrays for the given sizes (names NULL, times INFINITY,
 * valid true); fill them, then call hmatrix_update_oracle(). */
void hmatrix_init(hmatrix *m, int nshapes, int nvariants, int nfeatures);
void hmatrix_finish(hmatrix *m);
void hmatrix_update_oracle(hmatrix *m);

static inline double h_time(const hmatrix *m, int s, int v) { return m->time[(size_t)s * m->nvariants + v]; }
static inline bool h_valid(const hmatrix *m, int s, int v) { return m->valid[(size_t)s * m->nvariants + v]; }
static inline double h_feat(const hmatrix *m, int s, int f) { return m->feat[(size_t)s * m->nfeatures + f]; }
static inline double h_weight(const hmatrix *m, int s) { return m->weight ? m->weight[s] : 1.0; }

/* Scales w[0..n) to mean 1 (the unweighted objective's scale). */
void h_normalise_weights(double *w, int n);

/* Slowdown of variant v at shape s against the oracle, capped at
 * H_MISS_SLOWDOWN (also for an invalid or unmeasured variant);
 * H_FAIL_SLOWDOWN where it was measured failing. */
double h_slowdown(const hmatrix *m, int s, int v);

/* ---- Variant subset ----------------------------------------------------- */

/* Greedy: repeatedly adds the variant that most lowers the geometric-mean
 * slowdown of the subset's per-shape best over the given shapes, until
 * max_variants are chosen or the geomean is at most goal. Returns the count;
 * out[] (max_variants slots) gets variant indices in the order chosen. */
int h_select_subset(const hmatrix *m, const int *shapes, int nshapes, int max_variants,
                    double goal, int *out);

/* If m->valid_at is set: probes shapes near the given ones (each shape
 * argument one up and one down) and, while some probe has no valid variant
 * in subset[0..*n) but has one among all variants, appends the variant valid
 * on most such probes (the cheapest on the shapes among equals). subset has
 * room for every variant. Returns how many were added. */
int h_cover(const hmatrix *m, const int *shapes, int nshapes, int *subset, int *n);

/* ---- Tree ---------------------------------------------------------------- */

typedef struct hnode {
	int feature;            /* -1: leaf */
	double threshold;       /* left when feature <= threshold (an integer) */
	int left, right;        /* node indices */
	int *order;             /* leaf: variants to try in order (the first valid wins) */
	int norder;
	int nshapes;            /* training shapes that reached it */
	double cost;            /* their summed log slowdown with this node's order */
} hnode;

typedef struct htree {
	hnode *nodes;           /* nodes[0] is the root */
	int nnodes;
	size_t cap;
	int max_depth, min_leaf;  /* what it was grown with */
} htree;

typedef struct htree_params {
	int max_depth;
	int min_leaf;
	/* A split must save at least what this factor is worth on min_leaf
	 * shapes (1.005: 0.5% on each), wherever in the tree it is; smaller
	 * gains are taken for noise. */
	double min_gain;
} htree_params;

/* Grows a tree on the given shapes choosing among subset[] (nsubset). */
void htree_fit(htree *t, const hmatrix *m, const int *shapes, int nshapes, const int *subset,
               int nsubset, const htree_params *p);
void htree_finish(htree *t);

/* The variant the tree picks for feature vector feat (nfeatures values)
 * given which variants are valid there; -1 if none of its leaf's list is. */
int htree_choose(const htree *t, const double *feat, const bool *valid);

int htree_depth(const htree *t);
int htree_leaves(const htree *t);

/* The tree as indented text, variants by name. */
void htree_print(strbuf *sb, const htree *t, const hmatrix *m);

/* ---- Selectors and evaluation -------------------------------------------- */

/* SEL_HELION is Helion's AOT heuristic, for comparison: variants chosen by
 * how many shapes they are within 10% of the best on (a 0/1 count), and an
 * entropy tree to depth 6 fitted to the per-shape best label. SEL_MEASURED
 * is aotc's tree learnt from the measured shapes alone (the method before
 * the cost model); SEL_TREE is the dispatch emitted: the tree distilled
 * from the cost model where there is one, else the same as SEL_MEASURED. */
typedef enum hselector { SEL_SINGLE, SEL_NEAREST, SEL_HELION, SEL_MEASURED, SEL_TREE, SEL_COUNT } hselector;

/* Each selector's name for people, and its key in JSON (report, eval). */
extern const char *const h_selector_names[SEL_COUNT];
extern const char *const h_selector_keys[SEL_COUNT];

typedef struct hstats {
	double geomean, p90, worst;
	int misses;             /* shapes where the choice has no measurement
	                         * (not measured, or none valid): counted here,
	                         * never in the slowdowns */
	int failed;             /* shapes where the choice was measured failing:
	                         * a wrong dispatch, reported as such */
	int n;
} hstats;

/* Geomean, p90 and worst of the slowdowns sd[0..n) below H_MISS_SLOWDOWN,
 * how many are misses and how many failures (H_FAIL_SLOWDOWN); sd is
 * reordered. */
hstats h_stats(double *sd, int n);

/* The geometric mean of sd[0..n) below H_MISS_SLOWDOWN weighted by w[]. */
double h_wgeomean(const double *sd, const double *w, int n);

/* What cross-validation folds hold out (crossval.c, make_folds): one
 * value or range of values of one shape argument, one shape (small sets),
 * or random shapes. */
typedef enum hfolds { H_FOLDS_RANDOM, H_FOLDS_VALUE, H_FOLDS_SHAPE } hfolds;

/* What a dispatch tree is learnt from: the measured shapes, or dense
 * shapes predicted by the three-part cost model or by the forest. */
typedef enum hkind { H_KIND_MEASURED, H_KIND_MODEL, H_KIND_FOREST, H_NKINDS } hkind;

/* "measured", "model", "forest"; and for reports what a distilled tree
 * learnt from: "a cost model" or "a randomised-tree forest". */
const char *h_kind_name(hkind k);
const char *h_model_text(hkind k);

/* "each fold holds out one shape", ...; and a one-word name for files. */
const char *h_folds_text(hfolds by);
const char *h_folds_name(hfolds by);

typedef struct hoptions {
	int max_variants;       /* default 16: at most this many from the greedy order */
	double goal;            /* default 1 (none): the greedy order stops at this training geomean */
	int folds;              /* default 5 */
	uint64_t seed;
	double min_gain;        /* default 1.005 */
	bool distill;           /* default true: learn the tree from the cost model */
} hoptions;

void hoptions_default(hoptions *o);

/* The cost model and the dense shapes the tree is distilled on. */
#define H_DENSE_SHAPES 2000

struct hmodel;

typedef struct hresult {
	int *subset;            /* the chosen variants, in order chosen */
	int nsubset;
	int ncover;             /* of which the last ncover were added for coverage */
	htree tree;             /* the dispatch: fitted on every shape with the chosen size */
	bool distilled;         /* tree learnt from a cost model's predictions */
	hkind kind;             /* what the tree was learnt from (distilled: not measured) */
	/* The distilled tree cross-validation chose lost more than 2% to the
	 * measured tree on the measured shapes: the measured tree is the
	 * dispatch (heuristic.c, fit_final). */
	bool distilled_contradicted;
	/* The best candidate of each kind: its cross-validated geomean (0: not
	 * tried) and variant count. */
	double kind_cv[H_NKINDS];
	int kind_nvar[H_NKINDS];
	int dense_shapes;       /* how many (predicted) shapes it was learnt from */
	int single;             /* the best single variant */
	int *single_order;      /* its fallback order: all variants by cost */
	hstats train[SEL_COUNT], heldout[SEL_COUNT];
	/* With m->weight: each selector's geomeans weighted by the shapes'
	 * weights (the objective); otherwise equal to the plain ones. */
	bool weighted;
	double train_w[SEL_COUNT], heldout_w[SEL_COUNT];
	int uncovered;          /* shapes where no variant at all ran correctly */
	double cv_geomean;      /* held-out geomean of the chosen candidate */
	int cv_shapes;          /* shapes the cross-validation used (at most H_CV_SHAPES) */
	int folds;              /* cross-validation folds */
	hfolds fold_by;         /* what each fold holds out */
	int nvar;               /* the variants the dispatch takes from the greedy order, by
	                         * cross-validation (then ncover more for coverage) */
	struct hmodel *model;   /* every selector's final model, for h_choose */
} hresult;

/* Learns the dispatch (heuristic.c; candidates.c lists the candidates): every
 * candidate (tree from the measured shapes or distilled from the cost
 * model, how many variants, depth, minimum leaf) is measured by
 * cross-validation on folds that fit the grid (over at most H_CV_SHAPES
 * shapes), the best is fitted on every shape, and every selector is
 * evaluated on training shapes and on the held-out folds. The cost model
 * needs a matrix with cost_row and row_info, fewer than H_DENSE_SHAPES
 * shapes and o->distill; a distilled tree learns from its predictions on
 * H_DENSE_SHAPES shapes spread over (and a little beyond) the measured
 * range, plus the measured shapes. */
void h_build(hresult *r, const hmatrix *m, const hoptions *o);
void hresult_finish(hresult *r);

/* The variant selector sel of r (built on m) picks for feature vector feat
 * where valid[] (m's variants) says which may run; -1 if none. */
int h_choose(const hresult *r, const hmatrix *m, hselector sel, const double *feat, const bool *valid);

/* The variant the cost model alone predicts fastest at a shape row (of the
 * variants it models, where valid[]); -1 without a cost model. */
int h_predict_best(const hresult *r, const hmatrix *m, const int64_t *row, const bool *valid);

/* Lists in text reports (variants, fallbacks) wrap before this column. */
#define H_TEXT_WIDTH 100

struct dispatch;

/* The table of docs/spec.md §7: selectors × train / held-out, the chosen
 * variants and the tree: with dp (r as select() runs it,
 * heuristics/dispatch.h), the variants select() can return and dp's tree;
 * without, r's (htree_print). With eval (neval > 0): each selector's
 * figures on the neval shapes of an aotc eval database beside the others. */
void h_print_report(strbuf *sb, const hresult *r, const hmatrix *m, const hstats *eval, int neval,
                    const struct dispatch *dp);

#endif
