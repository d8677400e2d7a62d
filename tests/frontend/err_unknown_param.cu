// BUFFER and VALUE name parameters that do not exist. Expect 2 errors: 'X' (BUFFER), 'gamma' (VALUE).
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_BUFFER(X, n, in)
AOTC_VALUE(alpha, 1.0)
AOTC_VALUE(gamma, 2.0)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float alpha, float *x) {}
