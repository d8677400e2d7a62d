// A host kernel for tests/scale/slurm.sh: 36 configurations x 4 shapes that
// tune in seconds, with a status per cell that does not depend on timing,
// so that 8 shards tuned as a Slurm array merge into exactly what one
// process tunes: U = 3 does not compile, W = 1 is wrong on every shape,
// W = 2 is invalid below n = 128, the rest is ok.
#include <aotc.h>

template <int U, int V, int W>
AOTC_TUNE(U, 1, 2, 3, 4)
AOTC_TUNE(V, 1, 2, 4)
AOTC_TUNE(W, 0, 1, 2)
AOTC_VALID_IF(W != 2 || n >= 128)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {64, 128, 256, 512})
AOTC_REFERENCE(sweep_ref)
void sweep(int n, const float *x, float *y)
{
	static_assert(U != 3, "U = 3 is planted not to compile");
	for (int i = 0; i < n; i += U * V)
		for (int j = i; j < i + U * V && j < n; j++)
			y[j] = (W == 1 ? 3 : 2) * x[j];
}

void sweep_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
}
