// AOTC_FEATURES with product, modulo test and a bare shape argument.
#include <aotc.h>

template <int BM, int BK>
AOTC_TUNE(BM, 32, 64)
AOTC_TUNE(BK, 8, 16)
AOTC_GRID(cdiv(M, BM), cdiv(N, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, out)
AOTC_SHAPES(M = pow2(64, 2048), N = pow2(64, 2048), K = {24, 64, 250})
AOTC_FEATURES(M * N, K % 8 == 0, K, M * N * K / (M + N))
__global__ void mm(int M, int N, int K, const float *A, const float *B, float *C) {}
