// Annotation order does not matter: SHAPES and BUFFERs first, TUNEs last.
#include <aotc.h>

template <int BM, int BN>
AOTC_SHAPES(N = {256, 512}, M = pow2(128, 1024))
AOTC_BUFFER(out, M * N, out)
AOTC_BUFFER(in, M * N, in)
AOTC_BLOCK(BM, BN)
AOTC_GRID(cdiv(N, BN), cdiv(M, BM))
AOTC_REQUIRE(BM * BN <= 512)
AOTC_TUNE(BN, 8, 16, 32)
AOTC_TUNE(BM, 16, 32)
__global__ void copy2d(int M, int N, const float *in, float *out) {}
