// Non-type template parameter BN without default and without TUNE. Expect 1 error at BN.
#include <aotc.h>

template <int BM, int BN>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
