// The SPEC §2 sgemm example verbatim (declaration only), with the sgemm_naive it references.
#include <aotc.h>

AOTC_GRID(cdiv(N, 16), cdiv(M, 16))
AOTC_BLOCK(16, 16)
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A,
                            const float *B, float beta, float *C);

template <int BM, int BN, int BK, int TM, int TN>
AOTC_TUNE(BM, 64, 128)
AOTC_TUNE(BN, 64, 128)
AOTC_TUNE(BK, 8, 16)
AOTC_TUNE(TM, 4, 8)
AOTC_TUNE(TN, 4, 8)
AOTC_REQUIRE((BM * BN) / (TM * TN) <= 1024)
AOTC_VALID_IF(K % 4 == 0)
AOTC_GRID(cdiv(N, BN), cdiv(M, BM))
AOTC_BLOCK((BM * BN) / (TM * TN))
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, inout)
AOTC_VALUE(alpha, 1)
AOTC_VALUE(beta, 0)
AOTC_SHAPES(M = pow2(128, 4096), N = pow2(128, 4096), K = {256, 1024, 4096})
AOTC_REFERENCE(sgemm_naive)
__global__ void sgemm(int M, int N, int K, float alpha, const float *A,
                      const float *B, float beta, float *C);
