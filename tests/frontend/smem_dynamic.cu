// AOTC_SMEM over tunables, including values above 48 KiB (BM = 256, BK = 64: 128 KiB).
#include <aotc.h>

template <int BM, int BK, int STAGES>
AOTC_TUNE(BM, 64, 256)
AOTC_TUNE(BK, 32, 64)
AOTC_TUNE(STAGES, 2)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(128)
AOTC_SMEM(STAGES * BM * BK * 4)
AOTC_BUFFER(x, n * 64, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 16384))
__global__ void staged(int n, const float *x, float *y)
{
	extern __shared__ float smem[];
	smem[threadIdx.x] = x[threadIdx.x];
}
