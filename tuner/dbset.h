/* The one home of every file name under --db (docs/database.md): a kernel's
 * databases, their shards and journals, the aotc eval databases, the saved
 * dispatch; and finding and merging the databases of a kernel for an
 * architecture (docs/spec.md §6). Nothing else builds or globs these names.
 *
 *   <dir>/<kernel>.<hardware id>.json                one machine's measurements
 *   <dir>/<kernel>.<hardware id>.shardIofN.json      part I of N (--shard I/N)
 *   <file>.journal, <file>.lock                      beside each (tuner/db.h)
 *   <dir>/superseded/<database file name>           measurements of other code (db_key)
 *   <dir>/eval/<kernel>.<hardware id>.json           aotc eval's held-out shapes
 *   <dir>/dispatch/<kernel>.<arch>.json              the saved dispatch
 *   <dir>/dispatch/<source file name>.ir.json        the saved IR (frontend.h)
 *
 * Every path returned is malloc'd (the caller frees it). */
#ifndef AOTC_DBSET_H
#define AOTC_DBSET_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "db.h"
#include "diag.h"
#include "ir.h"

/* A database's file: shard I of N when nshards > 1, else the whole. */
char *dbset_db_path(const char *dir, const char *kernel, const char *hardware_id, int shard, int nshards);

/* "<db folder>/superseded/<db file name>": the measurements a tune set
 * aside because their code changed (tuner/db.h, db_key), in a folder of
 * its own so that no glob of the databases takes it for one. */
char *dbset_superseded_path(const char *db_path);

/* The key of k's measurements (tuner/db.h): each configuration's function's
 * kernel.code (the kernel's, an alternative's or a routine's), borrowed
 * from k. compiler and superseded_path are left NULL. */
db_key dbset_key(const kernel *k);

/* "<db path>.journal" and "<db path>.lock". */
char *dbset_journal_path(const char *db_path);
char *dbset_lock_path(const char *db_path);

/* Where aotc eval keeps its held-out databases for the databases in dir
 * ("<dir>/eval"), and the one for a kernel's hardware id there: the same
 * for every shard of a set, so a sharded set and its merge share one. */
char *dbset_eval_dir(const char *dir);
char *dbset_eval_path(const char *dir, const char *kernel, const char *hardware_id);

/* The folder of a database file (".": none named). */
char *dbset_dir_of(const char *db_path);

/* "<dir>/dispatch/<kernel>.<arch>.json" (heuristics/dispatch.h): in a
 * folder of its own, so that no glob of the databases takes it for one. */
char *dbset_dispatch_path(const char *dir, const char *kernel, const arch_info *arch);

/* "<dir>/dispatch/<file name of source>.ir.json": the saved IR of a kernel
 * source (frontend/frontend.h, frontend_parse_saved), beside the saved
 * dispatches; "softmax.cu.ir.json" is no "<kernel>.<arch>.json", a kernel
 * name having no dot. */
char *dbset_ir_path(const char *dir, const char *source);

/* The source a database names (db->source: as given to aotc tune, relative
 * to where it ran) as it stands, else relative to the database's folder or
 * one of the three above it (a database kept in <project>/templates/ that
 * says templates/k.cu); NULL when none is readable. */
char *dbset_find_source(const char *source, const char *db_path);

/* The --db folder of a saved dispatch's path (its folder's folder). */
char *dbset_db_dir_of_dispatch(const char *dispatch_path);

/* The files in dir that may be databases of kernel, any hardware: every
 * "<kernel>.*.json", sorted by name (path order). A
 * file that is JSON but no database (a shapes list) is among them;
 * dbset_load skips it. Returns how many; *paths (NULL-ended) is freed
 * with dbset_free_paths. */
int dbset_list(const char *dir, const char *kernel, char ***paths);
void dbset_free_paths(char **paths);

/* The databases of kernel for arch in dir, merged (docs/spec.md §6: shards
 * and machines merge; a cell measured in several keeps the first, in path
 * order), and how many (*nmerged, may be NULL). Says what it sees to d: a
 * warning when the merged matrix is incomplete because a tune stopped
 * early or a shard is missing, a note when a finished model search left
 * cells unmeasured, the loader's warnings for this architecture's files.
 * Only measurements of the code k has now count (db_drop_stale: a warning
 * names the functions whose measurements were left out); cells measured in
 * two files are compared, and a warning names the machines where they
 * differ by more than their noise. NULL (diagnosed) when there is none
 * (naming a journal left alone, and `aotc tune file --arch arch`, file
 * being the source as the user named it), when one cannot be read, has no
 * measurement of the current code, was measured on another hardware id
 * than another (naming both files and ids), or names other tunables. */
tune_db *dbset_load(const char *dir, const kernel *k, const arch_info *arch, const char *source_hash,
                    const char *file, int *nmerged, diags *d);

/* A 128-bit digest (32 hex digits into out[33]) of everything dbset_load
 * and the eval figures read for kernel in dir, without parsing any of it:
 * the names and bytes of every dbset_list file and of its journal, and of
 * every held-out database of kernel under dbset_eval_dir. Any change to
 * one of them changes it. Unreadable files count by name only (dbset_load
 * then fails anyway). */
void dbset_digest(const char *dir, const char *kernel, char out[33]);

#endif
