// A kernel file in Kernel Tuner's style: a CUDA kernel, a plain C++ host function that
// computes the same thing (the truth, AOTC_REFERENCE), and host code with main() that
// runs both, as the user builds it with nvcc. aotc tunes the kernel against the host
// function: nvcc compiles the file as host code into a shared object the worker calls on
// host copies of the inputs (docs/annotations.md, "A host reference").
#include <aotc.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// C = A * B + C, row-major, A is M x K, B is K x N.
void matmul_host(int M, int N, int K, const float *A, const float *B, float *C)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float acc = 0;
			for (int k = 0; k < K; k++)
				acc += A[i * K + k] * B[k * N + j];
			C[i * N + j] += acc;
		}
}

template <int TILE, int ROWS>
AOTC_TUNE(TILE, 8, 16, 32)
AOTC_TUNE(ROWS, 1, 2)
AOTC_REQUIRE(TILE % ROWS == 0)
AOTC_GRID(cdiv(N, TILE), cdiv(M, TILE))
AOTC_BLOCK(TILE, TILE / ROWS)
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, inout)
AOTC_SHAPES(M = {64, 200}, N = {64, 96}, K = {32, 100})
AOTC_TOLERANCE(1e-4)
AOTC_REFERENCE(matmul_host)
__global__ void matmul(int M, int N, int K, const float *__restrict__ A,
                       const float *__restrict__ B, float *__restrict__ C)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	int col = blockIdx.x * TILE + threadIdx.x;
	float acc[ROWS] = {};
	for (int k0 = 0; k0 < K; k0 += TILE) {
		for (int r = 0; r < ROWS; r++) {
			int ty = threadIdx.y + r * (TILE / ROWS);
			int row = blockIdx.y * TILE + ty;
			As[ty][threadIdx.x] = row < M && k0 + threadIdx.x < K ? A[row * K + k0 + threadIdx.x] : 0.0f;
			Bs[ty][threadIdx.x] = k0 + ty < K && col < N ? B[(k0 + ty) * N + col] : 0.0f;
		}
		__syncthreads();
		for (int r = 0; r < ROWS; r++) {
			int ty = threadIdx.y + r * (TILE / ROWS);
			for (int k = 0; k < TILE; k++)
				acc[r] += As[ty][k] * Bs[k][threadIdx.x];
		}
		__syncthreads();
	}
	for (int r = 0; r < ROWS; r++) {
		int row = blockIdx.y * TILE + threadIdx.y + r * (TILE / ROWS);
		if (row < M && col < N)
			C[row * N + col] += acc[r];
	}
}

#ifndef HOST_REFERENCE_NO_MAIN
int main()
{
	const int M = 200, N = 96, K = 100;
	std::vector<float> A(M * K), B(K * N), C(M * N, 1.0f), ref(C);
	for (auto &x : A)
		x = std::rand() / (float)RAND_MAX;
	for (auto &x : B)
		x = std::rand() / (float)RAND_MAX;
	float *dA, *dB, *dC;
	cudaMalloc(&dA, A.size() * sizeof(float));
	cudaMalloc(&dB, B.size() * sizeof(float));
	cudaMalloc(&dC, C.size() * sizeof(float));
	cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice);
	cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice);
	cudaMemcpy(dC, C.data(), C.size() * sizeof(float), cudaMemcpyHostToDevice);
	matmul<16, 2><<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 8)>>>(M, N, K, dA, dB, dC);
	cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost);
	matmul_host(M, N, K, A.data(), B.data(), ref.data());
	double err = 0;
	for (int i = 0; i < M * N; i++)
		err = std::fmax(err, std::fabs(C[i] - ref[i]));
	std::printf("max error %g\n", err);
	return err < 1e-3 ? 0 : 1;
}
#endif
