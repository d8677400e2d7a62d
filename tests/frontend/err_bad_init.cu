// Bad buffer inits. Expect 4 errors: 'gaussian(0, 1)' unknown init, 'uniform(1)' wrong arity,
// 'const()' missing value, 'zero(1)' takes no arguments.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(M, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(A, M, in, gaussian(0, 1))
AOTC_BUFFER(B, M, in, uniform(1))
AOTC_BUFFER(C, M, inout, const())
AOTC_BUFFER(D, M, out, zero(1))
AOTC_SHAPES(M = pow2(1024, 4096))
__global__ void k(int M, const float *A, const float *B, float *C, float *D) {}
