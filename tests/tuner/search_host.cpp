// A host kernel with a known cost landscape, for the search's tests
// (tests/tuner/search.sh): 768 configurations, so `aotc tune` searches it
// with the model by default. Each call spins for a time proportional to
//   cost = 1 + 0.15 (TA - a(n))^2 + 0.1 (TB - b(n))^2 + 0.3 |log2 TC - 1| + 0.2 TD
// with a(n) = log2 n - 7 and b(n) = 15 - log2 n, so the best configuration
// moves with the shape and the test can tell how close the search came to
// it. TD = 2 with TA = 8 gives wrong results on every shape.
#include <aotc.h>

template <int TA, int TB, int TC, int TD>
AOTC_TUNE(TA, 1, 2, 3, 4, 5, 6, 7, 8)
AOTC_TUNE(TB, 1, 2, 3, 4, 5, 6, 7, 8)
AOTC_TUNE(TC, 1, 2, 4, 8)
AOTC_TUNE(TD, 0, 1, 2)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {256, 512, 1024, 2048, 4096, 8192})
AOTC_REFERENCE(spin_ref)
void spin(int n, const float *x, float *y)
{
	int l = 0;
	while ((1 << (l + 1)) <= n)
		l++;
	double a = TA - (l - 7), b = TB - (15 - l), c = TC == 1 ? 1 : TC == 2 ? 0 : TC == 4 ? 1 : 2;
	double cost = 1 + 0.15 * a * a + 0.1 * b * b + 0.3 * c + 0.2 * TD;
	volatile double acc = 0;
	for (long i = 0, spins = (long)(20000 * cost); i < spins; i++)
		acc = acc + 1;
	for (int i = 0; i < n; i++)
		y[i] = (TD == 2 && TA == 8 ? 3 : 2) * x[i];
}

void spin_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
}
