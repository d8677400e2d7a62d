// Three-dimensional grid and block.
#include <aotc.h>

template <int BX, int BY, int BZ>
AOTC_TUNE(BX, 8, 16)
AOTC_TUNE(BY, 4, 8)
AOTC_TUNE(BZ, 1, 2, 4)
AOTC_REQUIRE(BX * BY * BZ <= 512)
AOTC_GRID(cdiv(nx, BX), cdiv(ny, BY), cdiv(nz, BZ))
AOTC_BLOCK(BX, BY, BZ)
AOTC_BUFFER(in, nx * ny * nz, in)
AOTC_BUFFER(out, nx * ny * nz, out)
AOTC_SHAPES(nx = pow2(32, 256), ny = pow2(32, 256), nz = {16, 64})
__global__ void stencil7(int nx, int ny, int nz, const float *in, float *out) {}
