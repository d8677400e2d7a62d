// Six variants of a vector scale that all agree with the reference: a
// kernel that tunes in seconds, for tests/tuner/db-truth.sh (journal,
// lock, temporary files, strict reading of the database).
#include <aotc.h>

template <int U, int S>
AOTC_TUNE(U, 1, 2, 4)
AOTC_TUNE(S, 1, 2)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {1024, 4096})
AOTC_REFERENCE(scale_ref)
void scale(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i += U)
		for (int j = 0; j < U && i + j < n; j++)
			y[i + j] = S == 1 ? 2 * x[i + j] : x[i + j] + x[i + j];
}

void scale_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
}
