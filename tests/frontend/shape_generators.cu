// Every shape generator: pow2(lo, hi), range(lo, hi, step), a list {a, b, ...}.
#include <aotc.h>

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_GRID(cdiv(n, BLOCK), batch, heads)
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, batch * heads * n, inout)
AOTC_SHAPES(n = pow2(16, 65536), batch = range(1, 33, 8), heads = {1, 3, 12, 96})
__global__ void gens(int batch, int heads, int n, float *x) {}
