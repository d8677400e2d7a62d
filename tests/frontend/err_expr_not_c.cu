// C syntax outside the expression language. Expect 3 errors: REQUIRE 'BM = 64' (assignment),
// REQUIRE 'BM++ > 0' (increment), GRID 'n[0]' (subscript).
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_REQUIRE(BM = 64)
AOTC_REQUIRE(BM++ > 0)
AOTC_GRID(n[0])
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
