/* Parsed ahead of every CUDA source when the real CUDA headers cannot be
 * used (no toolkit, or libclang older than 16): just enough of the CUDA
 * language for clang to parse kernels in host-only mode. Kernels that
 * include <cuda_runtime.h> or <cuda_fp16.h> need the real headers. */
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __restrict__ __restrict

typedef unsigned long size_t;
typedef struct { unsigned int x, y, z; } uint3;
typedef struct dim3 { unsigned int x, y, z; } dim3;
struct __aotc_builtin_vars { unsigned int x, y, z; };
extern const __device__ struct __aotc_builtin_vars threadIdx, blockIdx, blockDim, gridDim;
extern const __device__ int warpSize;

struct __attribute__((aligned(8))) float2 { float x, y; };
struct float3 { float x, y, z; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(16))) double2 { double x, y; };
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(8))) uint2 { unsigned x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
typedef struct float2 float2;
typedef struct float3 float3;
typedef struct float4 float4;
typedef struct double2 double2;
typedef struct int2 int2;
typedef struct int4 int4;
typedef struct uint2 uint2;
typedef struct uint4 uint4;

__device__ void __syncthreads(void);
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ void __threadfence(void);
__device__ float __shfl_sync(unsigned, float, int, int = 32);
__device__ int __shfl_sync(unsigned, int, int, int = 32);
__device__ float __shfl_xor_sync(unsigned, float, int, int = 32);
__device__ int __shfl_xor_sync(unsigned, int, int, int = 32);
__device__ float __shfl_down_sync(unsigned, float, unsigned, int = 32);
__device__ int __shfl_down_sync(unsigned, int, unsigned, int = 32);
__device__ float __shfl_up_sync(unsigned, float, unsigned, int = 32);
__device__ int __shfl_up_sync(unsigned, int, unsigned, int = 32);
__device__ float atomicAdd(float *, float);
__device__ int atomicAdd(int *, int);
__device__ unsigned atomicAdd(unsigned *, unsigned);
__device__ int atomicMax(int *, int);
__device__ int atomicMin(int *, int);
__host__ __device__ float expf(float);
__host__ __device__ float logf(float);
__host__ __device__ float sqrtf(float);
__host__ __device__ float rsqrtf(float);
__host__ __device__ float fmaxf(float, float);
__host__ __device__ float fminf(float, float);
__host__ __device__ float fabsf(float);
__host__ __device__ float fmaf(float, float, float);
__host__ __device__ double exp(double);
__host__ __device__ double sqrt(double);
__host__ __device__ double fabs(double);
__device__ float __expf(float);
__device__ float __logf(float);
__device__ float __fdividef(float, float);
__host__ __device__ int min(int, int);
__host__ __device__ int max(int, int);
