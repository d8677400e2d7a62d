/* Shared by the two halves of the CUDA backend: nvrtc.c (the compile side,
 * any thread, no device) and driver.c (the device side, in the worker).
 * Neither libcuda nor libnvrtc is linked: both are dlopen'ed on first use,
 * so the same aotc binary runs (and compiles for the host backend) on a
 * machine without either. <cuda.h> and <nvrtc.h> supply only the types. */
#ifndef AOTC_CUDA_INTERNAL_H
#define AOTC_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda.h>
#include <nvrtc.h>

#include "backend.h"

/* The symbol of an AOTC_EXTERN routine's caller: a blob with it is a host
 * shared object (nvcc.c builds it), which load() dlopens, rather than a
 * CUBIN. It is int CUDA_EXTERN_ENTRY(void **args, void *stream, const char
 * **name, const char **text): the routine's cudaError_t, its name and text. */
#define CUDA_EXTERN_ENTRY "aotc_extern_entry"
typedef int cuda_extern_entry(void **args, void *stream, const char **name, const char **text);

/* "sm90" / "sm_90a" -> major 9, minor 0 (runtime/arch.c's table); false if
 * arch is not a CUDA architecture aotc knows. name (if non-NULL) gets
 * "sm_90a", the -arch spelling. */
bool cuda_parse_arch(const char *arch, int *major, int *minor, char *name, size_t n);

/* The NVRTC version; false (and *why, if non-NULL, the reason) when NVRTC
 * cannot be loaded. Thread-safe. */
bool cuda_nvrtc_version(int *major, int *minor, const char **why);

/* The compile side (nvrtc.c, nvcc.c; cuda.c chooses between them). */
const char *cuda_nvrtc_id(strbuf *err);    /* "nvrtc 13.0"; NULL: err says why */
const char *cuda_nvcc_id(strbuf *err);     /* "nvcc 13.0"; err may be NULL */
/* Whether NVRTC compiles the kernel file itself (no instance): false with
 * its log when the file has host headers or host code NVRTC rejects. */
bool cuda_nvrtc_takes(const rt_compile_request *file, bool aside, strbuf *log);
/* The suffix of the compiler's identity when NVRTC compiles the file's
 * device_source (its host code set aside), and whether compiler has it. */
#define CUDA_ASIDE ", host code set aside"
bool cuda_nvrtc_aside(const char *compiler);
rt_status cuda_nvrtc_compile(const rt_compile_request *req, rt_blob *out, strbuf *err);
rt_status cuda_nvcc_compile(const rt_compile_request *req, rt_blob *out, strbuf *err);
rt_status cuda_nvcc_compile_batch(const rt_compile_request *req, const char *const *instances, int n,
                                  rt_blob *out, char **symbols, strbuf *err);
/* A compile log ptxas ended by refusing a kernel's static shared memory
 * ("uses too much shared data (0x10100 bytes, 0xc000 max)"): true, with
 * log rewritten to say so in bytes (the variant is then `resources`). */
bool cuda_resource_error(strbuf *log);
const char *cuda_compiler_for(const rt_compile_request *file, strbuf *note, strbuf *err);
rt_status cuda_compile(const rt_compile_request *req, rt_blob *out, strbuf *err);

rt_status cuda_open(rt_device **out, const char *arch, int index, strbuf *err);
void cuda_close(rt_device *d);
void cuda_describe(rt_device *d, rt_device_info *info);
rt_status cuda_load(rt_device *d, const rt_blob *blob, rt_function **out, strbuf *err);
void cuda_unload(rt_device *d, rt_function *f);
rt_status cuda_alloc(rt_device *d, size_t bytes, rt_ptr *out, strbuf *err);
void cuda_release(rt_device *d, rt_ptr p);
rt_status cuda_upload(rt_device *d, rt_ptr dst, const void *src, size_t bytes, strbuf *err);
rt_status cuda_download(rt_device *d, void *dst, rt_ptr src, size_t bytes, strbuf *err);
rt_status cuda_copy(rt_device *d, rt_ptr dst, rt_ptr src, size_t bytes, strbuf *err);
rt_status cuda_launch(rt_device *d, rt_function *f, const rt_launch *dims, void **args,
                      double *ms, strbuf *err);
rt_status cuda_flush_cache(rt_device *d, strbuf *err);
rt_status cuda_memset8(rt_device *d, rt_ptr dst, uint8_t value, size_t bytes, strbuf *err);
rt_status cuda_fill_pattern(rt_device *d, rt_ptr dst, uint64_t seed, uint64_t offset, size_t bytes,
                            strbuf *err);
rt_status cuda_scan_pattern(rt_device *d, rt_ptr p, uint64_t seed, uint64_t offset, size_t bytes,
                            uint64_t *first, strbuf *err);
rt_status cuda_compare(rt_device *d, rt_ptr out, rt_ptr ref, aotc_dtype t, size_t count,
                       rt_compare *res, strbuf *err);
rt_status cuda_sync(rt_device *d, strbuf *err);
bool cuda_clocks(rt_device *d, rt_clocks *out);
/* NVML's clocks of the device at pci_bus_id ("00000000:3b:00.0"); false
 * when libnvidia-ml.so.1 is absent or does not know it (nvml.c). */
bool cuda_nvml_clocks(const char *pci_bus_id, rt_clocks *out);

#endif
