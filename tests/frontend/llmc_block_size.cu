// An llm.c-style kernel (dev/cuda): one block per row of a (B, T, C)
// tensor, the kernel takes the row count N = B * T and its block size as an
// `int block_size` argument that sizes the shared-memory reduction. BLOCK
// is a launch-only tunable (not a template parameter): AOTC_BLOCK launches
// with it and AOTC_VALUE passes it; B and T are launcher-only shape
// arguments.
#include <aotc.h>
#include <math.h>

AOTC_TUNE(BLOCK, 64, 128, 256, 512)
AOTC_GRID(N)
AOTC_BLOCK(BLOCK)
AOTC_SMEM(block_size * 4)
AOTC_BUFFER(out, B * T, out)
AOTC_BUFFER(inp, B * T * C, in)
AOTC_VALUE(N, B * T)
AOTC_VALUE(block_size, BLOCK)
AOTC_SHAPES(B = {4, 8}, T = {64, 1024}, C = {768, 50257})
AOTC_REFERENCE(rowmax_ref)
__global__ void rowmax_kernel(float *out, const float *inp, int N, int C, int block_size)
{
    extern __shared__ float shared[];
    int idx = blockIdx.x;
    int tid = threadIdx.x;
    const float *x = inp + (long)idx * C;
    float maxval = -INFINITY;
    for (int i = tid; i < C; i += block_size)
        maxval = fmaxf(maxval, x[i]);
    shared[tid] = maxval;
    for (int stride = block_size / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (tid < stride)
            shared[tid] = fmaxf(shared[tid], shared[tid + stride]);
    }
    if (tid == 0)
        out[idx] = shared[0];
}

// One thread per row; it takes block_size too (the first configuration's
// value during tuning) and does not depend on it.
AOTC_GRID(cdiv(N, 128))
AOTC_BLOCK(128)
__global__ void rowmax_ref(float *out, const float *inp, int N, int C, int block_size)
{
    (void)block_size;
    int row = blockIdx.x * 128 + threadIdx.x;
    if (row >= N)
        return;
    float m = -INFINITY;
    for (int i = 0; i < C; ++i)
        m = fmaxf(m, inp[(long)row * C + i]);
    out[row] = m;
}
