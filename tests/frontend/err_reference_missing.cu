// AOTC_REFERENCE to a function that does not exist. Expect 1 error at REFERENCE: 'k_naive' not found.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(k_naive)
__global__ void k(int n, float *x) {}
