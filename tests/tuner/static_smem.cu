// Compile failures that are the device's limit, not the code's: a tile in
// static shared memory of ROWS x 64 floats, 64 KiB at ROWS = 256, which
// ptxas refuses (sm90 gives a kernel 48 KiB of static shared memory). The
// variant is `resources`, with the amount and the limit, and is not
// compiled again (tests/tuner/compile-only.sh).
#include <aotc.h>

template <int ROWS>
AOTC_TUNE(ROWS, 16, 64, 256)
AOTC_GRID(cdiv(n, 64))
AOTC_BLOCK(64)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {4096})
__global__ void stage(int n, const float *x, float *y)
{
    __shared__ float tile[ROWS][64];
    const int i = blockIdx.x * 64 + threadIdx.x;
    for (int r = 0; r < ROWS; ++r)
        tile[r][threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n)
        y[i] = tile[(blockIdx.x + threadIdx.x) % ROWS][threadIdx.x];
}
