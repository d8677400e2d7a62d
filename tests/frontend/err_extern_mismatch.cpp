// AOTC_EXTERN naming what is not a routine with the kernel's parameters.
// Expect 6 errors: no such function; a parameter of another type (with a
// note at the routine); one parameter too few; a template; the reference;
// a name given twice.
#include <aotc.h>

void scale_double(int n, const double *x, float *y);
void scale_short(int n, const float *x);
template <int V> void scale_tmpl(int n, const float *x, float *y);
void scale_ref(int n, const float *x, float *y) {}

template <int U>
AOTC_TUNE(U, 1, 4)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {1024})
AOTC_REFERENCE(scale_ref)
AOTC_EXTERN(scale_missing)
AOTC_EXTERN(scale_double)
AOTC_EXTERN(scale_short)
AOTC_EXTERN(scale_tmpl)
AOTC_EXTERN(scale_ref)
AOTC_EXTERN(scale_short, m)
void scale(int n, const float *x, float *y) {}
