// AOTC_METRIC diagnostics, all reported. Expect 6 errors: an unknown unit, a
// malformed count, a missing count, an unknown name in the count, a second
// AOTC_METRIC, and an AOTC_METRIC on an alternative (it shares its primary's).
#include <aotc.h>

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_METRIC(FLOPS, 2 * n)
__global__ void bad_unit(int n, float *x) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_METRIC(B, 8 * n *)
__global__ void bad_count(int n, float *x) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_METRIC(B)
__global__ void no_count(int n, float *x) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_METRIC(B, 8 * N)
__global__ void unknown_name(int n, float *x) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_METRIC(B, 8 * n)
AOTC_METRIC(FLOP, n)
__global__ void twice(int n, float *x) {}

AOTC_ALTERNATIVE(twice)
AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
AOTC_METRIC(B, 4 * n)
__global__ void twice_alt(int n, float *x) {}
