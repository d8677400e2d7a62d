// A local header from a subdirectory ("inc/local_helpers.h"); its constant is a template default.
#include <aotc.h>
#include "inc/local_helpers.h"

template <int BLOCK, int VEC = kVecWidth>
AOTC_TUNE(BLOCK, 64, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 65536))
__global__ void clamp(int n, float *x)
{
	int i = blockIdx.x * BLOCK + threadIdx.x;
	if (i < n)
		x[i] = clamp01(x[i]) * VEC / kVecWidth;
}
