// y = a * x + y, written to compile unchanged with nvcc and hipcc (no warp
// intrinsics, no warp size assumed): the kernel of the ROCm emission tests
// (tests/codegen/rocm.sh). Its databases here were made up for the tests,
// not measured (make-db.py).
#include <aotc.h>

AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
__global__ void axpy_ref(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

template <int BS, int PER>
AOTC_TUNE(BS, 64, 128, 256, 512)
AOTC_TUNE(PER, 1, 2, 4)
AOTC_REQUIRE(BS * PER <= 1024)
AOTC_VALID_IF(n % PER == 0)
AOTC_GRID(cdiv(n, BS * PER))
AOTC_BLOCK(BS)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_VALUE(a, 0.5)
AOTC_SHAPES(n = pow2(1024, 67108864))
AOTC_REFERENCE(axpy_ref)
__global__ void axpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
	int i = blockIdx.x * (BS * PER) + threadIdx.x;
#pragma unroll
	for (int j = 0; j < PER; j++, i += BS)
		if (i < n)
			y[i] += a * x[i];
}
