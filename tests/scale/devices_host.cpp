// A host kernel for tests/scale/devices.sh: --devices N on the host backend
// (N workers standing in for devices). 16 configurations x 6 shapes whose
// statuses do not depend on timing: ok, wrong (A = B = 4 doubles wrongly)
// and invalid (AOTC_VALID_IF), so that tunes on 1 and 2 workers must
// agree cell for cell. Each call spins DEVICES_SPIN x A x B iterations
// (-D DEVICES_SPIN=... makes a tune long enough to stop at a --budget).
#include <aotc.h>

#ifndef DEVICES_SPIN
#define DEVICES_SPIN 3000000
#endif

template <int A, int B>
AOTC_TUNE(A, 1, 2, 3, 4)
AOTC_TUNE(B, 1, 2, 3, 4)
AOTC_VALID_IF(n % (16 * A) == 0)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {64, 96, 128, 208, 256, 384})
AOTC_REFERENCE(twice_ref)
void twice(int n, const float *x, float *y)
{
	volatile long acc = 0;
	for (long i = 0; i < (long)DEVICES_SPIN * A * B; i++)
		acc = acc + 1;
	for (int i = 0; i < n; i++)
		y[i] = (A == 4 && B == 4 ? 3 : 2) * x[i];
}

void twice_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
}
