/* `aotc tune`: compile the configurations, run and check them on the
 * shapes in a worker process, as the search schedules them, and record the
 * measurements in the database (docs/spec.md §3, §5, §6; docs/database.md). */
#ifndef AOTC_TUNE_H
#define AOTC_TUNE_H

#include "status.h"
#include <stdbool.h>

#include "arch.h"
#include "ir.h"
#include "measure.h"
#include "schedule.h"

/* --dump=STAGE: print that stage's result as JSON lines on stdout
 * (configs and compile then stop; schedule goes on measuring). */
typedef enum tune_dump { TUNE_DUMP_NONE, TUNE_DUMP_CONFIGS, TUNE_DUMP_COMPILE, TUNE_DUMP_SCHEDULE } tune_dump;

typedef struct tune_options {
	const arch_info *arch;
	const char *db_dir;
	const char *shapes_file;    /* NULL: AOTC_SHAPES */
	double budget_s;            /* <= 0: no cap */
	search_kind search;         /* SEARCH_AUTO: by the size of the space */
	int shard, nshards;         /* --shard I/N; 0/0 or 1/1: everything */
	tune_dump dump;
	bool stdout_taken;          /* the caller writes stdout (eval --format json): summaries on stderr */
	int jobs;                   /* compile threads; 0: all cores */
	int alt_rounds;             /* --alternate: rounds of the close contenders' alternation; 0: none */
	sampling sampling;          /* how each cell is timed (SAMPLING_DEFAULT, --quick, ...) */
	/* --devices: devices[ndevices], the indices to measure on, a worker
	 * each; devices NULL: ndevices of the first device's model (0: every
	 * one; $AOTC_DEVICE alone: its one). Host: stand-ins (default one). */
	const int *devices;
	int ndevices;
	uint64_t seed;
	bool quiet, verbose;
	const char *const *include_dirs;
	int ninclude_dirs;
	const char *const *defines;
	int ndefines;
} tune_options;

/* Tunes kernel k of m. Returns an exit status of docs/spec.md §3: 0, 1 (bad input,
 * diagnosed), 3 (environment: no device, no compiler, unreadable
 * database), 4 (no variant ran correctly). *no_device (if non-NULL) tells a
 * 3 for "no device of that architecture on this machine" from the other
 * environment errors. */
aotc_status tune_kernel(const aotc_module *m, const kernel *k, const tune_options *o, bool *no_device,
                diags *d);

/* `aotc tune --compile-only`: compiles the reference and every
 * configuration of k (into the compile cache a later tune reuses), needing
 * no device; prints each failure and a line "K: N of M configurations
 * compiled ...". 0 when the reference (if any) and at least one
 * configuration compile; 1 when the reference does not (diagnosed); 4 when
 * no configuration does (3 if for want of a compiler). */
aotc_status tune_compile_only(const aotc_module *m, const kernel *k, const tune_options *o, diags *d);

#endif
