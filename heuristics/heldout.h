/* Learning measured on shapes it was not trained on: the held-out
 * database aotc eval tunes into <db>/eval/ (tools/eval.c), read back as a
 * matrix, and every selector's slowdowns on it. learn and report show
 * these figures beside the cross-validated ones. */
#ifndef AOTC_HELDOUT_H
#define AOTC_HELDOUT_H

#include <stdbool.h>

#include "db.h"
#include "heuristic.h"
#include "ir.h"

/* Which variants of mt the emitted dispatch may run at shape s of me: as
 * mt's validity says there (its AOTC_VALID_IFs and the regions learnt
 * from mt's failures, never me's, which the dispatch cannot know), among
 * those me measured (map: mt variant -> me variant, -1: not measured),
 * into valid[mt->nvariants]. */
void eval_trained_valid(const hmatrix *mt, const hmatrix *me, int s, const int *map, bool *valid);

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
