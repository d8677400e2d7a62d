// AOTC_METRIC: what one launch does, for throughput. The count may use
// shape arguments, the file's constants and the kernel's own tunables (here
// the bytes a block's halo adds); its alternative shares it.
#include <aotc.h>

constexpr int ELEM = 4;

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_METRIC(B, 2 * ELEM * n + cdiv(n, BLOCK) * 2 * ELEM)
__global__ void stencil(int n, const float *x, float *y) {}

AOTC_ALTERNATIVE(stencil)
AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
__global__ void stencil_flat(int n, const float *x, float *y) {}
