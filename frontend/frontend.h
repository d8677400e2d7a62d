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

/* "clang version 16.0.6" as libclang reports it; static storage. */
const char *frontend_clang_version(void);

#endif
