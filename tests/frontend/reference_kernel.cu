// AOTC_REFERENCE names a non-template __global__ with its own GRID/BLOCK; it is not a
// tuned kernel itself (no tunables needed, no error).
#include <aotc.h>

AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
__global__ void naive_scale(int n, float s, const float *x, float *y)
{
	int i = blockIdx.x * 256 + threadIdx.x;
	if (i < n)
		y[i] = s * x[i];
}

template <int BLOCK, int VEC>
AOTC_TUNE(BLOCK, 128, 512)
AOTC_TUNE(VEC, 1, 4)
AOTC_REFERENCE(naive_scale)
AOTC_GRID(cdiv(n, BLOCK * VEC))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_VALUE(s, 3.0)
AOTC_SHAPES(n = pow2(4096, 4194304))
__global__ void fast_scale(int n, float s, const float *x, float *y) {}
