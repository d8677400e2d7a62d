// Annotated non-template kernel without any TUNE, referenced by nobody. Expect 1 error: no tunables.
#include <aotc.h>

AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
