// `aotc configs`: REQUIRE filters the 4 x 3 product down to the configurations listed.
#include <aotc.h>

template <int BM, int BN>
AOTC_TUNE(BM, 16, 32, 64, 128)
AOTC_TUNE(BN, 16, 32, 64)
AOTC_REQUIRE(BM * BN <= 2048)
AOTC_REQUIRE(BM >= BN)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BN)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void tiles(int n, float *x) {}
