// A host kernel with near-ties, for tests/tuner/noise.sh: TAG changes
// nothing (its two variants are the same code: a tie), WORK 12 is 1.5x and
// 16 2x the work of 8 (far enough apart that a loaded machine's drift
// between two variants' measurements rarely reorders them).
#include <aotc.h>

template <int WORK, int TAG>
AOTC_TUNE(WORK, 8, 12, 16)
AOTC_TUNE(TAG, 0, 1)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {2048, 3072, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 16384})
AOTC_REFERENCE(poly_ref)
void poly(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++) {
		float v = x[i], acc = 0;
		for (int k = 0; k < WORK * 8; k++)
			acc = acc * 0.5f + v;
		y[i] = acc + TAG * 0.0f;
	}
}

void poly_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++) {
		float v = x[i], acc = 0;
		for (int k = 0; k < 64; k++)
			acc = acc * 0.5f + v;
		y[i] = acc;
	}
}
