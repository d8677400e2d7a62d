// A copy with two library routines beside its variants (AOTC_EXTERN):
// copy_memcpy (memcpy: right, and usually the fastest on large sizes) and
// copy_wrong (its last element wrong), for tests/tuner/extern.sh.
#include <aotc.h>

#include <cstring>

void copy_memcpy(int n, const float *x, float *y) { std::memcpy(y, x, (size_t)n * sizeof *y); }

void copy_wrong(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = x[i == n - 1 ? 0 : i];
}

template <int U>
AOTC_TUNE(U, 1, 4)
AOTC_VALID_IF(n % U == 0)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {4096, 262144, 1000001})
AOTC_REFERENCE(copy_ref)
AOTC_EXTERN(copy_memcpy)
AOTC_EXTERN(copy_wrong, m)
void copy(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i += U)
		for (int j = 0; j < U; j++)
			y[i + j] = x[i + j];
}

void copy_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = x[i];
}
