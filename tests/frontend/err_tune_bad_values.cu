// TUNE values must be integer literals or true/false. Expect 2 errors: '1.5' (TUNE BM), 'big' (TUNE BN).
#include <aotc.h>

template <int BM, int BN>
AOTC_TUNE(BM, 32, 1.5)
AOTC_TUNE(BN, 32, big)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BN)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
