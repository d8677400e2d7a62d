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

#endif
