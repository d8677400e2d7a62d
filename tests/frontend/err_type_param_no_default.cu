// A type template parameter without default cannot be instantiated. Expect 1 error at T.
#include <aotc.h>

template <typename T, int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, T *x) {}
