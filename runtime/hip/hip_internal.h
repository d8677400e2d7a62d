/* Shared by the two halves of the ROCm backend: hip.c (the compile side,
 * hipcc, and the table) and device.c (the device side, in the worker, on
 * libamdhip64 loaded at run time, so that aotc runs where it is absent).
 * No HIP header is needed to build either. */
#ifndef AOTC_HIP_INTERNAL_H
#define AOTC_HIP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* The device side (device.c): rt_ops' device entries. seal is NULL (a HIP
 * allocation cannot be made read-only). */
rt_status hip_open(rt_device **out, const char *arch, int index, strbuf *err);
void hip_close(rt_device *d);
void hip_describe(rt_device *d, rt_device_info *info);
rt_status hip_load(rt_device *d, const rt_blob *blob, rt_function **out, strbuf *err);
void hip_unload(rt_device *d, rt_function *f);
rt_status hip_alloc(rt_device *d, size_t bytes, rt_ptr *out, strbuf *err);
void hip_release(rt_device *d, rt_ptr p);
rt_status hip_upload(rt_device *d, rt_ptr dst, const void *src, size_t bytes, strbuf *err);
rt_status hip_download(rt_device *d, void *dst, rt_ptr src, size_t bytes, strbuf *err);
rt_status hip_copy(rt_device *d, rt_ptr dst, rt_ptr src, size_t bytes, strbuf *err);
rt_status hip_launch(rt_device *d, rt_function *f, const rt_launch *dims, void **args, double *ms,
                     strbuf *err);
rt_status hip_memset8(rt_device *d, rt_ptr dst, uint8_t value, size_t bytes, strbuf *err);
rt_status hip_fill_pattern(rt_device *d, rt_ptr dst, uint64_t seed, uint64_t offset, size_t bytes,
                           strbuf *err);
rt_status hip_scan_pattern(rt_device *d, rt_ptr p, uint64_t seed, uint64_t offset, size_t bytes,
                           uint64_t *first, strbuf *err);
rt_status hip_compare(rt_device *d, rt_ptr out, rt_ptr ref, aotc_dtype t, size_t count,
                      rt_compare *res, strbuf *err);
rt_status hip_flush_cache(rt_device *d, strbuf *err);
rt_status hip_sync(rt_device *d, strbuf *err);

/* The ABI device.c relies on, written down once (tests/runtime's stand-in
 * checks the ROCm 5 values against <hip/hip_runtime_api.h> where it is
 * installed). hipError_t codes, hipDeviceAttribute_t values and the
 * hipFunction_attribute/hipFuncAttribute values below are the same in
 * ROCm 5.x and 6.x (the attribute enum was reordered once, in ROCm 5.0;
 * aotc needs 5.0 or later). gcnArchName is only in hipDeviceProp_t, whose
 * layout changed in 6.0: a library that exports
 * hipGetDevicePropertiesR0600 fills the 6.x layout, one that exports only
 * hipGetDeviceProperties (5.x, or 6.x's legacy R0000 entry point) the 5.x
 * one. Only the offset of gcnArchName is read; the library writes into a
 * buffer larger than either struct. */
enum {
	HIP_PROPS_R0000_ARCH_NAME = 396,  /* 5.x: sizeof 792 */
	HIP_PROPS_R0600_ARCH_NAME = 1160, /* 6.x: sizeof 1472 */
	HIP_PROPS_BUFFER = 4096,
};

enum {
	HIP_E_SUCCESS = 0,
	HIP_E_INVALID_VALUE = 1,
	HIP_E_OUT_OF_MEMORY = 2,
	HIP_E_NOT_INITIALIZED = 3,
	HIP_E_DEINITIALIZED = 4,
	HIP_E_INVALID_CONFIGURATION = 9,
	HIP_E_INSUFFICIENT_DRIVER = 35,
	HIP_E_INVALID_DEVICE_FUNCTION = 98,
	HIP_E_NO_DEVICE = 100,
	HIP_E_INVALID_DEVICE = 101,
	HIP_E_INVALID_IMAGE = 200,
	HIP_E_NO_BINARY_FOR_GPU = 209,
	HIP_E_ECC_NOT_CORRECTABLE = 214,
	HIP_E_INVALID_KERNEL_FILE = 218,
	HIP_E_NOT_FOUND = 500,
	HIP_E_ILLEGAL_ADDRESS = 700,
	HIP_E_LAUNCH_OUT_OF_RESOURCES = 701,
	HIP_E_LAUNCH_TIMEOUT = 702,
	HIP_E_ASSERT = 710,
	HIP_E_LAUNCH_FAILURE = 719,
	HIP_E_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
};

enum {
	HIP_ATTR_CLOCK_RATE = 5,          /* kHz */
	HIP_ATTR_L2_CACHE_SIZE = 19,
	HIP_ATTR_MAX_BLOCK_DIM_X = 26,    /* Y, Z follow */
	HIP_ATTR_MAX_GRID_DIM_X = 29,     /* Y, Z follow */
	HIP_ATTR_MAX_THREADS_PER_BLOCK = 56,
	HIP_ATTR_MULTIPROCESSOR_COUNT = 63,
	HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 74,
	HIP_ATTR_SHARED_MEM_PER_BLOCK_OPTIN = 75,
};

enum {
	HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK = 0, /* hipFuncGetAttribute */
	HIP_FUNC_ATTR_SHARED_SIZE_BYTES = 1,
	HIP_FUNC_ATTR_MAX_DYNAMIC_SHARED = 8, /* hipFuncSetAttribute */
	HIP_STREAM_NON_BLOCKING = 1,
	HIP_EVENT_DEFAULT = 0,
};

#endif
