// A parameter whose AOTC_VALUE uses a tunable is computed per variant: it
// may size the launch (GRID, BLOCK, SMEM) but not what is evaluated per
// shape. Expect 3 errors: VALID_IF, BUFFER and the reference's grid use
// 'block_size'; the tunable's expression is suggested.
#include <aotc.h>

AOTC_TUNE(BLOCK, 64, 128)
AOTC_VALID_IF(n % block_size == 0)
AOTC_GRID(cdiv(n, block_size))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n + block_size, inout)
AOTC_VALUE(block_size, BLOCK * 2)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(k_ref)
__global__ void k(float *x, int n, int block_size) {}

AOTC_GRID(cdiv(n, bs))
AOTC_BLOCK(64)
__global__ void k_ref(float *x, int n, int bs) {}
