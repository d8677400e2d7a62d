// A non-template __global__ function, annotations in front, whose only tunable is launch-only.
#include <aotc.h>

AOTC_TUNE(THREADS, 64, 128, 256, 1024)
AOTC_GRID(cdiv(n, THREADS))
AOTC_BLOCK(THREADS)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 1048576))
__global__ void negate(int n, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = -x[i];
}
