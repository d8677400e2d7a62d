// Malformed expressions, all reported. Expect 5 errors: REQUIRE 'BM *' (missing operand), BLOCK
// 'BM BM' (unexpected name), GRID cdiv with 1 argument, SMEM 'BM +* 4', VALID_IF '?' without ':'.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_REQUIRE(BM * )
AOTC_BLOCK(BM BM)
AOTC_GRID(cdiv(n))
AOTC_SMEM(BM +* 4)
AOTC_VALID_IF(n > 4 ? BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
