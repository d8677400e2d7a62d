/* Emission of the standalone sources (SPEC §8): for kernel K and
 * architecture tag T (cuda_sm90, host),
 *
 *   _aot_K_T.c    C99, only <stdint.h>/<stddef.h>: select(), the variant
 *                 table, launch_dims(); every expression in checked 64-bit
 *                 arithmetic, as ir/expr.c evaluates it
 *   _aot_K_T.cu   (CUDA) the selected instantiations and the launcher
 *   _aot_K_T.cpp  (host) the same for a host kernel
 *   _aot_K_T.h    declarations of both
 *
 * Output is a pure function of the IR, the database and the heuristic: no
 * timestamps, no paths of this machine beyond the kernel's include. */
#ifndef AOTC_EMIT_H
#define AOTC_EMIT_H

#include "db.h"
#include "heuristic.h"
#include "ir.h"

typedef struct emit_input {
	const aotc_module *m;
	const kernel *k;
	const char *arch;          /* "sm90", "host" */
	const tune_db *db;
	const hmatrix *hm;         /* from db and k */
	const hresult *hr;         /* the heuristic on hm */
	const char *out_dir;
} emit_input;

/* "cuda_sm90", "host", "rocm_gfx90a" into buf. */
void emit_arch_tag(const char *arch, char *buf, size_t n);

/* Writes the files (each atomically). Returns 0, or 1 after a diagnostic
 * (a name that is not a C identifier), or 3 when a file cannot be
 * written. */
int emit_files(const emit_input *in, diags *d);

#endif
