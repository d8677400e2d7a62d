/* The tuning database (docs/spec.md §6; docs/database.md): one JSON document per
 * kernel and hardware id (named by tuner/dbset.h), plus a journal
 * beside it (<file>.journal, one JSON measurement a line, each carrying the
 * source hash it was measured from, written through at once and
 * fdatasync'd once a second) so that a crash or kill of aotc loses at most
 * the measurement in flight. db_save() folds the journal into the document
 * (atomic rename) and removes it. A tuner holds <file>.lock (flock) from
 * db_open to db_close; readers (db_load) take no lock.
 *
 * Ownership: a tune_db owns everything in it; db_close() frees it. */
#ifndef AOTC_DB_H
#define AOTC_DB_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "diag.h"
#include "util.h"

#define AOTC_DB_VERSION 1
#define AOTC_HASH_LEN 32 /* source_hash: lowercase hex digits */

typedef enum meas_status {
	MS_OK,            /* correct; time_ms is the median */
	MS_WRONG,         /* ran, output differs from the reference */
	MS_FAULT,         /* illegal address, trap, or the worker died */
	MS_TIMEOUT,       /* did not finish in time */
	MS_RESOURCES,     /* cannot launch: threads, registers, shared memory */
	MS_COMPILE_ERROR,
	MS_INVALID,       /* AOTC_VALID_IF false, or a launch expression failed */
	MS_SKIPPED,       /* exceeds the device's limits, decided before launching */
	MS_OUT_OF_BOUNDS, /* wrote outside a buffer (a guard zone changed) */
	MS_ERROR,         /* an AOTC_EXTERN routine returned an error (note: which) */
	MS_COUNT,
} meas_status;

const char *meas_status_name(meas_status s);
bool meas_status_parse(const char *name, meas_status *out);

struct measurement;
/* The timing noise of a measurement: the spread between the 10th and 90th
 * percentile of its samples (linear interpolation) as a fraction of their
 * median; 0 with fewer than 2 samples or none positive (docs/database.md). */
double meas_spread(const struct measurement *m);

typedef struct measurement {
	int config, shape;     /* indices into the db's configs and shapes */
	meas_status status;
	double time_ms;        /* MS_OK: median of samples */
	double *samples;       /* ms, in launch order */
	int nsamples;
	double error;          /* max over outputs of |out - ref| / |ref| (or NaN) */
	bool screened;         /* stopped early: clearly slower than the best */
	int alternated;        /* > 0: re-timed in alternation with the shape's close
	                        * contenders, this many rounds; samples are those rounds'
	                        * ("alternated" in the file; absent: 0) */
	char *note;            /* why it failed, or NULL */
} measurement;

typedef struct db_entry {
	char *name;            /* "sgemm<64, 128, 8, 8, 4>"; an extern's: "sgemm_cublas" */
	int64_t *values;       /* nvalues, zeros after them up to ntunables (an extern's: zeros; the file has []) */
	int nvalues;           /* ntunables, or the alternative's own count */
	bool is_extern;        /* an AOTC_EXTERN routine: a C identifier, no tunables */
	/* A variant of an alternative of the kernel (AOTC_ALTERNATIVE): the
	 * function's name, its values in its own tunables' order; NULL for the
	 * kernel's own variants and externs. */
	char *function;
	/* What it was measured from: its function's kernel.code (a hash of the
	 * tokens compiled and checked), or NULL in a document older than code
	 * keys (then the document's source_hash decides). */
	char *code;
} db_entry;

/* The most tunables a configuration of an alternative may have in a file. */
#define DB_MAX_VALUES 256

typedef struct tune_db {
	char *path, *journal_path;
	char *kernel, *source, *source_hash;
	char *compiler;        /* the toolchain it was compiled with (rt compiler id), or NULL */
	char *machine;         /* the host name of the machine that measured, or NULL */
	json_t *hardware;      /* docs/spec.md §6 hardware description */
	json_t *method;        /* timing method */
	json_t *search;        /* how the last tune searched, or NULL: {"strategy":
	                        * "exhaustive"|"model", "finished": bool, "shard": [I, N]} */
	char **tunables;       /* names */
	int ntunables;
	char **shape_args;
	int nshape_args;
	db_entry *configs;
	int nconfigs;
	int64_t *shapes;       /* nshapes rows of nshape_args */
	uint64_t *shape_calls; /* per shape: calls an AOTC_RECORD file counted, 0: none */
	int nshapes;
	measurement *meas;
	int nmeas;
	int *cell;             /* [config * shapes_cap + shape] -> meas index or -1 */
	int configs_cap, shapes_cap, meas_cap;
	int *config_map, *shape_map; /* open addressing: config / shape index or -1 */
	size_t config_map_cap, shape_map_cap;
	FILE *journal;
	long synced_at;        /* time() of the journal's last fdatasync */
	int unsaved;           /* journal entries not yet in the document */
	int journal_ignored;   /* journal lines of another source, not replayed */
	int stale_temps;       /* db_open: temporary files of a killed save removed */
	char *lock_path;       /* <path>.lock */
	int lock_fd;           /* db_open: the held lock file, else -1 */
	/* db_open/db_settle: measurements of other code or another compiler,
	 * kept in the superseded document (db_key.superseded_path) so that a
	 * revert brings them back: lines by key, and what moved. */
	json_t *superseded;
	char *superseded_path;
	bool superseded_changed;
	int moved, restored;   /* measurements set aside, brought back */
} tune_db;

/* What a measurement must have been taken from to count now
 * (docs/database.md, "The key"): the code of its configuration's function
 * (kernel.code of the kernel, an alternative or a routine: code(ctx,
 * function or NULL, is_extern, name); NULL or "" when unknown, then the
 * document's source_hash decides) and, for a tuner, the compiler. */
typedef struct db_key {
	const char *(*code)(const void *ctx, const char *function, bool is_extern, const char *name);
	const void *ctx;
	const char *compiler;        /* NULL: not checked (readers) */
	const char *superseded_path; /* db_open: where superseded cells go */
} db_key;

/* Opens (creating the directory if needed) or loads the database for this
 * kernel and hardware, for tuning. First takes <path>.lock, refusing (a
 * diagnostic naming the holder's pid) while another process
 * holds it, and removes temporary files a killed db_save left
 * (db->stale_temps counts them). The document's measurements are kept if
 * its source_hash and names match; otherwise they are dropped and
 * *invalidated says how many. Then journal lines measured from source_hash
 * are replayed, others skipped (db->journal_ignored). Returns NULL after a
 * diagnostic (locked, unreadable, malformed, another kernel's database).
 * hardware and method are borrowed-and-copied JSON objects. */
tune_db *db_open(const char *path, const char *kernel, const char *source,
                 const char *source_hash, const char *const *tunables, int ntunables,
                 const char *const *shape_args, int nshape_args, json_t *hardware,
                 json_t *method, const db_key *key, int *invalidated, diags *d);

/* After the tuner has added its configurations and shapes: gives every
 * configuration without a code its current one, brings back the superseded
 * measurements of the current code and compiler for cells not measured,
 * and writes the superseded document and the database where that changed
 * (db->moved, db->restored say how many). -1 with errno on I/O failure. */
int db_settle(tune_db *db, const db_key *key);

/* For readers: drops the measurements of configurations whose code is not
 * key's (or, without codes, of a document whose source_hash is not
 * source_hash), naming their functions in *what ("sgemm_splitk, sgemm");
 * returns how many. A configuration whose function key does not know is
 * left alone. What is kept is now of source_hash. */
int db_drop_stale(tune_db *db, const db_key *key, const char *source_hash, strbuf *what);
/* How many measurements db_drop_stale would drop. */
int db_count_stale(const tune_db *db, const db_key *key, const char *source_hash);


/* Loads a database read-only (for emit/report), without the lock: the
 * document, then the journal lines of the document's source hash (others
 * are skipped with a warning). NULL after a diagnostic: unreadable,
 * malformed, a source_hash that is not AOTC_HASH_LEN lowercase hex digits,
 * a configuration, shape or (config, shape) cell listed twice. */
tune_db *db_load(const char *path, diags *d);

/* db_load, for a file that may be something else: when it is JSON without
 * an "aotc_db" member (a shapes list beside the databases), NULL with
 * *not_db set. */
tune_db *db_load_any(const char *path, bool *not_db, diags *d);

void db_close(tune_db *db); /* accepts NULL; does not save; releases the lock */

/* Whether h is a source hash as aotc writes it (AOTC_HASH_LEN lowercase hex). */
bool db_hash_valid(const char *h);

int db_config(tune_db *db, const char *name, const int64_t *values); /* find or add */
/* A variant of alternative function (its nvalues tunable values): found or
 * added. */
int db_alt_config(tune_db *db, const char *name, const char *function, const int64_t *values,
                  int nvalues);
/* The AOTC_EXTERN routine name (a C identifier) as a configuration: found
 * or added, and marked is_extern. */
int db_extern(tune_db *db, const char *name);
int db_shape(tune_db *db, const int64_t *row);                         /* find or add */
int db_find_config(const tune_db *db, const char *name);               /* -1 if none */
int db_find_shape(const tune_db *db, const int64_t *row);              /* -1 if none */
/* Whether any shape has recorded calls (the heuristic then weights by them). */
bool db_has_calls(const tune_db *db);
const measurement *db_get(const tune_db *db, int config, int shape);  /* NULL if none */

/* Records m (copied; config and shape must exist) in memory and appends it
 * to the journal before returning. Returns -1 with errno on I/O failure. */
int db_record(tune_db *db, const measurement *m);

/* Adds to db every measurement of from (another shard or machine of the
 * same kernel, same tunables and shape arguments) for a cell db does not
 * have, and from's recorded calls (the larger count where both have one:
 * shards tuned from one record file must not add up); returns how many
 * measurements. */
int db_merge(tune_db *db, const tune_db *from);

/* Writes the whole document atomically and removes the journal. */
int db_save(tune_db *db);

#endif
