// Only the annotated kernel is in the IR: __device__ helpers, plain __global__ kernels,
// an unannotated kernel template and a plain host function are ignored.
#include <aotc.h>

__device__ float square(float v) { return v * v; }
__host__ __device__ inline int twice(int v) { return 2 * v; }

__global__ void plain_fill(int n, float *x) { if (threadIdx.x < n) x[threadIdx.x] = 0.f; }

template <int BLOCK>
__global__ void untuned_template(int n, float *x) {}

int host_helper(int a) { return a + 1; }

template <int BLOCK>
AOTC_TUNE(BLOCK, 64, 128)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(256, 65536))
__global__ void squares(int n, float *x)
{
	int i = blockIdx.x * BLOCK + threadIdx.x;
	if (i < n)
		x[i] = square(x[i]) + twice(0);
}

__global__ void another_plain(float *x) {}
