// Namespace-scope integer constants in annotation expressions: const, static const and
// constexpr at global scope, one defined in terms of another, used in AOTC_TUNE values,
// AOTC_REQUIRE, AOTC_VALID_IF, AOTC_GRID/BLOCK (and __launch_bounds__), AOTC_BUFFER counts, AOTC_SHAPES
// bounds and AOTC_FEATURES. A parameter shadows a constant of the same name (K below is
// the parameter, not the constant 7). Only the constants used are recorded in the IR.
#include <aotc.h>

const int NUM_THREADS = 256;
static const int TILE = 32;
constexpr long MAX_K = 1 << 12;
constexpr int WARPS = NUM_THREADS / 32;
constexpr bool PAD = true;
const int K = 7;
const int UNUSED = 99;

template <int BM, int BN>
AOTC_TUNE(BM, TILE, 2 * TILE)
AOTC_TUNE(BN, TILE, 4 * TILE)
AOTC_REQUIRE(BM * BN % NUM_THREADS == 0 && BM / WARPS >= 2)
AOTC_VALID_IF(N % TILE == 0)
AOTC_GRID(cdiv(N, BN), cdiv(M, BM))
AOTC_BLOCK(NUM_THREADS)
AOTC_BUFFER(A, M * (K + PAD), in)
AOTC_BUFFER(C, M * N, out)
AOTC_SHAPES(M = pow2(TILE * 4, 4096), N = {TILE * 8, 1024}, K = range(TILE, MAX_K, TILE))
AOTC_FEATURES(M * N, K % TILE == 0)
__global__ void __launch_bounds__(NUM_THREADS)
tiled(int M, int N, int K, const float *A, float *C) {}
