/* Cost-model features of a (configuration, shape) pair, as far as the IR
 * says what a variant's time depends on. Shared by the heuristic's cost
 * model (heuristics/from_db.c: learning the dispatch from a dense set of
 * shapes) and the model-guided search (tuner/search.c: which configurations
 * to measure next).
 *
 * Per shape argument its log2 and how many times 2 divides it (alignment);
 * the tunable values; for a kernel with a grid the blocks per launch
 * (log2), the waves over the device's multiprocessors (log2 of the
 * fraction and of the whole waves), the wave efficiency (blocks over whole
 * waves times multiprocessors), the threads per block, and per cdiv(a, b)
 * of the grid the useful fraction a / (cdiv(a, b) * b) and their product
 * (fractions as log2), and per buffer its elements per thread launched. */
#ifndef AOTC_COST_FEATURES_H
#define AOTC_COST_FEATURES_H

#include <stdbool.h>

#include "ir.h"
#include "shapes.h"

/* The cdiv() calls of the grid whose padding is a feature. */
#define COST_MAX_CDIVS 8

typedef struct cost_features {
	const kernel *k;       /* NULL: shape arguments and tunables only */
	const shape_set *ss;   /* the shape arguments' parameters (with k) */
	int nargs, ntunables;
	double sm_count;       /* the device's multiprocessors (1 if unknown) */
	const expr *cdivs[COST_MAX_CDIVS];
	int ncdivs;
	/* With AOTC_ALTERNATIVEs, the last feature is which function a
	 * configuration is of (0 the kernel, a + 1 its alternative a). */
	bool fn_col;
	int count;             /* features per pair */
} cost_features;

/* k and ss are borrowed (both may be NULL together). */
void cost_features_init(cost_features *f, const kernel *k, const shape_set *ss, int nargs,
                        int ntunables, double sm_count);

/* The features of n configurations (tunable values tv[i], of function
 * fns[i]: the kernel or one of its alternatives; fns or fns[i] NULL: the
 * kernel) at one shape row, into out[i * f->count ..]. An alternative's
 * tunables fill the first of the tunable columns (the rest 0), its launch
 * gives blocks and threads, and the kernel's grid's paddings do not apply
 * to it. Safe to call from several threads. */
void cost_features_row(const cost_features *f, const int64_t *row, const int64_t *const *tv,
                       const kernel *const *fns, int n, double *out);

/* Whether feature i belongs in a per-variant model linear in log time: the
 * logs of the sizes, blocks, waves and paddings, not the alignment, the
 * tunables, the threads or the elements per thread. */
bool cost_feature_linear(const cost_features *f, int i);

#endif
