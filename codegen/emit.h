/* Emission of the standalone sources (docs/spec.md §8): for kernel K and
 * architecture tag T (cuda_sm90, host),
 *
 *   _aot_K_T.c    C99, only <stdint.h>/<stddef.h>: select() as a short tree over
 *                 named features, the variant and leaf-order tables,
 *                 launch_dims(); expressions as ir/expr.c evaluates them,
 *                 checked only where they can fail (codegen/cexpr.h)
 *   _aot_K_T.cu   (CUDA) the selected instantiations and the launcher
 *   _aot_K_T.cpp  (host) the same for a host kernel
 *   _aot_K_T.h    declarations of both
 *   _aot_K_T.json the manifest: what the files are and declare, for aotc
 *                 link and build systems (docs/cli.md, "The manifest")
 *   aotc.h        a copy of the runtime header, so that the kernel source's
 *                 #include <aotc.h> needs nothing installed
 *
 * The launcher includes the kernel by its file name (or --include-as), so
 * `-I <kernel dir> -I <output dir>` builds the output wherever it is.
 * Output is a pure function of the IR and the dispatch: no timestamps, no
 * paths of this machine (comments name the source by its base name, see
 * source_name in text.h). */
#ifndef AOTC_EMIT_H
#define AOTC_EMIT_H

#include "status.h"
#include "arch.h"
#include "dispatch.h"
#include "ir.h"

/* The manifest's "aotc_manifest": raised when a reader of the old format
 * would misread the new one. */
#define AOTC_MANIFEST_VERSION 1

typedef struct emit_input {
	const aotc_module *m;
	const kernel *k;
	const arch_info *arch;     /* --arch */
	const dispatch *dp;        /* what select() decides (heuristics/dispatch.h), built with k */
	const char *out_dir;
	const char *include_as;    /* what the launcher's #include names; NULL: the file name */
} emit_input;

/* A codegen target (one per arch_kind): what the launcher and its header
 * say differently for CUDA, HIP and the host. aotc link writes its
 * launcher with the same names. Static tables, never freed. */
typedef struct emit_target {
	const char *launcher_ext;   /* "cu", "hip", "cpp" */
	bool device;                /* grid, block, shared memory and a stream */
	const char *error_t;        /* what the launcher returns */
	const char *ok, *invalid;   /* success; no valid variant */
	const char *stream_t;
	const char *last_error;     /* after a launch */
	const char *smem_attr;      /* opting a kernel (%.*s) in to more dynamic shared memory */
	const char *have_runtime;   /* when the header declares the launcher */
	const char *limits_note;    /* after the CUDA launch limits in the dispatch's comment */
	const char *prelude;        /* the launcher's first include: what its compiler does not add */
	bool cuda_routines;         /* a __global__ kernel's AOTC_EXTERNs (CUDA routines, which
	                               the kernel file must leave out elsewhere) are linked */
	const char *half_header;    /* what declares half and bfloat16 element types, for */
	const char *bf16_header;    /* a header read without the kernel file */
} emit_target;

const emit_target *emit_target_of(arch_kind kind);

struct out;

/* What a header of t's launchers includes before its extern "C" block when
 * they take half or bfloat16 buffers: the C++ headers declaring those
 * types, under t's runtime guard (emit's headers and aotc link's). Returns
 * whether it wrote any. */
bool emit_type_headers(struct out *o, const emit_target *t, bool half, bool bf16);

/* The C++ launcher named without the type of AOTC_TYPES, which the buffers'
 * types pick among the overloads of every type's header:
 * `static inline <t's error type> name(params) { return callee(args); }`
 * under __cplusplus and, for a device target, its runtime guard. */
void emit_type_overload(struct out *o, const emit_target *t, const char *name, const char *params,
                        const char *callee, const char *const *args, int nargs);

/* "cuda_sm90", "host", "rocm_gfx90a" into buf. */
void emit_arch_tag(const arch_info *arch, char *buf, size_t n);

/* The launcher's file extension for --arch: "cu", "hip" or "cpp". */
const char *emit_launcher_ext(const arch_info *arch);

/* The copy of aotc.h for directory dir: it begins with a line saying aotc
 * wrote it, then the runtime header's bytes. Returns 1 with *text (malloc'd)
 * and *len when dir/aotc.h must be written (absent, or an earlier copy
 * aotc wrote); 0 when it already holds this copy or the runtime header
 * itself (left as it is); -1 after a diagnostic when it is some other file
 * (never overwritten) or cannot be read. */
aotc_status emit_header_copy(const char *dir, char **text, size_t *len, diags *d);

/* Writes the files as one set (codegen/outdir.h: unchanged files left
 * alone, the rest moved into place together, the manifest last), each
 * carrying the set hash: the header's macro, the dispatch's symbol, the
 * launcher's use of it, the manifest's "set". Returns 0, or 1 after a diagnostic (a name that is not a C identifier, an
 * include that cannot be written, a name the manifest cannot hold), or 3 when a file cannot be written or
 * a foreign aotc.h is in the way. */
aotc_status emit_files(const emit_input *in, diags *d);

#endif
