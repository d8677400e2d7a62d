/* aotc link (docs/spec.md §3, §4; docs/cli.md): one run-time dispatch over
 * the per-architecture outputs of aotc emit.
 *
 * Input: directories, each holding emitted files with their manifests,
 * _aot_K_cuda_A.json or _aot_K_rocm_A.json (A = sm80, sm90, sm90a, sm100,
 * ...; gfx90a, gfx942, ...; possibly several kernels K). Only the manifests
 * are read (never the C): the signatures, the kernel source as the
 * launcher includes it, the hardware and libraries; link needs neither the
 * source nor a database. Every architecture of one kernel must declare the
 * same signatures, and all manifests of one link be of one platform.
 *
 * Output: -o FILE names the C file; its header and launcher go beside it with
 * the same stem (aot_sgemm.c, aot_sgemm.h, aot_sgemm.cu or .hip). For each
 * kernel K, with T the platform (cuda, rocm) and N the device's architecture
 * number (runtime/arch.c's order: CUDA's compute capability as major * 10 +
 * minor, 90; ROCm's gfx number, the gfx name's digits read as hex, 0x90a):
 *
 *   FILE.c   C99, only <stdint.h>/<stddef.h> and the per-arch headers (by
 *            paths relative to FILE's directory):
 *              int aot_K_T_num_archs(void), const char *aot_K_T_arch_at(int i)
 *              int aot_K_T_arch_for(int N)         index, lowest arch first
 *              const char *aot_K_T_arch_name(int N)   "sm90", "gfx90a"
 *              int aot_K_T_select(int N, <shape args as int64_t>)
 *              int aot_K_T_num_variants(int N)
 *              const char *aot_K_T_variant_name(int N, int v)
 *   FILE.cu  cudaError_t aot_K_cuda_launch(<kernel params>, cudaStream_t), or
 *   FILE.hip hipError_t aot_K_rocm_launch(<kernel params>, hipStream_t):
 *            the current device's N (cached per device), then the chosen
 *            architecture's aot_K_T_A_launch. It includes the kernel source
 *            once (as the manifests name it, or as --include-as says) and
 *            every architecture's launcher after it (their own include of
 *            the source is skipped under AOTC_LINKED), so it is the one
 *            device file to build, with one -gencode (--offload-arch) per
 *            linked architecture: nothing the source defines (a reference
 *            kernel) is then defined twice
 *   FILE.h   declarations of both
 *   aotc.h   the runtime header's copy, as aotc emit writes it (emit.h), so
 *            -I <kernel dir> -I <FILE's dir> builds the launcher
 *
 * The choice: the highest linked architecture not newer than N, else the
 * lowest. An "a" or "f" suffix counts as its number (sm90a is 90), so one
 * kernel may not link both sm90 and sm90a: they would claim the same
 * devices.
 *
 * Output is a pure function of the input files and the directory layout:
 * sorted by kernel, then architecture; no absolute paths, no timestamps. */
#ifndef AOTC_LINK_H
#define AOTC_LINK_H

#include "status.h"
#include "diag.h"

/* Returns 0; 2 for a usage error (-o not a plain FILE.c in a directory
 * that exists, no DIR); 1 after diagnostics, all of them (a directory
 * without manifests or unreadable, a manifest that is not JSON, of a newer
 * format or with a bad field, a file missing beside it, CUDA and ROCm
 * manifests, a directory of host kernels' only (beside GPU ones they are
 * left out), the same kernel and architecture number twice,
 * signatures that differ, an include_as given for kernels from different
 * sources); 3 when an output cannot be written.
 * include_as (may be NULL) replaces how FILE.cu includes the kernel
 * source. Nothing is written unless every input is good. Unless
 * d->quiet_warnings (--quiet), a line on stdout says what was linked. */
aotc_status link_dirs(const char *const *dirs, int ndirs, const char *out, const char *include_as,
              diags *d);

#endif
