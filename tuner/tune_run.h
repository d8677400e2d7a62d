/* The tune's run, shared by tuner/tune.c (the stages before measuring, and
 * the summary) and tuner/crew.c (the measure stage: one thread per
 * device): private to those two files. */
#ifndef AOTC_TUNE_RUN_H
#define AOTC_TUNE_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "backend.h"
#include "compile.h"
#include "cost_features.h"
#include "db.h"
#include "measure.h"
#include "schedule.h"
#include "shapes.h"
#include "tune.h"

/* The enumerated configurations of the kernel, then of each of its
 * AOTC_ALTERNATIVEs (in the order the IR holds them), then (from
 * nvariants on) the kernel's AOTC_EXTERN routines in annotation order:
 * named as the routine, their value rows zeros (they have no tunables),
 * always measured. An alternative's variants are always measured too: the
 * model search ranks configurations by the kernel's tunables, which they
 * do not have. */
typedef struct configs {
	const kernel *k;
	const kernel *cur;   /* the function add_config enumerates */
	arena a;
	int64_t *values;     /* n rows of nt, a function's own values first */
	int nt;              /* the most tunables of the kernel and its alternatives */
	char **names;
	const kernel **fn;   /* per config: the function it is a variant of; NULL: an extern */
	int *job;            /* compile job per config */
	bool *always;        /* per config: an extern or an alternative's, outside the search */
	int n, nvariants;
	size_t cap;
} configs;

static inline const int64_t *config_values(const configs *c, int i) { return c->values + (size_t)i * c->nt; }

typedef struct progress {
	bool tty, quiet;
	double last;
	double every;   /* seconds between lines: 0.25 on a terminal, else 15 or $AOTC_PROGRESS_SECONDS */
} progress;

/* Sums over cells for a least-squares line of y against x. */
typedef struct cost_sums {
	double n, x, y, xx, xy;
} cost_sums;

/* One tune of one kernel: the stages' results, in the order they fill. */

typedef struct tune_run {
	const aotc_module *m;
	const kernel *k;
	const tune_options *o;
	diags *d;
	const rt_ops *ops;
	/* enumerate */
	configs cf;
	shape_set ss;
	int64_t *params;      /* per shape: k->nparams values */
	bool *params_ok;      /* per shape: its AOTC_VALUEs evaluate */
	/* open: devices, compiler, database */
	measurer *ms;         /* one per device (--devices), each with its worker */
	int nms;
	json_t *device;       /* ms[0]'s (borrowed): every measurement's hardware */
	rt_compile_request req;
	char *abs;
	const char *hwid;
	tune_db *db;
	db_key key;             /* what its measurements are keyed by (dbset_key) */
	int *dbc, *dbs;       /* configuration / shape -> database index */
	/* schedule */
	cost_features feat;
	schedule sc;
	int learned;          /* cells recorded from failures learnt once */
	/* compile */
	pool p;
	bool pool_started;
	int ref_job;
	json_t *ref_dims;     /* per shape: the reference's launch, or NULL */
	/* measure: one thread per device; they share this run under mu */
	pthread_mutex_t mu;
	unsigned char *busy;  /* per schedule cell: a device is measuring it */
	aotc_status failed;   /* a device's error: the others stop */
	double t0;
	/* What measuring costs, for the time left (estimate_left): per shape,
	 * its cells' wall seconds y against the ms their timed launches took
	 * x (sums for least squares); the rest (shape setups, alternation)
	 * apart. */
	cost_sums *shape_cost; /* [s]: cells measured with no compile pending; [count + s]: while compiling */
	double other_s;       /* shape setups and alternations */
	int visits;           /* shape setups */
	double pred_x, pred_actual; /* the predicted x of cells measured that had one, and their x */
	int pred_n;
	int measured, reused;
	bool out_of_budget, lost_shapes;
	progress pr;
	/* noise: the warm-up, the clocks, the close contenders' alternation */
	json_t *warm, *clocks_end; /* the first device warmed's replies, or NULL */
	int warm_ms;          /* its index in ms */
	bool *warmed;         /* per device */
	bool *alt_done;       /* per shape: alternated in this run */
	int alternations, alt_lost;
} tune_run;

static inline const measurement *cell_meas(const tune_run *r, int c, int s)
{
	return db_get(r->db, r->dbc[c], r->dbs[s]);
}


static inline const int64_t *shape_params(const tune_run *r, int s)
{
	return r->params + (size_t)s * (r->k->nparams + 1);
}

/* tuner/tune.c, for the measure stage: */

/* The launch of configuration c at shape s, or why it has none: MS_OK with
 * *dims, MS_INVALID (an AOTC_VALID_IF, a launch expression) or MS_SKIPPED
 * (beyond the device's limits), decided without running anything. */
meas_status tune_static_status(const tune_run *r, int c, int s, json_t **dims, strbuf *why);
/* Records mm in the database (the journal, the document every 1000). */
aotc_status tune_record(tune_run *r, measurement *mm);
/* Records status st with note for cell (c, s) and tells the schedule. */
aotc_status tune_record_status(tune_run *r, int c, int s, meas_status st, const char *note);
/* What one cell of configuration c tells about its others; records those
 * cells (never a busy one). */
aotc_status tune_learn_from(tune_run *r, int c, int s);
/* Shape s's close contenders (the best ok cell and those within the noise
 * of it, at most ALT_GROUP) into group, *fresh when one was not
 * alternated yet; how many. */
int tune_contenders(const tune_run *r, int s, int *group, bool *fresh);
/* Whether a cell of shape s was alternated (in this run or before). */
bool tune_shape_alternated(const tune_run *r, int s);

/* tuner/crew.c: */

/* Stage 5: rounds until the schedule is done or the budget is spent, on
 * every device. 0 or an exit status. */
aotc_status tune_measure_stage(tune_run *r);
/* The progress line (docs/cli.md, "Progress"); final: the last one. */
void tune_show_progress(tune_run *r, bool final);

#endif
