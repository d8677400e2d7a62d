// The same parameter tuned twice. Expect 1 error at the second TUNE(BM): duplicate.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_TUNE(BM, 128)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
