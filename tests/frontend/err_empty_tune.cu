// An empty value list. Expect 1 error at AOTC_TUNE(BM): empty value list.
#include <aotc.h>

template <int BM, int BN>
AOTC_TUNE(BM)
AOTC_TUNE(BN, 32, 64)
AOTC_GRID(cdiv(n, BN))
AOTC_BLOCK(BN)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
