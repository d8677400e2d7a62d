/* The dispatch (docs/spec.md §7–8): what select() decides, as one value
 * between learning and emitting. heuristics/ makes it from the database and
 * the learnt heuristic (dispatch_build), saves it beside the database and
 * reads it back (dispatch_save, dispatch_load); codegen/ emits C from it and
 * the kernel's IR alone; report, eval and the dispatch check read it too.
 *
 * It holds only what select() can act on: the variants it can return (in
 * database order), the features the tree splits on, the tree with one
 * fallback order per leaf (orders shared between leaves with the same one),
 * the region each variant measured failing is kept to, and the figures the
 * emitted header quotes, all computed for this tree.
 *
 * Expressions are the kernel's (features, VALID_IFs, launch dimensions):
 * a dispatch is bound to the kernel it was built or loaded with, which must
 * outlive it. Ownership: a dispatch owns every array and string in it
 * (dispatch_finish). */
#ifndef AOTC_DISPATCH_H
#define AOTC_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "ir.h"
#include "util.h"

/* Raised when the saved form changes meaning, or when learning changes so
 * that a saved dispatch would differ from a fresh one (it is part of the
 * key, so an old saved dispatch is learnt again, never reused). */
#define DISPATCH_VERSION 2

/* A condition learnt from failed measurements (heuristics/failures.h):
 * shape argument `arg` (the kernel's shape arguments, in parameter order)
 * is a multiple of, at most or at least `bound`. */
typedef enum dterm_kind { DT_MULTIPLE, DT_AT_MOST, DT_AT_LEAST } dterm_kind;

typedef struct dterm {
	int arg;                /* shape argument index: the n-th parameter with shape >= 0 */
	dterm_kind kind;
	int64_t bound;
} dterm;

typedef struct dvariant {
	char *name;             /* "softmax<64, 2, 4>", or the routine's name */
	int64_t *values;        /* its function's tunable values (declaration order) */
	int nvalues;            /* how many: the kernel's ntunables, an alternative's, 0 for a routine's... */
	int config;             /* its configuration in the database it was learnt from */
	int routine;            /* its AOTC_EXTERN (k->externs index), or -1: a kernel variant */
	/* A variant of an AOTC_ALTERNATIVE: its function's name and k->alts
	 * index (-1 where the dispatch was built without the kernel); NULL and
	 * -1 for the kernel's own variants and routines. values are then the
	 * alternative's own (its ntunables). */
	char *function;
	int alt;
	/* Where it was measured failing: NULL when it never failed, else a
	 * sentence ("wrong at n=1001 (and 3 more shapes)"), and the terms that
	 * must all hold for it to be returned. */
	char *failed;
	dterm *terms;
	int nterms;
} dvariant;

/* The function variant dv is of: k, or its alternative (dv->alt). */
const kernel *dispatch_function(const kernel *k, const dvariant *dv);

/* A feature the tree splits on. */
typedef struct dfeature {
	const char *text;       /* as written: "rows * cols", "K % 4 == 0", "cols" (the kernel's) */
	int kfeature;           /* k->features index, or -1 where the kernel has none ... */
	int param;              /* ... and the feature is this shape argument (k->params index) */
} dfeature;

/* A node: an inner node sends a shape left when its feature's value is at
 * most threshold; a leaf tries its order's variants, the first valid wins. */
typedef struct dnode {
	int feature;            /* dispatch feature index; -1: a leaf */
	int64_t threshold;
	int left, right;        /* node indices */
	int order;              /* a leaf's: index into orders */
} dnode;

/* The slowdown of the dispatch against the per-shape best over some shapes. */
typedef struct dstats {
	double geomean, p90, worst;
	int n;                  /* shapes */
	int misses;             /* shapes where it returns a variant without a measurement, or none */
	int failed;             /* shapes where it returns a variant measured failing there */
} dstats;

typedef struct dfigures {
	char *hardware;         /* the database's hardware id ("cuda_NVIDIA_H200_13.0"), or NULL */
	int shapes, variants;   /* measured: the database's shapes and configurations */
	int failing, dropped;   /* configurations measured failing somewhere; of them never dispatched */
	bool distilled;         /* the tree was learnt from a cost model's predictions */
	int dense_shapes;       /* on how many predicted shapes */
	dstats train;           /* this dispatch on the database's shapes */
	dstats heldout;         /* cross-validation of how it was learnt: each fold learnt alike */
	int folds;
	int fold_by;            /* what each fold held out: an hfolds (heuristic.h) */
	bool weighted;          /* shapes weighted by recorded calls (AOTC_RECORD) */
	double train_w, heldout_w;
	dstats eval;            /* this dispatch on an aotc eval database's shapes (n 0: none) */
} dfigures;

/* Where it was learnt from (tuner/dbset.h): filled by whoever found the
 * databases, kept when it is saved, so that a loaded dispatch says what a
 * learnt one would. */
typedef struct dorigin {
	char *db;               /* the first database merged (a path under --db), or NULL */
	int merged;             /* how many were */
	diag_list notes;        /* what finding and merging them said (warnings, notes) */
} dorigin;

typedef struct dispatch {
	dvariant *variants;     /* those select() can return, in database order */
	int nvariants;
	int ntunables;          /* how many values each variant has (the kernel's) */
	dfeature *features;     /* those the tree splits on, in the kernel's order */
	int nfeatures;
	dnode *nodes;           /* nodes[0] is the root (a lone leaf: no split) */
	int nnodes;
	int *orders;            /* norders lists of variant indices, each ended by -1 */
	int *order_at;          /* norders: where each list starts in orders[] */
	int norders;
	dfigures fig;
	dorigin from;
} dispatch;

void dispatch_finish(dispatch *d);

/* The leaf the shape with feature values feat[nfeatures] reaches: its node index. */
int dispatch_leaf(const dispatch *d, const int64_t *feat);

int dispatch_depth(const dispatch *d);
int dispatch_leaves(const dispatch *d);

/* The tree as indented text over the features' names, variants by name,
 * fallbacks wrapped before DISPATCH_TEXT_WIDTH (aotc report). */
#define DISPATCH_TEXT_WIDTH 100

void dispatch_print(strbuf *sb, const dispatch *d);

/* ---- Saved beside the database ------------------------------------------ */

/* Writes d as JSON to path atomically (a temporary file in the same folder,
 * then rename), with key (what it was learnt from: heuristics/learn.h).
 * from.db and the notes' files are written relative to the folder of path
 * when they are in it, so the saved form does not depend on how --db was
 * spelt. False after a diagnostic when it cannot be written. */
bool dispatch_save(const dispatch *d, const char *key, const char *path, diags *dg);

/* Reads a dispatch that dispatch_save wrote with this key for kernel k into
 * d: only when its "key" equals key and it fits k (every index in range,
 * names and feature texts equal to k's, values of k's tunables, the tree
 * acyclic); its feature texts then point into k. False, with d zeroed and
 * nothing said, for anything else: absent, unreadable, corrupt, stale or
 * hostile (the caller learns afresh). */
bool dispatch_load(dispatch *d, const kernel *k, const char *path, const char *key);

/* ---- Asking it, as the emitted select() does ----------------------------- */

/* The kernel's parameter values for a shape row (its shape arguments in
 * parameter order) with the AOTC_VALUEs over them: false when one cannot
 * be evaluated or does not fit its parameter's type (no variant is valid). */
bool dispatch_params(const kernel *k, const int64_t *row, int64_t *params);

/* Whether variant v may run with parameters params (dispatch_params): its
 * failure terms hold, and a kernel variant's VALID_IFs hold and its launch
 * fits the limits. */
bool dispatch_valid(const dispatch *d, const kernel *k, int v, const int64_t *row, const int64_t *params);

/* The variant select() returns for a shape row, or -1. */
int dispatch_select(const dispatch *d, const kernel *k, const int64_t *row);

#endif
