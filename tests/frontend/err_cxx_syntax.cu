// A C++ syntax error in the kernel body (missing ; on line 12): clang's own error with location, exit 1.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x)
{
	int i = blockIdx.x * BM + threadIdx.x
	if (i < n)
		x[i] = 0.f;
}
