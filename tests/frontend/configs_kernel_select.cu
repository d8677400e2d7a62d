// `aotc configs --kernel scale`: only the second kernel's configurations are listed.
#include <aotc.h>

template <int BLOCK>
AOTC_TUNE(BLOCK, 32, 64, 128)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void fill(int n, float *x) {}

template <int BLOCK, bool FAST>
AOTC_TUNE(BLOCK, 256, 512)
AOTC_TUNE(FAST, false, true)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_VALUE(s, 2.0)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void scale(int n, float s, float *x) {}
