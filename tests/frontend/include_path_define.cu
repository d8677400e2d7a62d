// -I inc2 finds "tile_config.h"; -D TILE=32 sets a template default and is used in code.
#include <aotc.h>
#include "tile_config.h"

template <int ROWS, int T = TILE>
AOTC_TUNE(ROWS, 4, 8)
AOTC_GRID(cdiv(n, 32), cdiv(n, 32))
AOTC_BLOCK(32, ROWS)
AOTC_BUFFER(a, n * n, in)
AOTC_BUFFER(b, n * n, out)
AOTC_SHAPES(n = pow2(512, 8192))
__global__ void tiled_copy(int n, const float *a, float *b)
{
	__shared__ float tile[kTileElems];
	static_assert(T == 32, "TILE comes from -D");
	tile[threadIdx.y * TILE + threadIdx.x] = a[threadIdx.x];
	b[threadIdx.x] = tile[threadIdx.x];
}
