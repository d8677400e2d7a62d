/* The only part of aotc that knows libclang: turns an annotated CUDA or C++
 * source into IR (ir/ir.h). */
#ifndef AOTC_FRONTEND_H
#define AOTC_FRONTEND_H

#include "ir.h"

typedef struct frontend_options {
	const char *const *include_dirs; /* -I, in order */
	int ninclude_dirs;
	const char *const *defines;      /* -D NAME[=VALUE] */
	int ndefines;
	/* CUDA toolkit root for the real CUDA headers; NULL: $CUDA_PATH,
	 * $CUDA_HOME, then /usr/local/cuda. */
	const char *cuda_path;
	/* Show clang's errors inside system headers (otherwise ignored) as
	 * warnings. */
	bool verbose;
} frontend_options;

/* AOTC_FRONTEND is unset, empty, "auto" (the toolkit's CUDA headers where
 * libclang >= 16 reads them) or "shim" (aotc's own); false after an error
 * for any other value. */
bool frontend_env_ok(diags *d);

/* Parses path and returns its tuned kernels, or NULL after reporting every
 * error in the file to d (clang's own in the user's files, and the
 * annotations'); clang's errors inside system headers do not fail the
 * parse. .cu files are CUDA, .cpp/.cc/.cxx host C++. libclang runs in a
 * child process: one that crashes, or runs past $AOTC_PARSE_TIMEOUT seconds
 * (default 300; 0: no limit) and is killed, is one error naming the file.
 * Call it before starting threads (it forks). */
aotc_module *frontend_parse(const char *path, const frontend_options *opt, diags *d);

/* frontend_parse, also giving the files the source hash covers after path
 * itself: every non-system, non-virtual file the translation unit
 * included, in clang_getInclusions order, named as clang names them
 * (joined to the includer's folder or the -I folder as spelt, so relative
 * where those are). *files (NULL-ended; frontend_free_files) is NULL when
 * the parse failed or a name is not UTF-8. */
aotc_module *frontend_parse_files(const char *path, const frontend_options *opt, char ***files, diags *d);
void frontend_free_files(char **files);   /* accepts NULL */

/* The source hash as the parse computes it, without libclang: path's
 * bytes, then each of files' (n of them), each followed by a NUL byte,
 * through hash_hex. false when one is not a regular file that can be
 * read. */
bool frontend_hash_files(const char *path, const char *const *files, int n, char out[33]);

/* "clang version 16.0.6" as libclang reports it, into buf. */
#define FRONTEND_VERSION_MAX 128
void frontend_clang_version(char buf[FRONTEND_VERSION_MAX]);

/* The CUDA toolkit root whose headers a parse of path reads (NULL: a host
 * source, or none found: aotc's shim); static storage. */
const char *frontend_cuda_root(const char *path, const frontend_options *opt);

/* ---- The saved IR (frontend/saved_ir.c, docs/database.md) ----------------
 *
 * A parse kept in the file saved (tuner/dbset.h names it) with every input
 * of the parse that is not a system header: the source as named, the files
 * the source hash covers, the hash, the -D and -I options in order, the aotc
 * and libclang versions, AOTC_FRONTEND's mode and the CUDA root, and what
 * the parse said (warnings and notes). */

/* The module of path: the saved IR's when every input still matches (the
 * listed files re-read and hashed as the parse hashes them; nothing else
 * is parsed), what the parse said being said again to d (*reused true);
 * otherwise frontend_parse_files, then saved atomically when the parse
 * succeeded (not under opt->verbose when the parse said something, which
 * --verbose adds to). An absent, unreadable, corrupt, stale or hostile
 * saved IR is parsed again without a word; a folder that cannot be written
 * is no error (a note under opt->verbose, which also says "parsed" or
 * "reused the saved IR"). */
aotc_module *frontend_parse_saved(const char *path, const frontend_options *opt, const char *saved, bool *reused,
                                  diags *d);

#endif
