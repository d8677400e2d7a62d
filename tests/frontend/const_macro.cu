// Object-like macros with integer values, one in terms of another macro and one in terms
// of a const variable: the annotations keep them as written (and record their values), so
// positions point into the argument. A macro over a template parameter (WARPS) is not a
// constant: the annotation then gets the preprocessor's expansion, as before. A template
// parameter's default may be a constant too (PAD).
#include <aotc.h>

#define TILE 32
#define NT (TILE * 8)
const int VEC = 4;
#define VEC_BYTES (VEC * sizeof(float) / 4 * 4)
#define PER_THREAD (NT / VEC)
#define WARPS (BM / 32)

template <int BM, int PAD = TILE>
AOTC_TUNE(BM, TILE, 2 * TILE, NT)
AOTC_SMEM((BM + PAD) * 4)
AOTC_REQUIRE(BM * PER_THREAD <= NT * NT)
AOTC_GRID(cdiv(n, BM * VEC))
AOTC_BLOCK(NT, WARPS)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(NT, 4096))
__global__ void __launch_bounds__(NT) k(int n, float *x) {}
