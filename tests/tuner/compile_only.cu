// aotc tune --compile-only: four configurations, one of which fails to
// compile (a static_assert, as real templates reject tile shapes), and a
// reference. -DBREAK_REFERENCE breaks the reference; -DBREAK_ALL every
// variant.
#include <aotc.h>

template <int TILE, int UNROLL>
AOTC_TUNE(TILE, 64, 128)
AOTC_TUNE(UNROLL, 1, 3)
AOTC_GRID(cdiv(n, TILE))
AOTC_BLOCK(TILE)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {1000, 4096})
AOTC_REFERENCE(scale_ref)
__global__ void scale(int n, const float *x, float *y)
{
    static_assert(!(TILE == 128 && UNROLL == 3), "TILE 128 cannot unroll 3");
#ifdef BREAK_ALL
    static_assert(TILE < 0, "no variant compiles");
#endif
    const int i = blockIdx.x * TILE + threadIdx.x;
#pragma unroll UNROLL
    for (int r = 0; r < 1; ++r)
        if (i < n)
            y[i] = 2.0f * x[i];
}

AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
__global__ void scale_ref(int n, const float *x, float *y)
{
#if defined(BREAK_REFERENCE) && !defined(__AOTC__) // the parser does not see it
    this is not C++;
#endif
    const int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n)
        y[i] = 2.0f * x[i];
}
