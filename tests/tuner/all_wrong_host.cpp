// Every variant disagrees with the reference: aotc tune exits 4.
#include <aotc.h>

template <int K>
AOTC_TUNE(K, 3, 4)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {16})
AOTC_REFERENCE(ones)
void not_ones(int n, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = K;
}

void ones(int n, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 1;
}
