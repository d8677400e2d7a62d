// A host kernel that does almost nothing, so that a launch through the
// emitted launcher costs what the launcher costs: bench/launcher/env.sh.
#include <aotc.h>

template <int U>
AOTC_TUNE(U, 1, 2)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {1, 2, 4})
void nop(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = x[i] * (float)U / (float)U;
}
