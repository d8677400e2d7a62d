// Buffer role must be in, out or inout. Expect 1 error at BUFFER(A, M, sideways): bad role.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(M, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(A, M, sideways)
AOTC_BUFFER(B, M, out)
AOTC_SHAPES(M = pow2(1024, 4096))
__global__ void k(int M, const float *A, float *B) {}
