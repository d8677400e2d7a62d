// Three tuned kernels in one file, in source order; a single-value TUNE is allowed;
// parameters may be named like the roles (in, out).
#include <aotc.h>

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256, 512)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_VALUE(a, 2.0)
AOTC_SHAPES(n = pow2(1024, 1048576))
__global__ void saxpy(int n, float a, const float *x, float *y) {}

template <int BLOCK, int UNROLL>
AOTC_TUNE(BLOCK, 256)
AOTC_TUNE(UNROLL, 1, 2, 4)
AOTC_GRID(cdiv(n, BLOCK * UNROLL))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = {1000, 100000})
__global__ void relu(int n, float *x) {}

template <int TILE>
AOTC_TUNE(TILE, 16, 32)
AOTC_GRID(cdiv(cols, TILE), cdiv(rows, TILE))
AOTC_BLOCK(TILE, TILE)
AOTC_BUFFER(in, rows * cols, in)
AOTC_BUFFER(out, rows * cols, out)
AOTC_SHAPES(rows = pow2(256, 4096), cols = pow2(256, 4096))
__global__ void transpose(int rows, int cols, const float *in, float *out) {}
