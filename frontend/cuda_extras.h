/* Parsed after the CUDA headers (from the command line, behind clang's own
 * CUDA wrapper or aotc's shim): what nvcc declares and clang's CUDA headers
 * lack, so that kernels using it parse. Declarations only: the frontend
 * reads the kernels, nvcc and NVRTC compile them with NVIDIA's own headers.
 * Templates cover every element type nvcc provides (and more: a parser
 * need not refuse what nvcc would); the exact overloads of the CUDA headers
 * (__half, __nv_bfloat16) are preferred where they exist. */
#ifndef AOTC_CUDA_EXTRAS_H
#define AOTC_CUDA_EXTRAS_H

template <class T> struct __aotc_same { typedef T type; };

/* Cache-hint loads and stores (CUDA C++ Programming Guide, "Load
 * Functions Using Cache Hints"); clang declares only __ldg. */
template <class T> __device__ T __ldg(const T *);
template <class T> __device__ T __ldcg(const T *);
template <class T> __device__ T __ldca(const T *);
template <class T> __device__ T __ldcs(const T *);
template <class T> __device__ T __ldlu(const T *);
template <class T> __device__ T __ldcv(const T *);
template <class T> __device__ void __stwb(T *, typename __aotc_same<T>::type);
template <class T> __device__ void __stcg(T *, typename __aotc_same<T>::type);
template <class T> __device__ void __stcs(T *, typename __aotc_same<T>::type);
template <class T> __device__ void __stwt(T *, typename __aotc_same<T>::type);

/* Warp reductions (sm_80). */
__device__ unsigned __reduce_add_sync(unsigned, unsigned);
__device__ int __reduce_add_sync(unsigned, int);
__device__ unsigned __reduce_min_sync(unsigned, unsigned);
__device__ int __reduce_min_sync(unsigned, int);
__device__ unsigned __reduce_max_sync(unsigned, unsigned);
__device__ int __reduce_max_sync(unsigned, int);
__device__ unsigned __reduce_and_sync(unsigned, unsigned);
__device__ unsigned __reduce_or_sync(unsigned, unsigned);
__device__ unsigned __reduce_xor_sync(unsigned, unsigned);

/* Thread block clusters (sm_90). */
__device__ bool __isClusterShared(const void *);
__device__ void *__cluster_map_shared_rank(void *, unsigned);
__device__ const void *__cluster_map_shared_rank(const void *, unsigned);
__device__ unsigned __cluster_query_shared_rank(const void *);
__device__ unsigned __cluster_map_shared_multicast(const void *, unsigned);
__device__ void __cluster_barrier_arrive(void);
__device__ void __cluster_barrier_arrive_relaxed(void);
__device__ void __cluster_barrier_wait(void);

/* Paired float arithmetic (sm_100). */
#define AOTC_FLOAT2_OPS_(r)                                                    \
	__device__ float2 __fadd2_##r(float2, float2);                          \
	__device__ float2 __fmul2_##r(float2, float2);                          \
	__device__ float2 __ffma2_##r(float2, float2, float2);
AOTC_FLOAT2_OPS_(rn)
AOTC_FLOAT2_OPS_(rz)
AOTC_FLOAT2_OPS_(ru)
AOTC_FLOAT2_OPS_(rd)
#undef AOTC_FLOAT2_OPS_

#endif
