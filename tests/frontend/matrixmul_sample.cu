// NVIDIA's matrixMul sample as published (cuda-samples), annotated: the
// kernel takes only the widths wA and wB; the grid and the buffers also
// need hA, a launcher-only shape argument (select() and the launcher take
// it after the kernel's own arguments).
#include <aotc.h>

template <int BLOCK_SIZE>
AOTC_TUNE(BLOCK_SIZE, 16, 32)
AOTC_VALID_IF(wA % BLOCK_SIZE == 0 && wB % BLOCK_SIZE == 0 && hA % BLOCK_SIZE == 0)
AOTC_GRID(wB / BLOCK_SIZE, hA / BLOCK_SIZE)
AOTC_BLOCK(BLOCK_SIZE, BLOCK_SIZE)
AOTC_BUFFER(C, hA * wB, out)
AOTC_BUFFER(A, hA * wA, in)
AOTC_BUFFER(B, wA * wB, in)
AOTC_SHAPES(wA = {320, 640}, wB = {320, 640}, hA = {320, 1024})
AOTC_REFERENCE(MatrixMulNaive)
__global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB)
{
    int bx = blockIdx.x;
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int aBegin = wA * BLOCK_SIZE * by;
    int aEnd = aBegin + wA - 1;
    int aStep = BLOCK_SIZE;
    int bBegin = BLOCK_SIZE * bx;
    int bStep = BLOCK_SIZE * wB;
    float Csub = 0;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k)
            Csub += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
}

// One thread per element; its grid covers hA rows (the shapes are
// multiples of 16).
AOTC_GRID(cdiv(wB, 16), cdiv(hA, 16))
AOTC_BLOCK(16, 16)
__global__ void MatrixMulNaive(float *C, float *A, float *B, int wA, int wB)
{
    int row = blockIdx.y * 16 + threadIdx.y;
    int col = blockIdx.x * 16 + threadIdx.x;
    if (col >= wB)
        return;
    float acc = 0;
    for (int k = 0; k < wA; ++k)
        acc += A[row * wA + k] * B[k * wB + col];
    C[row * wB + col] = acc;
}
