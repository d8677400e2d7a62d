// A copy whose AOTC_EXTERN routine wins on large sizes only, by design, for
// tests/codegen/extern-dispatch.sh: the variants copy element by element
// through a volatile (about 8 dependent stores an element: no vectorising),
// the routine pays a fixed spin of about 200k volatile increments, then
// memcpy. Below some 30k elements the variants win, above it the routine,
// each by a factor of 10 or more at the shapes tuned here.
#include <aotc.h>

#include <cstring>

void spin_memcpy(int n, const float *x, float *y)
{
	for (volatile int i = 0; i < 200000; i = i + 1) {
	}
	std::memcpy(y, x, (size_t)n * sizeof *y);
}

template <int U>
AOTC_TUNE(U, 1, 2)
AOTC_VALID_IF(n % U == 0)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {512, 1024, 2048, 1 << 18, 1 << 19, 1 << 20})
AOTC_REFERENCE(spin_ref)
AOTC_EXTERN(spin_memcpy, m)
void spin(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i += U)
		for (int j = 0; j < U; j++) {
			volatile float t = x[i + j];
			for (int r = 0; r < 7; r++)
				t = t * 1.0f;
			y[i + j] = t;
		}
}

void spin_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = x[i];
}
