// An SGEMM kernel file written the way public CUDA tutorials write them, to
// check that aotc takes such files without edits: host headers, a host
// error-check helper and a host global, a `const int` thread count used by
// __launch_bounds__ and by the annotations, device helpers in a namespace,
// cooperative groups, `uint`, a naive reference whose inputs are const while
// the tuned kernel's are not, and a main() that runs both and cuBLAS.
//
// C = alpha * A * B + beta * C, row-major; A is M x K, B is K x N. Each block
// computes a BM x BN tile of C with NUM_THREADS threads, each thread a TM x TN
// register tile; K is walked in slabs of BK staged in shared memory (A
// transposed). Every edge is bounds-checked, so any M, N, K work.
#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cooperative_groups.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <aotc.h>

namespace cg = cooperative_groups;

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
#define CUDA_CHECK(x) cuda_check((x), __FILE__, __LINE__)

static bool g_verbose = false;

void cuda_check(cudaError_t e, const char *file, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error at %s:%d: %s\n", file, line, cudaGetErrorString(e));
        exit(EXIT_FAILURE);
    }
}

const int NUM_THREADS = 256;

namespace tiles {

// The BM x BK slab of A at (row0, k0), stored transposed: As[k * BM + m].
template <int BM, int BK>
__device__ __forceinline__ void load_a(const float *A, float *As, int M, int K, int row0, int k0)
{
    for (uint i = threadIdx.x; i < BM * BK; i += NUM_THREADS) {
        const uint r = i / BK, c = i % BK;
        const int gr = row0 + (int)r, gc = k0 + (int)c;
        As[c * BM + r] = gr < M && gc < K ? A[(size_t)gr * K + gc] : 0.0f;
    }
}

// The BK x BN slab of B at (k0, col0): Bs[k * BN + n].
template <int BK, int BN>
__device__ __forceinline__ void load_b(const float *B, float *Bs, int K, int N, int k0, int col0)
{
    for (uint i = threadIdx.x; i < BK * BN; i += NUM_THREADS) {
        const uint r = i / BN, c = i % BN;
        const int gr = k0 + (int)r, gc = col0 + (int)c;
        Bs[r * BN + c] = gr < K && gc < N ? B[(size_t)gr * N + gc] : 0.0f;
    }
}

} // namespace tiles

template <int BM, int BN, int BK, int TM, int TN>
AOTC_TUNE(BM, 32, 64, 128)
AOTC_TUNE(BN, 32, 64, 128)
AOTC_TUNE(BK, 8, 16, 32)
AOTC_TUNE(TM, 4, 8)
AOTC_TUNE(TN, 4, 8)
AOTC_REQUIRE((BM / TM) * (BN / TN) == NUM_THREADS)
AOTC_REQUIRE((BK * (BM + BN)) * 4 <= 48 * 1024)
AOTC_GRID(CEIL_DIV(N, BN), CEIL_DIV(M, BM))
AOTC_BLOCK(NUM_THREADS)
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, inout)
AOTC_VALUE(alpha, 1)
AOTC_VALUE(beta, 0.5)
AOTC_SHAPES(M = {128, 1000, 4096}, N = {128, 1000, 4096}, K = {64, 1000, 4096})
AOTC_REFERENCE(sgemm_naive)
__global__ void __launch_bounds__(NUM_THREADS)
sgemm_2d(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C)
{
    __shared__ float As[BK * BM];
    __shared__ float Bs[BK * BN];
    cg::thread_block block = cg::this_thread_block();
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const uint tr = threadIdx.x / (BN / TN), tc = threadIdx.x % (BN / TN);
    float acc[TM][TN] = {};
    float ra[TM], rb[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        tiles::load_a<BM, BK>(A, As, M, K, row0, k0);
        tiles::load_b<BK, BN>(B, Bs, K, N, k0, col0);
        block.sync();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
            for (int i = 0; i < TM; ++i)
                ra[i] = As[kk * BM + tr * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                rb[j] = Bs[kk * BN + tc * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += ra[i] * rb[j];
        }
        block.sync();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + (int)(tr * TM) + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + (int)(tc * TN) + j;
            if (r < M && c < N)
                C[(size_t)r * N + c] = alpha * acc[i][j] + beta * C[(size_t)r * N + c];
        }
    }
}

AOTC_GRID(CEIL_DIV(N, 32), CEIL_DIV(M, 32))
AOTC_BLOCK(32, 32)
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A, const float *B,
                            float beta, float *C)
{
    const uint x = blockIdx.x * blockDim.x + threadIdx.x;
    const uint y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < (uint)N && y < (uint)M) {
        float sum = 0.0f;
        for (int k = 0; k < K; ++k)
            sum += A[(size_t)y * K + k] * B[(size_t)k * N + x];
        C[(size_t)y * N + x] = alpha * sum + beta * C[(size_t)y * N + x];
    }
}

// The tutorial's own driver: its fixed configuration against the naive
// kernel and cuBLAS. Built as a program it needs -lcublas; a build that
// links this file into a library with its own main() defines
// SGEMM_TUTORIAL_NO_MAIN.
#ifndef SGEMM_TUTORIAL_NO_MAIN
int main(int argc, char **argv)
{
    const int M = argc > 1 ? atoi(argv[1]) : 1024, N = M, K = M;
    g_verbose = argc > 2;
    std::vector<float> hA((size_t)M * K), hB((size_t)K * N), hC((size_t)M * N, 0.0f);
    for (auto &v : hA) v = (float)(rand() % 7) - 3.0f;
    for (auto &v : hB) v = (float)(rand() % 5) - 2.0f;
    float *A, *B, *C, *R;
    CUDA_CHECK(cudaMalloc(&A, hA.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&B, hB.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&C, hC.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&R, hC.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(B, hB.data(), hB.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(C, 0, hC.size() * sizeof(float)));
    CUDA_CHECK(cudaMemset(R, 0, hC.size() * sizeof(float)));
    sgemm_naive<<<dim3(CEIL_DIV(N, 32), CEIL_DIV(M, 32)), dim3(32, 32)>>>(M, N, K, 1.0f, A, B,
                                                                        0.0f, R);
    sgemm_2d<128, 128, 8, 8, 8><<<dim3(CEIL_DIV(N, 128), CEIL_DIV(M, 128)), NUM_THREADS>>>(
        M, N, K, 1.0f, A, B, 0.0f, C);
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> out(hC.size()), ref(hC.size());
    CUDA_CHECK(cudaMemcpy(out.data(), C, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ref.data(), R, ref.size() * sizeof(float), cudaMemcpyDeviceToHost));
    float worst = 0.0f;
    for (size_t i = 0; i < out.size(); ++i)
        worst = std::max(worst, std::abs(out[i] - ref[i]));
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1.0f, zero = 0.0f;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, R, N);
    CUDA_CHECK(cudaDeviceSynchronize());
    cublasDestroy(h);
    printf("%dx%dx%d: largest difference from the naive kernel %g\n", M, N, K, worst);
    if (g_verbose)
        printf("first element %g\n", out[0]);
    assert(worst == 0.0f);
    CUDA_CHECK(cudaFree(A));
    CUDA_CHECK(cudaFree(B));
    CUDA_CHECK(cudaFree(C));
    CUDA_CHECK(cudaFree(R));
    return 0;
}
#endif
