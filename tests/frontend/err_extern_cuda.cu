// AOTC_EXTERN for a __global__ kernel: a host function taking the kernel's
// parameters and a trailing cudaStream_t, returning cudaError_t. Expect 4
// errors: no stream; the last parameter not a stream; not cudaError_t; a
// __global__ function.
#include <aotc.h>

#include <cuda_runtime.h>

cudaError_t axpy_nostream(int n, const float *x, float *y);
cudaError_t axpy_int(int n, const float *x, float *y, int stream);
int axpy_int_result(int n, const float *x, float *y, cudaStream_t stream);
__global__ void axpy_other(int n, const float *x, float *y) {}
cudaError_t axpy_good(int n, const float *x, float *y, cudaStream_t stream);

template <int BS>
AOTC_TUNE(BS, 128, 256)
AOTC_GRID(cdiv(n, BS))
AOTC_BLOCK(BS)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_SHAPES(n = {4096})
AOTC_EXTERN(axpy_nostream)
AOTC_EXTERN(axpy_int)
AOTC_EXTERN(axpy_int_result)
AOTC_EXTERN(axpy_other)
AOTC_EXTERN(axpy_good, cublas)
__global__ void axpy(int n, const float *x, float *y) {}
