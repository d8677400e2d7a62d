// A host kernel with the planted faults that fooled measurements before
// guard zones (docs/spec.md §5): 0 correct, 1 writes y[n], 2 writes y[-1], 3 writes
// 64 KiB past the end of y, 4 writes 64 bytes past it, 5 computes only on
// its first call, 6 hands back a result cached from an earlier call.
#include <aotc.h>

#include <string.h>

template <int MODE>
AOTC_TUNE(MODE, 0, 1, 2, 3, 4, 5, 6)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {64, 101, 1000})
AOTC_REFERENCE(twice_ref)
void twice(int n, const float *x, float *y)
{
	static bool done;
	static float cache[4096];
	static int cached_n = -1;
	if (MODE == 5) {
		if (done)
			return;
		done = true;
	}
	if (MODE == 6 && cached_n == n) {
		memcpy(y, cache, (size_t)n * sizeof *y);
		return;
	}
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
	volatile float *v = y;
	if (MODE == 1)
		v[n] = 1;
	if (MODE == 2)
		v[-1] = 1;
	if (MODE == 3)
		v[n + 16384] = 1;
	if (MODE == 4)
		v[n + 16] = 1;
	if (MODE == 6) {
		memcpy(cache, y, (size_t)n * sizeof *y);
		cached_n = n;
	}
}

void twice_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
}
