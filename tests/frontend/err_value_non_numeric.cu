// AOTC_VALUE of a non-numeric literal for a float parameter. Expect 1 error at VALUE(alpha, "0.5").
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_VALUE(alpha, "0.5")
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float alpha, float *x) {}
