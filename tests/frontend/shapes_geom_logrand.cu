// geom() and logrand() generators: parsed into the IR with lo, hi and n.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(M * N, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, M * N, inout)
AOTC_SHAPES(M = geom(128, 8192, 9), N = logrand(1, 100000, 12))
__global__ void k(int M, int N, float *x) {}
