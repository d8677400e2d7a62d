/* aotc link (docs/spec.md §3, §4): one run-time dispatch over the per-architecture
 * outputs of aotc emit.
 *
 * Input: directories, each holding emitted CUDA files _aot_K_cuda_A.{c,h,cu}
 * (A = sm70, sm80, sm90, sm90a, sm100, sm120...; possibly several kernels K).
 * The .h is read for the select and launch declarations, the .cu for how it
 * names the kernel source; link needs neither the source nor a database. Every architecture
 * of one kernel must declare the same signatures.
 *
 * Output: -o FILE names the C file; its header and launcher go beside it with
 * the same stem (aot_sgemm.c, aot_sgemm.h, aot_sgemm.cu). For each kernel K,
 * with cc a compute capability as major * 10 + minor (90, 103, 120):
 *
 *   FILE.c   C99, only <stdint.h>/<stddef.h> and the per-arch headers (by
 *            paths relative to FILE's directory):
 *              int aot_K_cuda_num_archs(void), const char *aot_K_cuda_arch_at(int i)
 *              int aot_K_cuda_arch_for(int cc)       index, lowest arch first
 *              const char *aot_K_cuda_arch_name(int cc)   "sm90"
 *              int aot_K_cuda_select(int cc, <shape args as int64_t>)
 *              int aot_K_cuda_num_variants(int cc)
 *              const char *aot_K_cuda_variant_name(int cc, int v)
 *   FILE.cu  cudaError_t aot_K_cuda_launch(<kernel params>, cudaStream_t):
 *            the current device's compute capability (cached per device),
 *            then the chosen architecture's aot_K_cuda_A_launch. It
 *            includes the kernel source once (as the per-architecture .cu
 *            names it, by file name through the include path, or as
 *            --include-as says) and every architecture's
 *            .cu after it (their own include of the source is skipped
 *            under AOTC_LINKED), so it is the one CUDA file to build, with
 *            one -gencode per linked architecture: nothing the source
 *            defines (a reference kernel) is then defined twice
 *   FILE.h   declarations of both
 *   aotc.h   the runtime header's copy, as aotc emit writes it (emit.h), so
 *            -I <kernel dir> -I <FILE's dir> builds FILE.cu
 *
 * The choice: the highest linked architecture not newer than cc, else the
 * lowest. An "a" or "f" suffix counts as its number (sm90a is 90), so one
 * kernel may not link both sm90 and sm90a: they would claim the same
 * devices.
 *
 * Output is a pure function of the input files and the directory layout:
 * sorted by kernel, then architecture; no absolute paths, no timestamps. */
#ifndef AOTC_LINK_H
#define AOTC_LINK_H

#include "diag.h"

/* Returns 0; 2 for a usage error (-o not a plain FILE.c in a directory
 * that exists, no DIR); 1 after diagnostics (a directory without emitted
 * files or unreadable, the same kernel and architecture twice, names that
 * are not C identifiers, signatures that differ, an include_as given for
 * kernels from different sources); 3 when an output cannot be written.
 * include_as (may be NULL) replaces how FILE.cu includes the kernel
 * source. Nothing is written unless every input is good. Unless
 * d->quiet_warnings (--quiet), a line on stdout says what was linked. */
int link_dirs(const char *const *dirs, int ndirs, const char *out, const char *include_as,
              diags *d);

#endif
