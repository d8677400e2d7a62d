// A name in AOTC_SHAPES that is not a parameter is a launcher-only shape
// argument, but one that no annotation uses is most likely a typo. Expect
// 2 errors: 'm' (unused; the parameter is 'M'), 'BM' (a tunable).
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(M, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, M, inout)
AOTC_SHAPES(m = pow2(1024, 4096), BM = {1})
__global__ void k(int M, float *x) {}
