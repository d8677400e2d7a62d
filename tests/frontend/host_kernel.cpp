// A host kernel: C++ function template in a .cpp file, no __global__, no GRID/BLOCK/SMEM.
#include <aotc.h>
#include <cstddef>

template <int UNROLL, int BLOCK>
AOTC_TUNE(UNROLL, 1, 2, 4, 8)
AOTC_TUNE(BLOCK, 64, 256)
AOTC_REQUIRE(UNROLL <= BLOCK / 32)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_VALUE(a, 0.75)
AOTC_SHAPES(n = pow2(1024, 1048576))
void host_axpy(int n, float a, const float *x, float *y)
{
	for (int b = 0; b < n; b += BLOCK)
		for (int i = b; i < b + BLOCK && i < n; i += UNROLL)
			for (int u = 0; u < UNROLL && i + u < n; u++)
				y[i + u] += a * x[i + u];
}

// Ignored: not annotated.
static void helper(void) {}
