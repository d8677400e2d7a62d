// Host kernels for tests/tuner/rotate.sh (method "cold_cache": "rotate",
// run on the host with AOTC_COLD_CACHE=rotate):
// axpy<U, MODE> updates y in place (y = 2 y + x, an inout buffer whose
// values grow with every launch on a copy), MODE 0 right, MODE 1 writing
// one element past y's end on every call.
#include <aotc.h>

template <int U, int MODE>
AOTC_TUNE(U, 1, 2, 4)
AOTC_TUNE(MODE, 0, 1)
AOTC_VALID_IF(n % U == 0)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_SHAPES(n = {1024, 4096, 65536})
AOTC_REFERENCE(axpy_ref)
void axpy(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i += U)
		for (int j = 0; j < U; j++)
			y[i + j] = 2.0f * y[i + j] + x[i + j];
	if (MODE == 1)
		y[n] = 1.0f;
}

void axpy_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2.0f * y[i] + x[i];
}
