// Errors clang finds in code no annotated kernel, reference or routine uses
// (a host helper, main(), an unused device function) do not fail the parse;
// the kernel, its reference and the device helper they call are read.
#include <aotc.h>

__device__ float twice(float x) { return 2.0f * x; }

__device__ float unused_helper(float x) { return no_such_function(x); }

void host_check(const float *x, int n)
{
	for (int i = 0; i < n; i++)
		if (!finite_enough(x[i]))
			report(i);
}

AOTC_GRID(cdiv(n, 128))
AOTC_BLOCK(128)
__global__ void twice_naive(float *out, const float *in, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = twice(in[i]);
}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(out, n, out)
AOTC_BUFFER(in, n, in)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(twice_naive)
__global__ void twice_kernel(float *out, const float *in, int n)
{
	int i = blockIdx.x * BLOCK + threadIdx.x;
	if (i < n)
		out[i] = twice(in[i]);
}

int main()
{
	undeclared_setup();
	return run_everything(1, 2, 3);
}
