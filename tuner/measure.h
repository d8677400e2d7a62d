/* The measure stage: variants run in a worker process (tuner/worker.h),
 * which holds one shape at a time (inputs, the reference's output, guard
 * zones); a fault or a hang takes down the worker, which is restarted with
 * the same shape, never the tuner. */
#ifndef AOTC_MEASURE_H
#define AOTC_MEASURE_H

#include "status.h"
#include <limits.h>
#include <stdbool.h>

#include <jansson.h>

#include "arch.h"
#include "compile.h"
#include "db.h"
#include "ir.h"
#include "worker.h"

/* How each cell is timed (docs/database.md, "How a measurement is taken";
 * --samples, --warmup, --cell-time, --screen, --quick), recorded in the
 * database's method. */
typedef struct sampling {
	int warmup;                   /* untimed launches first */
	int min_samples, max_samples; /* timed launches (the last one checked) */
	int screen_samples;           /* after these, a variant slower than */
	double screen_factor;         /* screen_factor x the best is stopped (0: never) */
	double budget_ms;             /* timing stops past this, after min_samples */
	int min_checks;               /* checked launches a cell (within the checks' share); 1: the first only */
} sampling;

/* Today's defaults, and --quick's: 1 warm-up, 5 to 25 samples, 100 ms a
 * cell, screened at 3x after 3, 20 checked launches; 1, 3 to 5, 20 ms, 2x
 * after 3, 20. */
extern const sampling SAMPLING_DEFAULT, SAMPLING_QUICK;

typedef struct measurer {
	char exe[PATH_MAX];
	json_t *init;         /* the init request, resent after a restart */
	worker *w;
	json_t *device;       /* from the worker */
	int max_samples;      /* the method's (the timeouts) */
	double budget_ms;
	int index, count;     /* the device's index, and how many the backend sees */
	json_t *shape_req;    /* the current shape request, resent after a restart */
	int restarts;
	int reruns;           /* failures run again in a fresh worker (measurer_run) */
	bool fresh;           /* the worker has run no variant since it started */
	bool refused;         /* the last measurement: the buffers were over the limit */
	bool no_device;       /* the worker found no device of that architecture */
	double check_ms, timing_ms, shape_ms; /* where the worker's time went */
	double alt_ms;        /* measurer_alternate's calls */
	long timed, rotated;  /* timed launches, and those on rotated copies */
} measurer;

/* Starts the worker for kernel k of m on arch's device of that index (-1:
 * $AOTC_DEVICE's or the backend's default) with the timing method (a
 * reference is taken). 0, or 3 with why (ms->no_device tells "no device of
 * that architecture here" from the rest). */
aotc_status measurer_start(measurer *ms, const aotc_module *m, const kernel *k, const arch_info *arch,
                           int device, uint64_t seed, json_t *method, strbuf *why);
/* Stops the worker (a later measurer_shape starts it again). */
void measurer_stop(measurer *ms);
void measurer_finish(measurer *ms);

typedef enum { SHAPE_OK, SHAPE_REFERENCE_FAILED, SHAPE_REFUSED, SHAPE_WORKER_LOST } shape_result;

/* Makes row (nargs values) the worker's shape, with the compiled reference
 * ref ({"blob", "symbol", "launch"}, or json null; taken). On
 * SHAPE_REFERENCE_FAILED the shape cannot be measured (why says how; the
 * worker was restarted); SHAPE_REFUSED: its buffers would take more
 * memory than the device's buffer_limit (why says how much), so that its
 * cells are `resources`; SHAPE_WORKER_LOST: it cannot be restarted. A
 * worker that died on the shape after running variants is restarted and
 * given the shape once more before the reference is blamed. */
shape_result measurer_shape(measurer *ms, const int64_t *row, int nargs, json_t *ref,
                            strbuf *why);

/* Measures compiled variant j of function fn (the kernel or an
 * alternative; launch ldims, taken; fn's tunable values), or of an
 * AOTC_EXTERN routine (fn and values NULL: its buffers are sized as the
 * reference's), at the current shape into *mm (status, samples, note),
 * given the best time there so far (screening; INFINITY if none). False
 * when the worker died and cannot be restarted (why).
 *
 * A variant is never blamed for what another left: when it ends the worker
 * (fault, timeout, a reply out of turn) in a worker that ran other variants
 * before it, it is run again in a fresh one and that run's outcome is
 * recorded. ms->refused tells a `resources` that is the memory limit
 * (which holds for this shape only) from one of the launch. */
bool measurer_run(measurer *ms, const job *j, json_t *ldims, const kernel *fn,
                  const int64_t *values, double best, measurement *mm, strbuf *why);

/* The device warmed up for warm_ms (the worker's "warm": busy until
 * steady, at most 3 warm_ms; 0: not at all), then the clocks its driver
 * reports: the worker's reply ({"warm_ms", "flushes", "steady", "clocks"}),
 * or NULL when the worker did not answer (it is restarted). */
json_t *measurer_warm(measurer *ms, double warm_ms);

/* One of the close contenders measurer_alternate re-times. */
typedef struct alt_variant {
	const job *j;
	json_t *ldims;          /* taken */
	const kernel *fn;       /* NULL: an AOTC_EXTERN routine */
	const int64_t *values;
	measurement *mm;        /* in: its measurement; out: its alternated one */
} alt_variant;

/* Times the n variants v at the current shape again in alternation (the
 * worker's "alternate": the given rounds, 1 to 1000, or fewer when they are
 * slow):
 * each ok one gets the rounds' samples, their median as time_ms and
 * alternated set; one whose checked last launch failed gets that status.
 * False when the worker failed on them (a fault, a hang, something left
 * behind: which variant is not known), with why; the measurements are then
 * untouched and the worker restarted (*lost: it cannot be). */
bool measurer_alternate(measurer *ms, alt_variant *v, int n, int rounds, bool *lost, strbuf *why);

/* Evaluates a launch (AOTC_GRID, AOTC_BLOCK, AOTC_SMEM of the kernel or of
 * the reference) for these tunable values (NULL for the reference) and
 * parameters. MS_OK with *out ({"grid", "block", "smem"}), or MS_INVALID /
 * MS_SKIPPED (beyond the device's limits) with why. */
meas_status launch_dims(const kernel *k, const launch *grid, const launch *block,
                        const aexpr *smem, const int64_t *values, const int64_t *params,
                        const json_t *dev, json_t **out, strbuf *why);

/* The timing method (docs/database.md), stored in every database: the
 * sampling sp, alt_rounds rounds of alternation (0: none). */
json_t *method_json(const arch_info *arch, const sampling *sp, int alt_rounds);

/* The alternation of close contenders (docs/database.md): the most
 * variants in a group, the rounds unless --alternate says otherwise (0 to
 * 1000, tools/options.c), the least noise a difference must beat, and how
 * long the device is warmed before the first shape. */
enum { ALT_GROUP = 4, ALT_ROUNDS = 15 };
#define ALT_MIN_NOISE 0.03
double warmup_ms(const arch_info *arch);

#endif
