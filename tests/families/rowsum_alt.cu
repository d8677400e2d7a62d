// Alternatives in CUDA (AOTC_ALTERNATIVE), in the style of files that hold
// kernel1...kernelN for one job: out[r] = the sum of row r of inp (N x C).
// rowsum_kernel1 (a thread per row) is the primary; rowsum_kernel2 (a block
// per row, a shared-memory tree) competes with its own tunable and launch;
// rowsum_twopass is a tuned host launcher of two kernels (partial sums of
// column blocks into scratch from cudaMallocAsync, then their sum).
#include <cuda_runtime.h>

#include <aotc.h>

AOTC_TUNE(BLOCK, 64, 256)
AOTC_BUFFER(out, N, out)
AOTC_BUFFER(inp, N * C, in)
AOTC_SHAPES(N = {64, 1024, 16384}, C = {64, 1024, 8192})
AOTC_GRID(cdiv(N, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_REFERENCE(rowsum_ref)
AOTC_TOLERANCE(1e-4)
__global__ void rowsum_kernel1(float *out, const float *inp, int N, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N)
        return;
    float s = 0;
    for (int c = 0; c < C; ++c)
        s += inp[(long)r * C + c];
    out[r] = s;
}

template <int BLOCK>
AOTC_ALTERNATIVE(rowsum_kernel1)
AOTC_TUNE(BLOCK, 128, 256, 512)
AOTC_GRID(N)
AOTC_BLOCK(BLOCK)
__global__ void rowsum_kernel2(float *out, const float *__restrict__ inp, int N, int C)
{
    __shared__ float part[BLOCK];
    const float *row = inp + (long)blockIdx.x * C;
    float s = 0;
    for (int c = threadIdx.x; c < C; c += BLOCK)
        s += row[c];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = BLOCK / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = part[0];
}

__global__ void rowsum_partial(float *part, const float *inp, int N, int C, int split)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y, w = C / split;
    if (r >= N)
        return;
    float s = 0;
    for (int c = b * w; c < (b + 1) * w; ++c)
        s += inp[(long)r * C + c];
    part[(long)b * N + r] = s;
}

__global__ void rowsum_reduce(float *out, const float *part, int N, int split)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N)
        return;
    float s = 0;
    for (int b = 0; b < split; ++b)
        s += part[(long)b * N + r];
    out[r] = s;
}

template <int SPLIT>
AOTC_ALTERNATIVE(rowsum_kernel1)
AOTC_TUNE(SPLIT, 4, 16)
AOTC_VALID_IF(C % SPLIT == 0)
cudaError_t rowsum_twopass(float *out, const float *inp, int N, int C, cudaStream_t stream)
{
    float *part;
    cudaError_t e = cudaMallocAsync(&part, sizeof(float) * (size_t)N * SPLIT, stream);
    if (e != cudaSuccess)
        return e;
    rowsum_partial<<<dim3((N + 127) / 128, SPLIT), 128, 0, stream>>>(part, inp, N, C, SPLIT);
    rowsum_reduce<<<(N + 127) / 128, 128, 0, stream>>>(out, part, N, SPLIT);
    e = cudaGetLastError();
    cudaError_t f = cudaFreeAsync(part, stream);
    return e != cudaSuccess ? e : f;
}

void rowsum_ref(float *out, const float *inp, int N, int C)
{
    for (int r = 0; r < N; ++r) {
        double s = 0;
        for (int c = 0; c < C; ++c)
            s += inp[(long)r * C + c];
        out[r] = (float)s;
    }
}
