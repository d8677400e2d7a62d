/* Learn or load (docs/internals.md): the dispatch of a kernel for an
 * architecture from its databases under --db, learnt (tuner/dbset.h finds
 * and merges them, heuristics/ learns, heuristics/dispatch.c shapes the
 * result), or read back from the dispatch saved beside them when nothing
 * it was learnt from changed. emit, compile and __dispatch-check all get
 * their dispatch here. */
#ifndef AOTC_LEARN_H
#define AOTC_LEARN_H

#include "status.h"
#include <stdbool.h>

#include "arch.h"
#include "db.h"
#include "dispatch.h"
#include "heuristic.h"
#include "ir.h"

typedef struct learn_options {
	const char *db_dir;
	const arch_info *arch;
	const char *file;               /* the source as the user named it (messages) */
	const char *const *defines;     /* -D: they shape the IR the source hash does not cover */
	int ndefines;
	hoptions ho;                    /* every option that shapes learning */
	bool verbose;
} learn_options;

/* What learning had in hand, for callers that need more than the dispatch
 * (the codegen until it takes the dispatch alone). Owned: learnt_finish. */
typedef struct learnt {
	tune_db *db;                    /* merged */
	hmatrix hm;
	hresult r;
	hstats eval[SEL_COUNT];         /* on the aotc eval database's shapes ... */
	int neval;                      /* ... how many (0: none) */
} learnt;

void learnt_finish(learnt *l);      /* accepts one never filled */

/* The key of a saved dispatch (32 hex digits into key[33]): a hash over
 * DISPATCH_VERSION, the aotc version, the kernel's source hash and name,
 * the -D definitions, the architecture, every database file and journal of
 * the kernel in db_dir and its eval/ folder, names and bytes
 * (dbset_digest: no file is parsed), and o->ho. */
void dispatch_key(const aotc_module *m, const kernel *k, const learn_options *o, char key[33]);

/* Learns k's dispatch from its databases (docs/spec.md §7): what finding
 * them says goes to d and into dp->from.notes. Where keep is non-NULL it
 * receives the database, matrix and result (the caller finishes it).
 * Returns 0, or after a diagnostic 3 (no database, unreadable, not this
 * kernel's) or 4 (no variant ran correctly). */
aotc_status dispatch_learn(const aotc_module *m, const kernel *k, const learn_options *o, dispatch *dp, learnt *keep,
                   diags *d);

/* The saved dispatch (dbset_dispatch_path) when its key is dispatch_key's
 * and it fits k: no database is parsed, and what finding them said when it
 * was learnt is said again to d (*loaded true). Otherwise dispatch_learn,
 * then the dispatch is saved for next time (a folder that cannot be
 * written is no error: a note under o->verbose). keep: as dispatch_learn,
 * filled only when it learnt. Returns dispatch_learn's status. */
aotc_status dispatch_learn_or_load(const aotc_module *m, const kernel *k, const learn_options *o, dispatch *dp,
                           bool *loaded, learnt *keep, diags *d);

#endif
