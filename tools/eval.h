/* `aotc eval`: the dispatch's choice, learnt from the database, measured on
 * shapes it was not trained on. A command: it tunes (tuner/), learns
 * (heuristics/) and prints; the held-out figures learning itself shows are
 * heuristics/heldout.h. */
#ifndef AOTC_EVAL_H
#define AOTC_EVAL_H

#include "heuristic.h"
#include "ir.h"
#include "status.h"
#include "tune.h"

/* Tunes every variant on o->shapes_file into <db>/eval (reusing what is
 * there), builds the heuristic from the training database <db>, and prints
 * the chosen variant's slowdown against the per-shape best on each new
 * shape, with the best single variant beside it, as a table or (json) as
 * one JSON document on a line (o->stdout_taken then sends the tune's
 * summaries to stderr). Without a device of o->arch, evaluates the
 * held-out measurements already there. */
aotc_status eval_kernel(const aotc_module *m, const kernel *k, const tune_options *o, const hoptions *ho,
                        bool json, diags *d);

#endif
