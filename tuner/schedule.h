/* The schedule stage: which (configuration, shape) cells to measure, in
 * which order, and when to stop (docs/spec.md §3 --search, --shard, --budget).
 *
 * Work goes in rounds. A round gives every shape that still has work a
 * batch of cells, so a tune stopped by --budget leaves every shape with its
 * most promising variants measured rather than some shapes with all and
 * the rest with none. The first rounds measure a diverse sample of the
 * configurations (farthest-point in tunable ranks) on every shape; then a
 * cost model (boosted trees over tuner/cost_features.h, fitted to the log time
 * of every ok cell) ranks the rest per shape:
 *
 *  - exhaustive: every cell, in the model's order (the promising first,
 *    which also makes screening against the best cut the slow ones short);
 *  - model: per shape, batches of the predicted best and of the neighbours
 *    (one tunable one step away) of the best measured, until SEARCH_PATIENCE
 *    batches in a row improve the shape's best by less than
 *    SEARCH_IMPROVE, or the budget ends; then one last round measures the
 *    contenders (per shape the SEARCH_CONTEND_RANK fastest, and up to
 *    SEARCH_CONTEND_MAX within SEARCH_CONTEND of the best) on every shape,
 *    so that the dispatch learnt afterwards compares the variants it may
 *    choose on measurements, not on the search's gaps.
 *
 * A configuration that is wrong, faults, hangs or writes out of bounds on
 * SEARCH_FAIL_LIMIT shapes is deprioritised by the model search: it is not
 * scheduled again (the driver records its other cells as skipped).
 *
 * Configurations marked always (AOTC_EXTERN routines: no tunables, nothing
 * for the model to learn from) stand outside the search: they come first in
 * the sample, so every shape measures them in its first round, whatever
 * the search; the model neither fits nor predicts them, they are nobody's
 * neighbour, and they are never deprioritised.
 *
 * Shards: configurations are ranked by a hash of their names and shard
 * I of N takes every Nth, so N tuners given the same configurations split
 * them exactly, whatever their order or --seed; each searches its part on
 * every shape.
 *
 * Pure bookkeeping (no I/O, no device): tests/unit/test_schedule.c runs it
 * on synthetic times, bench/search-sim replays it on a database. */
#ifndef AOTC_SCHEDULE_H
#define AOTC_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "costmodel.h"
#include "db.h"
#include "cost_features.h"

typedef enum search_kind { SEARCH_AUTO, SEARCH_EXHAUSTIVE, SEARCH_MODEL } search_kind;

const char *search_name(search_kind k); /* "exhaustive", "model" ("auto") */

/* Which of the n configurations named names shard I of N takes (mine[c]
 * 1 or 0): the split above, also used by tune --compile-only --shard.
 * With N > 1 the first SHARD_ANCHORS of the ranking are every shard's
 * (mine[c] SHARD_ANCHOR), measured on every shape like the alternatives:
 * the cells every machine measures, which emit compares (tuner/dbset.h). */
#define SHARD_ANCHORS 2
#define SHARD_ANCHOR 2
void shard_members(const char *const *names, int n, int shard, int nshards, unsigned char *mine);

/* Above this many configurations (in the shard) the default search is the
 * model's: below it the exhaustive run costs at most a few times what a
 * model search measures anyway (sample plus refinement). */
#define SEARCH_MODEL_ABOVE 512
#define SEARCH_FAIL_LIMIT 2
#define SEARCH_PATIENCE 3
#define SEARCH_IMPROVE 0.005
#define SEARCH_BATCH 8
#define SEARCH_CONTEND_RANK 3
#define SEARCH_CONTEND 1.1
#define SEARCH_CONTEND_MAX 8

typedef enum cell_state {
	CELL_OTHER,    /* another shard's */
	CELL_PENDING,  /* to measure, if the search gets to it */
	CELL_DONE,     /* in the database */
} cell_state;

typedef struct schedule_params {
	search_kind kind;        /* SEARCH_AUTO: by the size of the shard */
	int nconfigs, nshapes, ntunables;
	const int64_t *values;   /* nconfigs rows of ntunables (borrowed) */
	const char *const *names; /* configuration names: the shard hash (borrowed) */
	const bool *always;      /* per configuration: outside the search (borrowed; NULL: none) */
	int shard, nshards;      /* part shard (1-based) of nshards; 1 of 1 */
	bool budgeted;           /* small first rounds, so a budget spreads */
	uint64_t seed;
	/* The model's features (borrowed; NULL: shape rows and tunables): */
	const cost_features *features;
	const int64_t *rows;     /* nshapes rows of features->nargs */
} schedule_params;

typedef struct schedule {
	schedule_params p;
	search_kind kind;        /* resolved */
	unsigned char *state;    /* [s * nconfigs + c]: cell_state */
	double *time;            /* [s * nconfigs + c]: ok time (ms), else NAN */
	double *pred;            /* [s * nconfigs + c]: predicted log time, NAN if none */
	int *order;              /* this shard's configurations: the sample first */
	int norder, nsample;
	int *fails;              /* per configuration: shapes it failed on */
	double *best, *best_before; /* per shape: best ok time now, at the round's start */
	int *stale;              /* per shape: batches in a row without improvement */
	int *rounds;             /* per shape: batches given */
	bool *closed;            /* per shape: converged or not measurable */
	bool *dead;              /* per shape: not measurable (schedule_close_shape) */
	bool completed;          /* the model search's contender round is planned */
	int round;
	bool *refined;           /* per shape: the last batch was refinement */
	bool have_model;
	int model_rows;          /* ok cells the model was last fitted to */
	struct schedule_priv *priv; /* the configuration space and the model */
} schedule;

void schedule_init(schedule *sc, const schedule_params *p);
void schedule_finish(schedule *sc);

static inline int schedule_cell(const schedule *sc, int c, int s) { return s * sc->p.nconfigs + c; }

/* Cell (c, s) is in the database with status st (time for MS_OK). */
void schedule_mark(schedule *sc, int c, int s, meas_status st, double time_ms);
/* Cell (c, s), already marked, was timed again (the close contenders'
 * alternation): its status and time become st and time_ms, and the shape's
 * best is what its ok cells now say. */
void schedule_retime(schedule *sc, int c, int s, meas_status st, double time_ms);
/* Shape s cannot be measured (its reference failed): nothing more there. */
void schedule_close_shape(schedule *sc, int s);
/* Whether the model search has given up on configuration c. */
bool schedule_deprioritised(const schedule *sc, int c);

/* Plans the next round into out (cells, grouped by shape in shape order;
 * room for nconfigs * nshapes): their count, 0 when the search is done. */
int schedule_next_round(schedule *sc, int *out);

/* Progress: cells of this shard, measured (done) and still pending;
 * shapes with at least one ok cell; shapes closed. */
typedef struct schedule_counts {
	int mine, done, pending, shapes_ok, shapes_closed;
} schedule_counts;
schedule_counts schedule_count(const schedule *sc);

#endif
