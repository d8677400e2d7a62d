// LayerNorm forward in the style of an LLM-training project's dev/cuda
// kernels: a naive kernel (one thread per row) and a warp-per-row kernel with
// cooperative groups, cg::reduce and streaming stores through __stcs; both
// take the row count N = B * T, while the host launcher takes B, T and a
// block size. Only the AOTC_ lines were added: B and T are launcher-only
// shape arguments, block_size a launch-only tunable.
// Build: nvcc -O3 --use_fast_math -Xcompiler -fopenmp layernorm_forward.cu
#include <aotc.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <omp.h>
#include "common.h"

namespace cg = cooperative_groups;

AOTC_GRID(cdiv(N, 256))
AOTC_BLOCK(256)
__global__ void layernorm_forward_kernel1(floatX *out, floatX *mean, floatX *rstd,
                                          const floatX *inp, const floatX *weight,
                                          const floatX *bias, int N, int C)
{
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	float eps = 1e-5f;
	if (idx < N) {
		const floatX *x = inp + idx * C;
		float m = 0.0f;
		for (int i = 0; i < C; i++)
			m += (float)x[i];
		m = m / C;
		float v = 0.0f;
		for (int i = 0; i < C; i++) {
			float xshift = (float)x[i] - m;
			v += xshift * xshift;
		}
		v = v / C;
		float s = 1.0f / sqrtf(v + eps);
		floatX *out_idx = out + idx * C;
		for (int i = 0; i < C; i++) {
			float n = (s * ((float)x[i] - m));
			out_idx[i] = (floatX)(n * (float)weight[i] + (float)bias[i]);
		}
		mean[idx] = (floatX)m;
		rstd[idx] = (floatX)s;
	}
}

AOTC_TUNE(block_size, 64, 128, 256, 512)
AOTC_GRID(cdiv(N * 32, block_size))
AOTC_BLOCK(block_size)
AOTC_BUFFER(out, N * C, out)
AOTC_BUFFER(mean, N, out)
AOTC_BUFFER(rstd, N, out)
AOTC_BUFFER(inp, N * C, in)
AOTC_BUFFER(weight, C, in)
AOTC_BUFFER(bias, C, in)
AOTC_VALUE(N, B * T)
AOTC_SHAPES(B = {4, 8}, T = {64, 1024}, C = {768, 1600})
AOTC_REFERENCE(layernorm_forward_kernel1)
AOTC_TOLERANCE(1e-4)
__global__ void layernorm_forward_kernel3(floatX *__restrict__ out, floatX *__restrict__ mean,
                                          floatX *__restrict__ rstd,
                                          const floatX *__restrict__ inp,
                                          const floatX *__restrict__ weight,
                                          const floatX *__restrict__ bias, int N, int C)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
	if (idx >= N)
		return;
	const floatX *x = inp + idx * C;
	float sum = 0.0f;
	for (int i = warp.thread_rank(); i < C; i += warp.size())
		sum += (float)x[i];
	sum = cg::reduce(warp, sum, cg::plus<float>{});
	float m = sum / C;
	if (warp.thread_rank() == 0 && mean != nullptr)
		__stcs(mean + idx, (floatX)m);
	sum = 0.0f;
	for (int i = warp.thread_rank(); i < C; i += warp.size()) {
		float diff = (float)x[i] - m;
		sum += diff * diff;
	}
	sum = cg::reduce(warp, sum, cg::plus<float>{});
	float s = rsqrtf(sum / C + 1e-5f);
	if (warp.thread_rank() == 0 && rstd != nullptr)
		__stcs(rstd + idx, (floatX)s);
	floatX *o = out + idx * C;
	for (int c = warp.thread_rank(); c < C; c += warp.size()) {
		float n = s * ((float)__ldcs(x + c) - m);
		__stcs(o + c, (floatX)(n * (float)weight[c] + (float)bias[c]));
	}
}

void layernorm_forward3(floatX *out, floatX *mean, floatX *rstd, const floatX *inp,
                        const floatX *weight, const floatX *bias, int B, int T, int C,
                        const int block_size)
{
	const int N = B * T;
	const int grid_size = ceil_div(N * 32, block_size);
	layernorm_forward_kernel3<<<grid_size, block_size>>>(out, mean, rstd, inp, weight, bias, N, C);
	cudaCheck(cudaGetLastError());
}

int main(int argc, char **argv)
{
	int B = 8, T = 1024, C = 768;
	float *inp = make_random_float(B * T * C);
	floatX *d_out, *d_mean, *d_rstd, *d_inp, *d_weight, *d_bias;
	cudaCheck(cudaMalloc(&d_out, B * T * C * sizeof(floatX)));
	cudaCheck(cudaMalloc(&d_mean, B * T * sizeof(floatX)));
	cudaCheck(cudaMalloc(&d_rstd, B * T * sizeof(floatX)));
	cudaCheck(cudaMalloc(&d_inp, B * T * C * sizeof(floatX)));
	cudaCheck(cudaMalloc(&d_weight, C * sizeof(floatX)));
	cudaCheck(cudaMalloc(&d_bias, C * sizeof(floatX)));
	int block_sizes[] = {32, 64, 128, 256, 512, 1024};
	printf("%d threads on the host\n", omp_get_max_threads());
	for (int j = 0; j < (int)(sizeof(block_sizes) / sizeof(int)); j++)
		layernorm_forward3(d_out, d_mean, d_rstd, d_inp, d_weight, d_bias, B, T, C, block_sizes[j]);
	float worst = 0.0f;
	for (int i = 0; i < B * T * C; i++)
		worst = max(worst, fabsf(inp[i]));
	printf("largest |x| = %f\n", worst);
	free(inp);
	return 0;
}
