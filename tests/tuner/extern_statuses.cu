// Every status an AOTC_EXTERN routine can get on a GPU, for a device run
// (not in the suite: it needs one): saxpy_cublas and saxpy_mine ok,
// saxpy_wrong wrong, saxpy_err error (cudaErrorInvalidValue), saxpy_fault
// fault (one worker restart per shape). Run on the H200:
//   aotc tune tests/tuner/extern_statuses.cu --arch sm90 --db DB --verbose
#include <aotc.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void axpy_k(int n, float a, const float *x, float *y, int skip_last, int bad)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (bad && i == 0)
		*(volatile float *)nullptr = 1.0f;
	if (i < n - skip_last)
		y[i] += a * x[i];
}

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
cudaError_t saxpy_mine(int n, float a, const float *x, float *y, cudaStream_t s)
{
	axpy_k<<<(n + 255) / 256, 256, 0, s>>>(n, a, x, y, 0, 0);
	return cudaGetLastError();
}
cudaError_t saxpy_wrong(int n, float a, const float *x, float *y, cudaStream_t s)
{
	axpy_k<<<(n + 255) / 256, 256, 0, s>>>(n, a, x, y, 1, 0);
	return cudaGetLastError();
}
cudaError_t saxpy_err(int n, float a, const float *x, float *y, cudaStream_t s)
{
	(void)n; (void)a; (void)x; (void)y; (void)s;
	return cudaErrorInvalidValue;
}
cudaError_t saxpy_fault(int n, float a, const float *x, float *y, cudaStream_t s)
{
	axpy_k<<<(n + 255) / 256, 256, 0, s>>>(n, a, x, y, 0, 1);
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

template <int BS>
AOTC_TUNE(BS, 128, 256)
AOTC_GRID(cdiv(n, BS))
AOTC_BLOCK(BS)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_VALUE(a, 0.5)
AOTC_SHAPES(n = {4096, 1 << 24})
AOTC_REFERENCE(saxpy_ref)
AOTC_EXTERN(saxpy_fault)
AOTC_EXTERN(saxpy_cublas, cublas)
AOTC_EXTERN(saxpy_mine)
AOTC_EXTERN(saxpy_wrong)
AOTC_EXTERN(saxpy_err)
__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
	int i = blockIdx.x * BS + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}
