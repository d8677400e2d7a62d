/* The search replayed on a database measured exhaustively (bench/
 * search-sim.sh; `aotc __search-sim`): the schedule of tuner/schedule.h
 * asks for cells as in a tune, the answers come from the database, and the
 * cost of each is what measuring it took there (its samples plus its two
 * checked launches and a fixed overhead). Prints, for the search and for
 * every fraction of the exhaustive cost, how close the best found per shape
 * is to the database's best. No device, no compiler. */
#ifndef AOTC_SIMULATE_H
#define AOTC_SIMULATE_H

#include "status.h"
#include "db.h"
#include "ir.h"
#include "tune.h"

/* With out_dir, the cells the search measured are written there as a
 * database of the same name (for emitting from what the search would have
 * measured). 0, or 1 (3: cannot write) after a diagnostic. */
aotc_status tune_simulate(const kernel *k, const tune_db *db, const tune_options *o, const char *out_dir,
                  diags *d);

#endif
