// A kernel file as SGEMM tutorials write it: host headers, an error-check
// macro and helper, a host global, a constant used in __launch_bounds__ and
// AOTC_BLOCK, device helpers in a namespace, glibc's uint, a naive reference
// taking const inputs, and a main() that runs it all.
#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

#include <aotc.h>

#define CUDA_CHECK(x) cudaCheck((x), __FILE__, __LINE__)

void cudaCheck(cudaError_t e, const char *file, int line)
{
	if (e != cudaSuccess) {
		std::fprintf(stderr, "%s:%d: %s\n", file, line, cudaGetErrorString(e));
		std::exit(EXIT_FAILURE);
	}
}

static int g_repeats = 10;

const int NUM_THREADS = 256;

namespace tile {
__device__ inline float fma_acc(float acc, float a, float b) { return acc + a * b; }
__device__ inline uint idx(uint row, uint col, uint ld) { return row * ld + col; }
} // namespace tile

AOTC_GRID(cdiv(N, 16), cdiv(M, 16))
AOTC_BLOCK(16, 16)
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A,
                            const float *B, float beta, float *C)
{
	const uint row = blockIdx.y * blockDim.y + threadIdx.y;
	const uint col = blockIdx.x * blockDim.x + threadIdx.x;
	if (row < (uint)M && col < (uint)N) {
		float acc = 0.f;
		for (int k = 0; k < K; k++)
			acc = tile::fma_acc(acc, A[tile::idx(row, k, K)], B[tile::idx(k, col, N)]);
		C[tile::idx(row, col, N)] = alpha * acc + beta * C[tile::idx(row, col, N)];
	}
}

template <int BM, int BN>
AOTC_TUNE(BM, 32, 64)
AOTC_TUNE(BN, 32, 64)
AOTC_REQUIRE(BM * BN % NUM_THREADS == 0)
AOTC_GRID(cdiv(N, BN), cdiv(M, BM))
AOTC_BLOCK(NUM_THREADS)
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, inout)
AOTC_VALUE(alpha, 1)
AOTC_VALUE(beta, 0)
AOTC_SHAPES(M = pow2(128, 1024), N = pow2(128, 1024), K = {128, 512})
AOTC_REFERENCE(sgemm_naive)
__global__ void __launch_bounds__(NUM_THREADS)
sgemm(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C)
{
	namespace cg = cooperative_groups;
	cg::thread_block block = cg::this_thread_block();
	constexpr int PER_THREAD = BM * BN / NUM_THREADS;
	const uint r0 = blockIdx.y * BM, c0 = blockIdx.x * BN;
	for (int t = 0; t < PER_THREAD; t++) {
		const uint e = threadIdx.x + t * NUM_THREADS;
		const uint row = r0 + e / BN, col = c0 + e % BN;
		if (row >= (uint)M || col >= (uint)N)
			continue;
		float acc = 0.f;
		for (int k = 0; k < K; k++)
			acc = tile::fma_acc(acc, A[tile::idx(row, k, K)], B[tile::idx(k, col, N)]);
		C[tile::idx(row, col, N)] = alpha * acc + beta * C[tile::idx(row, col, N)];
	}
	block.sync();
}

int main()
{
	const int M = 256, N = 256, K = 128;
	float *A, *B, *C;
	CUDA_CHECK(cudaMalloc(&A, sizeof(float) * M * K));
	CUDA_CHECK(cudaMalloc(&B, sizeof(float) * K * N));
	CUDA_CHECK(cudaMalloc(&C, sizeof(float) * M * N));
	CUDA_CHECK(cudaMemset(C, 0, sizeof(float) * M * N));
	cublasHandle_t handle;
	cublasCreate(&handle);
	dim3 grid((N + 63) / 64, (M + 63) / 64);
	for (int i = 0; i < std::max(1, g_repeats); i++)
		sgemm<64, 64><<<grid, NUM_THREADS>>>(M, N, K, 1.f, A, B, 0.f, C);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaDeviceSynchronize());
	cublasDestroy(handle);
	CUDA_CHECK(cudaFree(A));
	CUDA_CHECK(cudaFree(B));
	CUDA_CHECK(cudaFree(C));
	std::printf("ok\n");
	return 0;
}
