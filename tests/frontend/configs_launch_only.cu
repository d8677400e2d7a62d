// `aotc configs` with a launch-only tunable WARPS constrained together with the template's ROWS.
#include <aotc.h>

template <int ROWS>
AOTC_TUNE(ROWS, 1, 2, 4)
AOTC_TUNE(WARPS, 1, 2, 4, 8)
AOTC_REQUIRE(ROWS * WARPS <= 8)
AOTC_GRID(cdiv(m, ROWS))
AOTC_BLOCK(32 * WARPS)
AOTC_BUFFER(a, m * n, in)
AOTC_BUFFER(out, m, out)
AOTC_SHAPES(m = pow2(64, 1024), n = pow2(64, 1024))
__global__ void row_max(int m, int n, const float *a, float *out) {}
