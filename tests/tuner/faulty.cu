// A CUDA kernel with planted failures, one per MODE, for the tuner's device
// tests: 0 correct, 1 wrong values, 2 illegal address, 3 trap, 4 hang,
// 5 leaves y unwritten, 6 a block larger than __launch_bounds__ allows,
// 7 writes y[n], 8 writes y[-1], 9 writes 64 KiB past the end of y,
// 10 computes only on its first launch, 11 hands back a cached result.
#include <aotc.h>

/* 10, 11: how many blocks have finished a computing launch so far; a
 * launch whose blocks see a full grid's worth skips (10) or copies the
 * cache (11). The grid of each shape is larger than the last one's. */
__device__ unsigned aotc_done_blocks;
__device__ float aotc_cache[1 << 17];

template <int MODE>
AOTC_TUNE(MODE, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
AOTC_GRID(cdiv(n, MODE == 6 ? 1024 : 256))
AOTC_BLOCK(MODE == 6 ? 1024 : 256)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {4096, 100001})
AOTC_REFERENCE(twice_ref)
__global__ void __launch_bounds__(256) twice(int n, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (MODE == 2 && i == 0)
		*(volatile float *)(y + (1ll << 40)) = 1;
	if (MODE == 3 && i == 0)
		__trap();
	if (MODE == 4) /* x is in (-1, 1): spins until killed */
		while (((volatile const float *)x)[0] < 2.0f) {
		}
	if ((MODE == 10 || MODE == 11) && *(volatile unsigned *)&aotc_done_blocks >= gridDim.x) {
		if (MODE == 11 && i < n)
			y[i] = aotc_cache[i];
		return;
	}
	if (MODE == 5)
		return;
	if (i < n) {
		y[i] = MODE == 1 ? 3 * x[i] : 2 * x[i];
		if (MODE == 11)
			aotc_cache[i] = y[i];
	}
	if (i == 0) {
		volatile float *v = y;
		if (MODE == 7)
			v[n] = 1;
		if (MODE == 8)
			v[-1] = 1;
		if (MODE == 9)
			v[n + 16384] = 1;
	}
	if ((MODE == 10 || MODE == 11) && threadIdx.x == 0) {
		__threadfence();
		atomicAdd(&aotc_done_blocks, 1u);
	}
}

AOTC_GRID(cdiv(n, 128))
AOTC_BLOCK(128)
__global__ void twice_ref(int n, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = 2 * x[i];
}
