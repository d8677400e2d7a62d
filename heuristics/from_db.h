/* The heuristic's matrix from a tuning database. */
#ifndef AOTC_FROM_DB_H
#define AOTC_FROM_DB_H

#include "db.h"
#include "dispatch.h"
#include "heuristic.h"
#include "ir.h"

/* Fills m from db: variants are its configurations, shapes its shapes,
 * times the ok measurements' medians. With the kernel k, features are its
 * AOTC_FEATURES (default: the shape arguments) and validity its
 * AOTC_VALID_IFs and (CUDA) launch limits (ir_dispatchable), evaluated as
 * the emitted code will; without it (aotc report
 * on a database alone) features are the shape arguments and validity comes
 * from the "invalid" statuses. Returns false after diagnosing a database
 * that does not fit k. */
bool hmatrix_from_db(hmatrix *m, const tune_db *db, const kernel *k, diags *d);

/* Features and validity of every variant at any shape row, as the emitted
 * dispatch computes them (only for a matrix made with the kernel); false
 * (all invalid, features 0) when an AOTC_VALUE cannot be evaluated there. */
bool hmatrix_row(const hmatrix *m, const int64_t *row, double *feat, bool *valid);

/* Frees a matrix made by hmatrix_from_db (db and k must outlive it). */
void hmatrix_from_db_finish(hmatrix *m);

/* The dispatch learnt in r (h_build on m, made from db and k) as select()
 * will run it (heuristics/dispatch.h): leaf orders cut where nothing after
 * can be reached, sibling leaves with the same order merged, only the
 * variants and features left in use; its training figures computed for
 * this tree, the held-out ones r's, eval (neval shapes, or NULL) from an
 * aotc eval database. k may be NULL (aotc report on a database alone:
 * features are the shape arguments). Returns false after a diagnostic when
 * a chosen configuration is not k's (d is then empty). */
bool dispatch_from_result(dispatch *d, const kernel *k, const tune_db *db, const hmatrix *m,
                          const hresult *r, const hstats *eval, int neval, diags *dg);

#endif
