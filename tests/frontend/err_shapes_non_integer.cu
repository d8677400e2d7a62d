// SHAPES may only name integer parameters. Expect 2 errors in SHAPES: 'x' is a pointer, 'alpha'
// is a float (both are otherwise accounted for by BUFFER / VALUE).
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_VALUE(alpha, 1.0)
AOTC_SHAPES(n = pow2(1024, 4096), x = {1, 2}, alpha = {1, 2})
__global__ void k(int n, float alpha, float *x) {}
