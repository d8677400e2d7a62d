/* Built into the stand-in libamdhip64 (fake_amdhip64.c): the ROCm 5 ABI
 * runtime/hip/device.c assumes (hip_internal.h), checked at compile time
 * against ROCm's own header where it is installed (Debian:
 * libamdhip64-dev). ROCm 6's hipDeviceProp_tR0600 offset cannot be checked
 * here; hip_internal.h says where it comes from. */
#include "hip_internal.h"

#if defined(__has_include) && __has_include(<hip/hip_runtime_api.h>)
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <stddef.h>

/* Across enum types: -Wenum-compare. */
#define SAME(a, b) ((int)(a) == (int)(b))

_Static_assert(offsetof(hipDeviceProp_t, gcnArchName) == HIP_PROPS_R0000_ARCH_NAME, "gcnArchName");
_Static_assert(sizeof(hipDeviceProp_t) <= HIP_PROPS_BUFFER, "hipDeviceProp_t's size");
_Static_assert(SAME(hipErrorIllegalAddress, HIP_E_ILLEGAL_ADDRESS) && SAME(hipErrorLaunchFailure, HIP_E_LAUNCH_FAILURE) &&
               SAME(hipErrorLaunchOutOfResources, HIP_E_LAUNCH_OUT_OF_RESOURCES) &&
               SAME(hipErrorInvalidValue, HIP_E_INVALID_VALUE) && SAME(hipErrorOutOfMemory, HIP_E_OUT_OF_MEMORY) &&
               SAME(hipErrorNoDevice, HIP_E_NO_DEVICE) && SAME(hipErrorInvalidDevice, HIP_E_INVALID_DEVICE) &&
               SAME(hipErrorNotFound, HIP_E_NOT_FOUND) && SAME(hipErrorNotInitialized, HIP_E_NOT_INITIALIZED) &&
               SAME(hipErrorDeinitialized, HIP_E_DEINITIALIZED) && SAME(hipErrorAssert, HIP_E_ASSERT) &&
               SAME(hipErrorLaunchTimeOut, HIP_E_LAUNCH_TIMEOUT) &&
               SAME(hipErrorInvalidConfiguration, HIP_E_INVALID_CONFIGURATION) &&
               SAME(hipErrorInsufficientDriver, HIP_E_INSUFFICIENT_DRIVER) &&
               SAME(hipErrorInvalidImage, HIP_E_INVALID_IMAGE) &&
               SAME(hipErrorECCNotCorrectable, HIP_E_ECC_NOT_CORRECTABLE) &&
               SAME(hipErrorCooperativeLaunchTooLarge, HIP_E_COOPERATIVE_LAUNCH_TOO_LARGE),
               "hipError_t");
_Static_assert(SAME(hipDeviceAttributeClockRate, HIP_ATTR_CLOCK_RATE) &&
               SAME(hipDeviceAttributeL2CacheSize, HIP_ATTR_L2_CACHE_SIZE) &&
               SAME(hipDeviceAttributeMaxBlockDimX, HIP_ATTR_MAX_BLOCK_DIM_X) &&
               SAME(hipDeviceAttributeMaxBlockDimZ, HIP_ATTR_MAX_BLOCK_DIM_X + 2) &&
               SAME(hipDeviceAttributeMaxGridDimX, HIP_ATTR_MAX_GRID_DIM_X) &&
               SAME(hipDeviceAttributeMaxGridDimZ, HIP_ATTR_MAX_GRID_DIM_X + 2) &&
               SAME(hipDeviceAttributeMaxThreadsPerBlock, HIP_ATTR_MAX_THREADS_PER_BLOCK) &&
               SAME(hipDeviceAttributeMultiprocessorCount, HIP_ATTR_MULTIPROCESSOR_COUNT) &&
               SAME(hipDeviceAttributeMaxSharedMemoryPerBlock, HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK) &&
               SAME(hipDeviceAttributeSharedMemPerBlockOptin, HIP_ATTR_SHARED_MEM_PER_BLOCK_OPTIN),
               "hipDeviceAttribute_t");
_Static_assert(SAME(HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK) &&
               SAME(HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, HIP_FUNC_ATTR_SHARED_SIZE_BYTES) &&
               SAME(hipFuncAttributeMaxDynamicSharedMemorySize, HIP_FUNC_ATTR_MAX_DYNAMIC_SHARED) &&
               SAME(hipStreamNonBlocking, HIP_STREAM_NON_BLOCKING) && SAME(hipEventDefault, HIP_EVENT_DEFAULT),
               "function attributes, flags");
#endif

/* A translation unit is never empty. */
int aotc_hip_abi_checked(void);
int aotc_hip_abi_checked(void) { return 1; }
