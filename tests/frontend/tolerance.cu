// AOTC_TOLERANCE overrides the default tolerance, here for double buffers.
#include <aotc.h>

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, 1, inout, zero)
AOTC_TOLERANCE(1e-9)
AOTC_SHAPES(n = pow2(1024, 1048576))
__global__ void dsum(int n, const double *x, double *y) {}
