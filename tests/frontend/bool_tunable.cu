// A bool template parameter tuned with true/false values.
#include <aotc.h>

template <int BLOCK, bool USE_SMEM>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_TUNE(USE_SMEM, true, false)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_SMEM(USE_SMEM ? BLOCK * 4 : 0)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 1048576))
__global__ void stage_copy(int n, const float *x, float *y) {}
