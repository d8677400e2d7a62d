// Misspelt names get the nearest name in scope: a tunable, a parameter, a
// constant of the file, a function for AOTC_REFERENCE, an expression
// function. A name near nothing gets no suggestion.
#include <aotc.h>

#define NUM_THREADS 256

AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
__global__ void scale_naive(float *out, const float *in, int n);

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, NUM_THREAD)
AOTC_GRID(div_up(n, BLOCK))
AOTC_BLOCK(BLOK)
AOTC_BUFFER(outt, n, out)
AOTC_BUFFER(in, n, in)
AOTC_VALID_IF(N % 4 == 0 && zzz > 0)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(scale_naiv)
__global__ void scale(float *out, const float *in, int n);
