// A host kernel for the failures the tuner learns once (tests/tuner/
// search.sh): U = 3 does not compile (on any shape), W = 1 is wrong on every
// shape, W = 2 is invalid below n = 128 (an exclusion, not a failure).
#include <aotc.h>

template <int U, int W>
AOTC_TUNE(U, 1, 2, 3)
AOTC_TUNE(W, 0, 1, 2)
AOTC_VALID_IF(W != 2 || n >= 128)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {64, 128, 256, 512})
AOTC_REFERENCE(learn_ref)
void learn(int n, const float *x, float *y)
{
	static_assert(U != 3, "U = 3 is planted not to compile");
	for (int i = 0; i < n; i += U)
		for (int j = i; j < i + U && j < n; j++)
			y[j] = (W == 1 ? 3 : 2) * x[j];
}

void learn_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
}
