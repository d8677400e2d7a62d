// TUNE(BN_) for template parameter BN (defaulted): a launch-only tunable no launch expression uses.
// Expect 1 error at TUNE(BN_, ...): 'BN_' is not a template parameter and unused (misspelt?).
#include <aotc.h>

template <int BM, int BN = 64>
AOTC_TUNE(BM, 32, 64)
AOTC_TUNE(BN_, 32, 64)
AOTC_GRID(cdiv(n, BM * BN))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
