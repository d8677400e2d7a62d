// Parameters left unaccounted for, each reported at the parameter. Expect 3 errors:
// pointer 'y' has no BUFFER, int 'ld' has neither SHAPES nor VALUE, float 'alpha' has no VALUE.
#include <aotc.h>

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_GRID(cdiv(n, BM))
AOTC_BLOCK(BM)
AOTC_BUFFER(x, n, in)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, const float *x, float *y, int ld, float alpha) {}
