// Misspelt TUNE(BN_) leaves BN (no default) untuned. Expect 2 errors: TUNE(BN_) unused launch-only
// tunable; template parameter BN has no default and no TUNE (at BN in the template head).
#include <aotc.h>

template <int BM, int BN>
AOTC_TUNE(BM, 32, 64)
AOTC_TUNE(BN_, 32, 64)
AOTC_GRID(cdiv(n, BM * BN))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
