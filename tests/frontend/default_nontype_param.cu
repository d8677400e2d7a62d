// A defaulted non-type template parameter (PAD = 1) needs no TUNE; only BM is tuned.
#include <aotc.h>

template <int BM, int PAD = 1>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 8192))
__global__ void padded(int n, float *x)
{
	__shared__ float tile[BM + PAD];
	tile[threadIdx.x] = x[threadIdx.x];
}
