// AOTC_REFERENCE of a __global__ kernel names a plain host function, as Kernel Tuner users
// check against host code: same parameters (pointers may differ in const and __restrict__,
// names may differ), returning void, no GRID/BLOCK of its own. The IR marks it
// "host": true. Host code and main() beside it are the file's own business.
#include <aotc.h>
#include <cstdio>
#include <vector>

void vector_add_host(int count, const float *a, const float *b, float *c)
{
	for (int i = 0; i < count; i++)
		c[i] = a[i] + b[i];
}

template <int BLOCK, int PER>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_TUNE(PER, 1, 4)
AOTC_GRID(cdiv(n, BLOCK * PER))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(a, n, in)
AOTC_BUFFER(b, n, in)
AOTC_BUFFER(c, n, out)
AOTC_SHAPES(n = pow2(1024, 1048576))
AOTC_REFERENCE(vector_add_host)
__global__ void vector_add(int n, const float *__restrict__ a, const float *__restrict__ b,
                           float *__restrict__ c)
{
	int i = (blockIdx.x * BLOCK + threadIdx.x) * PER;
	for (int j = 0; j < PER; j++)
		if (i + j < n)
			c[i + j] = a[i + j] + b[i + j];
}

int main()
{
	std::vector<float> a(1000, 1.0f), b(1000, 2.0f), c(1000);
	vector_add_host(1000, a.data(), b.data(), c.data());
	std::printf("%g\n", c[0]);
	return 0;
}
