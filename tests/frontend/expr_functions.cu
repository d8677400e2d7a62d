// Every expression function (cdiv, min, max, align, log2) and the ?: operator.
#include <aotc.h>

template <int BM, int SPLIT>
AOTC_TUNE(BM, 32, 64, 128)
AOTC_TUNE(SPLIT, 1, 4)
AOTC_REQUIRE(log2(BM) >= 5 && min(BM, 128) == BM)
AOTC_VALID_IF(max(M, N) >= BM ? SPLIT <= K / 64 : SPLIT == 1)
AOTC_GRID(cdiv(M, BM), min(cdiv(N, BM), 65535), SPLIT)
AOTC_BLOCK(BM > 64 ? 128 : max(BM, 64))
AOTC_SMEM(align(BM * 4 + 12, 128))
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(C, M * N, out)
AOTC_SHAPES(M = pow2(64, 4096), N = pow2(64, 4096), K = {64, 256, 1024})
AOTC_FEATURES(log2(M), cdiv(K, 64), M > N ? M / N : N / M)
__global__ void reduce_k(int M, int N, int K, const float *A, float *C) {}
