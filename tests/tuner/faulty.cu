// A CUDA kernel with planted failures, one per MODE, for the tuner's device
// tests: 0 correct, 1 wrong values, 2 illegal address, 3 trap, 4 hang,
// 5 leaves y unwritten, 6 a block larger than __launch_bounds__ allows.
#include <aotc.h>

template <int MODE>
AOTC_TUNE(MODE, 0, 1, 2, 3, 4, 5, 6)
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
	if (MODE == 5 || i >= n)
		return;
	y[i] = MODE == 1 ? 3 * x[i] : 2 * x[i];
}

AOTC_GRID(cdiv(n, 128))
AOTC_BLOCK(128)
__global__ void twice_ref(int n, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = 2 * x[i];
}
