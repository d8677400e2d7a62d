// AOTC_BUFFER on an int parameter (already a shape). Expect 1 error at BUFFER(n, ...): not a pointer.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_BUFFER(n, 16, in)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
