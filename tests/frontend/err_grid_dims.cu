// GRID and BLOCK take 1 to 3 expressions. Expect 2 errors: GRID with 4, BLOCK with none.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM), 1, 1, 1)
AOTC_BLOCK()
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
