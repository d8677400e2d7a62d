// Every unary and binary operator, with C precedence and associativity (a - b - c, ?: nesting).
#include <aotc.h>

template <int BM, int BN>
AOTC_TUNE(BM, 16, 32)
AOTC_TUNE(BN, 16, 32)
AOTC_REQUIRE(BM * BN / 4 % 3 + 1 - 2 << 1 >> 1 < 100 == 1 != 0)
AOTC_REQUIRE((BM & 15) ^ (BN | 1) && !0 || ~BM < -BN)
AOTC_REQUIRE(BM - BN - 8 <= 64 - 16 - 16 && BM >= BN / 2 / 2 && BM > 1 && BN != 3)
AOTC_VALID_IF(n > 4096 ? 0 : n > BM ? n > BN ? 1 : 0 : n == 1)
AOTC_GRID(cdiv(n, BM * BN))
AOTC_BLOCK(BM * BN)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void ops(int n, float *x) {}
