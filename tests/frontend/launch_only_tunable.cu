// WARPS is not a template parameter: a launch-only tunable used in AOTC_BLOCK.
#include <aotc.h>

template <int ROWS>
AOTC_TUNE(ROWS, 1, 2, 4)
AOTC_TUNE(WARPS, 4, 8)
AOTC_GRID(cdiv(m, ROWS))
AOTC_BLOCK(32 * WARPS)
AOTC_BUFFER(a, m * n, in)
AOTC_BUFFER(out, m, out)
AOTC_SHAPES(m = pow2(64, 4096), n = pow2(64, 4096))
__global__ void row_sum(int m, int n, const float *a, float *out) {}
