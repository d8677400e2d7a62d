// Errors inside a system header (here one marked with #pragma clang system_header) do not
// fail the parse; --verbose shows them as warnings. Errors in the user's files still do.
#include <aotc.h>
#include "sys/unparsable_system.h"

const int NUM_THREADS = 128;

template <int BM>
AOTC_TUNE(BM, 1, 2)
AOTC_GRID(cdiv(n, BM * NUM_THREADS))
AOTC_BLOCK(NUM_THREADS)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
