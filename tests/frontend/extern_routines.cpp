// AOTC_EXTERN: library routines measured beside the variants. A routine
// takes the kernel's parameters (pointers may differ in const and
// restrict, names may differ); extra names are libraries linked with it.
#include <aotc.h>

void scale_blas(int n, float a, const float *x, float *y);
void scale_simd(int len, float alpha, const float *src, float *__restrict dst);

template <int U>
AOTC_TUNE(U, 1, 4)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_VALUE(a, 2)
AOTC_SHAPES(n = {1024, 4096})
AOTC_EXTERN(scale_blas, openblas, m)
AOTC_EXTERN(scale_simd)
void scale(int n, float a, float *x, float *y) {}
