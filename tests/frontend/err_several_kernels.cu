// All errors in a file are reported, across kernels. Expect 3 errors: 'NN' unknown (first kernel),
// role 'write' (second kernel), float 'beta' unaccounted for (second kernel, at the parameter).
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(NN, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void first(int n, float *x) {}

__global__ void fine_plain_kernel(float *x) {}

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, write)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void second(int n, float beta, float *x) {}
