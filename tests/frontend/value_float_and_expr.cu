// AOTC_VALUE: floating literals (plain, exponent) for float/double; integer expressions over shape args.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(M, BM), N)
AOTC_BLOCK(BM)
AOTC_BUFFER(A, M * lda, in)
AOTC_BUFFER(B, M * ldb, inout)
AOTC_VALUE(alpha, 0.5)
AOTC_VALUE(beta, 1.5e-3)
AOTC_VALUE(lda, K)
AOTC_VALUE(ldb, align(N, 32))
AOTC_VALUE(flags, 3)
AOTC_SHAPES(M = pow2(64, 1024), N = pow2(64, 1024), K = {128, 512})
__global__ void axpby(int M, int N, int K, float alpha, const float *A, int lda,
                      double beta, float *B, int ldb, unsigned flags) {}
