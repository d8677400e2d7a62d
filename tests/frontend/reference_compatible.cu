// AOTC_REFERENCE with pointer parameters that differ from the kernel's only in const (of
// the pointee or of the pointer) and __restrict__, and with other parameter names: the
// tuner passes the same arguments by position, so this is accepted. The reference's own
// annotations use its own parameter names (cols, rows), which the IR records.
#include <aotc.h>

AOTC_GRID(cdiv(cols, 16), cdiv(rows, 16))
AOTC_BLOCK(16, 16)
__global__ void sgemm_naive(const int rows, const int cols, int depth, float alpha,
                            const float *__restrict__ a, const float *const b, float beta,
                            float *__restrict__ c)
{
}

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(N, BM), cdiv(M, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, inout)
AOTC_VALUE(alpha, 1)
AOTC_VALUE(beta, 0)
AOTC_SHAPES(M = pow2(128, 1024), N = pow2(128, 1024), K = {128, 512})
AOTC_REFERENCE(sgemm_naive)
__global__ void sgemm(int M, int N, int K, float alpha, float *A, float *B, float beta,
                      float *C)
{
}
