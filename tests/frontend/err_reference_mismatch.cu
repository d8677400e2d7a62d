// AOTC_REFERENCE whose parameters really differ: the error names the first parameter that
// differs and both types, with a note at the reference. Expect 2 errors: sgemm_naive's
// parameter 3 is float where sgemm takes int; scale_naive takes one parameter fewer.
#include <aotc.h>

AOTC_GRID(cdiv(N, 16), cdiv(M, 16))
AOTC_BLOCK(16, 16)
__global__ void sgemm_naive(int M, int N, float K, const float *A, float *C) {}

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(N, BM), cdiv(M, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(C, M * N, out)
AOTC_SHAPES(M = pow2(128, 1024), N = pow2(128, 1024), K = {128, 512})
AOTC_REFERENCE(sgemm_naive)
__global__ void sgemm(int M, int N, int K, float *A, float *C) {}

AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
__global__ void scale_naive(int n, const float *x) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(scale_naive)
__global__ void scale(int n, const float *x, float *y) {}
