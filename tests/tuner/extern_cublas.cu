// A saxpy with cuBLAS competing as an AOTC_EXTERN (tests/tuner/extern.sh
// compiles it without a GPU; on one, the tune measures cublasSaxpy beside
// the variants, checked against saxpy_ref).
#include <aotc.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

cudaError_t saxpy_cublas(int n, float a, const float *x, float *y, cudaStream_t stream)
{
	static cublasHandle_t handle;
	if (!handle && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
		return cudaErrorInitializationError;
	if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS ||
	    cublasSaxpy(handle, n, &a, x, 1, y, 1) != CUBLAS_STATUS_SUCCESS)
		return cudaErrorLaunchFailure;
	return cudaGetLastError();
}

AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
__global__ void saxpy_ref(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

template <int BS, int PER>
AOTC_TUNE(BS, 128, 256)
AOTC_TUNE(PER, 1, 4)
AOTC_REQUIRE(BS * PER <= 512)
AOTC_GRID(cdiv(n, BS * PER))
AOTC_BLOCK(BS)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_VALUE(a, 0.5)
AOTC_SHAPES(n = {4096, 1 << 20, 1 << 24})
AOTC_REFERENCE(saxpy_ref)
AOTC_EXTERN(saxpy_cublas, cublas)
__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
	int i = (blockIdx.x * BS * PER) + threadIdx.x;
	for (int j = 0; j < PER; j++, i += BS)
		if (i < n)
			y[i] += a * x[i];
}
