// Every buffer role (in, out, inout) and init form: default, uniform(lo, hi), zero, const(v).
#include <aotc.h>

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(idx, n, in)
AOTC_BUFFER(w, n, in, uniform(-2, 2))
AOTC_BUFFER(bins, 64, inout, const(1))
AOTC_BUFFER(acc, n, inout, uniform(0, 1))
AOTC_BUFFER(y, n, out, zero)
AOTC_BUFFER(bias, n, in, const(0.25))
AOTC_BUFFER(mask, n, in, uniform(0, 2))
AOTC_SHAPES(n = pow2(1024, 65536))
__global__ void roles(int n, const float *x, const int *idx, const double *w,
                      int *bins, float *acc, float *y, const float *bias,
                      const unsigned char *mask) {}
