// GELU forward in the style of an LLM-training project's dev/cuda kernels:
// the shared header (floatX, packed 128-bit streaming loads through __ldcs),
// a plain kernel and a vectorised one, a CPU reference with OpenMP, and a
// main() that benchmarks every block size. Only the AOTC_ lines were added.
// Build: nvcc -O3 --use_fast_math -Xcompiler -fopenmp gelu_forward.cu
#include <aotc.h>
#include <omp.h>
#include "common.h"

#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)

void gelu_forward_cpu(float *out, const float *inp, int N)
{
#pragma omp parallel for
	for (int i = 0; i < N; i++) {
		float x = inp[i];
		float cube = 0.044715f * x * x * x;
		out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALING_FACTOR * (x + cube)));
	}
}

AOTC_GRID(cdiv(N, 128))
AOTC_BLOCK(128)
__global__ void gelu_forward_kernel1(floatX *out, const floatX *inp, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N) {
		float xi = inp[i];
		float cube = 0.044715f * xi * xi * xi;
		out[i] = 0.5f * xi * (1.0f + tanhf(GELU_SCALING_FACTOR * (xi + cube)));
	}
}

AOTC_TUNE(block_size, 64, 128, 256, 512, 1024)
AOTC_VALID_IF(N % x128::size == 0)
AOTC_GRID(cdiv(N, block_size * x128::size))
AOTC_BLOCK(block_size)
AOTC_BUFFER(out, N, out)
AOTC_BUFFER(inp, N, in)
AOTC_SHAPES(N = pow2(1024, 1048576))
AOTC_REFERENCE(gelu_forward_kernel1)
__global__ void gelu_forward_kernel2(floatX *out, const floatX *inp, int N)
{
	int i = (blockIdx.x * blockDim.x + threadIdx.x) * x128::size;
	if (i < N) {
		x128 packed_out;
		x128 packed_inp = load128cs(inp + i);
		for (int k = 0; k < packed_inp.size; ++k) {
			float xi = (float)packed_inp[k];
			float cube = 0.044715f * xi * xi * xi;
			packed_out[k] = (floatX)(0.5f * xi * (1.0f + tanhf(GELU_SCALING_FACTOR * (xi + cube))));
		}
		store128cs(out + i, packed_out);
	}
}

void gelu_forward2(floatX *out, const floatX *inp, int N, const int block_size)
{
	const int grid_size = ceil_div(N, block_size * (int)x128::size);
	gelu_forward_kernel2<<<grid_size, block_size>>>(out, inp, N);
	cudaCheck(cudaGetLastError());
}

int main(int argc, char **argv)
{
	int B = 8, T = 1024, C = 768;
	int N = B * T * C;
	float *out = (float *)malloc(N * sizeof(float));
	float *inp = make_random_float(N);
	gelu_forward_cpu(out, inp, N);
	printf("Using %s, %d threads\n", PRECISION_MODE, omp_get_max_threads());
	floatX *d_out, *d_inp;
	cudaCheck(cudaMalloc(&d_out, N * sizeof(floatX)));
	cudaCheck(cudaMalloc(&d_inp, N * sizeof(floatX)));
	int block_sizes[] = {32, 64, 128, 256, 512, 1024};
	for (int j = 0; j < (int)(sizeof(block_sizes) / sizeof(int)); j++) {
		gelu_forward2(d_out, d_inp, N, block_sizes[j]);
		validate_result(d_out, out, "out", N, 1e-5f);
	}
	float worst = 0.0f;
	for (int i = 0; i < N; i++)
		worst = max(worst, fabsf(out[i]));
	printf("largest |gelu(x)| = %f\n", worst);
	free(out);
	free(inp);
	cudaCheck(cudaFree(d_out));
	cudaCheck(cudaFree(d_inp));
	return 0;
}
