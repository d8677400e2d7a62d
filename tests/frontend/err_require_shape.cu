// REQUIRE is over tunables only; M is a shape argument. Expect 1 error at REQUIRE: 'M' (use VALID_IF).
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_REQUIRE(BM <= M)
AOTC_GRID(cdiv(M, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, M, inout)
AOTC_SHAPES(M = pow2(1024, 4096))
__global__ void k(int M, float *x) {}
