// An output buffer whose size depends on a tunable cannot be compared with the
// reference. Expect 1 error at BM in the count of 'partial'.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 128, 256)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(partial, cdiv(n, BM), out)
AOTC_SHAPES(n = pow2(1024, 65536))
__global__ void block_sums(int n, const float *x, float *partial) {}
