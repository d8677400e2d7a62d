// A host kernel with near-ties, for tests/tuner/noise.sh: TAG changes
// nothing (its two variants are the same code: a tie), WORK 8 and 9 are
// 12 % apart, 16 is twice as slow.
#include <aotc.h>

template <int WORK, int TAG>
AOTC_TUNE(WORK, 8, 9, 16)
AOTC_TUNE(TAG, 0, 1)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {4096, 6144, 8192, 12288, 16384})
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
