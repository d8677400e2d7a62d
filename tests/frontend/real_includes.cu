// Real CUDA headers, __half / __nv_bfloat16 buffers, __launch_bounds__, __restrict__,
// __shared__, __syncthreads(), float4 / int2 vector types; all parse as ordinary code.
#include <aotc.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>
#include <cassert>

template <int BLOCK, int VEC>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_TUNE(VEC, 4)
AOTC_GRID(cdiv(n, BLOCK * VEC))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(w, n, in)
AOTC_BUFFER(y, n, out)
AOTC_BUFFER(ranges, cdiv(n, BLOCK * VEC), in, const(0))
AOTC_BUFFER(partial, cdiv(n, 4), out)
AOTC_SHAPES(n = pow2(4096, 1048576))
__global__ void __launch_bounds__(BLOCK)
mixed(int n, const __half *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
      __half *__restrict__ y, const int2 *ranges, float4 *partial)
{
	static_assert(VEC == 4, "float4 path");
	assert(blockDim.x == BLOCK);
	__shared__ float sum[BLOCK];
	uint32_t i = (blockIdx.x * BLOCK + threadIdx.x) * VEC;
	float acc = 0.f;
	for (int v = 0; v < VEC && i + v < (uint32_t)n; v++)
		acc += __half2float(x[i + v]) * __bfloat162float(w[i + v]);
	sum[threadIdx.x] = acc;
	__syncthreads();
	if (i < (uint32_t)n)
		y[i] = __float2half(sum[threadIdx.x] + (float)ranges[blockIdx.x].x);
	if (threadIdx.x == 0 && blockIdx.x < (uint32_t)n / 4)
		partial[blockIdx.x] = make_float4(sum[0], sum[1], sum[2], sum[3]);
}
