// A CUDA kernel tuned per data type (AOTC_TYPES): y = 2 x in float, __half
// and __nv_bfloat16, each type its own database, dispatch and launcher,
// against the host reference instantiated with the same type.
#include <aotc.h>
#if defined(__HIPCC__)
#include <hip/hip_fp16.h> // hipcc builds the float and __half launchers
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

template <class T, int BLOCK, int ITEMS>
AOTC_TYPES(T, float, __half, __nv_bfloat16)
AOTC_TUNE(BLOCK, 128, 256)
AOTC_TUNE(ITEMS, 1, 4)
AOTC_GRID(cdiv(n, BLOCK * ITEMS))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {1000, 65536, 1048576})
AOTC_REFERENCE(scale_ref)
__global__ void scale(int n, const T *__restrict__ x, T *__restrict__ y)
{
    int base = (blockIdx.x * BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        int j = base + i * BLOCK;
        if (j < n)
            y[j] = T(float(x[j]) * 2.0f);
    }
}

template <class T>
void scale_ref(int n, const T *x, T *y)
{
    for (int i = 0; i < n; ++i)
        y[i] = T(float(x[i]) * 2.0f);
}
