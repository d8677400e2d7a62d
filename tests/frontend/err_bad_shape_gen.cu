// Bad shape generators. Expect 4 errors: 'pow2(0, 8)' (lo must be a positive power of two),
// 'range(1, 10, 0)' (step 0), '{}' (empty list), 'normal(1, 8)' (unknown generator).
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(M * N, BM), K, L)
AOTC_BLOCK(BM)
AOTC_BUFFER(x, M * N * K * L, inout)
AOTC_SHAPES(M = pow2(0, 8), N = range(1, 10, 0), K = {}, L = normal(1, 8))
__global__ void k(int M, int N, int K, int L, float *x) {}
