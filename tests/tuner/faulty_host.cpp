// A host kernel with planted failures, one per MODE, for the tuner's tests:
// 0 correct, 1 wrong values, 2 segfault, 3 hang, 4 leaves y unwritten,
// 5 writes NaN. SCALE = 2 is only valid for even n.
#include <aotc.h>

template <int MODE, int SCALE>
AOTC_TUNE(MODE, 0, 1, 2, 3, 4, 5)
AOTC_TUNE(SCALE, 1, 2)
AOTC_VALID_IF(SCALE == 1 || n % 2 == 0)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {64, 101})
AOTC_REFERENCE(twice_ref)
void twice(int n, const float *x, float *y)
{
	if (MODE == 2) {
		volatile int *p = nullptr;
		*p = 1;
	}
	if (MODE == 3) {
		volatile bool forever = true;
		while (forever) {
		}
	}
	if (MODE == 4)
		return;
	for (int i = 0; i < n; i += SCALE)
		for (int j = i; j < i + SCALE && j < n; j++)
			y[j] = MODE == 1 ? 3 * x[j] : MODE == 5 ? 0.0f / 0.0f * x[j] : 2 * x[j];
}

void twice_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
}
