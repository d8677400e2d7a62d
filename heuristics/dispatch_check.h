/* The test oracle of the emitted dispatch (aotc __dispatch-check): what the
 * in-memory dispatch (dispatch.h, dispatch_select) answers, printed so that
 * the tests that compile the emitted C can compare its select() and
 * launch_dims() with it. */
#ifndef AOTC_DISPATCH_CHECK_H
#define AOTC_DISPATCH_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "db.h"
#include "dispatch.h"
#include "ir.h"

/* For every shape of db, 2000 random ones (from seed) and the extremes
 * (INT64_MIN, around 2^31, 2^53 + 1, INT64_MAX, ...): "select ARGS -> v",
 * and for a __global__ kernel, for each variant of dp,
 * "dims v INTS -> g0 g1 g2 b0 b1 b2 smem" (or "-> -1") from the IR
 * evaluator. Variants are numbered as in the emitted file (dp's). dp was
 * built with k; db is k's (its shapes are asked about, not learnt from). */
void dispatch_check_write(FILE *out, const dispatch *dp, const kernel *k, const tune_db *db, long seed);

#endif
