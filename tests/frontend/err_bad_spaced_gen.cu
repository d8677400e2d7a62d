// Bad geom()/logrand() generators. Expect 4 errors: geom(0, 8, 3) (lo must be positive),
// geom(8, 4, 2) (hi below lo), logrand(1, 8, 0) (n at least 1), logrand(1, 4, 5) (only 4
// integers in [1, 4]).
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(M * N, BM), K, L)
AOTC_BLOCK(BM)
AOTC_BUFFER(x, M * N * K * L, inout)
AOTC_SHAPES(M = geom(0, 8, 3), N = geom(8, 4, 2), K = logrand(1, 8, 0), L = logrand(1, 4, 5))
__global__ void k(int M, int N, int K, int L, float *x) {}
