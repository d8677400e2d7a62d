/* `aotc eval`: the dispatch's choice, learnt from the database, measured on
 * shapes it was not trained on. */
#ifndef AOTC_EVAL_H
#define AOTC_EVAL_H

#include "status.h"
#include "heuristic.h"
#include "ir.h"
#include "db.h"
#include "tune.h"

/* Tunes every variant on o->shapes_file into <db>/eval (reusing what is
 * there), builds the heuristic from the training database <db>, and prints
 * the chosen variant's slowdown against the per-shape best on each new
 * shape, with the best single variant beside it. Returns an exit status. */
aotc_status eval_kernel(const aotc_module *m, const kernel *k, const tune_options *o,
                const hoptions *ho, diags *d);

/* Every selector of r (learnt from mt) on the shapes of a held-out matrix
 * me (from an aotc eval database, variants matched by name): slowdowns
 * against me's per-shape best. Returns how many held-out shapes had a
 * variant that ran (0: st untouched). */
int eval_selectors(const hresult *r, const hmatrix *mt, const hmatrix *me, hstats st[SEL_COUNT]);

/* The aotc eval database at eval_path (tuner/dbset.h: dbset_eval_path of
 * the training databases' folder, kernel and hardware id) as a matrix with
 * kernel k, if there is one that fits and was measured from the source
 * with source_hash (a held-out database of another version of the kernel
 * says nothing about this one); false (nothing to finish) otherwise. */
bool eval_matrix_for(const char *eval_path, const char *source_hash, const kernel *k, tune_db **db,
                     hmatrix *me);

#endif
